"""Evidence side by side: the span at its recorded commit beside the same span at HEAD.

Changed lines are marked; an *outdated* badge shows when the text changed; ``n``/``N`` jump
between changed hunks; ``]``/``[`` switch to the memory's next/previous evidence.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from memtui.review.evidence import EvidenceComparison
from memtui.widgets.literal import visible

ROW_STYLE = {"replace": ("on #3b1d1d", "on #1d3b22"), "delete": ("on #3b1d1d", ""), "insert": ("", "on #1d3b22")}
MARK = {"equal": " ", "replace": "~", "delete": "-", "insert": "+"}


class EvidenceScreen(Screen):
    """Shows one piece of evidence of a memory, recorded vs HEAD."""

    CSS_PATH = "evidence.tcss"
    BINDINGS = [
        Binding("n", "next_hunk", "Next change", id="evidence.next_hunk"),
        Binding("N", "previous_hunk", "Prev change", key_display="N", id="evidence.previous_hunk"),
        Binding("right_square_bracket", "next_evidence", "Next evidence", key_display="]", id="evidence.next"),
        Binding("left_square_bracket", "previous_evidence", "Prev evidence", key_display="[", id="evidence.previous"),
        Binding("H", "history", "History", key_display="H", show=False, id="evidence.history"),
        Binding("escape", "app.pop_screen", "Back", id="evidence.back"),
        Binding("question_mark", "help", "Help", key_display="?", id="evidence.help"),
    ]

    def __init__(self, memory_id: str, index: int = 0) -> None:
        super().__init__()
        self.memory_id = memory_id
        self.index = index
        self.comparison: EvidenceComparison | None = None
        self._hunk = -1

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="ev-title")
        with VerticalScroll(id="ev-body"):
            yield Static("loading…", id="ev-diff")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "evidence"
        self.load()

    @work(thread=True, exclusive=True, group="evidence")
    def load(self) -> None:
        """Read both sides from git in a thread worker, then render them."""
        from memtui.review.evidence import compare_evidence

        try:
            comparison = compare_evidence(self.app.engine, self.memory_id, self.index)
        except (LookupError, IndexError) as exc:
            self.app.call_from_thread(self._error, str(exc))
            return
        self.app.call_from_thread(self._show, comparison)

    def _error(self, message: str) -> None:
        self.query_one("#ev-diff", Static).update(Text(visible(message), style="red"))

    def _show(self, c: EvidenceComparison) -> None:
        self.comparison, self._hunk = c, -1
        title = Text()
        title.append(f" {visible(c.memory_id)}", style="bold")
        title.append(f"   evidence {c.index + 1}/{c.count}   {c.type}   ")
        title.append(f" {c.status} ", style="reverse")
        if c.outdated:
            title.append("  ")
            title.append(" outdated ", style="bold reverse yellow")
        if c.hunks:
            title.append(f"   {len(c.hunks)} change(s): n / N")
        self.query_one("#ev-title", Static).update(title)
        table = Table(expand=True, show_edge=False, box=None, padding=(0, 1), show_header=True,
                      header_style="bold")
        table.add_column("", width=5, justify="right", style="dim")
        table.add_column(Text("recorded  " + visible(c.recorded_label)), ratio=1, overflow="fold")
        table.add_column("", width=1)
        table.add_column("", width=5, justify="right", style="dim")
        table.add_column(Text("HEAD  " + visible(c.current_label or "—")), ratio=1, overflow="fold")
        for row in c.rows:
            lstyle, rstyle = ROW_STYLE.get(row.tag, ("", ""))
            table.add_row(
                str(row.left.number) if row.left else "",
                Text(visible(row.left.text), style=lstyle) if row.left else Text(""),
                Text(MARK[row.tag], style="bold yellow"),
                str(row.right.number) if row.right else "",
                Text(visible(row.right.text), style=rstyle) if row.right else Text(""),
            )
        if c.note:
            note = Text("\n" + visible(c.note), style="yellow")
            self.query_one("#ev-diff", Static).update(note if not c.rows else _Group(table, note))
        else:
            self.query_one("#ev-diff", Static).update(table)

    def _scroll_to_hunk(self) -> None:
        if not self.comparison or not self.comparison.hunks:
            self.notify("No changes in this span.", markup=False)
            return
        row = self.comparison.hunks[self._hunk]
        self.query_one("#ev-body", VerticalScroll).scroll_to(y=max(0, row + 1 - 2), animate=False)
        self.notify(f"change {self._hunk + 1} of {len(self.comparison.hunks)} (line {row + 1} of the span)",
                    markup=False, timeout=2)

    def action_next_hunk(self) -> None:
        """Jump to the next changed hunk."""
        if self.comparison and self.comparison.hunks:
            self._hunk = (self._hunk + 1) % len(self.comparison.hunks)
        self._scroll_to_hunk()

    def action_previous_hunk(self) -> None:
        """Jump to the previous changed hunk."""
        if self.comparison and self.comparison.hunks:
            self._hunk = (self._hunk - 1) % len(self.comparison.hunks)
        self._scroll_to_hunk()

    def action_next_evidence(self) -> None:
        """Show the memory's next piece of evidence."""
        self.index += 1
        self.load()

    def action_previous_evidence(self) -> None:
        """Show the memory's previous piece of evidence."""
        self.index -= 1
        self.load()

    def action_history(self) -> None:
        """Open this memory's page: record, full history, usage and related items."""
        self.app.action_memory(self.memory_id)

    def action_help(self) -> None:
        """Show the keys of this screen."""
        from memtui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.active_bindings.values(), title="Evidence keys"))


def _Group(*renderables):
    from rich.console import Group

    return Group(*renderables)
