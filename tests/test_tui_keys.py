"""One keymap everywhere (issue 11, item 4), under Pilot on the demo store: every common key on
every screen, the screen letters, the user's keymap file (applied, and reported when bad), and
memtui's commands in the palette."""

from __future__ import annotations

import pytest
from sqlmodel import Session
from textual.command import CommandPalette
from textual.containers import VerticalScroll

from memtui.app import MemtuiApp
from memtui.clock import utcnow
from memtui.domain.invariants import Actor
from memtui.review.service import ReviewService
from memtui.screens.compaction import CompactionScreen
from memtui.screens.conflicts import ConflictsScreen
from memtui.screens.dialogs import ConfirmDialog
from memtui.screens.duplicates import DuplicatesScreen
from memtui.screens.evidence import EvidenceScreen
from memtui.screens.health import HealthScreen
from memtui.screens.help import HelpScreen
from memtui.screens.queue import QueueScreen
from memtui.store.models import CompactionProposal, DuplicateCluster

REV = Actor("human", "reviewer-7", "reviewer")
EVIDENCE_OF = "mem_rule_registry_convention"  # a demo memory whose first evidence is a changed span


@pytest.fixture
def store(demo_copy):
    """The demo store plus a second duplicate cluster and compaction proposal, so every list has two rows."""
    queue = [i.memory_id for i in ReviewService(demo_copy).queue_page(None, 50)]
    with Session(demo_copy) as s, s.begin():
        s.add(DuplicateCluster(cluster_id="dup-zz-second", repository_id="order-service", scope_key="x:y",
                               type="code_fact", members=queue[-2:], canonical_id=queue[-1], best_score=70.0,
                               scores={}, method="fuzzy", explanation="added by the test", created_at=utcnow()))
        s.add(CompactionProposal(proposal_id="memcomp_zz_second", tenant_id="acme", repository_id="order-service",
                                 module_path=None, members=queue[-2:], proposed_statement="Second proposal.",
                                 proposed_type="code_fact", shared=["Second"], created_at=utcnow()))
    return demo_copy


async def _settle(app, pilot):
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def _press(app, pilot, *keys):
    for key in keys:
        await pilot.press(key)
        await _settle(app, pilot)


async def _open(app, pilot, name: str):
    """Open screen ``name`` from the queue the way a user does."""
    await _settle(app, pilot)
    if name == "evidence":
        table = app.screen.query_one("#queue")
        table.move_cursor(row=[r.memory_id for r in table.rows].index(EVIDENCE_OF))
        await _press(app, pilot, "e")
    elif name != "queue":
        await _press(app, pilot, {"conflicts": "C", "duplicates": "d", "compaction": "p", "health": "h"}[name])
    return app.screen


SCREEN_CLASS = {"queue": QueueScreen, "conflicts": ConflictsScreen, "duplicates": DuplicatesScreen,
                "compaction": CompactionScreen, "health": HealthScreen, "evidence": EvidenceScreen}
LISTS = ["queue", "conflicts", "duplicates", "compaction"]


@pytest.mark.parametrize("name", LISTS)
async def test_movement_keys_drive_the_main_list(store, name):
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(app, pilot, name)
        assert isinstance(screen, SCREEN_CLASS[name])
        table = screen.main_list()
        n = table.row_count
        assert n >= 2 and table.cursor_row == 0
        expected = [("j", 1), ("k", 0), ("down", 1), ("up", 0), ("G", n - 1), ("g", 0), ("end", n - 1),
                    ("home", 0), ("right_square_bracket", 1), ("left_square_bracket", 0),
                    ("left_square_bracket", n - 1), ("right_square_bracket", 0)]  # ] and [ wrap round
        for key, row in expected:
            await _press(app, pilot, key)
            assert (key, table.cursor_row) == (key, row)


@pytest.mark.parametrize("name", ["health", "evidence"])
async def test_movement_keys_scroll_a_screen_without_a_list(store, name):
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(80, 16)) as pilot:  # small enough for both to scroll
        screen = await _open(app, pilot, name)
        body = screen.main_list()
        assert isinstance(body, VerticalScroll) and body.max_scroll_y > 1
        for key, where in [("j", 1), ("k", 0), ("G", body.max_scroll_y), ("g", 0), ("end", body.max_scroll_y),
                           ("home", 0)]:
            await _press(app, pilot, key)
            assert (key, body.scroll_y) == (key, where)


@pytest.mark.parametrize("name", list(SCREEN_CLASS))
async def test_help_palette_back_and_screen_letters_on_every_screen(store, name):
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(app, pilot, name)
        await _press(app, pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        ids = {row[2] for row in app.screen._rows}
        assert {"nav.help", "nav.quit", "nav.down", "nav.palette", "goto.health"} <= ids
        box = app.screen.query_one("#help-box")
        assert box.max_scroll_y > 0  # at 80x24 the keys do not fit: j and k scroll them
        await _press(app, pilot, "j", "j")
        assert box.scroll_y == 2
        await _press(app, pilot, "k")
        assert box.scroll_y == 1
        await _press(app, pilot, "escape")
        assert app.screen is screen
        for key in ("colon", "ctrl+p"):
            await _press(app, pilot, key)
            assert isinstance(app.screen, CommandPalette)
            await _press(app, pilot, "escape")
            assert app.screen is screen
        # a letter opens its screen straight above the queue; i goes back to the queue
        letter, target = ("p", CompactionScreen) if name == "health" else ("h", HealthScreen)
        await _press(app, pilot, letter)
        assert isinstance(app.screen, target) and isinstance(app.screen_stack[-2], QueueScreen)
        await _press(app, pilot, "i")
        assert isinstance(app.screen, QueueScreen) and len(app.screen_stack) == 2
        if name != "queue":
            screen = await _open(app, pilot, name)
            await _press(app, pilot, "escape")
            assert isinstance(app.screen, QueueScreen)
        await _press(app, pilot, "escape")  # nothing under the queue: escape stays
        assert isinstance(app.screen, QueueScreen)


@pytest.mark.parametrize("name", list(SCREEN_CLASS))
async def test_q_quits_from_every_screen(store, name):
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(app, pilot, name)
        await pilot.press("q")
        await pilot.pause()
        assert app.return_code == 0


async def test_history_letter_opens_the_memory_in_view(store):
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(app, pilot)
        first = app.screen.current_memory_id()
        await _press(app, pilot, "H")
        assert app.screen.current_memory_id() == first and not isinstance(app.screen, QueueScreen)


async def test_next_unresolved_skips_decided_rows_in_the_queue(store):
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(app, pilot)
        table = app.screen.main_list()
        n = table.row_count
        await _press(app, pilot, "x")  # reject row 0: the cursor advances to row 1
        assert table.cursor_row == 1
        await _press(app, pilot, "k", "right_square_bracket")  # from the decided row 0 to row 1
        assert table.cursor_row == 1
        await _press(app, pilot, "left_square_bracket")  # back past row 0 (decided) to the last row
        assert table.cursor_row == n - 1


async def test_rejecting_a_compaction_asks_first(store):
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await _open(app, pilot, "compaction")
        proposal = screen.current().proposal_id
        await _press(app, pilot, "x")
        assert isinstance(app.screen, ConfirmDialog)
        await _press(app, pilot, "n")
        with Session(store) as s:
            assert s.get(CompactionProposal, proposal).status == "open"
        await _press(app, pilot, "x", "y")
        with Session(store) as s:
            assert s.get(CompactionProposal, proposal).status == "rejected"


# ---- the user's keymap file ----------------------------------------------------------------

def _keymap_file(tmp_path, monkeypatch, text: str):
    """A keymap file holding ``text``, where MEMTUI_KEYMAP points."""
    path = tmp_path / "keymap.yaml"
    path.write_text(text)
    monkeypatch.setenv("MEMTUI_KEYMAP", str(path))
    return path


async def test_keymap_file_is_applied(store, tmp_path, monkeypatch):
    keymap = _keymap_file(tmp_path, monkeypatch, "queue.reject: y\nnav.down: ctrl+n\ngoto.health: F2\n")
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(app, pilot)
        assert [(n.title, n.message) for n in app._notifications] == []
        table = app.screen.main_list()
        first = app.screen.current_memory_id()
        await _press(app, pilot, "x")  # no longer reject
        assert ReviewService(store).detail(first).state == "needs_review"
        await _press(app, pilot, "y")
        assert ReviewService(store).detail(first).state == "invalidated"  # it was active before review
        row = table.cursor_row
        await _press(app, pilot, "ctrl+n")
        assert table.cursor_row == row + 1
        await _press(app, pilot, "j")  # nav.down's keys were replaced
        assert table.cursor_row == row + 1
        await _press(app, pilot, "f2")
        assert isinstance(app.screen, HealthScreen)
        await _press(app, pilot, "question_mark")
        rows = {binding_id: key for key, _desc, binding_id in app.screen._rows}
        assert rows["goto.health"] == "f2" and rows["nav.down"] == "^n"


async def test_bad_keymap_file_is_reported_and_the_rest_applies(store, tmp_path, monkeypatch):
    keymap = _keymap_file(tmp_path, monkeypatch, "queue.approve: y\nqueue.aprove: z\nnav.up: ctrl+nope\nnav.top: {a: 1}\n")
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(app, pilot)
        assert isinstance(app.screen, QueueScreen) and app.screen.main_list().row_count > 0
        [note] = app._notifications
        assert note.severity == "error" and note.title == "Keymap: 3 problems (bad entries left out)"
        assert note.message.splitlines() == [
            f"{keymap}:2: 'queue.aprove': no binding has this id (? lists the ids of each screen)",
            f"{keymap}:3: 'nav.up': 'ctrl+nope' is not a key Textual knows",
            f"{keymap}:4: 'nav.top': the value must be a key, keys separated by commas, or a list of keys"]
        assert app._keymap == {"queue.approve": "y"}


async def test_a_key_taken_from_another_binding_is_told_once(store, tmp_path, monkeypatch):
    keymap = _keymap_file(tmp_path, monkeypatch, "queue.approve: x\n")
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(app, pilot)
        notes = [(n.title, n.message) for n in app._notifications]
        assert notes == [("Keymap: 1 problem (bad entries left out)",
                          f"{keymap}:1: 'queue.approve': x was 'queue.reject''s key on QueueScreen, which now has none there")]
        assert app.screen.active_bindings["x"].binding.id == "queue.approve"


async def test_keymap_file_that_is_not_yaml_names_its_line(store, tmp_path, monkeypatch):
    keymap = _keymap_file(tmp_path, monkeypatch, "queue.approve: y\nnav.down: [j\n")
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(app, pilot)
        [note] = app._notifications
        assert note.message.startswith(f"{keymap}:3: not valid YAML")
        assert isinstance(app.screen, QueueScreen) and app._keymap == {}


def test_every_binding_has_an_id():
    from textual.binding import Binding
    from textual.screen import Screen

    import memtui.keymap as km

    missing = []
    for cls in [MemtuiApp] + [c for c in _all_screens() if issubclass(c, Screen)]:
        for klass in cls.__mro__:
            if klass.__module__.startswith("memtui"):
                missing += [f"{klass.__name__}: {b.key}" for b in klass.__dict__.get("BINDINGS", [])
                            if isinstance(b, Binding) and not b.id]
    assert missing == []
    assert {"nav.down", "goto.queue", "queue.approve", "compaction.reject"} <= km.binding_ids(km.memtui_classes(MemtuiApp))


def _all_screens():
    import importlib
    import pkgutil

    import memtui.screens

    for info in pkgutil.iter_modules(memtui.screens.__path__):
        yield from (v for v in vars(importlib.import_module(f"memtui.screens.{info.name}")).values()
                    if isinstance(v, type))


# ---- the palette ---------------------------------------------------------------------------

async def test_palette_holds_memtuis_commands(store):
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(app, pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        first = app.screen.current_memory_id()
        for title in ["Open review queue", "Open conflicts", "Open duplicate clusters", "Open compaction proposals",
                      "Open memory health", f"History of {first}", "Jump to memory…", "Export decisions…",
                      "Run maintenance", "Switch theme (light/dark)"]:
            assert title in titles
        assert titles.index("Open review queue") < titles.index("Quit")  # memtui's first, then Textual's
        dark = app.current_theme.dark
        next(c for c in app.get_system_commands(app.screen) if c.title.startswith("Switch theme")).callback()
        assert app.current_theme.dark is not dark


async def test_palette_jumps_to_a_memory_by_part_of_its_id(store):
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(120, 30)) as pilot:
        await _settle(app, pilot)
        await _press(app, pilot, "colon")
        await pilot.press(*"mem_rule_reg")
        for _ in range(40):  # the palette searches in the background
            await pilot.pause(0.05)
            option_list = app.screen.query_one("CommandList")
            prompts = [str(option_list.get_option_at_index(i).prompt).splitlines()[0]
                       for i in range(option_list.option_count)]
            if any(p.startswith("Jump to memory") for p in prompts):
                break
        assert "Jump to memory mem_rule_registry_convention" in prompts
        await pilot.press("down")
        while not str(option_list.get_option_at_index(option_list.highlighted).prompt).startswith(
                "Jump to memory mem_rule_registry_convention"):
            await pilot.press("down")
        await _press(app, pilot, "enter")
        assert app.screen.current_memory_id() == "mem_rule_registry_convention"


async def test_home_and_end_stay_a_text_fields_own():
    # the queue's filter bar is an Input on a BaseScreen: home/end (priority bindings) must reach it
    from textual.app import App
    from textual.widgets import DataTable, Input

    from memtui.screens.base import BaseScreen

    class WithInput(BaseScreen):
        def compose(self):
            yield Input("abcdef", id="field")
            yield DataTable(id="rows")

        def on_mount(self):
            table = self.query_one(DataTable)
            table.add_column("n")
            table.add_rows([[str(i)] for i in range(5)])

    class Tiny(App):
        def on_mount(self):
            self.push_screen(WithInput())

    app = Tiny()
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        field, table = app.screen.query_one(Input), app.screen.query_one(DataTable)
        field.focus()
        await pilot.press("home")
        assert field.cursor_position == 0 and table.cursor_row == 0
        await pilot.press("end")
        assert field.cursor_position == 6 and table.cursor_row == 0
        table.focus()
        await pilot.press("end")
        assert table.cursor_row == 4
        await pilot.press("home")
        assert table.cursor_row == 0


async def test_after_a_decision_the_cursor_stays_on_the_row_of_the_next_item(store):
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await _open(app, pilot, "compaction")
        ids = [p.proposal_id for p in screen.items]
        await _press(app, pilot, "x", "y")  # reject the first
        assert [p.proposal_id for p in screen.items] == ids[1:] and screen.current().proposal_id == ids[1]


def test_memory_ids_match_any_part_of_the_id_starting_ones_first(store):
    """The palette's jump: "junit" (middle of the id) finds mem_junit5_tests; "mem_rule" lists the
    ids starting with it before those that only hold it."""
    from memtui.review.workstation import Workstation

    ws = Workstation(store, REV)
    assert ws.memory_ids("junit") == ["mem_junit5_tests"]
    ids = ws.memory_ids("rule")
    assert ids == sorted(ids, key=lambda i: (not i.startswith("rule"), i)) and "mem_rule_registry_convention" in ids
    assert ws.memory_ids("no-such-part") == []


async def test_tab_into_the_detail_pane_then_j_k_scroll_it(store):
    """README: tab moves the focus into the detail pane to scroll (the movement keys scroll it, the
    queue's cursor stays); tab again gives the keys back to the queue."""
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(app, pilot)
        queue, pane = app.screen.query_one("#queue"), app.screen.query_one("#detail-pane")
        assert pane.max_scroll_y > 2  # at 80x24 the detail does not fit
        await pilot.press("tab", "j", "j", "down")
        await pilot.pause()
        assert (queue.cursor, pane.scroll_y) == (0, 3)
        await pilot.press("k")
        await pilot.pause()
        assert pane.scroll_y == 2
        await pilot.press("tab", "j")
        await _settle(app, pilot)
        assert queue.cursor == 1
