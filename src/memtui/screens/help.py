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
    """Lists key, description and binding id of each active binding, in the screen's order; escape, ? or q closes it."""

    CSS_PATH = "help.tcss"
    BINDINGS = [
        Binding("escape", "dismiss", "Close", id="help.close"),
        Binding("question_mark", "dismiss", "Close", show=False, key_display="?", id="help.close_help"),
        Binding("q", "dismiss", "Close", show=False, id="help.close_q"),
        Binding("j", "scroll(1)", "Down", show=False, id="help.down"),
        Binding("k", "scroll(-1)", "Up", show=False, id="help.up"),
    ]

    def __init__(self, active_bindings: Iterable, title: str = "Keys") -> None:
        super().__init__()
        rows: dict[tuple[str, str], list[str]] = {}  # (description, id) -> keys; "j,down" is one row
        for ab in active_bindings:  # in the screen's order: its own keys first (BaseScreen.active_bindings)
            binding: Binding = ab.binding
            if binding.system:
                continue
            key = binding.key_display or ab.node.app.get_key_display(binding)
            keys = rows.setdefault((binding.description or binding.action, binding.id or ""), [])
            if key not in keys:
                keys.append(key)
        self._rows = [(" ".join(keys), desc, binding_id) for (desc, binding_id), keys in rows.items()]
        self._title = title

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=True, header_style="dim", padding=(0, 1))
        table.add_column("key", style="bold cyan", justify="right")
        table.add_column("does")
        table.add_column("id (keymap.yaml)", style="dim")
        for key, desc, binding_id in self._rows:
            table.add_row(Text(key), Text(desc), Text(binding_id))
        with VerticalScroll(id="help-box"):
            yield Static(Text(self._title, style="bold"), id="help-title")
            yield Static(table)
            yield Static(Text("escape closes this help · ~/.config/memtui/keymap.yaml remaps any id", style="dim"))

    def action_scroll(self, lines: int) -> None:
        """Scroll the list of keys (``j``/``k``, like every list)."""
        box = self.query_one("#help-box", VerticalScroll)
        box.scroll_to(y=box.scroll_y + lines, animate=False)

    def action_dismiss(self, result=None) -> None:  # type: ignore[override]
        """Close the help."""
        self.dismiss(None)
