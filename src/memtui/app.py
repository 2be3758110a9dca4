"""The memtui Textual app: holds the review service and the acting reviewer, opens the queue.

Screens only show state and send intents to services; no SQL and no git here
(DESIGN.md, "Layers"). Heavy libraries (scikit-learn, gitpython) are not imported here.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from memtui.domain.invariants import Actor
from memtui.review.workstation import Workstation


class MemtuiApp(App):
    """memtui's TUI. ``store`` is an open store (an engine from :func:`memtui.store.engine.open_store`),
    handed to the services and not kept here; ``actor`` is the reviewer recorded on every event."""

    TITLE = "memtui"
    CSS_PATH = "app.tcss"
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

    # ---- one letter per screen -------------------------------------------------------------
    def action_goto(self, name: str) -> None:
        """Open screen ``name`` (a key of :data:`SCREENS`, or ``history``: the history of the
        memory in view) straight above the queue, so escape always leads back to the queue."""
        if name == "history":
            memory_id = getattr(self.screen, "current_memory_id", lambda: None)()
            if memory_id is None:
                self.notify("No memory in view to show the history of.", severity="warning")
                return
            self.open_memory(memory_id)
            return
        target, queue = _screen_class(name), _screen_class("queue")
        if isinstance(self.screen, target):
            return
        while len(self.screen_stack) > 2 and not isinstance(self.screen, queue):
            self.pop_screen()
        if target is not queue:
            self.push_screen(target())

    def open_memory(self, memory_id: str) -> None:
        """Show one memory: its evidence, recorded vs HEAD (the history screen, once this build has it)."""
        from memtui.screens.evidence import EvidenceScreen

        self.push_screen(EvidenceScreen(memory_id))

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
        """Textual's palette commands, then memtui's."""
        yield from super().get_system_commands(screen)
        yield SystemCommand("Export decisions…", "Write the decision report (Markdown) to a file",
                            self.action_export_decisions)

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
