"""Layout helpers (issue 11, item 5): columns that fill the terminal, and line breaking that keeps
path segments and code tokens whole."""

from __future__ import annotations

from rich.text import Text

from memtui.widgets.list_table import Col, fit_widths
from memtui.widgets.wrap import CODE_BREAKS, wrap_at

CONFLICT_COLUMNS = [Col("severity", "s", 8, 6), Col("A", "a", 34, 14), Col("B", "b", 34, 14), Col("reason", "r", 0, 16)]


def _lines(text: str, width: int, **kw) -> list[str]:
    return [line.plain for line in wrap_at(Text(text), width, **kw)]


def test_the_flexible_column_takes_the_free_width():
    # 158 cells (a 160-column terminal less the scrollbar), 8 cells of padding: 158 - 8 - 76 = 74
    assert fit_widths(CONFLICT_COLUMNS, 158) == {"s": 8, "a": 34, "b": 34, "r": 74}


def test_on_a_narrow_terminal_the_fixed_columns_give_up_their_slack_in_proportion():
    # 78 cells: 76 + 8 + 16 = 100 needed, 22 too many; slack 2 + 20 + 20 = 42; each keeps 20/42 of its slack
    # severity 6 + int(2 * 20/42) = 6, A and B 14 + int(20 * 20/42) = 23; the reason column 78 - 8 - 52 = 18
    widths = fit_widths(CONFLICT_COLUMNS, 78)
    assert widths == {"s": 6, "a": 23, "b": 23, "r": 18}
    assert sum(widths.values()) + 8 == 78


def test_never_below_the_minimum_widths():
    assert fit_widths(CONFLICT_COLUMNS, 30) == {"s": 6, "a": 14, "b": 14, "r": 16}


def test_a_path_breaks_after_a_slash_never_inside_a_name():
    lines = _lines("• valid symbol src/main/java/com/acme/order/validation/RuleRegistry.java:23-29@43d3d11", 40,
                   indent=2)
    assert lines == ["• valid symbol src/main/java/com/acme/", "  order/validation/RuleRegistry.java:",
                     "  23-29@43d3d11"]
    assert all(len(line) <= 40 for line in lines)


def test_a_commit_stays_with_its_at_sign():
    assert _lines("docs/adr/ADR-012-rule-registry.md:14-19@43d3d11", 38) == [
        "docs/adr/ADR-012-rule-registry.md:", "14-19@43d3d11"]
    assert _lines("ADR-012-rule-registry.md14-19@43d3d11", 30) == ["ADR-012-rule-registry.md14-19", "@43d3d11"]


def test_code_breaks_after_punctuation_and_keeps_its_indent():
    lines = _lines("        this.registry = Objects.requireNonNull(registry, \"registry\");", 30, breaks=CODE_BREAKS)
    # "        this.registry = Objects." would be 32 cells
    assert lines == ["        this.registry =", "        Objects.", "        requireNonNull(",
                     "        registry, \"registry\");"]


def test_only_a_token_wider_than_the_line_is_folded():
    assert _lines("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]


def test_each_line_of_a_multi_line_text_hangs_under_its_own_text():
    text = "• changed file_span a/b.java:1-2\n    now at src/test/java/com/acme/RuleRegistryTest.java:3-8"
    assert _lines(text, 30, indent=2) == ["• changed file_span a/b.java:", "  1-2", "    now at src/test/java/com/",
                                          "    acme/", "    RuleRegistryTest.java:3-8"]
