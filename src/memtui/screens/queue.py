"""The review queue: the memories that need a decision, one key to decide and advance.

Rows come from the store a page at a time (keyset pagination) and are appended as the
cursor nears the end; a decided row is updated in place. Store calls run in thread
workers, so the screen never waits on the database.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from memtui.clock import utcnow
from memtui.domain.decisions import Decision
from memtui.review.views import DecisionOutcome, QueueItemView
from memtui.widgets.literal import one_line, visible
from memtui.widgets.memory_detail import MemoryDetail

PAGE_SIZE = 200
PREFETCH_MARGIN = 40  # load the next page when the cursor is this close to the last loaded row
STATEMENT_WIDTH = 30

STATE_STYLE = {
    "needs_review": "bold yellow", "challenged": "bold magenta", "candidate": "cyan", "approved": "green",
    "active": "bold green", "rejected": "red", "invalidated": "red", "archived": "dim",
}
DECIDED_MARK = {"active": "✓", "rejected": "✗", "invalidated": "✗", "needs_review": "?", "archived": "▪"}


def _age(created: datetime, now: datetime) -> str:
    days = (now - created).days
    if days < 1:
        return "0d"
    if days < 60:
        return f"{days}d"
    return f"{days // 30}mo"


@dataclass
class _Decided:
    outcome: DecisionOutcome


class QueueScreen(Screen):
    """Review queue with a detail pane (statement, scope, evidence) beside it."""

    CSS_PATH = "queue.tcss"
    #: below 110 columns the detail pane goes under the queue instead of beside it
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="queue.down"),
        Binding("k", "cursor_up", "Up", show=False, id="queue.up"),
        Binding("a", "decide('approve')", "Approve", id="queue.approve"),
        Binding("x", "decide('reject')", "Reject", id="queue.reject"),
        Binding("r", "decide('needs-review')", "Needs review", id="queue.needs_review"),
        Binding("u", "undo", "Undo", id="queue.undo"),
        Binding("e", "evidence", "Evidence", id="queue.evidence"),
        Binding("H", "history", "History", key_display="H", show=False, id="queue.history"),
        Binding("E", "accept_edit", "Accept edit", show=False, id="queue.accept_edit"),
        Binding("d", "app.duplicates", "Duplicates", id="queue.duplicates"),
        Binding("c", "app.conflicts", "Conflicts", id="queue.conflicts"),
        Binding("p", "app.compaction", "Compaction", id="queue.compaction"),
        Binding("h", "app.health", "Health", id="queue.health"),
        Binding("m", "app.maintain", "Maintain", id="queue.maintain"),
        Binding("question_mark", "help", "Help", key_display="?", id="queue.help"),
        Binding("q", "app.quit", "Quit", id="queue.quit"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._items: dict[str, QueueItemView] = {}
        self._order: list[str] = []
        self._exhausted = False
        self._loading = False
        self._total = 0
        self._decided: dict[str, DecisionOutcome] = {}
        self._undo_stack: list[DecisionOutcome] = []
        self._pending = False  # a decision or undo is being written
        self._reselect: str | None = None  # the row to return to after a reload
        self._now = utcnow()

    @property
    def service(self):
        """The review service of the app (decisions and queries)."""
        return self.app.service

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield Static("", id="counter")
        with Horizontal(id="body"):
            yield DataTable(id="queue", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="detail-pane"):
                yield MemoryDetail(id="detail")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "memtui"
        self.sub_title = "review queue"
        table = self.query_one("#queue", DataTable)
        table.add_column("state", key="state", width=14)
        table.add_column("statement", key="statement", width=STATEMENT_WIDTH)
        table.add_column("type", key="type", width=14)
        table.add_column("scope", key="scope", width=12)
        table.add_column("conf", key="conf", width=4)
        table.add_column("age", key="age", width=4)
        table.focus()
        self._update_counter()
        self.load_first_page()

    # ---- loading ------------------------------------------------------------------------
    def on_screen_resume(self) -> None:
        """Back from another screen (duplicates, conflicts, maintenance...): show the store as it is now."""
        if self._order:
            self.reload()

    def reload(self) -> None:
        """Reload the queue from the store (after maintenance changed it); decisions stay undoable."""
        table = self.query_one("#queue", DataTable)
        keep = self._current_id()
        table.clear()
        self._items.clear()
        self._order.clear()
        self._exhausted = False
        self._reselect = keep
        self.load_first_page()

    @work(thread=True, exclusive=True, group="queue-load")
    def load_first_page(self) -> None:
        """Count the queue and fetch its first page (thread worker)."""
        total = self.service.queue_count()
        page = self.service.queue_page(None, PAGE_SIZE)
        self.app.call_from_thread(self._add_page, page, total)

    @work(thread=True, exclusive=True, group="queue-load")
    def load_next_page(self, after: tuple[int, str]) -> None:
        """Fetch the page after the keyset cursor ``after`` (thread worker)."""
        page = self.service.queue_page(after, PAGE_SIZE)
        self.app.call_from_thread(self._add_page, page, None)

    def _state_cell(self, item: QueueItemView) -> Text:
        mark = DECIDED_MARK.get(item.state, "•") if item.memory_id in self._decided else " "
        return Text(f"{mark} {item.state}", style=STATE_STYLE.get(item.state, ""))

    def _row(self, item: QueueItemView) -> list[Text]:
        scope = item.scope.repository_id or "(org-wide)"
        if item.scope.module_path:
            scope += ":" + item.scope.module_path.rsplit("/", 1)[-1]
        return [
            self._state_cell(item),
            one_line(item.statement, 300),
            one_line(item.type, 60),
            one_line(scope, 60),
            Text(f"{item.confidence:.2f}"),
            Text(_age(item.created_at, self._now)),
        ]

    def _add_page(self, page: list[QueueItemView], total: int | None) -> None:
        table = self.query_one("#queue", DataTable)
        if total is not None:
            self._total = total
        first = not self._order
        for item in page:
            if item.memory_id in self._items:
                continue
            self._items[item.memory_id] = item
            self._order.append(item.memory_id)
            table.add_row(*self._row(item), key=item.memory_id)
        self._exhausted = len(page) < PAGE_SIZE
        self._loading = False
        self._update_counter()
        if first:
            if self._order:
                target = self._reselect if self._reselect in self._items else self._order[0]
                self._reselect = None
                table.move_cursor(row=self._order.index(target))
                self.show_detail(target)
            else:
                self.query_one("#detail", MemoryDetail).show_memory(None)

    def _maybe_load_more(self, row: int) -> None:
        if self._exhausted or self._loading or not self._order:
            return
        if row >= len(self._order) - PREFETCH_MARGIN:
            last = self._items[self._order[-1]]
            self._loading = True
            self.load_next_page((last.rank, last.memory_id))

    # ---- detail -------------------------------------------------------------------------
    @on(DataTable.RowHighlighted, "#queue")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is None or event.row_key.value is None:
            return
        self.show_detail(event.row_key.value)
        self._maybe_load_more(event.cursor_row)

    @work(thread=True, exclusive=True, group="detail")
    def show_detail(self, memory_id: str) -> None:
        """Fetch one memory's detail and show it (thread worker; a newer request cancels this one)."""
        detail = self.service.detail(memory_id)
        self.app.call_from_thread(self._show_detail, detail)

    def _show_detail(self, detail) -> None:
        self.query_one("#detail", MemoryDetail).show_memory(detail)
        item = self._items.get(detail.memory_id)
        if item is not None and item.version != detail.version:
            # someone else changed it since the page was loaded: redraw the row from the store
            self.refresh_item(detail.memory_id)

    @work(thread=True, group="refresh")
    def refresh_item(self, memory_id: str) -> None:
        """Re-read one queue row from the store and redraw it (thread worker)."""
        item = self.service.queue_item(memory_id)
        self.app.call_from_thread(self._refresh_row, item)

    # ---- decisions ----------------------------------------------------------------------
    def _current_id(self) -> str | None:
        table = self.query_one("#queue", DataTable)
        if not self._order or table.cursor_row is None or table.cursor_row >= len(self._order):
            return None
        return self._order[table.cursor_row]

    def action_cursor_down(self) -> None:
        """Move to the next row (``j``)."""
        self.query_one("#queue", DataTable).action_cursor_down()

    def action_cursor_up(self) -> None:
        """Move to the previous row (``k``)."""
        self.query_one("#queue", DataTable).action_cursor_up()

    def action_decide(self, decision: str) -> None:
        """Decide on the highlighted memory; on success move to the next undecided row.

        The write runs in a worker. While it runs, further decision keys are ignored, so a
        quick second key press can never land on a row the reviewer has not looked at; a
        refused decision leaves the cursor where it is.
        """
        if self._pending:
            self.app.bell()
            return
        memory_id = self._current_id()
        if memory_id is None:
            self.notify("Nothing to decide: the queue is empty.", severity="warning")
            return
        item = self._items[memory_id]
        self._pending = True
        self.run_decision(memory_id, decision, item.version)

    @work(thread=True, group="decide")
    def run_decision(self, memory_id: str, decision: str, version: int) -> None:
        """Apply ``decision`` through the review service (the same one ``memtui decide`` uses)."""
        from memtui.domain.invariants import LifecycleError
        from memtui.review.lifecycle import MemoryNotFound

        try:
            outcome = self.service.decide(memory_id, Decision(decision), self.app.actor,
                                          expected_version=version)
        except (LifecycleError, MemoryNotFound) as exc:
            item = self.service.queue_item(memory_id)
            self.app.call_from_thread(self._decision_refused, str(exc), item)
            return
        item = self.service.queue_item(memory_id)
        self.app.call_from_thread(self._decided_done, outcome, item)

    def _decision_refused(self, message: str, item: QueueItemView) -> None:
        self._pending = False
        self._refresh_row(item)
        self.notify(visible(message), title="Refused", severity="error", markup=False, timeout=8)

    def _refresh_row(self, item: QueueItemView) -> None:
        if item.memory_id not in self._items:  # not on screen (the queue was reloaded since)
            return
        table = self.query_one("#queue", DataTable)
        self._items[item.memory_id] = item
        table.update_cell(item.memory_id, "state", self._state_cell(item))
        table.update_cell(item.memory_id, "statement", self._row(item)[1])  # an accepted edit shows at once
        if self._current_id() == item.memory_id:
            self.show_detail(item.memory_id)

    def _decided_done(self, outcome: DecisionOutcome, item: QueueItemView) -> None:
        self._pending = False
        self._decided[outcome.memory_id] = outcome
        self._undo_stack.append(outcome)
        self._refresh_row(item)
        self._update_counter()
        self._advance(outcome.memory_id)

    def _advance(self, after_id: str) -> None:
        """Move to the next row not decided in this session (wrapping to the top), or say all are done."""
        if after_id not in self._order:
            return
        start = self._order.index(after_id)
        n = len(self._order)
        for step in range(1, n + 1):
            mid = self._order[(start + step) % n]
            if mid not in self._decided:
                self.query_one("#queue", DataTable).move_cursor(row=(start + step) % n)
                return
        self.notify(f"All {n} loaded memories are decided. u undoes the last decision.", markup=False)

    def action_undo(self) -> None:
        """Undo this session's latest decision with a compensating event."""
        if self._pending:
            self.app.bell()
            return
        if not self._undo_stack:
            self.notify("No decision to undo in this session.", severity="warning")
            return
        self._pending = True
        self.run_undo(self._undo_stack.pop())

    @work(thread=True, group="decide")
    def run_undo(self, outcome: DecisionOutcome) -> None:
        """Write the compensating event for ``outcome`` (thread worker)."""
        from memtui.domain.invariants import LifecycleError

        try:
            self.service.undo(outcome.event_id, self.app.actor)
        except LifecycleError as exc:
            self.app.call_from_thread(self._undo_refused, str(exc))
            return
        item = self.service.queue_item(outcome.memory_id)
        self.app.call_from_thread(self._undo_done, outcome, item)

    def _undo_refused(self, message: str) -> None:
        self._pending = False
        self.notify(visible(message), title="Cannot undo", severity="error", markup=False, timeout=8)

    def _undo_done(self, outcome: DecisionOutcome, item: QueueItemView) -> None:
        self._pending = False
        self._decided.pop(outcome.memory_id, None)
        self._refresh_row(item)
        self._update_counter()
        if outcome.memory_id in self._order:
            self.query_one("#queue", DataTable).move_cursor(row=self._order.index(outcome.memory_id))
        self.notify(f"Undone: {outcome.memory_id} is {item.state} again.", markup=False)

    def _update_counter(self) -> None:
        done = len(self._decided)
        text = Text()
        text.append(f" decided {done} / {self._total}", style="bold")
        text.append(f"    loaded {len(self._order)}", style="dim")
        text.append(f"    reviewer {visible(self.app.actor.id)} ({self.app.actor.role})", style="dim")
        self.query_one("#counter", Static).update(text)

    def action_accept_edit(self) -> None:
        """Accept revalidation's proposed statement for the highlighted memory (moved paths
        rewritten); the memory keeps its state, so approve it next."""
        memory_id = self._current_id()
        if memory_id is None or self._pending:
            self.app.bell()
            return
        self._pending = True
        self.run_edit(memory_id, self._items[memory_id].version)

    @work(thread=True, group="decide")
    def run_edit(self, memory_id: str, version: int) -> None:
        """Apply the proposed edit through the review service (the same one ``memtui edit`` uses)."""
        from memtui.domain.invariants import LifecycleError
        from memtui.review.lifecycle import MemoryNotFound

        try:
            self.service.edit_statement(memory_id, self.app.actor, proposed=True, expected_version=version)
        except (LifecycleError, MemoryNotFound) as exc:
            self.app.call_from_thread(self._decision_refused, str(exc), self.service.queue_item(memory_id))
            return
        self.app.call_from_thread(self._edited, self.service.queue_item(memory_id))

    def _edited(self, item: QueueItemView) -> None:
        self._pending = False
        self._refresh_row(item)  # redraws the row and, for the highlighted one, the detail pane
        self.notify("Statement edited to the proposal; approve it with a.", title="Edited", markup=False)

    def action_evidence(self) -> None:
        """Open the highlighted memory's evidence: recorded span beside the span at HEAD."""
        memory_id = self._current_id()
        if memory_id is None:
            self.notify("Nothing selected.", severity="warning")
            return
        from memtui.screens.evidence import EvidenceScreen

        self.app.push_screen(EvidenceScreen(memory_id))

    def action_history(self) -> None:
        """Open the highlighted memory's page: record, full history, usage and related items."""
        memory_id = self._current_id()
        if memory_id is None:
            self.notify("Nothing selected.", severity="warning")
            return
        self.app.action_memory(memory_id)

    # ---- help ---------------------------------------------------------------------------
    def action_help(self) -> None:
        """Show every key of this screen (built from the bindings, never by hand)."""
        from memtui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.active_bindings.values(), title="Review queue keys"))
