"""One memory: its record and evidence, its full history, its usage and harm, and what is related to it.

The record on the left (statement, scope, type, confidence and quality band, why it waits, evidence);
on the right the related items (duplicate clusters, conflicts, compaction proposals, lineage), then
every history event (time, from → to, actor, job, reason, comment) and the usage and harm events.
``enter`` on a related item jumps to it (the cluster, conflict or proposal on its screen, or the other
memory's page); ``e`` opens the evidence side by side. Below 110 columns the two sides stack.
All text from the store is shown literally.
"""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from memtui.review.memory_page import MemoryPage, RelatedItem
from memtui.screens.base import BaseScreen
from memtui.review.views import short_id
from memtui.widgets.list_table import memory_cell
from memtui.widgets.literal import one_line, visible
from memtui.widgets.memory_detail import render_detail

BAND_STYLE = {"high": "bold green", "medium": "yellow", "low": "red"}


def _when(dt) -> str:
    return f"{dt:%Y-%m-%d %H:%M}"


def _event_body(page: MemoryPage, e) -> Text:
    t = Text()
    if e.from_state is None:
        t.append(f"created {e.to_state}", style="bold")
    elif e.from_state == e.to_state:
        t.append(f"note ({e.to_state})", style="dim")
    else:
        t.append(f"{e.from_state} → {e.to_state}", style="bold")
    t.append(f"  {visible(e.actor_type)}:{visible(e.actor_id)}")
    if e.actor_role:
        t.append(f" ({visible(e.actor_role)})", style="dim")
    if e.job_id:
        t.append(f"  job {visible(page.job_types.get(e.job_id, 'maintenance'))}", style="cyan")
    if e.compensates:
        t.append("  ↶ undo", style="magenta")
    t.append("\n")
    t.append(visible(e.reason))
    if e.comment:
        t.append("\n“")
        t.append(visible(e.comment), style="italic")
        t.append("”")
    return t


def _usage_body(u) -> Text:
    t = Text(f"{u.kind} ", style="bold red" if u.kind == "harm" else "")
    t.append(visible(u.what), style="red" if "harm" in u.what or u.kind == "harm" else "")
    if u.detail:
        t.append("  ")
        t.append(visible(u.detail))
    return t


def history_sections(page: MemoryPage) -> list[tuple[Text, list[tuple[str, Text]]]]:
    """(title, [(time, body)]) for every history event (oldest first: from → to, actor and role, job,
    then reason and comment) and for the usage and harm events; all store text literal."""
    events = [(_when(e.created_at), _event_body(page, e)) for e in page.history]
    usage = [(_when(u.created_at), _usage_body(u)) for u in page.usage]
    return [(Text(f"History ({len(page.history)} events)", style="bold underline"), events),
            (Text(f"Usage and harm ({len(page.usage)})", style="bold underline"), usage)]


def history_renderable(sections) -> Group:
    """The sections as grids: the time in its own column, so wrapped reasons stay indented."""
    parts: list = []
    for title, rows in sections:
        if parts:
            parts.append(Text(""))
        parts.append(title)
        if not rows:
            parts.append(Text("  none recorded", style="dim"))
            continue
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="dim", no_wrap=True)
        grid.add_column(ratio=1)
        for when, body in rows:
            grid.add_row(when, body)
        parts.append(grid)
    return Group(*parts)


def history_plain(sections) -> str:
    """The history side as plain text, one line a row (``time  body``): what tests read."""
    lines = []
    for title, rows in sections:
        lines.append(title.plain)
        lines += [f"{when}  {body.plain}" for when, body in rows]
    return "\n".join(lines)


def summary_lines(page: MemoryPage) -> list[Text]:
    """The quality band and, for a memory in the queue, the reason it waits there (about 120 characters,
    cut between words)."""
    out = []
    if page.quality is not None:
        score, band = page.quality
        line = Text("quality    ", style="bold")
        line.append(band, style=BAND_STYLE.get(band, ""))
        line.append(f"   score {score:.2f}", style="dim")
        out.append(line)
    if page.detail.waits_for:
        line = Text("waits for  ", style="bold")
        why = " ".join(visible(page.detail.waits_for).split())
        if len(why) > 120:  # cut between words, never inside a name or path
            why = why[:119].rsplit(" ", 1)[0] + " …"
        line.append(why)
        line.stylize("yellow", 11)
        line.no_wrap = False
        out.append(line)
    return out


def page_lines(page: MemoryPage) -> list[Text]:
    """The left side: the detail pane's record (:func:`render_detail`) with the quality band and the
    waiting reason after the statement."""
    lines = render_detail(page.detail)
    return lines[:4] + summary_lines(page) + lines[4:]


def related_option(r: RelatedItem) -> Text:
    """One related item as a line: relation, short id, status, then what it is about: the other memories'
    short ids and statements when it has them (issue 24), else its text (untrusted, literal)."""
    t = Text(f"{r.relation:<13} ", style="bold" if r.open else "dim")  # a space even after a long relation
    t.append_text(one_line(short_id(r.subject_id, 16), 60))
    t.append(f"  {r.status}", style="yellow" if r.open and r.jump != "memory" else "dim")
    t.append("  ")
    score = r.about.split("with ", 1)[0] if r.others else ""  # "score 91 " / "P 0.61 " of a possible one
    if score:
        t.append(score, style="dim")
    for n, (mid, statement) in enumerate(r.others):
        if n:
            t.append(" · ")
        t.append_text(memory_cell(mid, statement))
    if not r.others:
        t.append_text(one_line(r.about, 300))
    t.no_wrap, t.overflow = True, "ellipsis"
    return t


class MemoryScreen(BaseScreen):
    """The detail and full history of one memory, with jumps to what is related to it."""

    CSS_PATH = "memory.tcss"
    HELP_TITLE = "Memory keys"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    BINDINGS = [
        Binding("enter", "open_related", "Open related", id="memory.open_related"),
        Binding("e", "evidence", "Evidence", id="memory.evidence"),
    ]

    def __init__(self, memory_id: str) -> None:
        super().__init__()
        self.memory_id = memory_id
        self.page: MemoryPage | None = None
        self.detail_lines: list[Text] = []
        self.history_text = ""

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="mem-body"):
            with VerticalScroll(id="mem-left"):
                yield Static("loading…", id="mem-detail")
            with Vertical(id="mem-right"):
                yield Static(Text("Related", style="bold underline"), id="related-title")
                yield OptionList(id="related")
                with VerticalScroll(id="mem-history"):
                    yield Static("loading…", id="history")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = f"memory {visible(self.memory_id)}"
        self.query_one("#related", OptionList).focus()
        self.load()

    def reload(self) -> None:
        """Read the page again (after a decision elsewhere, or maintenance)."""
        self.load()

    def on_screen_resume(self) -> None:
        """Back from a jump: the related item may have been decided meanwhile."""
        if self.page is not None:
            self.load()

    @work(thread=True, exclusive=True, group="memory-page")
    def load(self) -> None:
        """Fetch the page through the review service (thread worker)."""
        from memtui.review.lifecycle import MemoryNotFound

        try:
            page = self.app.service.memory_page(self.memory_id)
        except MemoryNotFound as exc:
            self.app.call_from_thread(self._error, str(exc))
            return
        self.app.call_from_thread(self._show, page)

    def _error(self, message: str) -> None:
        self.query_one("#history", Static).update(Text(visible(message), style="red"))

    def _show(self, page: MemoryPage) -> None:
        self.page = page
        #: the left side's lines as shown (tests read them)
        self.detail_lines = page_lines(page)
        self.query_one("#mem-detail", Static).update(Group(*self.detail_lines))
        self.query_one("#related-title", Static).update(Text(
            f"Related ({len(page.related)})" + ("   enter opens" if page.related else "   none"),
            style="bold underline"))
        options = self.query_one("#related", OptionList)
        keep = options.highlighted
        options.clear_options()
        options.add_options([Option(related_option(r), id=str(i)) for i, r in enumerate(page.related)])
        options.display = bool(page.related)
        if page.related:
            options.highlighted = min(keep or 0, len(page.related) - 1)
        sections = history_sections(page)
        #: the history side as plain text (tests read it)
        self.history_text = history_plain(sections)
        self.query_one("#history", Static).update(history_renderable(sections))

    def _selected(self) -> RelatedItem | None:
        index = self.query_one("#related", OptionList).highlighted
        if not self.page or not self.page.related or index is None:
            return None
        return self.page.related[min(index, len(self.page.related) - 1)]

    @on(OptionList.OptionSelected, "#related")
    def _option_selected(self, _event: OptionList.OptionSelected) -> None:
        self.action_open_related()

    def action_open_related(self) -> None:
        """Jump to the highlighted related item: its cluster, conflict or proposal, or the other memory."""
        item = self._selected()
        if item is None:
            self.notify("Nothing related to open.", severity="warning")
            return
        if item.jump == "memory":
            self.app.action_memory(item.subject_id)
            return
        if not item.open:
            self.notify(visible(f"{item.subject_id} is {item.status}: nothing to decide there."), markup=False)
            return
        from memtui.screens.compaction import CompactionScreen
        from memtui.screens.conflicts import ConflictsScreen
        from memtui.screens.duplicates import DuplicatesScreen

        screen = {"duplicates": DuplicatesScreen, "conflicts": ConflictsScreen, "compaction": CompactionScreen}[item.jump]()
        screen.select_key = item.subject_id
        self.app.push_screen(screen)

    def action_evidence(self) -> None:
        """The memory's evidence side by side (recorded span beside the span at HEAD)."""
        if self.page is not None and not self.page.detail.evidence:
            self.notify("This memory has no evidence.", severity="warning")
            return
        from memtui.screens.evidence import EvidenceScreen

        self.app.push_screen(EvidenceScreen(self.memory_id))

    def current_memory_id(self) -> str | None:
        """The memory this page is about (``H`` on it stays here)."""
        return self.memory_id
