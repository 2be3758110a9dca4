"""Snapshot tests of the screens (fixed terminal size, fixed clock, fixed data)."""

from __future__ import annotations

from pathlib import Path

from memtui.app import MemtuiApp
from memtui.domain.invariants import Actor
from memtui.importers.native import import_files
from memtui.store.engine import open_store

DATA = Path(__file__).parent / "data"


def _app(tmp_path, *files):
    engine = open_store(str(tmp_path / "snap.db"))
    import_files(engine, [DATA / f for f in files], Actor("human", "loader"))
    return MemtuiApp(engine, Actor("human", "reviewer-7"))


async def _settled(pilot):
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def test_queue_screen(snap_compare, tmp_path):
    async def run_before(pilot):
        await _settled(pilot)
        await pilot.press("j")
        await _settled(pilot)

    assert snap_compare(_app(tmp_path, "queue.yaml"), terminal_size=(150, 32), run_before=run_before)


def test_queue_screen_with_markup_injection(snap_compare, tmp_path):
    async def run_before(pilot):
        await _settled(pilot)

    assert snap_compare(_app(tmp_path, "markup.json"), terminal_size=(150, 32), run_before=run_before)


def test_help_screen(snap_compare, tmp_path):
    async def run_before(pilot):
        await _settled(pilot)
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(_app(tmp_path, "queue.yaml"), terminal_size=(100, 40), run_before=run_before)


def _demo_app(tmp_path):
    from datetime import UTC, datetime

    from memtui.maintenance.runner import maintain
    from memtui.sample import set_up_demo

    engine = open_store(str(tmp_path / "demo.db"))
    set_up_demo(engine, tmp_path / "work", Actor("human", "loader", "lead"))
    maintain(engine, now=datetime(2026, 11, 30, 12, 0, tzinfo=UTC))
    return MemtuiApp(engine, Actor("human", "reviewer-7"))


def test_evidence_screen(snap_compare, tmp_path):
    async def run_before(pilot):
        await _settled(pilot)
        from memtui.widgets.queue_list import QueueList

        table = pilot.app.screen.query_one("#queue", QueueList)
        ids = [r.memory_id for r in table.rows]
        table.move_to(ids.index("mem_rule_registry_convention"))
        await _settled(pilot)
        await pilot.press("e")
        await _settled(pilot)
        await pilot.press("right_square_bracket")
        await _settled(pilot)

    assert snap_compare(_demo_app(tmp_path), terminal_size=(150, 32), run_before=run_before)


def test_health_screen(snap_compare, tmp_path):
    async def run_before(pilot):
        await _settled(pilot)
        await pilot.press("h")
        await _settled(pilot)

    assert snap_compare(_demo_app(tmp_path), terminal_size=(150, 36), run_before=run_before)


def test_duplicates_screen(snap_compare, tmp_path):
    async def run_before(pilot):
        await _settled(pilot)
        await pilot.press("d")
        await _settled(pilot)

    assert snap_compare(_demo_app(tmp_path), terminal_size=(150, 36), run_before=run_before)


def test_conflicts_screen(snap_compare, tmp_path):
    async def run_before(pilot):
        await _settled(pilot)
        await pilot.press("C")  # c comments in the queue (issue 11)
        await _settled(pilot)

    assert snap_compare(_demo_app(tmp_path), terminal_size=(150, 36), run_before=run_before)


def test_compaction_screen(snap_compare, tmp_path):
    async def run_before(pilot):
        await _settled(pilot)
        await pilot.press("p")
        await _settled(pilot)

    assert snap_compare(_demo_app(tmp_path), terminal_size=(150, 36), run_before=run_before)
