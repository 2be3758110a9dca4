"""The memtui Textual app: holds the review service and the acting reviewer, opens the queue.

Screens only show state and send intents to services; no SQL and no git here
(DESIGN.md, "Layers"). Heavy libraries (scikit-learn, gitpython) are not imported here.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy.engine import Engine
from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from memtui.domain.invariants import Actor
from memtui.review.service import ReviewService


class MemtuiApp(App):
    """memtui's TUI. ``engine`` is an open store, ``actor`` the reviewer recorded on every event."""

    TITLE = "memtui"
    CSS_PATH = "app.tcss"
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", show=False, id="app.quit")]

    def __init__(self, engine: Engine, actor: Actor) -> None:
        super().__init__()
        self.engine = engine
        self.actor = actor
        self.service = ReviewService(engine, actor)  # lists only what the actor may see (issue 9)

    def on_mount(self) -> None:
        from memtui.screens.queue import QueueScreen

        self.push_screen(QueueScreen())

    def action_health(self) -> None:
        """Open the health screen."""
        from memtui.screens.health import HealthScreen

        self.push_screen(HealthScreen())

    def action_memory(self, memory_id: str) -> None:
        """Open one memory's detail and full history (``memtui.screens.memory``)."""
        from memtui.screens.memory import MemoryScreen

        self.push_screen(MemoryScreen(memory_id))

    def action_duplicates(self) -> None:
        """Open the duplicate clusters screen."""
        from memtui.screens.duplicates import DuplicatesScreen

        self.push_screen(DuplicatesScreen())

    def action_conflicts(self) -> None:
        """Open the conflicts screen."""
        from memtui.screens.conflicts import ConflictsScreen

        self.push_screen(ConflictsScreen())

    def action_compaction(self) -> None:
        """Open the compaction proposals screen."""
        from memtui.screens.compaction import CompactionScreen

        self.push_screen(CompactionScreen())

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

        from memtui.reports.decisions import write_decision_report
        from memtui.text import visible_line

        target = Path(path).expanduser().resolve()
        try:
            n = write_decision_report(self.engine, target)
        except OSError as exc:
            self.call_from_thread(self.notify, visible_line(f"Cannot write {target}: {exc.strerror or exc}"),
                                  severity="error", markup=False)
            return
        self.call_from_thread(self.notify, visible_line(f"Wrote {n} decision{'' if n == 1 else 's'} to {target}"),
                              markup=False)
