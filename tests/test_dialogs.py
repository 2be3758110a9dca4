"""Dialogs that teach (issue 24, Build 3): each names its keys, the safe default is visible and focused, the
compaction text is edited in a multi-line editor, and the jump dialog finds a memory by any part of its id
or statement, as the palette does."""

from __future__ import annotations

from sqlmodel import Session
from textual.widgets import Button, OptionList, Static, TextArea

from memtui.app import MemtuiApp
from memtui.review.service import ReviewService
from memtui.screens.dialogs import ConfirmDialog, EditDialog, JumpDialog, TextDialog
from memtui.store.models import CompactionProposal
from tests.test_tui_proposals import LEAD, store  # noqa: F401  (the fixture)

from memtui.domain.invariants import Actor

REV = Actor("human", "reviewer-9", "reviewer")


async def _settle(app, pilot):
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


def _keys(screen) -> str:
    return str(screen.query_one("#dialog-keys", Static).render())


async def test_confirm_names_its_keys_and_focuses_no(store):  # noqa: F811
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(app, pilot)
        await pilot.press("p")
        await _settle(app, pilot)
        await pilot.press("x")
        await _settle(app, pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmDialog)
        assert _keys(dialog) == "y confirm · n/esc cancel · enter: the focused button (No)"
        assert app.focused is dialog.query_one("#no", Button)
        assert str(dialog.query_one("#no", Button).label) == "No (default)"
        assert str(dialog.query_one("#yes", Button).label) == "Yes (y)"
        await pilot.press("enter")  # the default: nothing happens
        await _settle(app, pilot)
    with Session(store) as s:
        assert s.get(CompactionProposal, "memcomp_1").status == "open"


async def test_the_compaction_text_is_edited_over_several_lines(store):  # noqa: F811
    app = MemtuiApp(store, LEAD)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(app, pilot)
        await pilot.press("p")
        await _settle(app, pilot)
        await pilot.press("e")
        await _settle(app, pilot)
        dialog = app.screen
        assert isinstance(dialog, TextDialog)
        area = dialog.query_one(TextArea)
        assert area.soft_wrap and area.text.startswith("RuleRegistry: OrderValidator calls")
        assert _keys(dialog).startswith("ctrl+s save · esc cancel")
        await pilot.press("f7", *"RuleRegistry stores the rules;", "enter", *"OrderValidator calls it.")
        await pilot.press("ctrl+s")
        await _settle(app, pilot)
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("y")
        await _settle(app, pilot)
    with Session(store) as s:
        new_id = s.get(CompactionProposal, "memcomp_1").new_memory_id
    assert ReviewService(store).detail(new_id).statement == "RuleRegistry stores the rules; OrderValidator calls it."


async def test_escape_leaves_the_text_unchanged(store):  # noqa: F811
    app = MemtuiApp(store, LEAD)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(app, pilot)
        await pilot.press("p")
        await _settle(app, pilot)
        await pilot.press("e", "x", "escape")
        await _settle(app, pilot)
        assert not isinstance(app.screen, (TextDialog, ConfirmDialog))
    with Session(store) as s:
        assert s.get(CompactionProposal, "memcomp_1").status == "open"


async def _jump(app, pilot, typed: str) -> list[str]:
    app.action_ask_memory()
    await _settle(app, pilot)
    assert isinstance(app.screen, JumpDialog)
    assert _keys(app.screen) == "type to find · ↑↓ choose · enter open · esc cancel"
    await pilot.press(*typed)
    await _settle(app, pilot)
    hits = app.screen.query_one(OptionList)
    return [str(hits.get_option_at_index(i).prompt) for i in range(hits.option_count)]


async def test_jump_finds_by_part_of_the_statement_or_the_id(store):  # noqa: F811
    detail = ReviewService(store).detail("mem_c")
    word = detail.statement.split()[-1].strip(".")  # a word of its statement, not of its id
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        shown = await _jump(app, pilot, word)
        assert any(p.startswith("mem_c  ") and detail.statement in p for p in shown)
        while app.screen.query_one(OptionList).highlighted != next(i for i, p in enumerate(shown)
                                                                   if p.startswith("mem_c  ")):
            await pilot.press("down")
        await pilot.press("enter")
        await _settle(app, pilot)
        assert app.screen.current_memory_id() == "mem_c"
        await pilot.press("escape")
        await _settle(app, pilot)
        shown = await _jump(app, pilot, "em_d")  # any part of an id
        assert shown[0].startswith("mem_d  ")
        await pilot.press("escape")
        await _settle(app, pilot)
        assert not isinstance(app.screen, JumpDialog)


async def test_edit_dialog_names_its_keys(store):  # noqa: F811
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(app, pilot)
        app.push_screen(EditDialog("Filter", ""))
        await _settle(app, pilot)
        assert _keys(app.screen) == "enter save · esc cancel"
