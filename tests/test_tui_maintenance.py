"""TUI screens of maintenance: evidence side by side, health, and running maintenance in a worker."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from textual.widgets import DataTable, ProgressBar

from memtui.widgets.queue_list import QueueList

from memtui.app import MemtuiApp
from memtui.domain.invariants import Actor
from memtui.maintenance.runner import maintain
from memtui.review.service import ReviewService
from memtui.sample import set_up_demo
from memtui.screens.evidence import EvidenceScreen
from memtui.screens.health import HealthScreen

ACTOR = Actor("human", "reviewer-7", "reviewer")
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)  # the tests' fixed clock (conftest)


@pytest.fixture
def demo_engine(sqlite_engine, tmp_path):
    set_up_demo(sqlite_engine, tmp_path / "work", Actor("human", "loader", "lead"))
    return sqlite_engine


async def _settle(app, pilot):
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def _open_evidence(app, pilot, memory_id):
    table = app.screen.query_one("#queue", QueueList)
    ids = [r.memory_id for r in table.rows]
    table.move_to(ids.index(memory_id))
    await _settle(app, pilot)
    await pilot.press("e")
    await _settle(app, pilot)
    return app.screen


async def test_evidence_screen_marks_changed_span_outdated(demo_engine):
    maintain(demo_engine, now=NOW)
    app = MemtuiApp(demo_engine, ACTOR)
    async with app.run_test(size=(160, 45)) as pilot:
        await _settle(app, pilot)
        screen = await _open_evidence(app, pilot, "mem_rule_registry_convention")
        assert isinstance(screen, EvidenceScreen)
        await pilot.press("right_square_bracket")  # evidence 2: the RuleRegistry.resolve symbol
        await _settle(app, pilot)
        c = screen.comparison
        assert (c.index, c.type, c.status, c.outdated) == (1, "symbol", "changed", True)
        assert c.recorded_label.endswith(":36-44 @ b258aea")
        assert c.current_label.endswith(" @ 43d3d11")
        assert len(c.hunks) == 1
        changed = [r for r in c.rows if r.tag != "equal"]
        assert changed[0].left.text.strip() == "return resolved;"
        await pilot.press("n")
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, EvidenceScreen)


async def test_evidence_screen_for_unchanged_span_is_not_outdated(demo_engine):
    maintain(demo_engine, now=NOW)
    ReviewService(demo_engine).decide("mem_order_validator_entrypoint", "needs-review", ACTOR)
    app = MemtuiApp(demo_engine, ACTOR)
    async with app.run_test(size=(160, 45)) as pilot:
        await _settle(app, pilot)
        screen = await _open_evidence(app, pilot, "mem_order_validator_entrypoint")
        c = screen.comparison
        assert (c.status, c.outdated, c.hunks) == ("valid", False, ())
        assert all(r.tag == "equal" for r in c.rows) and c.rows
        assert c.rows[0].left.number != c.rows[0].right.number  # shifted, same text


async def test_maintenance_runs_in_a_worker_and_reloads_the_queue(demo_engine):
    app = MemtuiApp(demo_engine, ACTOR)
    async with app.run_test(size=(160, 45)) as pilot:
        await _settle(app, pilot)
        before = len(app.screen.query_one("#queue", QueueList).rows)
        await pilot.press("m")
        await _settle(app, pilot)
        bar = app.screen.query_one("#maint-progress", ProgressBar)
        assert bar.total and bar.progress == bar.total
        await pilot.press("escape")
        await _settle(app, pilot)
        after = len(app.screen.query_one("#queue", QueueList).rows)
    assert ReviewService(demo_engine).detail("mem_rule_registry_convention").state == "needs_review"
    assert after == ReviewService(demo_engine).queue_count() != before  # the reloaded queue is the store's


async def test_health_screen_counts(demo_engine):
    app = MemtuiApp(demo_engine, ACTOR)
    async with app.run_test(size=(160, 45)) as pilot:
        await _settle(app, pilot)
        await pilot.press("h")
        await _settle(app, pilot)
        assert isinstance(app.screen, HealthScreen)
        table = app.screen.query_one("#health-table", DataTable)
        expected = {h.repository_id or "(org-wide)": h for h in ReviewService(demo_engine).health()}
        assert len(table.rows) == len(expected)
        row = table.get_row("order-service")
        assert row[1].plain == str(expected["order-service"].total)
        assert row[2].plain == str(expected["order-service"].by_state["candidate"])
