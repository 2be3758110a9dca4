"""Compaction proposals: the members on one side, the proposed statement and merged evidence on the other.

``a`` accept (members superseded by the new memory once it is active), ``e`` edit the statement then accept,
``x`` reject, ``u`` undo. A proposal whose scope is broader than its members' says so, and only
a lead can accept it.
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

from memtui.review.proposals import ProposalView
from memtui.widgets.decisions import DecisionScreenMixin
from memtui.widgets.literal import one_line, visible
from memtui.widgets.memory_detail import STATUS_STYLE


class CompactionScreen(DecisionScreenMixin, Screen):
    """Open compaction proposals and the decisions on them."""

    CSS_PATH = "proposals.tcss"
    BINDINGS = [
        Binding("a", "accept", "Accept", id="compaction.accept"),
        Binding("e", "edit", "Edit & accept", id="compaction.edit"),
        Binding("x", "reject", "Reject", id="compaction.reject"),
        Binding("u", "undo", "Undo", id="compaction.undo"),
        Binding("escape", "app.pop_screen", "Back", id="compaction.back"),
        Binding("question_mark", "help", "Help", key_display="?", id="compaction.help"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.proposals: list[ProposalView] = []
        self._undo: list[str] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield DataTable(id="proposal-list", cursor_type="row", zebra_stripes=True)
        with Horizontal(id="body"):
            with VerticalScroll(id="pane-a", classes="pane"):
                yield Static("", id="members")
            with VerticalScroll(id="pane-b", classes="pane"):
                yield Static("", id="proposal")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "compaction proposals"
        table = self.query_one("#proposal-list", DataTable)
        table.styles.height = 7
        table.add_column("members", key="n", width=7)
        table.add_column("subject", key="subject", width=24)
        table.add_column("proposed statement", key="statement", width=90)
        table.focus()
        self.reload()

    @work(thread=True, exclusive=True, group="compaction")
    def reload(self) -> None:
        """Load the open proposals (thread worker)."""
        from memtui.review.proposals import ProposalQueries

        rows = ProposalQueries(self.app.engine, self.app.actor).proposals()
        self.app.call_from_thread(self._show, rows)

    def _show(self, rows: list[ProposalView]) -> None:
        self.proposals = rows
        table = self.query_one("#proposal-list", DataTable)
        table.clear()
        for p in rows:
            table.add_row(Text(str(len(p.members)) + (" ⚑" if p.broadens_scope else "")),
                          one_line(p.shared[0] if p.shared else "", 40), one_line(p.proposed_statement, 300),
                          key=p.proposal_id)
        self._select_wanted(table)
        self._render_current()

    def _current(self) -> ProposalView | None:
        table = self.query_one("#proposal-list", DataTable)
        if not self.proposals or table.cursor_row is None or table.cursor_row >= len(self.proposals):
            return None
        return self.proposals[table.cursor_row]

    @on(DataTable.RowHighlighted, "#proposal-list")
    def _highlighted(self, _event) -> None:
        self._render_current()

    def _render_current(self) -> None:
        p = self._current()
        if p is None:
            self.query_one("#members", Static).update(Text("No open compaction proposals.", style="dim"))
            self.query_one("#proposal", Static).update("")
            return
        left = [Text(f"Members ({len(p.members)})", style="bold underline")]
        for m in p.members:
            left += [Text(""), Text(visible(m.memory_id), style="bold"),
                     Text(f"{m.state} · {m.type} · {visible(m.scope.label)}", style="dim"),
                     Text(visible(m.statement))]
        self.query_one("#members", Static).update(Group(*left))
        right = [Text("Proposed statement", style="bold underline"), Text(visible(p.proposed_statement), style="bold"),
                 Text(""), Text(f"type {p.proposed_type} · scope {visible(p.repository_id or '*')}:"
                                f"{visible(p.module_path or '')}", style="dim")]
        if p.broadens_scope:
            right.append(Text("⚑ scope broadens beyond its members': a lead must accept", style="bold magenta"))
        evidence = {}
        for m in p.members:
            for e in m.evidence:
                evidence.setdefault((e.type, e.current_location or e.location), e.status)
        right += [Text(""), Text(f"Merged evidence ({len(evidence)})", style="bold underline")]
        for (typ, loc), status in sorted(evidence.items(), key=lambda kv: kv[0][1]):
            t = Text("• ")
            t.append(status, style=STATUS_STYLE.get(status, ""))
            t.append(f" {typ} {visible(loc)}")
            right.append(t)
        right += [Text(""), Text("a accept · e edit then accept · x reject", style="dim")]
        self.query_one("#proposal", Static).update(Group(*right))

    def action_accept(self, text: str | None = None) -> None:
        """Accept the selected proposal after a confirmation that states the effect."""
        p = self._current()
        if p is None:
            self.notify("No proposal selected.", severity="warning")
            return
        from memtui.screens.dialogs import ConfirmDialog

        ids = ", ".join(m.memory_id for m in p.members)
        unreviewed = [m.memory_id for m in p.members if m.state not in ("active", "approved")]
        kind = ("a new candidate (waits in the review queue, since "
                f"{', '.join(unreviewed)} {'was' if len(unreviewed) == 1 else 'were'} never reviewed)"
                if unreviewed else "a new active memory")
        then = ("they stay in use until it is approved, then become superseded by it" if unreviewed
                else "those become superseded by it")
        effect = (f"Creates {kind} with the statement\n  {text or p.proposed_statement}\n"
                  f"and all the evidence of {ids}; {then}.\nUndo (u) restores them.")

        def done(yes: bool | None) -> None:
            if yes:
                self.run_decision("accept", p.proposal_id, text)

        self.app.push_screen(ConfirmDialog("Accept this compaction?", effect), done)

    def action_edit(self) -> None:
        """Edit the proposed statement, then accept it."""
        p = self._current()
        if p is None:
            return
        from memtui.screens.dialogs import EditDialog

        def done(value: str | None) -> None:
            if value:
                self.action_accept(value)

        self.app.push_screen(EditDialog("Compacted statement", p.proposed_statement), done)

    def action_reject(self) -> None:
        """Reject the selected proposal (its members stay as they are)."""
        p = self._current()
        if p is not None:
            self.run_decision("reject", p.proposal_id, None)

    @work(thread=True, group="compaction-decide")
    def run_decision(self, kind: str, proposal_id: str, text: str | None) -> None:
        """Accept or reject through the resolve service (thread worker)."""
        from memtui.domain.invariants import LifecycleError
        from memtui.review.resolve import ResolveService

        svc = ResolveService(self.app.engine)
        try:
            if kind == "accept":
                r = svc.accept_compaction(proposal_id, self.app.actor, statement=text)
            else:
                r = svc.reject_compaction(proposal_id, self.app.actor)
        except LifecycleError as exc:
            self.app.call_from_thread(self._refused, str(exc))
            return
        message = f"Accepted: new memory {r.new_memory_id}." if kind == "accept" else f"Rejected {proposal_id}."
        self.app.call_from_thread(self._decided, r.decision_id, message)

    def action_help(self) -> None:
        """Show the keys of this screen."""
        from memtui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.active_bindings.values(), title="Compaction keys"))
