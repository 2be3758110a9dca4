"""Small modal dialogs: a confirmation that states the effect (default No) and a text editor."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from memtui.widgets.literal import visible


class ConfirmDialog(ModalScreen[bool]):
    """Asks to confirm ``effect`` (shown literally); ``y`` confirms, ``n``/``escape`` or enter on the
    default button (No) cancels."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n", "answer(False)", "No", id="confirm.no"),
        Binding("escape", "answer(False)", "Cancel", id="confirm.cancel"),
    ]

    def __init__(self, title: str, effect: str) -> None:
        super().__init__()
        self._title, self._effect = title, effect

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(visible(self._title), style="bold"), id="dialog-title")
            yield Static(Text(visible(self._effect)), id="dialog-body")
            with Horizontal(id="dialog-buttons"):
                yield Button("No", id="no", variant="primary")
                yield Button("Yes", id="yes", variant="error")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        """Close with ``answer``."""
        self.dismiss(answer)


class EditDialog(ModalScreen[str | None]):
    """Edits one line of text; enter saves, escape cancels (None). An empty line gives None, or ""
    with ``allow_empty`` (a filter cleared)."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="edit.cancel")]

    def __init__(self, title: str, value: str, *, allow_empty: bool = False) -> None:
        super().__init__()
        self._title, self._value, self._allow_empty = title, value, allow_empty

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(visible(self._title), style="bold"), id="dialog-title")
            yield Input(value=self._value, id="dialog-input")
            yield Static(Text("enter saves · escape cancels", style="dim"))

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        self.dismiss(value or ("" if self._allow_empty else None))

    def action_cancel(self) -> None:
        """Close without a value."""
        self.dismiss(None)


class CommentDialog(ModalScreen[tuple[str, str] | None]):
    """A review comment: enter attaches it to the next decision (``("next", text)``), ctrl+l to
    ``last`` (a description of the latest decision; ``("last", text)``); escape cancels (None)."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="comment.cancel"),
        Binding("ctrl+l", "on_last", "On the last decision", id="comment.last"),
    ]

    def __init__(self, value: str, last: str | None) -> None:
        super().__init__()
        self._value, self._last = value, last

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text("Comment", style="bold"), id="dialog-title")
            yield Input(value=self._value, id="dialog-input")
            hint = "enter: on the next decision"
            if self._last:
                hint += f" · ctrl+l: on the last one ({visible(self._last)})"
            yield Static(Text(hint + " · escape cancels", style="dim"))

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        self.dismiss(("next", value) if value else None)

    def action_on_last(self) -> None:
        """Attach the comment to the latest decision of this session."""
        value = self.query_one(Input).value.strip()
        if self._last and value:
            self.dismiss(("last", value))
        else:
            self.app.bell()

    def action_cancel(self) -> None:
        """Close without a comment."""
        self.dismiss(None)
