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
