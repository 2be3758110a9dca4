"""Run maintenance from the TUI: a worker does the jobs, a progress bar shows how far it is."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import ProgressBar, Static

from memtui.widgets.literal import visible


class MaintenanceScreen(ModalScreen[bool]):
    """Runs ``memtui maintain`` over every registered repository; dismisses with True when it changed something."""

    CSS_PATH = "maintenance.tcss"
    BINDINGS = [Binding("escape", "close", "Close", id="maintenance.close")]

    def __init__(self) -> None:
        super().__init__()
        self._done = False
        self._changed = False

    def compose(self) -> ComposeResult:
        with Vertical(id="maint-box"):
            yield Static(Text("Maintenance", style="bold"))
            yield Static("starting…", id="maint-step")
            yield ProgressBar(id="maint-progress", show_eta=False)
            yield Static("", id="maint-result")

    def on_mount(self) -> None:
        self.run_maintenance()

    @work(thread=True, exclusive=True, group="maintenance")
    def run_maintenance(self) -> None:
        """Run every maintenance job in a thread; progress and the result are posted back to the screen."""
        from memtui.clock import utcnow
        from memtui.maintenance.runner import MaintenanceError, result_notes

        call = self.app.call_from_thread
        try:
            results = self.app.services.maintain(now=utcnow(),
                               progress=lambda msg: call(self._step, msg),
                               on_progress=lambda done, total: call(self._progress, done, total))
        except (MaintenanceError, OSError) as exc:
            call(self._finish, Text(f"Maintenance failed: {visible(str(exc))}", style="red"), False)
            return
        lines = Text()
        changed = False
        for r in results:
            where = f" {r.repository_id}" if r.repository_id else ""
            lines.append(f"{r.job_type}{where}: looked at {r.selected}, updated {r.updated}\n")
            for note in result_notes(r):
                lines.append(f"  {visible(note)}\n", style="yellow")
            changed = changed or r.updated > 0
        call(self._finish, lines, changed)

    def _step(self, message: str) -> None:
        self.query_one("#maint-step", Static).update(Text(visible(message)))

    def _progress(self, done: int, total: int) -> None:
        self.query_one("#maint-progress", ProgressBar).update(total=max(total, 1), progress=done)

    def _finish(self, text: Text, changed: bool) -> None:
        self._done, self._changed = True, changed
        bar = self.query_one("#maint-progress", ProgressBar)
        bar.update(total=bar.total or 1, progress=bar.total or 1)
        self.query_one("#maint-step", Static).update(Text("done — escape to close", style="bold green"))
        self.query_one("#maint-result", Static).update(text)

    def action_close(self) -> None:
        """Close when the run is over (the worker cannot be interrupted half-way through a transaction)."""
        if not self._done:
            self.notify("Maintenance is still running.", severity="warning")
            return
        self.dismiss(self._changed)
