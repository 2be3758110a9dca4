"""The memory screen (issue 11, item 3): record, full history, usage and harm, related items and the jumps,
under Pilot on the demo store, and its snapshots at 80×24 and 160×48."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from textual.widgets import DataTable, OptionList

from memtui.app import MemtuiApp
from memtui.domain.invariants import Actor
from memtui.importers.native import import_files
from memtui.maintenance.runner import maintain
from memtui.maintenance.usage import record_usage
from memtui.review.service import ReviewService
from memtui.review.views import freshness_note
from memtui.sample import set_up_demo
from memtui.store.engine import open_store

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
REVIEWER = Actor("human", "reviewer-7", "lead")
AGENT = Actor("agent", "coder-1")
HOSTILE = "[bold]x[/] [0] [[y]] \x1b[31mred"
SHOWN = "[bold]x[/] [0] [[y]] red"  # markup kept as text, the escape sequence removed (memtui.text.visible)


def _demo(tmp_path):
    """The demo store after maintenance, with a decision carrying a comment (hostile markup in it) and
    two uses of mem_rule_registry_convention, one harmful."""
    engine = open_store(str(tmp_path / "demo.db"))
    set_up_demo(engine, tmp_path / "work", Actor("human", "loader", "lead"))
    maintain(engine, now=NOW)
    svc = ReviewService(engine)
    svc.decide("mem_validation_tests", "approve", REVIEWER, comment="checked the tests " + HOSTILE)
    record_usage(engine, "mem_rule_registry_convention", "positive", AGENT)
    record_usage(engine, "mem_rule_registry_convention", "harm", AGENT, issue="pointed at the old " + HOSTILE)
    return engine


async def _settle(pilot):
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def _open_from_queue(pilot, memory_id: str):
    await _settle(pilot)
    table = pilot.app.screen.query_one("#queue")
    ids = [r.memory_id for r in table.rows]
    table.move_cursor(row=ids.index(memory_id))
    await _settle(pilot)
    await pilot.press("H")
    await _settle(pilot)


def _cursor_key(screen) -> tuple[int, str]:
    """The list of a proposal screen: how many rows, and the key of the highlighted one."""
    table = screen.query(DataTable).first()
    return table.row_count, table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value


def _left(screen) -> str:
    """The record side of the memory screen, as shown."""
    return "\n".join(t.plain for t in screen.detail_lines)


async def test_queue_H_opens_the_page_with_history_usage_and_related(tmp_path):
    engine = _demo(tmp_path)
    app = MemtuiApp(engine, REVIEWER)
    async with app.run_test(size=(160, 48)) as pilot:
        await _open_from_queue(pilot, "mem_rule_registry_convention")
        screen = app.screen
        assert type(screen).__name__ == "MemoryScreen" and screen.memory_id == "mem_rule_registry_convention"
        history = screen.history_text
        events = ReviewService(engine).history("mem_rule_registry_convention")
        assert f"History ({len(events)} events)" in history
        for e in events:  # every event with its reason and actor
            assert e.reason.split("\n")[0][:60] in history
            assert f"{e.actor_type}:{e.actor_id}" in history
        assert "job revalidate" in history and "job conflicts" in history
        assert "Usage and harm (2)" in history  # one positive use, one harmful use (with its harm event)
        assert "2026-11-30 12:00  use context_pack positive  agent:coder-1" in history
        assert "harm context_pack harm (challenged)  pointed at the old" in history
        assert "pointed at the old " + SHOWN in history
        assert "quality    " in _left(screen)
        related = screen.query_one("#related", OptionList)
        # the likely conflict first, then the possible ones (suggestions), strongest first (issue 20)
        rel = [(r.relation, r.status) for r in screen.page.related]
        assert rel[0] == ("conflict", "open") and all(s == "possible" for _, s in rel[1:])
        assert related.option_count == len(rel)
        shown = related.get_option_at_index(0).prompt.plain
        # the other memory's short id and statement (issue 24, Build 1)
        assert shown == ("conflict      …206ebde238b1628  open  mem_direc…  "
                         "Validation rules are configured directly in OrderValidator.")


async def test_the_waiting_reason_and_a_comment_are_shown(tmp_path):
    engine = _demo(tmp_path)
    app = MemtuiApp(engine, REVIEWER)
    async with app.run_test(size=(160, 48)) as pilot:
        await _settle(pilot)
        app.action_memory("mem_junit5_tests")
        await _settle(pilot)
        why = ReviewService(engine).detail("mem_junit5_tests").waiting_reason
        assert why and why.startswith("revalidation")
        assert "waits for  " + why.split("\n")[0][:100] in _left(app.screen)
        await pilot.press("escape")
        app.action_memory("mem_validation_tests")  # approved with a comment: active, it waits for nothing
        await _settle(pilot)
        assert "waits for" not in _left(app.screen)
        history = app.screen.history_text
        assert "needs_review → active  human:reviewer-7 (lead)" in history
        assert "“checked the tests " + SHOWN + "”" in history


async def test_enter_on_a_conflict_jumps_to_it_and_escape_comes_back(tmp_path):
    engine = _demo(tmp_path)
    app = MemtuiApp(engine, REVIEWER)
    async with app.run_test(size=(160, 48)) as pilot:
        await _open_from_queue(pilot, "mem_rule_registry_convention")
        conflict_id = app.screen.page.related[0].subject_id
        await pilot.press("enter")
        await _settle(pilot)
        assert type(app.screen).__name__ == "ConflictsScreen"
        rows, key = _cursor_key(app.screen)
        assert rows >= 2 and key == conflict_id  # more than one open conflict: the cursor was moved to ours
        await pilot.press("escape")
        await _settle(pilot)
        assert type(app.screen).__name__ == "MemoryScreen"


async def test_a_lineage_link_opens_the_other_memory_and_e_opens_the_evidence(tmp_path):
    engine = _demo(tmp_path)
    app = MemtuiApp(engine, REVIEWER)
    async with app.run_test(size=(160, 48)) as pilot:
        await _settle(pilot)
        app.action_memory("mem_legacy_rules_in_engine")  # superseded by mem_rule_registry_convention
        await _settle(pilot)
        assert [(r.relation, r.subject_id) for r in app.screen.page.related] == [
            ("superseded by", "mem_rule_registry_convention")]
        await pilot.press("enter")
        await _settle(pilot)
        assert app.screen.memory_id == "mem_rule_registry_convention"
        await pilot.press("e")
        await _settle(pilot)
        assert type(app.screen).__name__ == "EvidenceScreen"
        await pilot.press("H")  # and back to the page from the evidence
        await _settle(pilot)
        assert app.screen.memory_id == "mem_rule_registry_convention"


@pytest.mark.parametrize("kind", ["duplicates", "compaction"])
async def test_jump_to_a_duplicate_cluster_or_a_compaction_selects_it(tmp_path, kind):
    from memtui.review.proposals import ProposalQueries

    engine = _demo(tmp_path)
    q = ProposalQueries(engine)
    items = {"duplicates": [(c.cluster_id, c.members) for c in q.clusters()],
             "compaction": [(p.proposal_id, p.members) for p in q.proposals()]}[kind]
    assert items, f"the demo has open {kind} items"
    target, members = items[-1]
    app = MemtuiApp(engine, REVIEWER)
    async with app.run_test(size=(160, 48)) as pilot:
        await _settle(pilot)
        app.action_memory(members[-1].memory_id)
        await _settle(pilot)
        rows = [r.subject_id for r in app.screen.page.related]
        app.screen.query_one("#related", OptionList).highlighted = rows.index(target)
        await pilot.press("enter")
        await _settle(pilot)
        assert type(app.screen).__name__ == {"duplicates": "DuplicatesScreen", "compaction": "CompactionScreen"}[kind]
        assert _cursor_key(app.screen)[1] == target


ORG_HUMAN = """\
memories:
  - memoryId: mem_org_style
    type: team_convention
    statement: "Commit messages use the imperative mood."
    scope: {tenantId: acme}
    state: active
    reviewState: approved
    evidence:
      - {type: human, ref: "agreed at the 2026-05 retro"}
"""


async def test_org_wide_memory_with_human_evidence_does_not_wait_for_revalidation(tmp_path, lead):
    """Issue 11: an org-wide memory with only human evidence read "evidence not revalidated yet" forever."""
    src = tmp_path / "org.yaml"
    src.write_text(ORG_HUMAN, encoding="utf-8")
    engine = open_store(str(tmp_path / "org.db"))
    import_files(engine, [src], lead)
    maintain(engine, now=NOW)
    d = ReviewService(engine).detail("mem_org_style")
    assert [e.status for e in d.evidence] == ["unchecked"]
    assert freshness_note(d) == ("human evidence: git does not revalidate it (no file at a commit); "
                                 "its reviewers vouch for it")
    app = MemtuiApp(engine, lead)
    async with app.run_test(size=(160, 48)) as pilot:
        await _settle(pilot)
        app.action_memory("mem_org_style")
        await _settle(pilot)
        shown = _left(app.screen)
        assert "not revalidated yet" not in shown
        assert "⚑ human evidence: git does not revalidate it" in shown


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_memory_screen_snapshot(snap_compare, tmp_path, size):
    async def run_before(pilot):
        await _open_from_queue(pilot, "mem_rule_registry_convention")

    assert snap_compare(MemtuiApp(_demo(tmp_path), Actor("human", "reviewer-7")), terminal_size=size,
                        run_before=run_before)
