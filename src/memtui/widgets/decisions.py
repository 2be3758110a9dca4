"""What the duplicate, conflict and compaction screens share: reporting a decision, refusals, undo."""

from __future__ import annotations

from textual import work

from memtui.widgets.literal import visible


class DecisionScreenMixin:
    """For a Screen with a ``reload()`` method: keeps this screen's decisions for ``u`` (undo)."""

    _undo: list[str]
    #: the row key (cluster, conflict or proposal id) to put the cursor on once the list is loaded
    #: (a jump from the memory screen); cleared once used
    select_key: str | None = None

    def _select_wanted(self, table) -> None:
        """Move ``table``'s cursor to :attr:`select_key` if it is listed; forget it either way."""
        key, self.select_key = self.select_key, None
        if key is None:
            return
        keys = [rk.value for rk in table.rows]
        if key in keys:
            table.move_cursor(row=keys.index(key))
        else:
            self.notify(f"{key} is no longer open.", severity="warning", markup=False)

    def _decided(self, decision_id: str, message: str) -> None:
        """A decision was written: remember it for undo, say so, reload the list."""
        self._undo.append(decision_id)
        self.notify(f"{message} (decision {decision_id}; u undoes it)", markup=False)
        self.reload()

    def _refused(self, message: str, title: str = "Refused") -> None:
        """Show why a decision was refused (literally: the message may quote a statement)."""
        self.notify(visible(message), title=title, severity="error", markup=False, timeout=8)

    def action_undo(self) -> None:
        """Undo this screen's latest decision, or else your latest merge, resolution or compaction
        that is not undone yet (also after leaving and reopening the screen)."""
        if self._undo:
            self.run_undo(self._undo.pop())
            return
        self.run_undo(None)

    @work(thread=True, group="decision-undo")
    def run_undo(self, decision_id: str | None) -> None:
        """Undo a decision (None: the actor's latest not undone) with compensating events (thread worker)."""
        from memtui.domain.invariants import LifecycleError
        from memtui.review.proposals import ProposalQueries
        from memtui.review.resolve import ResolveService

        if decision_id is None:
            decision_id = ProposalQueries(self.app.engine).last_decision(self.app.actor.id)
            if decision_id is None:
                self.app.call_from_thread(self.notify, "No decision of yours to undo.", severity="warning")
                return
        try:
            ResolveService(self.app.engine).undo(decision_id, self.app.actor)
        except LifecycleError as exc:
            self.app.call_from_thread(self._refused, str(exc), "Cannot undo")
            return
        self.app.call_from_thread(self.notify, f"Undone {decision_id}.", markup=False)
        self.app.call_from_thread(self.reload)
