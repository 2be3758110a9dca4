"""A row list whose columns size to the terminal: the flexible column takes the free width.

Issue 11, item 5: at 80 columns nothing needs horizontal scrolling, at 160 the statement
column is not stuck at 30 characters beside an empty pane.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import DataTable

from memtui.text import visible_line

@dataclass(frozen=True)
class Col:
    """A column: ``width`` is its preferred width (0: it takes the free width), ``min_width`` the
    narrowest it gets when the table is too narrow for the preferred widths."""

    label: str
    key: str
    width: int = 0
    min_width: int = 6


def fit_widths(cols: list[Col], available: int, padding: int = 1) -> dict[str, int]:
    """Column widths (content cells, without ``padding`` on each side) that fill ``available`` cells.

    The flexible columns (width 0) share what the others leave equally (the first ones take a remainder). When that is less than
    its ``min_width``, the other columns shrink towards their own ``min_width``, each by the same
    share of its slack. Example: widths 8/min 6, 34/min 14, 34/min 14 and a flexible column of min 16
    in 78 cells with padding 1: the three give up 22 of their 42 cells of slack → 6, 23, 23, 18.
    """
    fixed = [c for c in cols if c.width]
    flex = [c for c in cols if not c.width]
    flex_min = sum(c.min_width for c in flex)
    pad = 2 * padding * len(cols)
    widths = {c.key: c.width for c in fixed}
    needed = sum(widths.values()) + pad + flex_min - available
    slack = sum(c.width - c.min_width for c in fixed)
    if needed > 0 and slack > 0:
        keep = max(0.0, 1 - needed / slack)
        widths = {c.key: c.min_width + int((c.width - c.min_width) * keep) for c in fixed}
    free = max(flex_min, available - sum(widths.values()) - pad)
    for i, c in enumerate(flex):
        widths[c.key] = max(c.min_width, free // len(flex) + (i < free % len(flex)))
    return {c.key: widths[c.key] for c in cols}


class ListTable(DataTable):
    """A ``DataTable`` with a row cursor whose columns (:class:`Col`) are refitted on every resize."""

    def __init__(self, cols: list[Col], **kwargs) -> None:
        kwargs.setdefault("cursor_type", "row")
        kwargs.setdefault("zebra_stripes", True)
        super().__init__(**kwargs)
        self._cols = cols

    def on_mount(self) -> None:
        for c in self._cols:
            self.add_column(c.label, key=c.key, width=max(c.width, c.min_width))
        self.fit_columns()

    def on_resize(self) -> None:
        self.fit_columns()

    def fit_columns(self) -> None:
        """Refit the column widths to the current width (less the vertical scrollbar)."""
        available = self.size.width - self.styles.scrollbar_size_vertical
        if available <= 0:
            return
        changed = False
        for key, width in fit_widths(self._cols, available, self.cell_padding).items():
            column = self.columns[key]  # type: ignore[index]  (column keys compare equal to their str)
            if column.width != width:
                column.width, changed = width, True
        if changed:
            # DataTable has no public "set a column's width": these two are what add_column does
            self._require_update_dimensions = True
            self._clear_caches()
            self.refresh()


def memory_cell(memory_id: str, statement: str | None) -> Text:
    """A memory in a list cell: its short id (dim) beside its statement on one line, literal (untrusted
    text: no markup read, control characters shown), cut with ``…`` at the column's width (issue 24)."""
    from memtui.review.views import short_id
    from memtui.widgets.literal import one_line

    cell = Text(visible_line(short_id(memory_id)), style="dim")
    cell.append("  ")
    cell.append_text(one_line(statement, 300))
    cell.no_wrap, cell.overflow = True, "ellipsis"
    return cell
