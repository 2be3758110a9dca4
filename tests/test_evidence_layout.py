"""Layout at 80×24 (issue 24, item 2 and Build 2): code wraps only between tokens (a deep indent
gives way before a name is cut), ``n`` brings the changed line into view, every footer shows the
screen's own keys first and always ``?``, toasts stay off the detail pane."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.text import Text

from memtui.app import MemtuiApp
from memtui.domain.invariants import Actor
from memtui.review.evidence import DiffRow, EvidenceComparison, SpanLine
from memtui.screens.base import fit_footer
from memtui.screens.evidence import side_by_side
from memtui.widgets.wrap import CODE_BREAKS, wrap_at

REVIEWER = Actor("human", "reviewer-7")
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def test_a_deep_indent_gives_way_before_a_name_is_cut():
    code = "                throw new IllegalArgumentException(\"quantity must be positive\");"
    lines = [t.plain for t in wrap_at(Text(code), 30, CODE_BREAKS)]
    # continuation lines hang 5 cells in (not 16), so the 25-cell name fits the 30 cells whole
    assert lines == ["                throw new", "     IllegalArgumentException(", "     \"quantity must be",
                     "     positive\");"]
    assert all(len(line) <= 30 for line in lines)


def _comparison(texts_left, texts_right, tags) -> EvidenceComparison:
    rows = tuple(DiffRow(SpanLine(i + 1, l) if l is not None else None,
                         SpanLine(i + 1, r) if r is not None else None, tag)
                 for i, (l, r, tag) in enumerate(zip(texts_left, texts_right, tags)))
    hunks = tuple(i for i, t in enumerate(tags) if t != "equal" and (i == 0 or tags[i - 1] == "equal"))
    return EvidenceComparison(memory_id="m", index=0, count=1, type="file_span", status="changed",
                              recorded_label="A.java:1-9 @ 1111111", current_label="A.java:1-9 @ 2222222",
                              rows=rows, outdated=True, hunks=hunks)


CODE = ["public final class PositiveQuantityRule implements ValidationRule {",
        "        registry.register(new PositiveQuantityRule());",
        "            throw new IllegalArgumentException(\"quantity must be positive: \" + quantity);"]


@pytest.mark.parametrize("width", [76, 90, 120, 156])
def test_side_by_side_never_cuts_a_name_that_fits_its_column(width):
    c = _comparison(CODE * 4, CODE * 3 + [CODE[0].replace("final ", "")] * 3, ["equal"] * 9 + ["replace"] * 3)
    lines, starts = side_by_side(c, width, dark=True)
    col = (width - 15) // 2
    assert all(len(line.plain) <= width for line in lines)
    assert len(starts) == len(c.rows) and starts == sorted(starts)
    text = "\n".join(line.plain for line in lines)
    for line in CODE:
        for name in TOKEN.findall(line):
            if len(name) <= col:
                assert re.search(rf"\b{name}\b", text), (name, width)
    # each row starts on the line its number is on
    for row, start in zip(c.rows, starts):
        assert lines[start].plain[:5].strip() == str(row.left.number)


def test_footer_keeps_help_and_the_first_keys_that_fit():
    from textual.binding import ActiveBinding, Binding

    def ab(key, desc, bid):
        return ActiveBinding(None, Binding(key, f"do_{bid}", desc, id=bid), True, "")

    bindings = {"a": ab("a", "Approve", "q.a"), "x": ab("x", "Reject", "q.x"),
                "r": ab("r", "Needs review", "q.r"), "question_mark": ab("question_mark", "Help", "nav.help"),
                "escape": ab("escape", "Back", "nav.back")}
    bindings["question_mark"] = bindings["question_mark"]._replace(
        binding=Binding("question_mark", "help", "Help", key_display="?", id="nav.help"))
    out = fit_footer(bindings, 30, narrow=True)  # a Approve (10) x Reject (9) ? Help (7): 26 of 29
    assert [k for k, v in out.items() if v.binding.show] == ["a", "x", "question_mark"]
    assert set(out) == set(bindings)  # folded keys stay active
    wide = fit_footer(bindings, 200, narrow=False)
    assert all(v.binding.show for v in wide.values())


async def _settled(pilot):
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def _footer(app) -> list[str]:
    from textual.widgets._footer import FooterKey

    return [f"{k.key_display} {k.description}" for k in app.screen.query(FooterKey)]


async def test_at_80_columns_each_footer_shows_its_purpose_keys_and_help(demo_copy):
    app = MemtuiApp(demo_copy, REVIEWER)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settled(pilot)
        keys = _footer(app)
        assert keys[:7] == ["a Approve", "x Reject", "r Needs review", "s Skip", "b Block", "u Undo",
                            "e Evidence"]
        assert "? Help" in keys
        assert sum(len(k) + 1 for k in keys) <= 80
        queue = app.screen.query_one("#queue")
        queue.move_cursor(row=[r.memory_id for r in queue.rows].index("mem_rule_registry_convention"))
        await _settled(pilot)
        await pilot.press("e")
        await _settled(pilot)
        keys = _footer(app)
        assert keys[0] == "n Next change" and "? Help" in keys and sum(len(k) + 1 for k in keys) <= 80
        await pilot.press("escape", "h")
        await _settled(pilot)
        assert "? Help" in _footer(app)


async def test_n_brings_the_changed_line_into_view_at_80x24(demo_copy):
    app = MemtuiApp(demo_copy, REVIEWER)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settled(pilot)
        queue = app.screen.query_one("#queue")
        queue.move_cursor(row=[r.memory_id for r in queue.rows].index("mem_rule_registry_convention"))
        await _settled(pilot)
        await pilot.press("e", "right_square_bracket")
        await _settled(pilot)
        screen = app.screen
        c = screen.comparison
        assert c is not None and c.hunks
        for _ in c.hunks:
            await pilot.press("n")
            await _settled(pilot)
            body = screen.query_one("#ev-body")
            _, starts = side_by_side(c, screen.query_one("#ev-diff").content_size.width, True)
            first = starts[c.hunks[screen._hunk]]
            assert body.scroll_y <= first < body.scroll_y + body.scrollable_content_region.height


async def test_toasts_stay_off_the_detail_pane(demo_copy):
    from textual.widgets._toast import Toast

    for size in ((80, 24), (160, 48)):
        app = MemtuiApp(demo_copy, REVIEWER)
        async with app.run_test(size=size, notifications=True) as pilot:
            await _settled(pilot)
            app.notify("A toast that says something fairly long about what just happened here.")
            await pilot.pause(0.5)
            [toast] = [w for w in app.screen.walk_children() if isinstance(w, Toast)]
            detail = app.screen.query_one("#detail-pane").region
            assert not toast.region.overlaps(detail), (size, toast.region, detail)


SNAPSHOTS = Path(__file__).parent / "__snapshots__" / "test_snapshots"


def _svg_lines(path: Path) -> list[str]:
    """The text rows of a snapshot SVG, each placed by its x position (12.2 px a cell)."""
    import html
    from collections import defaultdict

    rows: dict[float, list[tuple[float, str]]] = defaultdict(list)
    for m in re.finditer(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>', path.read_text()):
        rows[float(m.group(2))].append((float(m.group(1)), html.unescape(m.group(3)).replace("\xa0", " ")))
    out = []
    for y in sorted(rows):
        line = ""
        for x, t in sorted(rows[y]):
            line = line.ljust(int(round(x / 12.2))) + t
        out.append(line)
    return out


@pytest.mark.parametrize("screen", ["queue", "evidence", "health", "help"])
@pytest.mark.parametrize("size", ["80x24", "160x48"])
def test_snapshot_footers_show_help_and_code_is_whole(screen, size):
    lines = _svg_lines(SNAPSHOTS / f"test_screen[{screen}-{size}].svg")
    if screen != "help":  # the help is a dialog over the queue: its own footer is the queue's
        assert "? Help" in lines[-1], lines[-1]
    if screen == "evidence":
        text = "\n".join(lines)
        # the span's names whole: each shows, and no part of one ends a line (ValidationRu / le)
        for name in ("ValidationRule", "RuleRegistry", "orderType", "resolved", "appliesTo"):
            assert name in text
            for cut in range(3, len(name)):
                assert not re.search(rf"(?<![A-Za-z]){name[:cut]}\s*$", text, re.M), name[:cut]
