"""Duplicate clusters: pick the canonical, merge, or say they are not duplicates.

Clusters on the left (size, best score, scope); the selected cluster's members on the right,
each with its words that differ from the canonical highlighted and its evidence. Number keys
pick the canonical, ``m`` merges after a confirmation that states the effect (default No),
``d`` dismisses the cluster as not duplicates, ``e`` edits the canonical text before merging.
"""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from memtui.review.proposals import ClusterView
from memtui.widgets.diff_text import highlight_against
from memtui.widgets.decisions import DecisionScreenMixin
from memtui.widgets.literal import one_line, visible
from memtui.widgets.memory_detail import STATUS_STYLE


class DuplicatesScreen(DecisionScreenMixin, Screen):
    """Open duplicate clusters and the decisions on them."""

    CSS_PATH = "proposals.tcss"
    BINDINGS = [
        Binding("m", "merge", "Merge", id="duplicates.merge"),
        Binding("d", "not_duplicates", "Not duplicates", id="duplicates.not_duplicates"),
        Binding("e", "edit", "Edit canonical", id="duplicates.edit"),
        Binding("u", "undo", "Undo", id="duplicates.undo"),
        Binding("escape", "app.pop_screen", "Back", id="duplicates.back"),
        Binding("question_mark", "help", "Help", key_display="?", id="duplicates.help"),
    ] + [Binding(str(n), f"pick({n})", f"Canonical {n}", show=False, id=f"duplicates.pick{n}") for n in range(1, 10)]

    def __init__(self) -> None:
        super().__init__()
        self.clusters: list[ClusterView] = []
        self.canonical: dict[str, str] = {}  # cluster id -> chosen canonical
        self.edited: dict[str, str] = {}  # cluster id -> edited canonical text
        self._undo: list[str] = []

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="body"):
            yield DataTable(id="list", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="side"):
                yield Static("", id="detail")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "duplicate clusters"
        table = self.query_one("#list", DataTable)
        table.add_column("size", key="size", width=4)
        table.add_column("best", key="best", width=4)
        table.add_column("canonical", key="canonical", width=34)
        table.add_column("scope", key="scope", width=22)
        table.focus()
        self.reload()

    @work(thread=True, exclusive=True, group="duplicates")
    def reload(self) -> None:
        """Load the open clusters (thread worker)."""
        from memtui.review.proposals import ProposalQueries

        clusters = ProposalQueries(self.app.engine, self.app.actor).clusters()
        self.app.call_from_thread(self._show, clusters)

    def _show(self, clusters: list[ClusterView]) -> None:
        self.clusters = clusters
        table = self.query_one("#list", DataTable)
        table.clear()
        for c in clusters:
            canon = self.canonical.get(c.cluster_id, c.canonical_id)
            table.add_row(Text(str(len(c.members))), Text(f"{c.best_score:.0f}"), one_line(canon, 60),
                          one_line(c.scope_key.split(":", 1)[0], 40), key=c.cluster_id)
        self._select_wanted(table)
        self._render_current()

    def _current(self) -> ClusterView | None:
        table = self.query_one("#list", DataTable)
        if not self.clusters or table.cursor_row is None or table.cursor_row >= len(self.clusters):
            return None
        return self.clusters[table.cursor_row]

    @on(DataTable.RowHighlighted, "#list")
    def _highlighted(self, _event) -> None:
        self._render_current()

    def _render_current(self) -> None:
        c = self._current()
        detail = self.query_one("#detail", Static)
        if c is None:
            detail.update(Text("No open duplicate clusters. Maintenance (m on the queue) looks for them.", style="dim"))
            return
        canon_id = self.canonical.get(c.cluster_id, c.canonical_id)
        canon = next(m for m in c.members if m.memory_id == canon_id)
        canon_text = self.edited.get(c.cluster_id, canon.statement)
        parts: list = []
        head = Text()
        head.append(f"{c.cluster_id}", style="bold")
        head.append(f"   {len(c.members)} members · {c.method} · best {c.best_score:.0f}   ")
        head.append(visible(c.scope_key), style="dim")
        parts += [head, Text(visible(c.explanation), style="dim"), Text("")]
        if c.cluster_id in self.edited:
            parts += [Text("edited canonical text:", style="bold yellow"), Text(visible(canon_text)), Text("")]
        for n, m in enumerate(c.members, start=1):
            is_canon = m.memory_id == canon_id
            line = Text()
            line.append(f"{n} ", style="bold cyan")
            line.append("★ canonical  " if is_canon else "             ", style="bold green" if is_canon else "")
            line.append(visible(m.memory_id), style="bold")
            score = c.score_with_canonical(m.memory_id, canon_id)
            line.append(f"   {m.state}   conf {m.confidence:.2f}" + (f"   score {score:.0f}" if score is not None and not is_canon else ""),
                        style="dim")
            parts.append(line)
            body = Text("   ")
            body.append_text(Text(visible(m.statement)) if is_canon else highlight_against(m.statement, canon_text))
            parts.append(body)
            for e in m.evidence:
                ev = Text("     • ")
                ev.append(e.status, style=STATUS_STYLE.get(e.status, ""))
                ev.append(f" {e.type} {visible(e.current_location or e.location)}", style="dim")
                parts.append(ev)
            parts.append(Text(""))
        parts.append(Text("1-9 pick the canonical · m merge · d not duplicates · e edit the canonical text", style="dim"))
        detail.update(Group(*parts))

    def action_pick(self, n: int) -> None:
        """Make member ``n`` (1-based) the canonical of the selected cluster."""
        c = self._current()
        if c is None or not 1 <= n <= len(c.members):
            self.app.bell()
            return
        self.canonical[c.cluster_id] = c.members[n - 1].memory_id
        self.query_one("#list", DataTable).update_cell(c.cluster_id, "canonical",
                                                       one_line(self.canonical[c.cluster_id], 60))
        self._render_current()

    def action_edit(self) -> None:
        """Edit the canonical statement before merging."""
        c = self._current()
        if c is None:
            return
        from memtui.screens.dialogs import EditDialog

        canon_id = self.canonical.get(c.cluster_id, c.canonical_id)
        text = self.edited.get(c.cluster_id) or next(m.statement for m in c.members if m.memory_id == canon_id)

        def done(value: str | None) -> None:
            if value:
                self.edited[c.cluster_id] = value
                self._render_current()

        self.app.push_screen(EditDialog(f"Canonical text for {canon_id}", text), done)

    def action_merge(self) -> None:
        """Merge the selected cluster after a confirmation that states the effect (default No)."""
        c = self._current()
        if c is None:
            self.notify("No cluster selected.", severity="warning")
            return
        from memtui.screens.dialogs import ConfirmDialog

        canon_id = self.canonical.get(c.cluster_id, c.canonical_id)
        others = [m.memory_id for m in c.members if m.memory_id != canon_id]
        effect = (f"{canon_id} stays and takes the evidence, tags and highest confidence of "
                  f"{', '.join(others)}.\n{', '.join(others)} become superseded by {canon_id}."
                  + (f"\nIts statement becomes: {self.edited[c.cluster_id]}" if c.cluster_id in self.edited else "")
                  + "\nUndo (u) restores them.")

        def done(yes: bool | None) -> None:
            if yes:
                self.run_decision("merge", c.cluster_id, canon_id, self.edited.get(c.cluster_id))

        self.app.push_screen(ConfirmDialog(f"Merge {len(c.members)} memories?", effect), done)

    def action_not_duplicates(self) -> None:
        """Dismiss the selected cluster after a confirmation: its members are not duplicates (remembered)."""
        c = self._current()
        if c is None:
            return
        from memtui.screens.dialogs import ConfirmDialog

        ids = ", ".join(m.memory_id for m in c.members)

        def done(yes: bool | None) -> None:
            if yes:
                self.run_decision("not_duplicates", c.cluster_id, None, None)

        self.app.push_screen(ConfirmDialog("Not duplicates?", f"{ids} stay as they are and are never proposed "
                                           "as duplicates of each other again.\nUndo (u) forgets this."), done)

    @work(thread=True, group="duplicates-decide")
    def run_decision(self, kind: str, cluster_id: str, canonical: str | None, text: str | None) -> None:
        """Apply a merge or a dismissal through the resolve service (thread worker)."""
        from memtui.domain.invariants import LifecycleError
        from memtui.review.resolve import ResolveService

        svc = ResolveService(self.app.engine)
        try:
            if kind == "merge":
                r = svc.merge(cluster_id, self.app.actor, canonical_id=canonical, canonical_text=text)
            else:
                r = svc.not_duplicates(cluster_id, self.app.actor)
        except LifecycleError as exc:
            self.app.call_from_thread(self._refused, str(exc))
            return
        self.app.call_from_thread(self._decided, r.decision_id,
                                  f"{'Merged' if kind == 'merge' else 'Dismissed'} {cluster_id}.")

    def action_help(self) -> None:
        """Show the keys of this screen."""
        from memtui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.active_bindings.values(), title="Duplicate cluster keys"))
