"""Snapshot tests of every screen at 80×24 and 160×48 (fixed clock, the demo store built once a
session), plus the markup-injection fixture and the light theme. Update only screens you changed
(``--snapshot-update``) and look at each SVG you accept."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtui.app import LIGHT_THEME, MemtuiApp
from memtui.domain.invariants import Actor
from memtui.importers.native import import_files
from memtui.store.engine import open_store

DATA = Path(__file__).parent / "data"
@pytest.fixture(autouse=True)
def _in_store_folder(monkeypatch, tmp_path):
    """The queue's header names the store relative to the current folder: run where the copy is,
    so it reads ``demo.db`` whatever the temporary path."""
    monkeypatch.chdir(tmp_path)


SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((160, 48), id="160x48")]
REVIEWER = Actor("human", "reviewer-7")


async def _settled(pilot):
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def _keys(*keys, before=None):
    """A run_before that lets the app settle, then presses ``keys`` one by one, settling after each."""
    async def run_before(pilot):
        await _settled(pilot)
        if before:
            await before(pilot)
            await _settled(pilot)
        for key in keys:
            await pilot.press(key)
            await _settled(pilot)
        _steady_cursors(pilot.app)

    return run_before


def _steady_cursors(app) -> None:
    """Stop every input's cursor blinking, shown: a blink caught in either phase (a loaded machine
    takes the picture later) made the palette's snapshot flaky."""
    from textual.widgets import Input

    for field in app.screen.query(Input):
        field.cursor_blink = False  # Input then shows its cursor


async def _to_evidence_memory(pilot):
    table = pilot.app.screen.query_one("#queue")
    table.move_cursor(row=[r.memory_id for r in table.rows].index("mem_rule_registry_convention"))


SCREENS = {
    "queue": _keys("j"),
    "help": _keys("question_mark"),
    "evidence": _keys("e", "right_square_bracket", before=_to_evidence_memory),
    "health": _keys("h"),
    "duplicates": _keys("d"),
    "conflicts": _keys("C"),
    "compaction": _keys("p"),
    "confirm": _keys("p", "x"),  # rejecting a compaction proposal asks first
    "palette": _keys("colon"),
}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("screen", list(SCREENS))
def test_screen(snap_compare, demo_copy, screen, size):
    assert snap_compare(MemtuiApp(demo_copy, REVIEWER), terminal_size=size, run_before=SCREENS[screen])


@pytest.mark.parametrize("screen", ["queue", "evidence", "conflicts"])
def test_light_theme(snap_compare, demo_copy, screen):
    async def run_before(pilot):
        pilot.app.theme = LIGHT_THEME
        await SCREENS[screen](pilot)

    assert snap_compare(MemtuiApp(demo_copy, REVIEWER), terminal_size=(160, 48), run_before=run_before)


def test_queue_screen_with_markup_injection(snap_compare, tmp_path):
    engine = open_store(str(tmp_path / "snap.db"))
    import_files(engine, [DATA / "markup.json"], Actor("human", "loader"))
    assert snap_compare(MemtuiApp(engine, REVIEWER), terminal_size=(150, 32), run_before=_keys())
