"""Lists show what a memory says beside a short id (issue 24, Build 1): the CLI's conflicts, duplicates and
compactions, the statements service, and the short id rule."""

from __future__ import annotations

from sqlmodel import Session, select
from typer.testing import CliRunner

from memtui.cli import app as memtui_app
from memtui.review.statements import shown_statements
from memtui.review.views import labelled, short_id, shorten
from memtui.safety.guard import WITHHELD
from memtui.store.models import Memory, MemoryConflict

ENV = {"LOGNAME": "reviewer-7", "USER": "reviewer-7", "COLUMNS": "100"}


def _statements(engine) -> dict[str, str]:
    with Session(engine) as s:
        return {m.memory_id: m.statement for m in s.exec(select(Memory))}


def _cli(engine, *args):
    out = CliRunner().invoke(memtui_app, [*args, "--db", str(engine.url.database)], env=ENV)
    assert out.exit_code == 0, out.output
    return out.stdout


def test_short_ids():
    assert short_id("mem_a") == "mem_a"
    assert short_id("imp-markdown-24e3d7e794ae8a9ef8b1c2d3") == "…ef8b1c2d3"
    assert short_id("imp-markdown-24e3d7e794ae8a9ef8b1c2d3", 14) == "…e8a9ef8b1c2d3"
    assert short_id("mem_rules_registered_via_registry") == "mem_rules…"
    assert shorten("a  b\n c", 10) == "a b c" and shorten("abcdefghij", 5) == "abcd…"
    assert shorten("holds every ValidationRule in a LinkedHashMap", 40) == "holds every ValidationRule in a…"
    assert labelled("mem_a", "Validation uses the registry.", 20) == "mem_a  Validation…"


def test_statements_of_many_ids_in_one_call(demo_copy):
    said = _statements(demo_copy)
    ids = ["mem_rule_registry_convention", "mem_direct_validator_rules", "no_such_memory"]
    assert shown_statements(demo_copy, ids) == {i: said[i] for i in ids[:2]}


def test_a_blocked_memory_is_shown_redacted_or_withheld(demo_copy):
    with Session(demo_copy) as s:
        m = s.get(Memory, "mem_staging_payment_key")
        assert m.state == "blocked"
        m2 = s.get(Memory, "mem_rule_registry_convention")
        m2.state = "blocked"  # blocked by hand: no secret finding, so nothing of it is shown
        s.add(m2)
        s.commit()
    shown = shown_statements(demo_copy, ["mem_staging_payment_key", "mem_rule_registry_convention"])
    assert "<redacted: AWS access key>" in shown["mem_staging_payment_key"]
    assert shown["mem_rule_registry_convention"] == WITHHELD


def test_cli_conflicts_show_both_statements(demo_copy):
    said = _statements(demo_copy)
    with Session(demo_copy) as s:
        pairs = [(c.memory_a, c.memory_b) for c in s.exec(select(MemoryConflict).where(MemoryConflict.status == "open"))]
    assert pairs
    lines = _cli(demo_copy, "conflicts").splitlines()
    for a, b in pairs:
        for side, mid in (("A", a), ("B", b)):
            expected = f"   {side} {labelled(mid, said[mid], 100 - 5)}"
            assert expected in lines
            assert expected.endswith(said[mid][:20]) or said[mid][:20] in expected


def test_cli_duplicates_and_compactions_show_statements(demo_copy):
    said = _statements(demo_copy)
    out = _cli(demo_copy, "duplicates")
    assert "   * mem_registry_for_rules  " + said["mem_registry_for_rules"][:40] in out
    out = _cli(demo_copy, "compactions")
    assert "   - mem_validator_calls_registry  OrderValidator calls RuleRegistry." in out
    assert "   proposed: RuleRegistry: " in out and "[bold]" not in out.split("proposed:")[1]


async def test_the_conflicts_screen_shows_both_statements(demo_copy):
    from memtui.app import MemtuiApp
    from memtui.domain.invariants import Actor

    said = _statements(demo_copy)
    with Session(demo_copy) as s:
        pairs = {c.conflict_id: (c.memory_a, c.memory_b) for c in s.exec(select(MemoryConflict))
                 if c.status in ("open", "possible")}
    app = MemtuiApp(demo_copy, Actor("human", "reviewer-7"))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.press("C")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = app.screen.query_one("#list")
        assert table.row_count == len(pairs)
        for key, (a, b) in pairs.items():
            cells = [c.plain for c in table.get_row(key)]
            assert cells[1] == f"{short_id(a)}  {said[a]}" and cells[2] == f"{short_id(b)}  {said[b]}"


def test_find_memories_by_part_of_id_or_statement(demo_copy):
    from memtui.review.statements import find_memories

    said = _statements(demo_copy)
    by_text = find_memories(demo_copy, None, "linkedhashmap")  # case-insensitive, a word of the statement only
    assert by_text == [(mid, said[mid]) for mid in sorted(said) if "linkedhashmap" in said[mid].lower()
                       and "linkedhashmap" not in mid]
    by_id = find_memories(demo_copy, None, "rule_registry")
    starts = sorted(m for m in said if m.startswith("rule_registry"))
    holds = sorted(m for m in said if "rule_registry" in m and m not in starts)
    in_text = sorted(m for m in said if "rule_registry" in said[m].lower() and "rule_registry" not in m)
    assert [m for m, _ in by_id] == (starts + holds + in_text)[:10]
    assert find_memories(demo_copy, None, "  ") == []
    assert find_memories(demo_copy, None, "staging payment client") == []  # a blocked memory: not by its words
    assert [m for m, _ in find_memories(demo_copy, None, "mem_staging_payment")] == ["mem_staging_payment_key"]
