"""The review queue under Pilot: keys change the store through the review service; untrusted text stays literal."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text
from memtui.widgets.queue_list import QueueList

from memtui.app import MemtuiApp
from memtui.domain.invariants import Actor
from memtui.importers.native import import_files
from tests.gitrepo import import_anchored
from memtui.review.service import ReviewService
from memtui.widgets.memory_detail import MemoryDetail

DATA = Path(__file__).parent / "data"
ACTOR = Actor(type="human", id="reviewer-7", role="reviewer")


@pytest.fixture
def queue_engine(sqlite_engine, tmp_path):
    import_anchored(sqlite_engine, [DATA / "queue.yaml"], Actor("human", "loader"), tmp_path)  # issue 21 item 3
    return sqlite_engine


async def _settle(app, pilot):
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


def _row_ids(app) -> list[str]:
    table = app.screen.query_one("#queue", QueueList)
    return [r.memory_id for r in table.rows]


async def test_queue_lists_only_memories_needing_a_decision_in_order(queue_engine):
    app = MemtuiApp(queue_engine, ACTOR)
    async with app.run_test(size=(140, 30)) as pilot:
        await _settle(app, pilot)
        # needs_review first, then candidates by id; the active memory is not in the queue
        assert _row_ids(app) == ["mem_cache_ttl", "mem_adr", "mem_registry", "mem_tests"]


async def test_pressing_a_approves_and_records_the_actor(queue_engine):
    app = MemtuiApp(queue_engine, ACTOR)
    async with app.run_test(size=(140, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press("j", "j")  # -> mem_registry (third row)
        await _settle(app, pilot)
        await pilot.press("a")
        await _settle(app, pilot)
        table = app.screen.query_one("#queue", QueueList)
        assert table.cursor == 3  # advanced to the next item
    svc = ReviewService(queue_engine)
    detail = svc.detail("mem_registry")
    assert (detail.state, detail.review_state, detail.version) == ("active", "approved", 2)
    last = svc.history("mem_registry")[-1]
    assert (last.from_state, last.to_state, last.actor_id, last.actor_type) == (
        "candidate", "active", "reviewer-7", "human")
    # nothing else changed
    assert svc.detail("mem_tests").state == "candidate"
    assert svc.detail("mem_cache_ttl").state == "needs_review"


async def test_reject_needs_review_and_undo_keys(queue_engine):
    app = MemtuiApp(queue_engine, ACTOR)
    async with app.run_test(size=(140, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press("down", "down", "down")  # mem_tests
        await _settle(app, pilot)
        await pilot.press("x")
        await _settle(app, pilot)
        assert ReviewService(queue_engine).detail("mem_tests").state == "rejected"
        await pilot.press("u")
        await _settle(app, pilot)
        assert ReviewService(queue_engine).detail("mem_tests").state == "candidate"
        await pilot.press("k", "k")  # back to mem_registry from mem_tests (undo put the cursor on it)
        await _settle(app, pilot)
        await pilot.press("r")
        await _settle(app, pilot)
    svc = ReviewService(queue_engine)
    assert svc.detail("mem_adr").state == "needs_review"
    events = svc.history("mem_tests")
    assert [(e.from_state, e.to_state) for e in events] == [
        (None, "candidate"), ("candidate", "rejected"), ("rejected", "candidate")]
    assert events[-1].compensates == events[-2].event_id


async def test_refused_decision_is_reported_and_changes_nothing(queue_engine):
    app = MemtuiApp(queue_engine, ACTOR)  # a reviewer, not a lead
    async with app.run_test(size=(140, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press("j")  # mem_adr: architecture decision, high impact
        await _settle(app, pilot)
        await pilot.press("a")
        await _settle(app, pilot)
        messages = [n.message for n in app._notifications]
        assert any("review invariant" in m and "mem_adr" in m for m in messages)
    assert ReviewService(queue_engine).detail("mem_adr").state == "candidate"
    assert len(ReviewService(queue_engine).history("mem_adr")) == 1


async def test_counter_shows_decided_over_total(queue_engine):
    app = MemtuiApp(queue_engine, ACTOR)
    async with app.run_test(size=(140, 30)) as pilot:
        await _settle(app, pilot)
        counter = app.screen.query_one("#counter")
        assert "decided 0 / 4" in str(counter.render())
        await pilot.press("a")
        await _settle(app, pilot)
        assert "decided 1 / 4" in str(counter.render())


async def test_help_is_built_from_the_bindings(queue_engine):
    app = MemtuiApp(queue_engine, ACTOR)
    async with app.run_test(size=(140, 40)) as pilot:
        await _settle(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        from memtui.screens.help import HelpScreen

        assert isinstance(app.screen, HelpScreen)
        keys = {key: desc for key, desc, _id in app.screen._rows}
        for key, desc in {"a": "Approve", "x": "Reject", "r": "Needs review", "u": "Undo", "q": "Quit"}.items():
            assert keys[key] == desc
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_queue_pages_from_the_store(sqlite_engine, tmp_path):
    # 450 candidates: the table starts with one page and grows as the cursor nears its end
    lines = ["memories:"]
    for i in range(450):
        lines += [f"  - memoryId: mem_{i:04d}", "    type: code_fact", f"    statement: fact {i}",
                  "    scope: {repositoryId: r1}"]
    (tmp_path / "many.yaml").write_text("\n".join(lines) + "\n")
    import_files(sqlite_engine, [tmp_path / "many.yaml"], ACTOR)
    from memtui.screens import queue as queue_screen

    app = MemtuiApp(sqlite_engine, ACTOR)
    async with app.run_test(size=(140, 30)) as pilot:
        await _settle(app, pilot)
        table = app.screen.query_one("#queue", QueueList)
        assert len(table.rows) == queue_screen.PAGE_SIZE
        table.move_to(queue_screen.PAGE_SIZE - 5)
        await _settle(app, pilot)
        assert len(table.rows) == 2 * queue_screen.PAGE_SIZE
        assert _row_ids(app)[queue_screen.PAGE_SIZE] == f"mem_{queue_screen.PAGE_SIZE:04d}"


async def test_markup_and_ansi_are_shown_literally(sqlite_engine):
    import_files(sqlite_engine, [DATA / "markup.json"], ACTOR)
    app = MemtuiApp(sqlite_engine, ACTOR)
    async with app.run_test(size=(160, 40)) as pilot:
        await _settle(app, pilot)
        table = app.screen.query_one("#queue", QueueList)
        seen = []
        for row in range(len(table.rows)):
            table.move_to(row)
            await _settle(app, pilot)
            cell = table.cell(row, "statement")  # drawn as plain segments: no style can come from the text
            seen.append(cell)
            detail = app.screen.query_one("#detail", MemoryDetail)
            rendered = "\n".join(line.plain for line in detail.lines)
            assert "\x1b" not in rendered
            assert cell in rendered  # the detail pane shows the same literal statement
        assert "Use [bold]RuleRegistry[/bold] for [red]all[/] rules" in seen
        assert "A lone closing tag [/] must not crash" in seen
        assert "An unterminated [bold tag and [link=http://x]" in seen
        assert "Rules live in rules[0] and [[x]] is literal" in seen
        # whole escape sequences are removed, no "[31m" remnant (issue 9, item 5)
        assert "ANSI red and  clear" in seen
        # the detail pane shows the path literally as well
        table.move_to(seen.index("Use [bold]RuleRegistry[/bold] for [red]all[/] rules"))
        await _settle(app, pilot)
        detail = app.screen.query_one("#detail", MemoryDetail)
        text = "\n".join(line.plain for line in detail.lines)
        assert "src/[bold]x[/].java" in text
        assert "[b]mod[/b]" in text
