"""Run maintenance from the TUI: a worker does the jobs, a progress bar shows how far it is;
``c`` cancels after the job under way (each job is one transaction, so nothing is half-written)."""

from __future__ import annotations

import threading

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
    BINDINGS = [Binding("escape", "close", "Close", id="maintenance.close"),
                Binding("c", "cancel", "Cancel", id="maintenance.cancel")]

    def __init__(self) -> None:
        super().__init__()
        self._done = False
        self._changed = False
        self._cancel = threading.Event()

    def compose(self) -> ComposeResult:
        with Vertical(id="maint-box"):
            yield Static(Text("Maintenance", style="bold"))
            yield Static("starting…", id="maint-step")
            yield Static(Text("c cancels after the job under way · escape closes when it is done", style="dim"))
            yield ProgressBar(id="maint-progress", show_eta=False)
            yield Static("", id="maint-result")

    def on_mount(self) -> None:
        self.run_maintenance()

    @work(thread=True, exclusive=True, group="maintenance")
    def run_maintenance(self) -> None:
        """Run every maintenance job in a thread; progress and the result are posted back to the screen."""
        from memtui.clock import utcnow
        from memtui.domain.invariants import LifecycleError
        from memtui.maintenance.runner import MaintenanceError, jobs_not_run, result_notes

        call = self.app.call_from_thread
        try:
            results = self.app.services.maintain(now=utcnow(),
                               progress=lambda msg: call(self._step, msg),
                               on_progress=lambda done, total: call(self._progress, done, total),
                               cancelled=self._cancel.is_set)
        except (MaintenanceError, OSError, LifecycleError) as exc:  # LifecycleError: a read-only store (issue 21)
            call(self._finish, Text(f"Maintenance failed: {visible(str(exc))}", style="red"), False, None)
            return
        lines = Text()
        changed = False
        for r in results:
            where = f" {r.repository_id}" if r.repository_id else ""
            lines.append(f"{r.job_type}{where}: looked at {r.selected}, updated {r.updated}\n")
            for note in result_notes(r):
                lines.append(f"  {visible(note)}\n", style="yellow")
            changed = changed or r.updated > 0
        left = jobs_not_run(results) if self._cancel.is_set() else []
        if left:
            lines.append(f"cancelled: {', '.join(left)} did not run (run maintenance again to do them)\n",
                         style="bold yellow")
        call(self._finish, lines, changed, sum(r.updated for r in results), bool(left))

    def _step(self, message: str) -> None:
        self.query_one("#maint-step", Static).update(Text(visible(message)))

    def _progress(self, done: int, total: int) -> None:
        self.query_one("#maint-progress", ProgressBar).update(total=max(total, 1), progress=done)

    def _finish(self, text: Text, changed: bool, updated: int | None, stopped: bool = False) -> None:
        """Show the result; ``updated`` is the number of changes, None when the run failed;
        ``stopped``: a cancel left jobs not run."""
        self._done, self._changed = True, changed
        bar = self.query_one("#maint-progress", ProgressBar)
        bar.update(total=bar.total or 1, progress=bar.total or 1)
        ended = "stopped early" if stopped else "failed" if updated is None else "done"
        self.query_one("#maint-step", Static).update(
            Text(f"{ended} — escape to close", style="bold red" if updated is None else "bold green"))
        self.query_one("#maint-result", Static).update(text)
        if updated is not None:
            self.notify(f"Maintenance {ended}: {updated} change(s); what it sent to review waits in the queue"
                        if updated else f"Maintenance {ended}: nothing changed", markup=False)

    def action_cancel(self) -> None:
        """Stop after the job under way; the jobs left are named when the run ends."""
        if self._done:
            return
        self._cancel.set()
        self.query_one("#maint-step", Static).update(Text("cancelling after the job under way…", style="yellow"))

    def action_close(self) -> None:
        """Close when the run is over (the worker cannot be interrupted half-way through a transaction)."""
        if not self._done:
            self.notify("Maintenance is still running; c cancels after the job under way.", severity="warning",
                        markup=False)
            return
        self.dismiss(self._changed)
