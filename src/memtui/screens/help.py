"""Help: the keys of the screen underneath, built from its bindings."""

from __future__ import annotations

from typing import Iterable

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


class HelpScreen(ModalScreen[None]):
    """Lists key, action description and binding id for each active binding; any of escape, ? or q closes it."""

    CSS_PATH = "help.tcss"
    BINDINGS = [
        Binding("escape", "dismiss", "Close", id="help.close"),
        Binding("question_mark", "dismiss", "Close", show=False, key_display="?"),
        Binding("q", "dismiss", "Close", show=False),
    ]

    def __init__(self, active_bindings: Iterable, title: str = "Keys") -> None:
        super().__init__()
        self._rows: list[tuple[str, str]] = []
        seen: set[tuple[str, str]] = set()
        # the keys the screen itself defines first, then the focused widget's, then inherited ones
        def rank(ab) -> int:
            from textual.app import App
            from textual.screen import Screen

            own = type(ab.node).__dict__.get("BINDINGS", []) if isinstance(ab.node, Screen) else []
            if any(b is ab.binding or (isinstance(b, Binding) and b.key == ab.binding.key
                                       and b.action == ab.binding.action) for b in own):
                return 0
            return 2 if isinstance(ab.node, (App, Screen)) else 1

        for ab in sorted(active_bindings, key=rank):
            binding: Binding = ab.binding
            key = binding.key_display or ab.node.app.get_key_display(binding)
            desc = binding.description or binding.action
            if (key, desc) in seen:
                continue
            seen.add((key, desc))
            self._rows.append((key, desc))
        self._title = title

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=False, padding=(0, 2))
        table.add_column(style="bold cyan", justify="right")
        table.add_column()
        for key, desc in self._rows:
            table.add_row(Text(key), Text(desc))
        with VerticalScroll(id="help-box"):
            yield Static(Text(self._title, style="bold"), id="help-title")
            yield Static(table)
            yield Static(Text("escape closes this help", style="dim"))

    def action_dismiss(self, result=None) -> None:  # type: ignore[override]
        """Close the help."""
        self.dismiss(None)
