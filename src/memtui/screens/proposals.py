"""What the duplicate, conflict and compaction screens share: a list of open proposals, the
selected one's detail, and decisions that confirm first, can be refused, and undo (issue 11, item 10).

A subclass names its columns (:attr:`ProposalScreen.COLUMNS`), loads its items in a thread
(:meth:`ProposalScreen.load`), draws a row (:meth:`row`) and the detail (:meth:`compose_detail`,
:meth:`show_item`), and decides with :meth:`ProposalScreen.decide`: the effect is stated and
confirmed (default No) before the service call runs in a worker.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.widgets import DataTable, Footer, Header

from memtui.screens.base import BaseScreen
from memtui.widgets.list_table import Col, ListTable
from memtui.widgets.literal import visible

#: a decision's service call: returns (decision id, what happened in words)
Apply = Callable[[], tuple[str, str]]


class ProposalScreen(BaseScreen):
    """A list of open proposals (``#list``) above or beside their detail, in ``#body``.

    Below 120 columns the screen has the class ``-narrow`` and the detail stacks under the list.
    The hooks that raise NotImplementedError here (:data:`HOOKS`) are abstract: each proposal screen
    (duplicates, conflicts, compaction) implements all of them.
    """

    #: the methods every proposal screen implements
    HOOKS: ClassVar[tuple[str, ...]] = ("compose_detail", "load", "item_key", "row", "show_item")

    BINDINGS = [
        Binding("v", "range", "Range", show=False, id="proposals.range"),
        Binding("space", "mark", "Mark", show=False, id="proposals.mark"),
        Binding("slash", "filter", "Filter", key_display="/", show=False, id="proposals.filter"),
    ]
    CSS_PATH = "proposals.tcss"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    MAIN_LIST = "#list"
    SUB_TITLE: ClassVar[str] = ""
    COLUMNS: ClassVar[list[Col]] = []

    def __init__(self) -> None:
        super().__init__()
        self.items: list = []
        self._undo: list[str] = []
        #: the row key (cluster, conflict or proposal id) to put the cursor on once the list is
        #: loaded (a jump from the memory screen); cleared once used
        self.select_key: str | None = None
        #: range selection (issue 20, item 4): ``v`` anchors a range at a row, ``space`` marks single
        #: rows; a bulk key then applies to every selected item
        self.anchor: str | None = None
        self.marked: set[str] = set()
        self.filter_text: str = ""
        self._all: list = []  # every loaded item; ``items`` is what the filter shows
        self._painted: set[str] = set()  # the rows drawn as selected

    def compose(self) -> ComposeResult:
        yield Header()
        with Container(id="body"):
            yield ListTable(self.COLUMNS, id="list")
            yield from self.compose_detail()
        yield Footer()

    def compose_detail(self) -> ComposeResult:
        """The widgets that show the selected item (beside or under the list)."""
        raise NotImplementedError

    def on_mount(self) -> None:
        self.sub_title = self.SUB_TITLE
        self.query_one("#list", ListTable).focus()
        self.reload()

    # ---- loading --------------------------------------------------------------------------
    def load(self) -> list:
        """The open items, from the app's services (runs in a thread worker)."""
        raise NotImplementedError

    def item_key(self, item) -> str:
        """The item's id (the row key)."""
        raise NotImplementedError

    def row(self, item) -> list[Text]:
        """The cells of the item's row, in :attr:`COLUMNS` order."""
        raise NotImplementedError

    def show_item(self, item) -> None:
        """Show ``item`` in the detail widgets; None: there is nothing open."""
        raise NotImplementedError

    @work(thread=True, exclusive=True, group="proposals-load")
    def reload(self) -> None:
        """Load the open items (thread worker), then show them; the highlighted one stays if still open,
        else the cursor stays on its row (a decided item's successor)."""
        items = self.load()
        self.app.call_from_thread(self._show, items)

    def row_text(self, item) -> str:
        """What the ``/`` filter matches (case-insensitive): every cell of the row, and more if a screen adds it."""
        return " ".join(t.plain for t in self.row(item))

    def _show(self, items: list) -> None:
        self._all = items
        if self.filter_text:
            needle = self.filter_text.casefold()
            items = [i for i in items if needle in self.row_text(i).casefold()]
        live = {self.item_key(i) for i in items}
        self.marked &= live
        if self.anchor not in live:
            self.anchor = None
        keep = self.current()
        keep_key = self.item_key(keep) if keep is not None else None
        wanted, self.select_key = self.select_key, None  # a jump from the memory screen, used once
        if wanted is not None:
            if wanted in {self.item_key(i) for i in items}:
                keep_key = wanted
            else:
                self.notify(f"{wanted} is no longer open.", severity="warning", markup=False)
        table = self.query_one("#list", ListTable)
        row = table.cursor_row or 0
        self.items = items
        table.clear()
        self._painted = set()
        for item in items:
            table.add_row(*self._cells(item, False), key=self.item_key(item))
        keys = [self.item_key(i) for i in items]
        if keys:  # the same item if still open, else the one that took its place (the next)
            table.move_cursor(row=keys.index(keep_key) if keep_key in keys else min(row, len(keys) - 1))
        self._paint_selection()
        self.show_item(self.current())
        self._subtitle()

    def _cells(self, item, selected: bool) -> list[Text]:
        cells = self.row(item)
        if selected:
            first = Text("▶ ", style="bold reverse")
            first.append_text(cells[0])
            cells = [first] + [c.copy() for c in cells[1:]]
            for c in cells:
                c.stylize("bold")
        return cells

    def selected(self) -> list:
        """The items a bulk decision applies to: the range from the anchor to the cursor and the marked
        rows; with neither, the highlighted item alone (or nothing)."""
        keys = [self.item_key(i) for i in self.items]
        chosen = set(self.marked)
        table = self.query_one("#list", ListTable)
        if self.anchor is not None and self.anchor in keys and table.cursor_row is not None:
            lo, hi = sorted((keys.index(self.anchor), table.cursor_row))
            chosen |= set(keys[lo:hi + 1])
        if not chosen:
            cur = self.current()
            return [] if cur is None else [cur]
        return [i for i in self.items if self.item_key(i) in chosen]

    def _paint_selection(self) -> None:
        """Redraw the rows whose selected state changed (a marker and bold)."""
        table = self.query_one("#list", ListTable)
        chosen = {self.item_key(i) for i in self.selected()} if (self.anchor is not None or self.marked) else set()
        for item in self.items:
            key = self.item_key(item)
            if (key in chosen) != (key in self._painted):
                for col, cell in zip(self.COLUMNS, self._cells(item, key in chosen)):
                    table.update_cell(key, col.key, cell)
        self._painted = chosen

    def _subtitle(self) -> None:
        n = len(self._painted)
        parts = [self.SUB_TITLE, self.counts()]
        if self.filter_text:
            parts.append(f"filter “{self.filter_text}” {len(self.items)} of {len(self._all)}")
        if n:
            parts.append(f"selected {n}")
        self.sub_title = " · ".join(p for p in parts if p)

    def counts(self) -> str:
        """A few words on what the list holds, for the header (a screen may say more)."""
        return f"{len(self._all)}"

    def action_range(self) -> None:
        """``v``: start a range at the highlighted row (the cursor extends it), or drop it."""
        cur = self.current()
        self.anchor = None if self.anchor is not None or cur is None else self.item_key(cur)
        self._paint_selection()
        self._subtitle()

    def action_mark(self) -> None:
        """``space``: mark or unmark the highlighted row, then move down."""
        cur = self.current()
        if cur is None:
            return
        self.marked ^= {self.item_key(cur)}
        self._paint_selection()
        self._subtitle()
        self.action_list_down()

    def action_filter(self) -> None:
        """``/``: show only the rows whose text contains what is typed (empty: all)."""
        from memtui.screens.dialogs import EditDialog

        def done(value: str | None) -> None:
            if value is None:
                return
            self.filter_text = value.strip()
            self.anchor, self.marked = None, set()
            self._show(self._all)

        self.app.push_screen(EditDialog("Filter the list (empty: all)", self.filter_text, allow_empty=True), done)

    def clear_selection(self) -> bool:
        """Drop the range, the marks and the filter; False when there was nothing to drop."""
        if self.anchor is None and not self.marked and not self.filter_text:
            return False
        had_filter = bool(self.filter_text)
        self.anchor, self.marked, self.filter_text = None, set(), ""
        if had_filter:
            self._show(self._all)
        else:
            self._paint_selection()
            self._subtitle()
        return True

    def action_back(self) -> None:
        """Escape: first drop a selection or filter, then go back."""
        if not self.clear_selection():
            super().action_back()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back" and (self.anchor is not None or self.marked or self.filter_text):
            return True
        return super().check_action(action, parameters)

    def current(self):
        """The highlighted item, or None."""
        table = self.query_one("#list", ListTable)
        if not self.items or table.cursor_row is None or table.cursor_row >= len(self.items):
            return None
        return self.items[table.cursor_row]

    @on(DataTable.RowHighlighted, "#list")
    def _highlighted(self, _event) -> None:
        if self.anchor is not None:
            self._paint_selection()
            self._subtitle()
        self.show_item(self.current())

    # ---- decisions ------------------------------------------------------------------------
    def decide(self, title: str, effect: str, apply: Apply) -> None:
        """State ``effect``, ask (default No), then run ``apply`` in a worker; every decision here is undoable."""
        self.confirm(title, effect.rstrip(".") + ".\nUndo (u) restores what changes.", lambda: self.run_decision(apply))

    def promote_current(self, what: str, effect: str, promote: Callable) -> None:
        """``p``: the highlighted *possible* item becomes likely after a confirmation stating ``effect``;
        ``promote(key, actor)`` is the service call (it returns the decision)."""
        item = self.current()
        if item is None or item.status != "possible":
            self.notify(f"Only a possible {what} can be promoted.", severity="warning")
            return
        key = self.item_key(item)

        def apply() -> tuple[str, str]:
            return promote(key, self.app.actor).decision_id, f"{key} is a likely {what} now."

        self.decide(f"Promote {key}?", effect, apply)

    @work(thread=True, group="proposals-decide")
    def run_decision(self, apply: Apply) -> None:
        """Run a decision's service call (thread worker): a refusal is shown, a decision reloads the list."""
        from memtui.domain.invariants import LifecycleError

        try:
            decision_id, message = apply()
        except LifecycleError as exc:
            self.app.call_from_thread(self.refused, str(exc))
            return
        self.app.call_from_thread(self._decided, decision_id, message)

    def _decided(self, decision_id: str, message: str) -> None:
        self.anchor, self.marked = None, set()
        self._undo.append(decision_id)
        self.notify(f"{message} (decision {decision_id}; u undoes it)", markup=False)
        self.reload()

    def refused(self, message: str, title: str = "Refused") -> None:
        """Why a decision was refused, shown literally (it may quote a statement); it replaces earlier
        notices, so refusals do not pile up over the detail."""
        self.app.clear_notifications()
        self.notify(visible(message), title=title, severity="error", markup=False, timeout=8)

    def action_undo(self) -> None:
        """Undo this screen's latest decision, or else your latest merge, resolution or compaction
        that is not undone yet (also after leaving and reopening the screen)."""
        self.run_undo(self._undo.pop() if self._undo else None)

    @work(thread=True, group="proposals-undo")
    def run_undo(self, decision_id: str | None) -> None:
        """Undo a decision (None: the actor's latest not undone) with compensating events (thread worker)."""
        from memtui.domain.invariants import LifecycleError

        services = self.app.services
        if decision_id is None:
            decision_id = services.proposals.last_decision(self.app.actor.id)
            if decision_id is None:
                self.app.call_from_thread(self.notify, "No decision of yours to undo.", severity="warning")
                return
        try:
            services.resolve.undo(decision_id, self.app.actor)
        except LifecycleError as exc:
            self.app.call_from_thread(self.refused, str(exc), "Cannot undo")
            return
        self.app.call_from_thread(self.notify, f"Undone {decision_id}.", markup=False)
        self.app.call_from_thread(self.reload)
