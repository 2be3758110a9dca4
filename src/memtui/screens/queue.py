"""The review queue: the memories that need a decision, one key to decide and advance.

Rows come from the review service a page at a time (keyset pagination, in the order and with the
filters of the filter bar) and are drawn by :class:`memtui.widgets.queue_list.QueueList`, which
paints only the rows on screen; a decided row is redrawn in place. Store calls run in thread
workers and the detail pane follows the cursor after a short pause (debounced), so the next key
is never kept waiting (issue 11, items 1, 2 and 8).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Footer, Header, Input

from memtui.clock import utcnow
from memtui.domain.decisions import Decision, target_state
from memtui.review.queue_query import SORTS, FilterError, QueueFilter, filter_text, parse_filter_text
from memtui.review.views import DecisionOutcome, QueueItemView
from memtui.screens.base import BaseScreen
from memtui.widgets.literal import visible
from memtui.widgets.memory_detail import MemoryDetail
from memtui.widgets.queue_list import QueueList

PAGE_SIZE = 200
PREFETCH_MARGIN = 40  # load the next page when the cursor is this close to the last loaded row
DETAIL_DELAY = 0.06  # seconds the cursor rests on a row before its detail is fetched
SEARCH_DELAY = 0.25  # seconds after the last typed character before the search runs
WRITE_DELAY = 0.1  # seconds between moving the cursor and starting a decision's write
LIVE_POLL = 1.0  # seconds between two reads of the store's change counter (another process's changes)
LIVE_SEARCH_MIN = 3  # letters every word needs before the search runs as you type
#: the queue column each sort orders by (``priority`` has no column of its own)
SORT_COLUMNS = {"state": "state", "age": "age", "confidence": "conf"}
VERBS = {"approve": "Approve", "reject": "Reject", "needs-review": "Send to review", "block": "Block"}


class InfoLine(Widget):
    """One line of text (counter, filter bar) redrawn without a new layout when it changes."""

    DEFAULT_CSS = "InfoLine { height: 1; }"

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.text = Text()

    def show(self, text: Text) -> None:
        """Replace the line's text."""
        if text.plain != self.text.plain or text.spans != self.text.spans:
            self.text = text
            self.refresh()

    def render(self) -> Text:
        return self.text


@dataclass
class _Step:
    """One verb of this session on one or more memories: what undo reverses and redo repeats."""

    decision: str
    outcomes: list[DecisionOutcome]
    comment: str | None = None
    undone: list[DecisionOutcome] = field(default_factory=list)


class QueueScreen(BaseScreen):
    """Review queue with a filter bar above and a detail pane (statement, scope, gates, evidence) beside it."""

    CSS_PATH = "queue.tcss"
    HELP_TITLE = "Review queue keys"
    MAIN_LIST = "#queue"
    #: below 110 columns the detail pane goes under the queue instead of beside it
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    BINDINGS = [
        Binding("a", "decide('approve')", "Approve", id="queue.approve"),
        Binding("x", "decide('reject')", "Reject", id="queue.reject"),
        Binding("r", "decide('needs-review')", "Needs review", id="queue.needs_review"),
        Binding("s", "skip", "Skip", id="queue.skip"),
        Binding("b", "decide('block')", "Block", id="queue.block"),
        Binding("u", "undo", "Undo", id="queue.undo"),
        Binding("ctrl+r", "redo", "Redo", show=False, id="queue.redo"),
        Binding("e", "evidence", "Evidence", id="queue.evidence"),
        Binding("c", "comment", "Comment", id="queue.comment"),
        Binding("v", "range", "Range", show=False, id="queue.range"),
        Binding("slash", "search", "Search", key_display="/", id="queue.search"),
        Binding("f", "filter", "Filter", id="queue.filter"),
        Binding("o", "sort", "Sort", id="queue.sort"),
        Binding("O", "reverse", "Reverse sort", show=False, id="queue.reverse"),
        Binding("escape", "clear", "Clear selection", show=False, id="queue.clear"),
        Binding("E", "accept_edit", "Accept edit / edit in $EDITOR", show=False, id="queue.accept_edit"),
        Binding("m", "app.maintain", "Maintain", id="queue.maintain"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._now = utcnow()
        self._filter = QueueFilter()
        self._exhausted = False
        self._loading = False
        self._total: int | None = None
        self._decided: dict[str, DecisionOutcome] = {}
        self._undo_stack: list[_Step] = []
        self._redo_stack: list[_Step] = []
        self._pending = False  # a decision or undo is being written
        self._ahead: str | None = None  # the memory being decided while the cursor went on
        self._next_comment: str | None = None  # attached to the next decision (c)
        self._detail_timer = None
        self._detail_wanted: str | None = None
        self._search_timer = None
        self._detail_id: str | None = None  # whose detail the pane shows
        self._detail = None
        self._seen_change: int | None = None  # the store's change counter the rows on screen were read at
        self._polling = False

    @property
    def service(self):
        """The review service of the app (decisions and queries)."""
        return self.app.service

    @property
    def queue(self) -> QueueList:
        """The list widget."""
        return self.query_one("#queue", QueueList)

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield InfoLine(id="counter")
        yield InfoLine(id="filter-bar")
        with Horizontal(id="body"):
            with Vertical(id="queue-pane"):
                yield InfoLine(id="queue-header")
                yield QueueList(now=self._now, id="queue")
            with VerticalScroll(id="detail-pane"):
                yield MemoryDetail(id="detail")
        yield Input(placeholder="search statements (words, each a word prefix); enter keeps, escape clears",
                    id="search")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "memtui"
        self._update_header()
        self._filter = self._initial_filter()
        self.query_one("#search", Input).display = False
        self.queue.focus()
        self._update_counter()
        self._update_bar()
        self.load_first_page()
        self.set_interval(LIVE_POLL, self._poll_changes)

    def _initial_filter(self) -> QueueFilter:
        """The filter the app holds (it survives screen switches), else the one saved for this store."""
        held = getattr(self.app, "queue_filter", None)
        if isinstance(held, QueueFilter):
            return held
        from memtui.userconfig import load_queue_view

        saved, warning = load_queue_view(self.service.store_key)
        if warning:
            self.notify(visible(warning), severity="warning", markup=False)
        try:
            return QueueFilter.from_dict(saved)
        except FilterError as exc:
            self.notify(visible(f"saved queue filter ignored: {exc}"), severity="warning", markup=False)
            return QueueFilter()

    def on_resize(self) -> None:
        self.call_after_refresh(self._update_header)  # once the list has its new width (its columns fit it)

    def _update_header(self) -> None:
        f = self._filter
        self.query_one("#queue-header", InfoLine).show(
            Text(self.queue.header_text(SORT_COLUMNS.get(f.sort), f.descending), style="bold"))
        repo = {None: "all", "*": "org-wide only"}.get(f.repository_id, f.repository_id)
        self.sub_title = (f"review queue · {self.app.services.store_label} · repo {repo} · "
                          f"sort {f.sort} {'▼' if f.descending else '▲'}")

    # ---- loading ------------------------------------------------------------------------
    def on_screen_suspend(self) -> None:
        # a dialog or the help changes nothing by itself: only another screen makes a reload worth it
        from textual.screen import ModalScreen

        self._reload_on_resume = not isinstance(self.app.screen, ModalScreen)

    def on_screen_resume(self) -> None:
        """Back from another screen (duplicates, conflicts, maintenance...): show the store as it is now."""
        if self.queue.rows and getattr(self, "_reload_on_resume", True):
            self.reload()

    def reload(self) -> None:
        """Reload the queue from the store with the current filter; decisions stay undoable. The
        cursor stays on its memory, or goes to the nearest row after it that is still there."""
        self._exhausted = False
        rows, cursor = self.queue.rows, self.queue.cursor
        keep = tuple(r.memory_id for r in rows[cursor:cursor + 50]) + tuple(
            r.memory_id for r in reversed(rows[max(0, cursor - 50):cursor]))
        self.load_first_page(keep, upto=len(rows))

    @work(thread=True, exclusive=True, group="queue-load")
    def load_first_page(self, keep: tuple[str, ...] = (), upto: int = 0) -> None:
        """Fetch the first page for the filter (and more, up to ``upto`` rows, as many as were loaded),
        then count all matches (thread worker). The change counter is read first: rows read after
        it are at least that new."""
        f = self._filter
        change = self.app.services.change_counter()
        page = self.service.find(f, None, PAGE_SIZE)
        while len(page) < upto and len(page) % PAGE_SIZE == 0 and page:
            more = self.service.find(f, page[-1].key, PAGE_SIZE)
            if not more:
                break
            page += more
        self.app.call_from_thread(self._first_page, f, page, keep, change)
        total = self.service.find_count(f)
        self.app.call_from_thread(self._counted, f, total)

    def _first_page(self, f: QueueFilter, page: list[QueueItemView], keep: tuple[str, ...],
                    change: int | None = None) -> None:
        if f != self._filter or self._gone():
            return
        self._seen_change = change
        self._exhausted = len(page) < PAGE_SIZE or len(page) % PAGE_SIZE != 0
        self._loading = False
        ids = {r.memory_id for r in page}
        self.queue.set_rows(page, next((k for k in keep if k in ids), None))
        self._update_header()
        self._update_counter()
        if not page:
            self._detail_id = None
            self.query_one("#detail", MemoryDetail).show_memory(None, filtered=bool(f.describe()))

    # ---- live: another reviewer's or process's changes (issue 24, item 6) -----------------------
    def _poll_changes(self) -> None:
        """Each LIVE_POLL seconds: read the store's change counter in a worker (not while this
        screen is under another, and one read at a time)."""
        if self._polling or self._seen_change is None or self.app.screen is not self:
            return
        self._polling = True
        self.read_change_counter()

    @work(thread=True, group="queue-live")
    def read_change_counter(self) -> None:
        """One indexed read of the change counter (thread worker)."""
        try:
            change = self.app.services.change_counter()
        except Exception:  # noqa: BLE001 -- a store gone away: the next poll tries again
            change = None
        self.app.call_from_thread(self._change_read, change)

    def _change_read(self, change: int | None) -> None:
        self._polling = False
        if self._gone() or not change or self._seen_change is None or change == self._seen_change:
            return  # unchanged, unreadable, or a store without the counter (0)
        if self._pending or self.queue.anchor is not None or self.query_one("#search", Input).has_focus:
            return  # a write of ours or a selection in progress: the next poll looks again
        self._seen_change = None  # reload once; the reload reads the counter again
        self.reload()

    def _absorb_change(self, change: int | None) -> None:
        """After a write of this screen: its own change is on screen already, no reload for it."""
        if change is not None and self._seen_change is not None:
            self._seen_change = change

    def _gone(self) -> bool:
        """The app is closing (the screen's widgets are gone): a late worker's result is dropped."""
        return not self.query("#queue")

    def _counted(self, f: QueueFilter, total: int) -> None:
        if f == self._filter and not self._gone():
            self._total = total
            self._update_counter()

    @work(thread=True, exclusive=True, group="queue-load")
    def load_next_page(self, after: tuple) -> None:
        """Fetch the page after the keyset ``after`` (thread worker)."""
        f = self._filter
        page = self.service.find(f, after, PAGE_SIZE)
        self.app.call_from_thread(self._add_page, f, page)

    def _add_page(self, f: QueueFilter, page: list[QueueItemView]) -> None:
        if f != self._filter:
            return
        self.queue.append_rows(page)
        self._exhausted = len(page) < PAGE_SIZE
        self._loading = False
        self._update_counter()

    def _maybe_load_more(self, row: int) -> None:
        rows = self.queue.rows
        if self._exhausted or self._loading or not rows:
            return
        if row >= len(rows) - PREFETCH_MARGIN:
            self._loading = True
            self.load_next_page(rows[-1].key)

    # ---- filter, search, sort -----------------------------------------------------------
    def set_filter(self, f: QueueFilter) -> None:
        """Show the queue through ``f``: kept by the app (other screens and back) and saved for this user."""
        if f == self._filter:
            return
        self._filter = f
        self.app.queue_filter = f
        self._total = None
        self._update_bar()
        self._update_header()
        self.save_filter(f)
        self.reload()

    @work(thread=True, group="queue-save")
    def save_filter(self, f: QueueFilter) -> None:
        """Write the filter to the user's settings (thread worker; a failure is only a warning)."""
        from memtui.userconfig import save_queue_view

        try:
            save_queue_view(self.service.store_key, f.to_dict())
        except OSError as exc:
            self.app.call_from_thread(self.notify, visible(f"queue filter not saved: {exc}"),
                                      severity="warning", markup=False)

    def _update_bar(self) -> None:
        f = self._filter
        text = Text(" sort ", style="bold")
        text.append(f.sort + (" ▼" if f.descending else " ▲"), style="bold cyan")
        parts = f.describe()
        text.append("   filter ", style="bold")
        text.append(visible("  ".join(parts)) if parts else "none (/ search · f filter · o sort)",
                    style="yellow" if parts else "dim")
        if self._next_comment:
            text.append("   next comment: ", style="bold")
            text.append(visible(self._next_comment)[:60], style="italic")
        self.query_one("#filter-bar", InfoLine).show(text)

    def action_search(self) -> None:
        """Open the search line (``/``); typing searches as you go."""
        box = self.query_one("#search", Input)
        box.value = self._filter.search
        box.display = True
        box.focus()

    @on(Input.Changed, "#search")
    def _search_typed(self, event: Input.Changed) -> None:
        if self._search_timer is not None:
            self._search_timer.stop()
        value = event.value
        if any(len(w) < LIVE_SEARCH_MIN for w in QueueFilter(search=value).terms):
            return  # a one- or two-letter prefix matches most of a big store: wait for more (or enter)
        self._search_timer = self.set_timer(SEARCH_DELAY, lambda: self.set_filter(self._filter.with_(search=value)))

    @on(Input.Submitted, "#search")
    def _search_done(self, event: Input.Submitted) -> None:
        if self._search_timer is not None:
            self._search_timer.stop()
        self.set_filter(self._filter.with_(search=event.value.strip()))
        event.input.display = False
        self.queue.focus()

    def action_filter(self) -> None:
        """Edit the filters as ``name=value`` pairs (``f``); an empty line clears them."""
        from memtui.screens.dialogs import EditDialog

        def chosen(text: str | None) -> None:
            if text is None:
                return
            try:
                self.set_filter(parse_filter_text(text, self._filter))
            except FilterError as exc:
                self.app.clear_notifications()
                self.notify(visible(str(exc)), title="Filter not applied", severity="error", markup=False)

        title = ("Filter: state=a,b type= repo= (* org-wide) module= reason= actor= conf=MIN..MAX "
                 "age=MIN..MAX (days); empty clears")
        self.app.push_screen(EditDialog(title, filter_text(self._filter), allow_empty=True), chosen)

    def action_sort(self) -> None:
        """Next sort order (``o``): state, priority, age, confidence."""
        names = list(SORTS)
        self.set_filter(self._filter.with_(sort=names[(names.index(self._filter.sort) + 1) % len(names)]))

    def action_reverse(self) -> None:
        """Reverse the sort order (``O``)."""
        self.set_filter(self._filter.with_(descending=not self._filter.descending))

    # ---- detail -------------------------------------------------------------------------
    @on(QueueList.Highlighted, "#queue")
    def _highlighted(self, event: QueueList.Highlighted) -> None:
        self._maybe_load_more(event.index)
        if self.queue.anchor is not None:
            self._update_counter()
        self._want_detail(event.item.memory_id)

    def _want_detail(self, memory_id: str) -> None:
        """Show ``memory_id``'s detail: at once after a rest, else once the cursor has paused for
        DETAIL_DELAY (a held-down key redraws the pane once, not for every row it passes)."""
        if self._detail_timer is None:
            self.show_detail(memory_id)
            self._detail_timer = self.set_timer(DETAIL_DELAY, self._detail_rested)
            self._detail_wanted = None
        else:
            self._detail_wanted = memory_id

    def _detail_rested(self) -> None:
        self._detail_timer = None
        if self._detail_wanted is not None:
            self._want_detail(self._detail_wanted)

    @work(thread=True, exclusive=True, group="detail")
    def show_detail(self, memory_id: str) -> None:
        """Fetch one memory's detail and show it (thread worker; a newer request cancels this one)."""
        detail = self.service.detail(memory_id)
        self.app.call_from_thread(self._show_detail, detail)

    def _show_detail(self, detail) -> None:
        current = self.queue.current
        if current is None or current.memory_id != detail.memory_id:
            return  # the cursor moved on: its own detail is on the way
        self._detail_id, self._detail = detail.memory_id, detail
        self.query_one("#detail", MemoryDetail).show_memory(detail)
        if current.version != detail.version:
            # someone else changed it since the page was loaded: redraw the row from the store
            self.refresh_item(detail.memory_id)

    @work(thread=True, group="refresh")
    def refresh_item(self, memory_id: str) -> None:
        """Re-read one queue row from the store and redraw it (thread worker)."""
        item = self.service.queue_item(memory_id)
        self.app.call_from_thread(self._refresh_row, item)

    def _refresh_row(self, item: QueueItemView) -> None:
        self.queue.replace_item(item)
        current = self.queue.current
        if current is not None and current.memory_id == item.memory_id:
            self._detail_id = None
            self.show_detail(item.memory_id)

    # ---- movement (the base screen's keys; a range started with v grows with the cursor) -------
    def action_list_down(self) -> None:
        """Next row (``j``, ``down``); with the detail pane focused (``tab``), scroll it."""
        if not self.scroll_focused_pane("scroll_down"):
            self.queue.action_cursor_down()

    def action_list_up(self) -> None:
        """Previous row (``k``, ``up``); with the detail pane focused (``tab``), scroll it."""
        if not self.scroll_focused_pane("scroll_up"):
            self.queue.action_cursor_up()

    def current_memory_id(self) -> str | None:
        """The highlighted memory (for the history key and the palette)."""
        item = self.queue.current
        return None if item is None else item.memory_id

    def unresolved(self, row: int) -> bool:
        """Not decided in this session (``]``/``[`` skip decided rows)."""
        rows = self.queue.rows
        return row < len(rows) and rows[row].memory_id not in self._decided

    # ---- decisions ----------------------------------------------------------------------

    def action_range(self) -> None:
        """Start or drop a range selection (``v``); the next verb applies to every row in it."""
        self.queue.toggle_range()
        self._update_counter()

    def action_clear(self) -> None:
        """``escape``: in the search line, drop the search and close it; else drop the range
        selection; else drop a kept search (the filters stay)."""
        box = self.query_one("#search", Input)
        if box.has_focus:
            if self._search_timer is not None:
                self._search_timer.stop()
            box.display = False
            self.queue.focus()
            self.set_filter(self._filter.with_(search=""))
        elif self.queue.anchor is not None:
            self.queue.toggle_range()
            self._update_counter()
        elif self._filter.search:
            self.set_filter(self._filter.with_(search=""))

    def action_skip(self) -> None:
        """Go to the next row without deciding (``s``): nothing is written."""
        self.queue.move_to(self.queue.cursor + 1)

    def _refuse(self, message: str, title: str = "Refused") -> None:
        self.app.clear_notifications()  # one refusal on screen, never a pile over the detail pane
        self.notify(visible(message), title=title, severity="error", markup=False, timeout=8)

    def action_decide(self, decision: str) -> None:
        """Decide on the highlighted memory (or every memory of the range selection, after a
        confirmation stating how many change from which state to which); on success move to the
        next undecided row.

        Approve refuses at once, with the reason, when a review gate of the shown memory is shut.
        A single decision moves the cursor on at once while the write runs in a worker; until the
        write is done, and until the detail of the highlighted memory is on screen, further
        decision keys are ignored, so a quick second key never lands on a memory the reviewer has
        not seen. A refused decision puts the cursor back on its memory. Block always asks first.
        """
        items = self.queue.selected()
        if self._pending or (len(items) == 1 and self._detail_id != items[0].memory_id):
            self.app.bell()
            return
        if not items:
            self.notify("Nothing to decide: the queue is empty.", severity="warning")
            return
        if len(items) == 1 and decision == "approve" and self._detail is not None \
                and self._detail_id == items[0].memory_id and self._detail.gates:
            self._refuse("; ".join(reason for _, reason in self._detail.gates), title="Approve refused")
            return
        if len(items) == 1 and decision != "block":
            self._write(decision, items, ahead=True)
            return
        self.confirm(f"{VERBS[decision]} {len(items)} memor{'y' if len(items) == 1 else 'ies'}?",
                     change_summary(items, decision), lambda: self._write(decision, items))

    def _write(self, decision: str, items: list[QueueItemView], *, ahead: bool = False) -> None:
        """Start the write; ``ahead``: move to the next undecided row now, not when it is done."""
        self._pending = True
        comment, self._next_comment = self._next_comment, None
        self._update_bar()
        targets = [(i.memory_id, i.version) for i in items]
        if ahead:
            self._ahead = items[0].memory_id
            self._advance(self._ahead)
            # the worker sleeps before writing: the write's Python work would hold the GIL while the
            # moved cursor's frame goes out (bench/tui.py, loaded machine: ~43 ms from key to painted
            # without the pause, ~36 with; Pilot tests still wait for the worker)
            self.run_decision(decision, targets, comment, WRITE_DELAY)
        else:
            self.run_decision(decision, targets, comment)

    @work(thread=True, group="decide")
    def run_decision(self, decision: str, targets: list[tuple[str, int]], comment: str | None,
                     delay: float = 0.0) -> None:
        """Apply ``decision`` to every target in one transaction through the review service (the
        same one ``memtui decide`` uses), after ``delay`` seconds (a sleep holds no GIL)."""
        import time

        from memtui.domain.invariants import LifecycleError
        from memtui.review.lifecycle import MemoryNotFound

        time.sleep(delay)

        ids = [m for m, _ in targets]
        try:
            outcomes = self.service.decide_many(ids, Decision(decision), self.app.actor, comment,
                                                expected_versions=dict(targets))
        except (LifecycleError, MemoryNotFound) as exc:
            items = [self.service.queue_item(m) for m in ids]
            self.app.call_from_thread(self._decision_refused, str(exc), items, comment)
            return
        items = [self.service.queue_item(m) for m in ids]
        self.app.call_from_thread(self._absorb_change, self.app.services.change_counter())
        self.app.call_from_thread(self._decided_done, _Step(decision, outcomes, comment), items)

    def _decision_refused(self, message: str, items: list[QueueItemView], comment: str | None) -> None:
        self._pending = False
        if self._ahead is not None:  # the cursor went on: bring it back to the refused memory
            back = self.queue.index_of(self._ahead)
            self._ahead = None
            if back is not None:
                self.queue.move_to(back)
        self._next_comment = comment  # not used: keep it for the next decision
        self._update_bar()
        for item in items:
            self._refresh_row(item)
        self._refuse(message)

    def _decided_done(self, step: _Step, items: list[QueueItemView], *, redo: bool = False) -> None:
        self._pending = False
        for outcome in step.outcomes:
            self._decided[outcome.memory_id] = outcome
            self.queue.decided.add(outcome.memory_id)
        for item in items:
            self.queue.replace_item(item)
        self._undo_stack.append(step)
        if not redo:
            self._redo_stack.clear()
        self._update_counter()
        last = step.outcomes[-1].memory_id
        if self.queue.anchor is not None:
            self.queue.toggle_range()
            self._update_counter()  # the range is gone: the counter no longer says "selected N"
        if self._ahead == last:
            self._ahead = None  # the cursor moved on when the key was pressed
        else:
            self._advance(last)
        if len(step.outcomes) > 1 or redo:
            n = len(step.outcomes)
            self.notify(f"{'Redone' if redo else 'Decided'}: {n} memor{'y' if n == 1 else 'ies'}. u undoes "
                        f"{'them' if n > 1 else 'it'}.", markup=False)

    def _advance(self, after_id: str) -> None:
        """Move to the next row not decided in this session (wrapping to the top), or say all are done."""
        start = self.queue.index_of(after_id)
        if start is None:
            return
        rows = self.queue.rows
        n = len(rows)
        for step in range(1, n + 1):
            mid = rows[(start + step) % n].memory_id
            if mid not in self._decided and mid != self._ahead:
                self.queue.move_to((start + step) % n)
                return
        self.notify(f"All {n} loaded memories are decided. u undoes the last decision.", markup=False)

    def action_undo(self) -> None:
        """Undo this session's latest verb (one memory or a whole batch) with compensating events."""
        self._pop_and_run(self._undo_stack, self.run_undo, "No decision to undo in this session.")

    def _pop_and_run(self, stack: list[_Step], run, empty: str) -> None:
        if self._pending:
            self.app.bell()
        elif not stack:
            self.notify(empty, severity="warning")
        else:
            self._pending = True
            run(stack.pop())

    @work(thread=True, group="decide")
    def run_undo(self, step: _Step) -> None:
        """Write the compensating events for ``step`` in one transaction (thread worker)."""
        from memtui.domain.invariants import LifecycleError

        try:
            step.undone = self.service.undo_many([o.event_id for o in reversed(step.outcomes)], self.app.actor)
        except LifecycleError as exc:
            self.app.call_from_thread(self._undo_refused, str(exc), step)
            return
        items = [self.service.queue_item(o.memory_id) for o in step.outcomes]
        self.app.call_from_thread(self._absorb_change, self.app.services.change_counter())
        self.app.call_from_thread(self._undo_done, step, items)

    def _undo_refused(self, message: str, step: _Step) -> None:
        self._pending = False
        self._refuse(message, title="Cannot undo")

    def _undo_done(self, step: _Step, items: list[QueueItemView]) -> None:
        self._pending = False
        for outcome in step.outcomes:
            self._decided.pop(outcome.memory_id, None)
            self.queue.decided.discard(outcome.memory_id)
        for item in items:
            self._refresh_row(item)
        self._redo_stack.append(step)
        self._update_counter()
        first = self.queue.index_of(step.outcomes[0].memory_id)
        if first is not None:
            self.queue.move_to(first)
        else:  # the row left the list (a reload since): load it back and put the cursor on it
            self._exhausted = False
            self.load_first_page(tuple(o.memory_id for o in step.outcomes), upto=len(self.queue.rows))
        if len(items) == 1:
            self.notify(f"Undone: {items[0].memory_id} is {items[0].state} again. ctrl+r redoes it.", markup=False)
        else:
            self.notify(f"Undone: {len(items)} memories are back as they were. ctrl+r redoes it.", markup=False)

    def action_redo(self) -> None:
        """Decide again what the latest undo reversed (``ctrl+r``), with the same comment."""
        self._pop_and_run(self._redo_stack, self.run_redo, "Nothing to redo.")

    @work(thread=True, group="decide")
    def run_redo(self, step: _Step) -> None:
        """Write ``step``'s decision again, in one transaction (thread worker)."""
        from memtui.domain.invariants import LifecycleError
        from memtui.review.lifecycle import MemoryNotFound

        ids = [o.memory_id for o in step.outcomes]
        try:
            outcomes = self.service.decide_many(ids, Decision(step.decision), self.app.actor, step.comment)
        except (LifecycleError, MemoryNotFound) as exc:
            self.app.call_from_thread(self._undo_refused, str(exc), step)
            return
        items = [self.service.queue_item(m) for m in ids]
        self.app.call_from_thread(self._absorb_change, self.app.services.change_counter())
        self.app.call_from_thread(self._redone, _Step(step.decision, outcomes, step.comment), items)

    def _redone(self, step: _Step, items: list[QueueItemView]) -> None:
        self._decided_done(step, items, redo=True)

    def action_comment(self) -> None:
        """Write a comment (``c``): enter attaches it to the next decision, ctrl+l to the latest one
        of this session (as a note in its history)."""
        from memtui.screens.dialogs import CommentDialog

        last = self._undo_stack[-1] if self._undo_stack else None
        target = (f"{last.decision} of {last.outcomes[0].memory_id}" + (
            f" and {len(last.outcomes) - 1} more" if len(last.outcomes) > 1 else "")) if last else None

        def written(answer: tuple[str, str] | None) -> None:
            if not answer:
                return
            where, text = answer
            if where == "next":
                self._next_comment = text
                self._update_bar()
            elif last is not None:
                self.run_comment([o.event_id for o in last.outcomes], text)

        self.app.push_screen(CommentDialog(self._next_comment or "", target), written)

    @work(thread=True, group="decide")
    def run_comment(self, event_ids: list[str], text: str) -> None:
        """Attach ``text`` to each decision event (thread worker)."""
        from memtui.domain.invariants import LifecycleError

        try:
            for event_id in event_ids:
                self.service.comment_on(event_id, self.app.actor, text)
        except LifecycleError as exc:
            self.app.call_from_thread(self._refuse, str(exc), "Comment refused")
            return
        self.app.call_from_thread(self.notify, f"Comment added to {len(event_ids)} decision"
                                  f"{'' if len(event_ids) == 1 else 's'}.", markup=False)

    def _update_counter(self) -> None:
        done = len(self._decided)
        text = Text()
        total = "…" if self._total is None else str(self._total)
        text.append(f" decided {done} / {total}", style="bold")
        text.append(f"    loaded {len(self.queue.rows)}", style="dim")
        if self.queue.anchor is not None:
            text.append(f"    selected {len(self.queue.selected())}", style="bold")
        text.append(f"    reviewer {visible(self.app.actor.id)} ({self.app.actor.role})", style="dim")
        self.query_one("#counter", InfoLine).show(text)

    def action_accept_edit(self) -> None:
        """``E``: accept revalidation's proposed statement for the highlighted memory (moved paths
        rewritten) when there is one; else edit the statement in ``$VISUAL``/``$EDITOR`` (the TUI
        suspends meanwhile; an unchanged or empty text changes nothing). The memory keeps its
        state, so approve it next."""
        item = self.queue.current
        if item is None or self._pending or self._detail is None or self._detail_id != item.memory_id:
            self.app.bell()
            return
        if self._detail.proposed_statement:
            self._pending = True
            self.run_edit(item.memory_id, item.version)
            return
        from memtui.review.handoff import HandoffError, edit_text

        try:
            text = self.app.hand_off(lambda: edit_text(self._detail.statement))
        except HandoffError as exc:
            self._refuse(str(exc), title="Cannot edit")
            return
        if text is None or text == self._detail.statement.strip():
            self.notify("Statement unchanged.", markup=False, timeout=3)
            return
        self._pending = True
        self.run_edit(item.memory_id, item.version, text)

    @work(thread=True, group="decide")
    def run_edit(self, memory_id: str, version: int, text: str | None = None) -> None:
        """Apply the proposed edit (or ``text``) through the review service (the same one ``memtui
        edit`` uses)."""
        from memtui.domain.invariants import LifecycleError
        from memtui.review.lifecycle import MemoryNotFound

        try:
            self.service.edit_statement(memory_id, self.app.actor, proposed=text is None, text=text,
                                        expected_version=version)
        except (LifecycleError, MemoryNotFound) as exc:
            self.app.call_from_thread(self._decision_refused, str(exc), [self.service.queue_item(memory_id)], None)
            return
        self.app.call_from_thread(self._absorb_change, self.app.services.change_counter())
        self.app.call_from_thread(self._edited, self.service.queue_item(memory_id))

    def _edited(self, item: QueueItemView) -> None:
        self._pending = False
        self._refresh_row(item)  # redraws the row and, for the highlighted one, the detail pane
        self.notify("Statement edited; approve it with a.", title="Edited", markup=False)

    def action_evidence(self) -> None:
        """Open the highlighted memory's evidence: recorded span beside the span at HEAD."""
        item = self.queue.current
        if item is None:
            self.notify("Nothing selected.", severity="warning")
            return
        from memtui.screens.evidence import EvidenceScreen

        self.app.push_screen(EvidenceScreen(item.memory_id))


def change_summary(items: list[QueueItemView], decision: str) -> str:
    """``3 memories change: 2 candidate → active, 1 needs_review → active`` for a confirmation."""
    moves: dict[tuple[str, str], int] = {}
    for item in items:
        to = target_state(Decision(decision), item.state).value
        moves[(item.state, to)] = moves.get((item.state, to), 0) + 1
    parts = [f"{n} {a} → {b}" for (a, b), n in sorted(moves.items(), key=lambda kv: (-kv[1], kv[0]))]
    n = len(items)
    return (f"{n} memor{'y changes' if n == 1 else 'ies change'}: " + ", ".join(parts)
            + ". One transaction: all or none; u undoes it.")
