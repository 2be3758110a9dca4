"""A row list whose columns size to the terminal: the flexible column takes the free width.

Issue 11, item 5: at 80 columns nothing needs horizontal scrolling, at 160 the statement
column is not stuck at 30 characters beside an empty pane.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.widgets import DataTable

#: the terminal width the preferred column widths are written for
DESIGN_WIDTH = 160


@dataclass(frozen=True)
class Col:
    """A column: ``width`` is its width at 160 columns (0: it takes the free width), ``min_width``
    the narrowest it gets on a small terminal."""

    label: str
    key: str
    width: int = 0
    min_width: int = 6


def fit_widths(cols: list[Col], available: int, padding: int = 1) -> dict[str, int]:
    """Column widths (content cells, without ``padding`` on each side) that fill ``available`` cells.

    Fixed columns scale with ``available / 160`` between their ``min_width`` and ``width``; the
    flexible column (width 0; at most one) takes what is left, at least its ``min_width``.
    Example: widths 8, 34, 0 at 80 cells with padding 1 → 6, 17, 51.
    """
    fixed = {c.key: max(c.min_width, min(c.width, round(c.width * available / DESIGN_WIDTH)))
             for c in cols if c.width}
    used = sum(fixed.values()) + 2 * padding * len(cols)
    out = {}
    for c in cols:
        out[c.key] = fixed[c.key] if c.width else max(c.min_width, available - used)
    return out


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
