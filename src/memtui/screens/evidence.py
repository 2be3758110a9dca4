"""Evidence side by side: the span at its recorded commit beside the same span at HEAD.

Changed lines are marked; an *outdated* badge shows when the text changed; ``n``/``N`` jump
between changed hunks; ``]``/``[`` switch to the memory's next/previous evidence; ``o`` opens the
evidence at its line in ``$VISUAL``/``$EDITOR``, ``O`` shows its commit in the pager
(:mod:`memtui.review.handoff`).
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Static

from memtui.review.evidence import EvidenceComparison
from memtui.screens.base import BaseScreen
from memtui.widgets.literal import visible
from memtui.widgets.wrap import CODE_BREAKS, wrap_at

#: the backgrounds of changed lines (recorded side, HEAD side) in a dark and in a light theme
_REMOVED, _ADDED = {True: "on #3b1d1d", False: "on #f6d5d5"}, {True: "on #1d3b22", False: "on #d3f0d9"}


def row_style(tag: str, dark: bool) -> tuple[str, str]:
    """The (recorded, HEAD) background of a diff row tagged ``tag`` (difflib's opcodes)."""
    return {"replace": (_REMOVED[dark], _ADDED[dark]), "delete": (_REMOVED[dark], ""),
            "insert": ("", _ADDED[dark])}.get(tag, ("", ""))


MARK = {"equal": " ", "replace": "~", "delete": "-", "insert": "+"}
NUMBER = 5  # cells of a line number


def side_by_side(c: EvidenceComparison, width: int, dark: bool) -> tuple[list[Text], list[int]]:
    """The recorded and HEAD sides of ``c`` in ``width`` cells: ``NNNNN code │ M NNNNN code``, each
    side's code wrapped only after whitespace or punctuation (:data:`CODE_BREAKS`; a name is cut only
    when it is wider than its whole column). Returns the lines and, for each row of ``c.rows``, the
    index of its first line (where ``n`` scrolls to)."""
    col = max(8, (width - 2 * (NUMBER + 1) - 3) // 2)

    def side(text: Text | None) -> list[Text]:
        return wrap_at(text, col, CODE_BREAKS) if text is not None else [Text("")]

    lines: list[Text] = []
    head = [side(Text("recorded  " + visible(c.recorded_label), style="bold")),
            side(Text("HEAD  " + visible(c.current_label or "—"), style="bold"))]
    for i in range(max(map(len, head))):
        line = Text(" " * (NUMBER + 1))
        line.append_text(_pad(head[0], i, col, ""))
        line.append("   " + " " * (NUMBER + 1))
        line.append_text(_pad(head[1], i, col, ""))
        lines.append(line)
    starts: list[int] = []
    for row in c.rows:
        lstyle, rstyle = row_style(row.tag, dark)
        left = side(Text(visible(row.left.text)) if row.left else None)
        right = side(Text(visible(row.right.text)) if row.right else None)
        starts.append(len(lines))
        for i in range(max(len(left), len(right))):
            line = Text(f"{row.left.number if row.left and i == 0 else '':>{NUMBER}} ", style="dim")
            line.append_text(_pad(left, i, col, lstyle if row.left else ""))
            line.append(f" {MARK[row.tag] if i == 0 else ' '} ", style="bold yellow")
            line.append(f"{row.right.number if row.right and i == 0 else '':>{NUMBER}} ", style="dim")
            line.append_text(_pad(right, i, col, rstyle if row.right else ""))
            lines.append(line)
    return lines, starts


def title_line(c: EvidenceComparison, hunk: int | None) -> Text:
    """The line above the code: memory, which evidence, which change (``hunk``, after ``n``; else how
    many), kind, status, outdated -- the most telling first, as the line is cut at 80 columns."""
    title = Text()
    title.append(f" {visible(c.memory_id)}", style="bold")
    title.append(f"  evidence {c.index + 1}/{c.count}")
    if c.hunks:
        title.append(f"  change {hunk + 1}/{len(c.hunks)}" if hunk is not None and hunk >= 0
                     else f"  {len(c.hunks)} change{'' if len(c.hunks) == 1 else 's'} (n/N)", style="bold")
    if c.outdated:
        title.append("  ")
        title.append(" outdated ", style="bold reverse yellow")
    title.append(f"  {c.type}  ")
    title.append(f" {c.status} ", style="reverse")
    return title


def _pad(pieces: list[Text], i: int, width: int, style: str) -> Text:
    piece = pieces[i].copy() if i < len(pieces) else Text("")
    piece.truncate(width, pad=True)  # a piece is never wider: this only pads
    if style:
        piece.stylize(style)
    return piece


class SideBySide:
    """A Rich renderable: :func:`side_by_side` at the width it is given."""

    def __init__(self, comparison: EvidenceComparison, dark: bool) -> None:
        self.comparison, self.dark = comparison, dark

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines, _ = side_by_side(self.comparison, options.max_width, self.dark)
        for line in lines:
            line.no_wrap, line.end = True, "\n"
        yield from lines


class EvidenceScreen(BaseScreen):
    """Shows one piece of evidence of a memory, recorded vs HEAD."""

    CSS_PATH = "evidence.tcss"
    HELP_TITLE = "Evidence keys"
    MAIN_LIST = "#ev-body"
    BINDINGS = [
        Binding("n", "next_hunk", "Next change", id="evidence.next_hunk"),
        Binding("N", "previous_hunk", "Prev change", key_display="N", id="evidence.previous_hunk"),
        Binding("right_square_bracket", "next_evidence", "Next evidence", key_display="]", id="evidence.next"),
        Binding("left_square_bracket", "previous_evidence", "Prev evidence", key_display="[", id="evidence.previous"),
        Binding("o", "open_editor", "Editor", id="evidence.open"),  # $VISUAL/$EDITOR at the line
        Binding("O", "show_commit", "Commit", key_display="O", id="evidence.show_commit"),  # git show
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
        try:
            comparison = self.app.services.compare_evidence(self.memory_id, self.index)
        except (LookupError, IndexError) as exc:
            self.app.call_from_thread(self._error, str(exc))
            return
        self.app.call_from_thread(self._show, comparison)

    def _error(self, message: str) -> None:
        self.query_one("#ev-diff", Static).update(Text(visible(message), style="red"))

    def _show(self, c: EvidenceComparison) -> None:
        self.comparison, self._hunk = c, -1
        self.query_one("#ev-title", Static).update(title_line(c, None))
        table = SideBySide(c, self.app.current_theme.dark)
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
        width = self.query_one("#ev-diff", Static).content_size.width
        _, starts = side_by_side(self.comparison, width, self.app.current_theme.dark)
        # the changed line's first row in view, with one row of context above it
        self.query_one("#ev-body", VerticalScroll).scroll_to(y=max(0, starts[row] - 1), animate=False)
        # where we are goes in the title line: a toast would cover the rows just scrolled into view
        self.query_one("#ev-title", Static).update(title_line(self.comparison, self._hunk))

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

    # ---- hand-off (issue 24, item 7) --------------------------------------------------------
    def action_open_editor(self) -> None:
        """Open this evidence at its line in ``$VISUAL``/``$EDITOR`` (``o``): the checkout's file at
        HEAD, or a read-only copy of the blob at the evidence's commit."""
        self.find_editor_target(self.comparison.index if self.comparison else self.index)

    @work(thread=True, exclusive=True, group="handoff")
    def find_editor_target(self, index: int) -> None:
        """Find (or write) the file to open, in a thread worker: it may read a blob from git."""
        from memtui.review.handoff import HandoffError

        try:
            target = self.app.services.evidence_file(self.memory_id, index)
        except (HandoffError, LookupError) as exc:
            self.app.call_from_thread(self._handoff_refused, str(exc))
            return
        self.app.call_from_thread(self._open_editor, target)

    def _open_editor(self, target) -> None:
        from memtui.review.handoff import HandoffError, run_editor

        try:
            self.app.hand_off(lambda: run_editor(target.path, target.line))
        except HandoffError as exc:
            self._handoff_refused(str(exc))
            return
        if target.temporary:
            self.notify(visible(f"Opened a read-only copy of the recorded file: {target.path}"), markup=False,
                        timeout=4)

    def action_show_commit(self) -> None:
        """Show the evidence's commit with ``git show`` in the pager (``O``)."""
        from memtui.review.handoff import HandoffError, show_commit

        try:
            checkout, sha = self.app.services.evidence_commit(
                self.memory_id, self.comparison.index if self.comparison else self.index)
            self.app.hand_off(lambda: show_commit(checkout, sha))
        except (HandoffError, LookupError) as exc:
            self._handoff_refused(str(exc))

    def _handoff_refused(self, message: str) -> None:
        self.notify(visible(message), title="Cannot open", severity="warning", markup=False)

    def current_memory_id(self) -> str | None:
        """The memory whose evidence this is."""
        return self.memory_id


def _Group(*renderables):
    from rich.console import Group

    return Group(*renderables)
