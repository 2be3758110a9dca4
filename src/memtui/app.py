"""The memtui Textual app: holds the services (:class:`memtui.review.workstation.Workstation`) and the
acting reviewer, applies the user's keymap, opens the queue, and carries the palette's commands.

Screens only show state and send intents to services through ``app.services``; no SQL, no git
and no engine here (DESIGN.md, "Layers"). Heavy libraries (scikit-learn, gitpython) are not imported here.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from memtui.domain.invariants import Actor
from memtui.palette import MemoryJumpProvider
from memtui.review.workstation import Workstation

#: the light and dark themes "Switch theme" toggles between
LIGHT_THEME, DARK_THEME = "textual-light", "textual-dark"


class MemtuiApp(App):
    """memtui's TUI. ``store`` is an open store (an engine from :func:`memtui.store.engine.open_store`),
    handed to the services and not kept here; ``actor`` is the reviewer recorded on every event."""

    TITLE = "memtui"
    CSS_PATH = "app.tcss"
    COMMANDS = App.COMMANDS | {MemoryJumpProvider}
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True, id="app.quit"),
        Binding("ctrl+p", "command_palette", "Palette", show=False, priority=True, id="app.palette"),
    ]

    def __init__(self, store, actor: Actor) -> None:
        super().__init__()
        self.actor = actor
        self.services = Workstation(store, actor)  # lists only what the actor may see (issue 9)

    @property
    def service(self):
        """The review service (``services.review``): decisions and the queue's queries."""
        return self.services.review

    def on_mount(self) -> None:
        from memtui.screens.queue import QueueScreen

        self.push_screen(QueueScreen())
        self.apply_user_keymap()
        if (why := self.services.read_only) is not None:  # issue 21 item 7
            self.notify(f"The store is read-only ({why}): you can read everything; decisions are refused.",
                        title="Read-only", severity="warning", markup=False, timeout=10)

    # ---- hand-off to the reviewer's tools (issue 24, item 7) -----------------------------------
    def hand_off(self, run):
        """Call ``run()`` with the terminal handed over (``App.suspend``: an editor or a pager runs
        full screen, the TUI comes back as it was) and return its result; where the terminal
        cannot be handed over (a test's headless app), ``run()`` is called as it is."""
        from textual.app import SuspendNotSupported

        try:
            suspended = self.suspend()
            suspended.__enter__()
        except (SuspendNotSupported, RuntimeError):  # RuntimeError: no driver (the context never entered)
            return run()
        try:
            return run()
        finally:
            suspended.__exit__(None, None, None)
            self.refresh(layout=True)

    # ---- the user's keymap -----------------------------------------------------------------
    def apply_user_keymap(self) -> None:
        """Apply the user's keymap file (:func:`memtui.keymap.keymap_path`); what is wrong in it is
        notified, naming the file, line and entry, and the rest still applies."""
        from memtui.keymap import keymap_path, memtui_classes, read_keymap

        path = keymap_path()
        keymap, problems = read_keymap(path, lambda: memtui_classes(type(self)))
        if keymap:
            self.set_keymap(keymap)
        if problems:
            shown = "\n".join(str(p) for p in problems[:6])
            more = f"\n… and {len(problems) - 6} more" if len(problems) > 6 else ""
            self.notify(shown + more, title=f"Keymap: {len(problems)} problem{'' if len(problems) == 1 else 's'} (bad entries left out)",
                        severity="error", timeout=20, markup=False)

    # ---- one letter per screen -------------------------------------------------------------
    def action_goto(self, name: str) -> None:
        """Open screen ``name`` (a key of :data:`SCREENS`, or ``history``: the history of the
        memory in view) straight above the queue, so escape always leads back to the queue."""
        if name == "history":
            memory_id = getattr(self.screen, "current_memory_id", lambda: None)()
            if memory_id is None:
                self.notify("No memory in view to show the history of.", severity="warning")
                return
            from memtui.screens.memory import MemoryScreen

            if isinstance(self.screen, MemoryScreen) and self.screen.memory_id == memory_id:
                return
            self.action_memory(memory_id)
            return
        target, queue = _screen_class(name), _screen_class("queue")
        if isinstance(self.screen, target):
            return
        while len(self.screen_stack) > 2 and not isinstance(self.screen, queue):
            self.pop_screen()
        if target is not queue:
            self.push_screen(target())

    def action_memory(self, memory_id: str) -> None:
        """Open one memory's detail and full history (``memtui.screens.memory``)."""
        from memtui.screens.memory import MemoryScreen

        self.push_screen(MemoryScreen(memory_id))

    def action_maintain(self) -> None:
        """Run maintenance in a worker with a progress bar; reload what is on screen afterwards."""
        if self.actor.scopes is not None and self.actor.role != "maintainer":  # issue 9: roles from the table
            self.notify(f"maintenance needs the role maintainer; {self.actor.id} is a {self.actor.role}",
                        severity="error")
            return
        from memtui.screens.maintenance import MaintenanceScreen

        def done(changed: bool | None) -> None:
            if changed:
                for screen in self.screen_stack:
                    reload = getattr(screen, "reload", None)
                    if reload:
                        reload()

        self.push_screen(MaintenanceScreen(), done)

    # ---- the command palette ---------------------------------------------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """memtui's palette commands first (open each screen, jump to a memory, export, maintenance,
        theme), then Textual's; typing part of a memory id also offers it (:mod:`memtui.palette`)."""
        from memtui.screens.base import SCREEN_KEYS

        titles = {"queue": "review queue", "conflicts": "conflicts", "duplicates": "duplicate clusters",
                  "compaction": "compaction proposals", "health": "memory health"}
        for name, title in titles.items():
            yield SystemCommand(f"Open {title}", f"The {title} screen (key {SCREEN_KEYS[name][0]})",
                                partial(self.action_goto, name))
        memory_id = getattr(screen, "current_memory_id", lambda: None)()
        if memory_id:
            yield SystemCommand(f"History of {memory_id}", f"The memory in view (key {SCREEN_KEYS['history'][0]})",
                                partial(self.action_memory, memory_id))
        yield SystemCommand("Jump to memory…", "Open a memory by its id (or type part of the id here)",
                            self.action_ask_memory)
        yield SystemCommand("Export decisions…", "Write the decision report (Markdown) to a file",
                            self.action_export_decisions)
        yield SystemCommand("Run maintenance", "Revalidate, expire, dedupe, find conflicts and compactions, "
                            "scan for secrets", self.action_maintain)
        yield SystemCommand("Switch theme (light/dark)", f"Now {self.theme}", self.action_toggle_theme)
        yield from super().get_system_commands(screen)

    def action_toggle_theme(self) -> None:
        """Switch between the light and the dark theme."""
        self.theme = LIGHT_THEME if self.current_theme.dark else DARK_THEME

    def action_ask_memory(self) -> None:
        """Ask for a memory by part of its id or statement, then open it (an unknown or hidden id is said so)."""
        from memtui.screens.dialogs import JumpDialog

        def chosen(memory_id: str | None) -> None:
            if memory_id:
                self.jump_to_memory(memory_id)

        self.push_screen(JumpDialog("Jump to memory"), chosen)

    @work(thread=True, group="jump")
    def jump_to_memory(self, memory_id: str) -> None:
        """Open ``memory_id`` if the reviewer may see it, else say it is not there (thread worker)."""
        from memtui.text import visible_line

        if memory_id in self.services.memory_ids(memory_id, 1):
            self.call_from_thread(self.action_memory, memory_id)
        else:
            self.call_from_thread(self.notify, visible_line(f"No memory {memory_id} (or it is outside your scopes)."),
                                  severity="warning", markup=False)

    def action_export_decisions(self) -> None:
        """Ask where to write the decision report (default: a dated file in the current folder),
        then write it in a worker (issue 11, item 7)."""
        from memtui.clock import utcnow
        from memtui.screens.dialogs import EditDialog

        def chosen(path: str | None) -> None:
            if path:
                self.export_decisions(path)

        self.push_screen(EditDialog("Export decisions (Markdown) to", f"memtui-decisions-{utcnow():%Y-%m-%d}.md"),
                         chosen)

    @work(thread=True, group="export-decisions")
    def export_decisions(self, path: str) -> None:
        """Write the Markdown decision report to ``path`` (thread worker) and say where it went."""
        from pathlib import Path

        from memtui.text import visible_line

        target = Path(path).expanduser().resolve()
        try:
            n = self.services.write_decision_report(target)
        except OSError as exc:
            self.call_from_thread(self.notify, visible_line(f"Cannot write {target}: {exc.strerror or exc}"),
                                  severity="error", markup=False)
            return
        self.call_from_thread(self.notify, visible_line(f"Wrote {n} decision{'' if n == 1 else 's'} to {target}"),
                              markup=False)



#: the screens one letter opens: name -> (module under memtui.screens, class)
SCREENS: dict[str, tuple[str, str]] = {
    "queue": ("queue", "QueueScreen"), "conflicts": ("conflicts", "ConflictsScreen"),
    "duplicates": ("duplicates", "DuplicatesScreen"), "compaction": ("compaction", "CompactionScreen"),
    "health": ("health", "HealthScreen"),
}


def _screen_class(name: str) -> type[Screen]:
    """The class of screen ``name`` (imported on first use, to keep start-up light)."""
    import importlib

    module, cls = SCREENS[name]
    return getattr(importlib.import_module(f"memtui.screens.{module}"), cls)
