"""The review queue's list: a Line-API widget that draws only the rows on screen (issue 11, item 8).

A ``ScrollView`` whose :meth:`QueueList.render_line` builds one row's segments on demand, the way
Toolong draws its log lines: a cursor move or a decided row refreshes just the lines that changed
(``refresh_line``), so a keystroke costs the same with 200 rows loaded or 100,000. Rows are
:class:`memtui.review.views.QueueItemView` values; every string drawn goes through
:func:`memtui.text.visible`, and segments are never parsed as markup, so untrusted text is shown
literally.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from memtui.review.views import QueueItemView
from memtui.text import visible

STATE_STYLE = {
    "needs_review": Style(color="yellow", bold=True), "challenged": Style(color="magenta", bold=True),
    "candidate": Style(color="cyan"), "approved": Style(color="green"), "active": Style(color="green", bold=True),
    "rejected": Style(color="red"), "invalidated": Style(color="red"), "archived": Style(dim=True),
    "blocked": Style(color="red", bold=True, reverse=True),
}
DECIDED_MARK = {"active": "✓", "rejected": "✗", "invalidated": "✗", "needs_review": "?", "archived": "▪",
                "blocked": "⊘"}
#: (title, width); the statement takes the width left over (at least STATEMENT_MIN)
COLUMNS = (("state", 14), ("statement", 0), ("type", 14), ("scope", 18), ("conf", 5), ("age", 4))
#: the narrowest each column gets when the terminal is narrow (the others give up their slack first)
MIN_WIDTHS = {"state": 14, "type": 8, "scope": 10, "conf": 4, "age": 3}
STATEMENT_MIN = 30


def age_label(created: datetime, now: datetime) -> str:
    """``0d``, ``12d`` or ``3mo``: how long ago ``created`` was."""
    days = (now - created).days
    if days < 1:
        return "0d"
    if days < 60:
        return f"{days}d"
    return f"{days // 30}mo"


def _flat(text: str | None) -> str:
    return visible(text).replace("\n", " ⏎ ").replace("\t", " ")


@lru_cache(maxsize=8)
def _column_widths(width: int) -> tuple[int, ...]:
    """:func:`memtui.widgets.list_table.fit_widths` for the queue's columns at ``width`` cells, one
    separator a column; computed once a width, not once a drawn line."""
    from memtui.widgets.list_table import Col, fit_widths

    cols = [Col(title, title, w, MIN_WIDTHS.get(title, STATEMENT_MIN)) for title, w in COLUMNS]
    fitted = fit_widths(cols, width - len(COLUMNS) - 1, padding=0)
    return tuple(fitted[title] for title, _ in COLUMNS)


def _cell(text: str, width: int) -> str:
    """``text`` cut (with …) or padded to exactly ``width`` cells, plus one space of gutter."""
    if cell_len(text) > width:
        text = set_cell_size(text, width - 1) + "…"
    return set_cell_size(text, width) + " "


def scope_label(item: QueueItemView) -> str:
    """``repository:last-module-part`` (``(org-wide)`` without a repository)."""
    scope = item.scope.repository_id or "(org-wide)"
    if item.scope.module_path:
        scope += ":" + item.scope.module_path.rstrip("/").rsplit("/", 1)[-1]
    return scope


class QueueList(ScrollView, can_focus=True):
    """The rows of the queue with a cursor and an optional range selection (``v``, shift+arrows)."""

    COMPONENT_CLASSES = {"queue-list--cursor", "queue-list--selected", "queue-list--decided"}
    DEFAULT_CSS = """
    QueueList { background: $surface; }
    QueueList > .queue-list--cursor { background: $accent 50%; text-style: bold; }
    QueueList:focus > .queue-list--cursor { background: $accent; }
    QueueList > .queue-list--selected { background: $primary 40%; }
    QueueList > .queue-list--decided { color: $text-muted; }
    """
    BINDINGS = [
        Binding("down", "cursor_down", "Down", show=False, id="queue.list.down"),
        Binding("up", "cursor_up", "Up", show=False, id="queue.list.up"),
        Binding("shift+down", "extend(1)", "Extend selection", show=False, id="queue.list.extend_down"),
        Binding("shift+up", "extend(-1)", "Extend selection", show=False, id="queue.list.extend_up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="queue.list.page_down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="queue.list.page_up"),
        Binding("home", "first", "First", show=False, id="queue.list.first"),
        Binding("end", "last", "Last", show=False, id="queue.list.last"),
    ]

    class Highlighted(Message):
        """The cursor is on ``item`` (row ``index``)."""

        def __init__(self, queue_list: "QueueList", item: QueueItemView, index: int) -> None:
            super().__init__()
            self.queue_list, self.item, self.index = queue_list, item, index

        @property
        def control(self) -> "QueueList":
            """The list that sent it (for ``@on(QueueList.Highlighted, "#id")``)."""
            return self.queue_list

    def __init__(self, *, now: datetime, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[QueueItemView] = []
        self._index: dict[str, int] = {}
        self.decided: set[str] = set()  # decided in this session: drawn with a mark
        self.cursor = 0
        self.anchor: int | None = None  # one end of the range selection; the cursor is the other
        self.now = now

    # ---- data ------------------------------------------------------------------------------
    def set_rows(self, rows: list[QueueItemView], keep: str | None = None) -> None:
        """Show ``rows`` (a new filter or a reload); the cursor goes to ``keep`` when it is among them."""
        self.rows = list(rows)
        self._index = {r.memory_id: i for i, r in enumerate(self.rows)}
        self.anchor = None
        self.cursor = self._index.get(keep, 0) if keep else 0
        self._resize()
        self.scroll_to(y=max(0, self.cursor - self.size.height // 2), animate=False, immediate=True)
        self.refresh()
        self._announce()

    def append_rows(self, rows: list[QueueItemView]) -> None:
        """Add the next page under the loaded rows (rows already shown are skipped)."""
        start = len(self.rows)
        for r in rows:
            if r.memory_id not in self._index:
                self._index[r.memory_id] = len(self.rows)
                self.rows.append(r)
        self._resize()
        self.refresh_lines(start, len(self.rows) - start)

    def replace_item(self, item: QueueItemView) -> None:
        """Redraw one row from a fresh view of it (after a decision, an edit, someone else's change)."""
        i = self._index.get(item.memory_id)
        if i is not None:
            self.rows[i] = item
            self.refresh_line(i)

    def index_of(self, memory_id: str) -> int | None:
        """The row of ``memory_id`` among the loaded rows, or None."""
        return self._index.get(memory_id)

    @property
    def current(self) -> QueueItemView | None:
        """The row under the cursor, or None when the list is empty."""
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    # the main-list protocol of memtui.screens.base (row_count, cursor_row, move_cursor)
    @property
    def row_count(self) -> int:
        """How many rows are loaded."""
        return len(self.rows)

    @property
    def cursor_row(self) -> int:
        """The cursor's row."""
        return self.cursor

    def move_cursor(self, *, row: int) -> None:
        """Put the cursor on ``row`` (the base screen's g/G/home/end, ]/[)."""
        self.move_to(row)

    def selected(self) -> list[QueueItemView]:
        """The rows a verb applies to: the range between anchor and cursor, else the cursor's row."""
        if not self.rows:
            return []
        if self.anchor is None:
            return [self.rows[self.cursor]]
        lo, hi = sorted((self.anchor, self.cursor))
        return self.rows[lo:hi + 1]

    def _resize(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.rows))

    def on_resize(self) -> None:
        self._resize()

    # ---- movement --------------------------------------------------------------------------
    def move_to(self, index: int, *, extend: bool = False) -> None:
        """Put the cursor on row ``index`` (clamped); ``extend`` keeps or starts a range selection."""
        if not self.rows:
            return
        index = max(0, min(index, len(self.rows) - 1))
        old, old_anchor = self.cursor, self.anchor
        if extend and self.anchor is None:
            self.anchor = old
        elif not extend:
            self.anchor = None
        self.cursor = index
        if old_anchor is not None and not extend:  # the old range is gone: redraw it
            lo, hi = sorted((old_anchor, old))
            self.refresh_lines(lo, hi - lo + 1)
        elif extend:
            lo, hi = sorted((old, index))
            self.refresh_lines(lo, hi - lo + 1)
        self.refresh_line(old)
        self.refresh_line(index)
        self.scroll_to_region(Region(0, index, 1, 1), animate=False, immediate=True)
        if index != old:
            self._announce()

    def on_click(self, event) -> None:
        """A click puts the cursor on the row clicked."""
        self.move_to(self.scroll_offset.y + event.y)

    def toggle_range(self) -> None:
        """Start a range selection at the cursor, or drop the one there is (``v``)."""
        if self.anchor is None:
            self.anchor = self.cursor
            self.refresh_line(self.cursor)
        else:
            lo, hi = sorted((self.anchor, self.cursor))
            self.anchor = None
            self.refresh_lines(lo, hi - lo + 1)

    def _announce(self) -> None:
        if self.rows:
            self.post_message(self.Highlighted(self, self.rows[self.cursor], self.cursor))

    def action_cursor_down(self) -> None:
        """Next row (a range started with ``v`` grows with the cursor)."""
        self.move_to(self.cursor + 1, extend=self.anchor is not None)

    def action_cursor_up(self) -> None:
        """Previous row."""
        self.move_to(self.cursor - 1, extend=self.anchor is not None)

    def action_extend(self, step: int) -> None:
        """Grow or shrink the range selection by one row."""
        self.move_to(self.cursor + step, extend=True)

    def action_page(self, pages: int) -> None:
        """One screen down or up."""
        self.move_to(self.cursor + pages * max(1, self.size.height - 1), extend=self.anchor is not None)

    def action_first(self) -> None:
        """First row."""
        self.move_to(0)

    def action_last(self) -> None:
        """Last loaded row (the next page loads as it comes near)."""
        self.move_to(len(self.rows) - 1)

    # ---- drawing ---------------------------------------------------------------------------
    def column_widths(self, width: int | None = None) -> list[int]:
        """The width of each of :data:`COLUMNS` at ``width`` cells (the statement takes what is free)."""
        return list(_column_widths(self.size.width if width is None else width))

    def header_text(self, sorted_by: str | None = None, descending: bool = False) -> str:
        """The column titles laid out as the rows are; the column ``sorted_by`` (a title) carries
        ▲ (ascending) or ▼ (descending)."""
        mark = "▼" if descending else "▲"

        def title_cell(title: str, w: int) -> str:
            if title == sorted_by:  # the mark always shows: the title gives up its last letters first
                title = (title if cell_len(title) < w else set_cell_size(title, max(0, w - 2))) + mark
            return _cell(title, w)

        return "".join(title_cell(title, w) for (title, _), w in zip(COLUMNS, self.column_widths()))

    def render_line(self, y: int) -> Strip:
        """Row ``scroll_y + y``: only rows on screen are ever drawn."""
        index = self.scroll_offset.y + y
        width = self.size.width
        base = self.rich_style
        if index >= len(self.rows):
            return Strip.blank(width, base)
        item = self.rows[index]
        style = base
        if self.anchor is not None and min(self.anchor, self.cursor) <= index <= max(self.anchor, self.cursor):
            style = base + self.get_component_rich_style("queue-list--selected")
        if index == self.cursor:
            style = base + self.get_component_rich_style("queue-list--cursor")
        decided = item.memory_id in self.decided
        state_style = style + STATE_STYLE.get(item.state, Style())
        text_style = style + self.get_component_rich_style("queue-list--decided") if decided else style
        cells = self.cells(item)
        segments = [Segment(_cell(text, w), state_style if i == 0 else text_style)
                    for i, (text, w) in enumerate(zip(cells, self.column_widths(width)))]
        return Strip(segments).adjust_cell_length(width, style)

    def cells(self, item: QueueItemView) -> list[str]:
        """The text of each of :data:`COLUMNS` for ``item``, uncut and literal (what a row shows)."""
        mark = DECIDED_MARK.get(item.state, "•") if item.memory_id in self.decided else " "
        return [f"{mark} {item.state}", _flat(item.statement), _flat(item.type), _flat(scope_label(item)),
                f"{item.confidence:.2f}", age_label(item.created_at, self.now)]

    def cell(self, index: int, column: str) -> str:
        """The uncut text of ``column`` (a title of :data:`COLUMNS`) in row ``index``."""
        return self.cells(self.rows[index])[[c for c, _ in COLUMNS].index(column)]
