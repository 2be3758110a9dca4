"""The queue's keys under Pilot (issue 11, items 1-2): each key's effect on the store, undo and redo,
comments, range select with one verb for many (one transaction), review gates, filters, search, sort."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from sqlmodel import Session, select

from memtui.app import MemtuiApp
from memtui.domain.invariants import Actor
from tests.gitrepo import import_anchored
from memtui.review.queue_query import QueueFilter
from memtui.review.service import ReviewService
from memtui.store.models import AuditEvent, StateHistory
from memtui.widgets.memory_detail import MemoryDetail
from memtui.widgets.queue_list import QueueList

DATA = Path(__file__).parent / "data"
ACTOR = Actor(type="human", id="reviewer-7", role="reviewer")
NO_EVIDENCE = """memories:
  - memoryId: mem_zz_bare
    type: code_fact
    statement: "Retries back off exponentially."
    scope: {tenantId: acme, repositoryId: order-service}
    state: candidate
    confidence: 0.4
    createdAt: 2026-11-28T00:00:00Z
"""


@pytest.fixture
def store(sqlite_engine, tmp_path):
    (tmp_path / "bare.yaml").write_text(NO_EVIDENCE)
    import_anchored(sqlite_engine, [DATA / "queue.yaml", tmp_path / "bare.yaml"], Actor("human", "loader"),
                    tmp_path)  # issue 21 item 3: the evidence in a checkout
    return sqlite_engine


async def _settle(app, pilot):
    for _ in range(2):
        await pilot.pause()
        await app.workers.wait_for_complete()
    await pilot.pause()


async def _keys(app, pilot, *keys):
    """Press ``keys`` and wait until the workers they started are done."""
    await pilot.press(*keys)
    await _settle(app, pilot)


def _ids(app) -> list[str]:
    return [r.memory_id for r in app.screen.query_one("#queue", QueueList).rows]


def _cursor_id(app) -> str:
    return app.screen.query_one("#queue", QueueList).current.memory_id


def _state(store, mid) -> str:
    return ReviewService(store).detail(mid).state


def _history(store, mid) -> list[StateHistory]:
    with Session(store) as s:
        return list(s.exec(select(StateHistory).where(StateHistory.memory_id == mid).order_by(StateHistory.event_id)))


async def _goto(app, pilot, mid):
    queue = app.screen.query_one("#queue", QueueList)
    queue.move_to(queue.index_of(mid))
    await _settle(app, pilot)


ORDER = ["mem_cache_ttl", "mem_adr", "mem_registry", "mem_tests", "mem_zz_bare"]


async def test_skip_moves_on_and_writes_nothing(store):
    app = MemtuiApp(store, ACTOR)
    async with app.run_test(size=(140, 30)) as pilot:
        await _settle(app, pilot)
        assert _ids(app) == ORDER
        await _keys(app, pilot, "s", "s")
        assert _cursor_id(app) == "mem_registry"
    assert all(len(_history(store, m)) == 1 for m in ORDER)


async def test_block_asks_then_blocks_audited_and_undo_restores(store):
    app = MemtuiApp(store, ACTOR)
    async with app.run_test(size=(140, 30)) as pilot:
        await _settle(app, pilot)
        await _goto(app, pilot, "mem_tests")
        await _keys(app, pilot, "b")
        from memtui.screens.dialogs import ConfirmDialog

        assert isinstance(app.screen, ConfirmDialog)
        assert "1 memory changes: 1 candidate → blocked" in app.screen._effect
        await pilot.press("n")  # No: nothing happens
        await _settle(app, pilot)
        assert _state(store, "mem_tests") == "candidate"
        await _keys(app, pilot, "b")
        await _keys(app, pilot, "y")
        assert _state(store, "mem_tests") == "blocked"
        queue = app.screen.query_one("#queue", QueueList)
        assert queue.cell(queue.index_of("mem_tests"), "state") == "⊘ blocked"  # redrawn in place
        with Session(store) as s:
            audits = s.exec(select(AuditEvent).where(AuditEvent.subject == "mem_tests")).all()
        assert [a.kind for a in audits] == ["memory_blocked"]
        await _keys(app, pilot, "u")
    assert _state(store, "mem_tests") == "candidate"


async def test_undo_then_redo(store):
    app = MemtuiApp(store, ACTOR)
    async with app.run_test(size=(140, 30)) as pilot:
        await _settle(app, pilot)
        await _goto(app, pilot, "mem_registry")
        await _keys(app, pilot, "a")
        assert _state(store, "mem_registry") == "active" and _cursor_id(app) == "mem_tests"
        await _keys(app, pilot, "u")
        assert _state(store, "mem_registry") == "candidate" and _cursor_id(app) == "mem_registry"
        await _keys(app, pilot, "ctrl+r")
        assert _state(store, "mem_registry") == "active"
        await pilot.press("ctrl+r")  # nothing left to redo: nothing written
        await _settle(app, pilot)
    events = _history(store, "mem_registry")
    assert [(e.from_state, e.to_state, e.actor_id) for e in events[1:]] == [
        ("candidate", "active", "reviewer-7"), ("active", "candidate", "reviewer-7"),
        ("candidate", "active", "reviewer-7")]
    assert events[2].compensates == events[1].event_id and events[3].compensates is None


async def test_comment_on_the_next_and_on_the_last_decision(store):
    app = MemtuiApp(store, ACTOR)
    async with app.run_test(size=(140, 30)) as pilot:
        await _settle(app, pilot)
        await _goto(app, pilot, "mem_tests")
        await pilot.press("c")
        await pilot.pause()
        await _keys(app, pilot, *"no such test", "enter")
        assert "next comment: no such test" in app.screen.query_one("#filter-bar").text.plain
        await _keys(app, pilot, "x")
        assert "next comment" not in app.screen.query_one("#filter-bar").text.plain
        await pilot.press("c")
        await pilot.pause()
        await _keys(app, pilot, *"[b]really[/b]", "ctrl+l")
    decided, note = _history(store, "mem_tests")[1:]
    assert (decided.to_state, decided.comment) == ("rejected", "no such test")
    assert (note.from_state, note.to_state, note.reason, note.comment) == (
        "rejected", "rejected", f"comment on {decided.event_id}", "[b]really[/b]")
    ReviewService(store).undo(decided.event_id, ACTOR)  # a comment is no change: the decision stays undoable
    assert _state(store, "mem_tests") == "candidate"


async def test_range_select_one_verb_for_many_in_one_transaction_and_one_undo(store):
    app = MemtuiApp(store, ACTOR)
    async with app.run_test(size=(140, 30)) as pilot:
        await _settle(app, pilot)
        await _goto(app, pilot, "mem_cache_ttl")
        await pilot.press("v", "j", "j", "j")  # cache_ttl (needs_review) .. tests: 4 rows
        await _settle(app, pilot)
        assert "selected 4" in app.screen.query_one("#counter").text.plain
        await _keys(app, pilot, "a")
        from memtui.screens.dialogs import ConfirmDialog

        assert isinstance(app.screen, ConfirmDialog)
        assert app.screen._title == "Approve 4 memories?"
        assert app.screen._effect.startswith("4 memories change: 3 candidate → active, 1 needs_review → active")
        await _keys(app, pilot, "y")
        # a reviewer may not approve the high-impact ADR: the batch is refused as a whole
        assert any("mem_adr" in n.message and "review invariant" in n.message for n in app._notifications)
        assert [_state(store, m) for m in ORDER[:4]] == ["needs_review", "candidate", "candidate", "candidate"]
        # shift+arrows: registry and tests only
        await _goto(app, pilot, "mem_registry")
        await pilot.press("shift+down")
        await _keys(app, pilot, "r")
        assert app.screen._effect.startswith("2 memories change: 2 candidate → needs_review")
        await _keys(app, pilot, "y")
        assert [_state(store, m) for m in ("mem_registry", "mem_tests")] == ["needs_review", "needs_review"]
        assert app.screen.query_one("#queue", QueueList).anchor is None  # the selection is used up
        await pilot.press("u")  # one undo for the batch
        await _settle(app, pilot)
    assert [_state(store, m) for m in ("mem_registry", "mem_tests")] == ["candidate", "candidate"]


async def test_gates_are_shown_and_approve_refuses_with_the_reason(store):
    app = MemtuiApp(store, ACTOR)
    async with app.run_test(size=(140, 40)) as pilot:
        await _settle(app, pilot)
        await _goto(app, pilot, "mem_adr")
        shown = "\n".join(line.plain for line in app.screen.query_one("#detail", MemoryDetail).lines)
        assert "⛔ gate: high impact needs a lead" in shown
        await _keys(app, pilot, "a")
        assert app._notifications and list(app._notifications)[-1].title == "Approve refused"
        assert _state(store, "mem_adr") == "candidate" and _cursor_id(app) == "mem_adr"
        await _goto(app, pilot, "mem_zz_bare")
        shown = "\n".join(line.plain for line in app.screen.query_one("#detail", MemoryDetail).lines)
        assert "⛔ gate: missing evidence" in shown
        await _keys(app, pilot, "a")
        assert len(app._notifications) == 1  # the refusals do not pile up
        assert "needs evidence" in list(app._notifications)[-1].message
        await _goto(app, pilot, "mem_registry")
        shown = "\n".join(line.plain for line in app.screen.query_one("#detail", MemoryDetail).lines)
        assert "gate:" not in shown
    assert len(_history(store, "mem_adr")) == len(_history(store, "mem_zz_bare")) == 1


async def test_filter_is_kept_across_screens_and_saved_per_user(store):
    app = MemtuiApp(store, ACTOR)
    async with app.run_test(size=(140, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press("f")
        await pilot.pause()
        await _keys(app, pilot, *"conf=0.5..0.85 repo=order-service", "enter")
        assert _ids(app) == ["mem_cache_ttl", "mem_registry", "mem_tests"]
        bar = app.screen.query_one("#filter-bar").text.plain
        assert "repo=order-service" in bar and "conf=0.5..0.85" in bar
        assert "decided 0 / 3" in app.screen.query_one("#counter").text.plain
        await pilot.press("h")  # the health screen and back
        await _settle(app, pilot)
        await _keys(app, pilot, "escape")
        assert _ids(app) == ["mem_cache_ttl", "mem_registry", "mem_tests"]
        await pilot.press("f")
        await pilot.pause()
        await _keys(app, pilot, "ctrl+a", "ctrl+k", *"colour=red", "enter")
        assert "unknown filter 'colour'" in list(app._notifications)[-1].message
        assert _ids(app) == ["mem_cache_ttl", "mem_registry", "mem_tests"]
    saved = json.loads((Path(os.environ["XDG_CONFIG_HOME"]) / "memtui" / "queue.json").read_text())
    (view,) = saved["stores"].values()
    assert QueueFilter.from_dict(view) == QueueFilter(repository_id="order-service", min_confidence=0.5,
                                                      max_confidence=0.85)
    app2 = MemtuiApp(store, ACTOR)  # the next session starts with the saved view
    async with app2.run_test(size=(140, 30)) as pilot:
        await _settle(app2, pilot)
        assert _ids(app2) == ["mem_cache_ttl", "mem_registry", "mem_tests"]
        await pilot.press("f")
        await pilot.pause()
        await pilot.press("ctrl+a", "ctrl+k", "enter")  # an empty line clears the filters
        await _settle(app2, pilot)
        assert _ids(app2) == ORDER


async def test_search_as_you_type_and_escape_clears(store):
    app = MemtuiApp(store, ACTOR)
    async with app.run_test(size=(140, 30)) as pilot:
        await _settle(app, pilot)
        await _keys(app, pilot, "slash", *"rule", "enter")
        assert _ids(app) == ["mem_adr", "mem_registry", "mem_tests"]
        assert "/rule" in app.screen.query_one("#filter-bar").text.plain
        await pilot.press("slash", "space", *"registered")
        await pilot.pause(0.3)  # the search runs once typing pauses
        await _settle(app, pilot)
        assert _ids(app) == ["mem_registry"]
        await _keys(app, pilot, "escape")
        assert _ids(app) == ORDER and _cursor_id(app) == "mem_registry"  # the cursor stays on its memory
        await pilot.press("x")  # the keys reach the queue again
        await _settle(app, pilot)
    assert _state(store, "mem_registry") == "rejected"


async def test_sort_keys(store):
    app = MemtuiApp(store, ACTOR)
    async with app.run_test(size=(140, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press("o")  # priority: high impact first, then oldest
        await _settle(app, pilot)
        assert _ids(app) == ["mem_adr", "mem_cache_ttl", "mem_registry", "mem_zz_bare", "mem_tests"]
        assert "sort priority" in app.screen.query_one("#filter-bar").text.plain
        await pilot.press("o")  # age: oldest first
        await _settle(app, pilot)
        assert _ids(app) == ["mem_cache_ttl", "mem_adr", "mem_registry", "mem_zz_bare", "mem_tests"]
        await pilot.press("O")  # reversed
        await _settle(app, pilot)
        assert _ids(app) == ["mem_tests", "mem_zz_bare", "mem_registry", "mem_adr", "mem_cache_ttl"]
        await pilot.press("o", "O")  # confidence, least confident first
        await _settle(app, pilot)
        assert _ids(app) == ["mem_zz_bare", "mem_tests", "mem_cache_ttl", "mem_registry", "mem_adr"]
        await pilot.press("o")  # back to state order
        await _settle(app, pilot)
        assert _ids(app) == ORDER
