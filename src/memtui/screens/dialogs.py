"""Small modal dialogs: a confirmation that states the effect (default No), one-line and multi-line text
editors, and the jump-to-memory finder. Each names its keys under its body (issue 24, Build 3)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual import work
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from memtui.widgets.literal import visible


class ConfirmDialog(ModalScreen[bool]):
    """Asks to confirm ``effect`` (shown literally); ``y`` confirms, ``n``/``escape`` or enter on the
    default button (No, focused: its label says so) cancels; the keys are written under the effect."""

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
            yield Static(Text("y confirm · n/esc cancel · enter: the focused button (No)", style="dim"),
                         id="dialog-keys")
            with Horizontal(id="dialog-buttons"):
                yield Button("No (default)", id="no", variant="primary")
                yield Button("Yes (y)", id="yes", variant="error")

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
            yield Static(Text("enter save · esc cancel", style="dim"), id="dialog-keys")

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
            yield Static(Text(hint + " · esc cancel", style="dim"), id="dialog-keys")

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


class TextDialog(ModalScreen[str | None]):
    """Edits a long text over several lines (Textual ``TextArea``, soft-wrapped): ctrl+s saves (the text
    with its lines joined by spaces, trimmed; empty gives None), escape cancels (None)."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS = [Binding("ctrl+s", "save", "Save", id="text.save", priority=True),
                Binding("escape", "cancel", "Cancel", id="text.cancel")]

    def __init__(self, title: str, value: str) -> None:
        super().__init__()
        self._title, self._value = title, value

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(visible(self._title), style="bold"), id="dialog-title")
            yield TextArea(visible(self._value), id="dialog-text", soft_wrap=True, show_line_numbers=False,
                           tab_behavior="focus")
            yield Static(Text("ctrl+s save · esc cancel · enter new line (saved as a space)", style="dim"),
                         id="dialog-keys")

    def on_mount(self) -> None:
        area = self.query_one(TextArea)
        area.focus()
        area.move_cursor(area.document.end)

    def action_save(self) -> None:
        """Close with the edited text (None when empty)."""
        value = " ".join(self.query_one(TextArea).text.split())
        self.dismiss(value or None)

    def action_cancel(self) -> None:
        """Close without a value."""
        self.dismiss(None)


class JumpDialog(ModalScreen[str | None]):
    """Finds a memory by any part of its id or statement, as the palette does
    (:meth:`memtui.review.workstation.Workstation.find_memories`), listing each hit's id and statement;
    up/down choose, enter opens the highlighted one (or the id typed when nothing is listed), escape cancels."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="jump.cancel"),
                Binding("down", "move(1)", "Next", show=False, id="jump.down", priority=True),
                Binding("up", "move(-1)", "Previous", show=False, id="jump.up", priority=True)]
    LIMIT = 10
    MIN_CHARS = 2

    def __init__(self, title: str = "Jump to memory", value: str = "") -> None:
        super().__init__()
        self._title, self._value = title, value
        self._found: list[tuple[str, str]] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(visible(self._title), style="bold"), id="dialog-title")
            yield Input(value=self._value, placeholder="part of an id or of a statement", id="dialog-input")
            yield OptionList(id="dialog-hits")
            yield Static(Text("type to find · ↑↓ choose · enter open · esc cancel", style="dim"), id="dialog-keys")

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        self.query_one(OptionList).display = False
        if self._value:
            self.find(self._value)

    def on_input_changed(self, event: Input.Changed) -> None:
        self.find(event.value)

    @work(thread=True, exclusive=True, group="jump-find")
    def find(self, part: str) -> None:
        """Look ``part`` up in the store (thread worker) and list the hits."""
        part = part.strip()
        found = self.app.services.find_memories(part, self.LIMIT) if len(part) >= self.MIN_CHARS else []
        self.app.call_from_thread(self._list, part, found)

    def _list(self, part: str, found: list[tuple[str, str]]) -> None:
        if part != self.query_one(Input).value.strip():
            return  # typed on meanwhile: a later search lists its own hits
        from memtui.widgets.list_table import memory_cell

        self._found = found
        hits = self.query_one(OptionList)
        hits.clear_options()
        hits.add_options([Option(memory_cell(mid, statement), id=str(i)) for i, (mid, statement) in enumerate(found)])
        hits.display = bool(found)
        if found:
            hits.highlighted = 0

    def action_move(self, step: int) -> None:
        """Highlight the next (``step`` 1) or previous (-1) hit."""
        hits = self.query_one(OptionList)
        if self._found:
            hits.highlighted = max(0, min(len(self._found) - 1, (hits.highlighted or 0) + step))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        hits = self.query_one(OptionList)
        if self._found and hits.highlighted is not None:
            self.dismiss(self._found[hits.highlighted][0])
            return
        self.dismiss(event.value.strip() or None)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self._found[int(event.option.id)][0])

    def action_cancel(self) -> None:
        """Close without a memory."""
        self.dismiss(None)
