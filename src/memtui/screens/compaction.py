"""Compaction proposals: the members on one side, the proposed statement and merged evidence on the other.

``a`` accept (members superseded by the new memory once it is active), ``e`` edit the statement then accept,
``x`` reject, ``u`` undo. A proposal whose scope is broader than its members' says so, and only
a lead can accept it.
"""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

from memtui.review.proposals import ProposalView
from memtui.review.views import short_id
from memtui.screens.proposals import ProposalScreen
from memtui.widgets.list_table import Col
from memtui.widgets.literal import one_line, visible
from memtui.widgets.memory_detail import location_line
from memtui.widgets.wrap import Wrapped


class CompactionScreen(ProposalScreen):
    """Open compaction proposals and the decisions on them."""

    HELP_TITLE = "Compaction keys"
    SUB_TITLE = "compaction proposals"
    COLUMNS = [Col("members", "n", 7, 7), Col("subject", "subject", 24, 12), Col("proposed statement", "statement")]
    BINDINGS = [
        Binding("a", "accept", "Accept", id="compaction.accept"),
        Binding("e", "edit", "Edit & accept", id="compaction.edit"),
        Binding("x", "reject", "Reject", id="compaction.reject"),
        Binding("u", "undo", "Undo", id="compaction.undo"),
    ]

    def compose_detail(self) -> ComposeResult:
        with Horizontal(id="panes"):
            with VerticalScroll(id="pane-a", classes="pane"):
                yield Static("", id="members")
            with VerticalScroll(id="pane-b", classes="pane"):
                yield Static("", id="proposal")

    def load(self) -> list[ProposalView]:
        return self.app.services.proposals.proposals()

    def item_key(self, item: ProposalView) -> str:
        return item.proposal_id

    def row(self, p: ProposalView) -> list[Text]:
        return [Text(str(len(p.members)) + (" ⚑" if p.broadens_scope else "")),
                one_line(p.shared[0] if p.shared else "", 40), one_line(p.proposed_statement, 300)]

    def current_memory_id(self) -> str | None:
        """The first member of the highlighted proposal."""
        p = self.current()
        return p.members[0].memory_id if p is not None and p.members else None

    def show_item(self, p: ProposalView | None) -> None:
        if p is None:
            self.query_one("#members", Static).update(Text("No open compaction proposals.", style="dim"))
            self.query_one("#proposal", Static).update("")
            return
        left: list = [Text(f"Members ({len(p.members)})", style="bold underline")]
        for m in p.members:  # short id and statement; type and scope where they differ from the proposal's
            head = Text(short_id(m.memory_id, 22), style="bold")
            head.append(f"  {m.state}" + (f" · {m.type}" if m.type != p.proposed_type else ""), style="dim")
            if (m.scope.repository_id, m.scope.module_path) != (p.repository_id, p.module_path):
                head.append(f" · {visible(m.scope.label)}", style="dim")
            left += [Text(""), Wrapped(head), Wrapped(Text(visible(m.statement)))]
        self.query_one("#members", Static).update(Group(*left))
        together = len(" ".join(m.statement for m in p.members))
        right: list = [Text("Proposed statement", style="bold underline")
                       + Text(f"  {len(p.proposed_statement)} of {together} characters", style="dim"),
                       Wrapped(Text(visible(p.proposed_statement), style="bold")), Text(""),
                       Wrapped(Text(f"type {p.proposed_type} · scope {visible(p.repository_id or '*')}:"
                                    f"{visible(p.module_path or '')}", style="dim"))]
        if p.broadens_scope:
            right.append(Text("⚑ scope broadens beyond its members': a lead must accept", style="bold magenta"))
        evidence = {}
        for m in p.members:
            for e in m.evidence:
                evidence.setdefault((e.type, e.current_location or e.location), e.status)
        right += [Text(""), Text(f"Merged evidence ({len(evidence)})", style="bold underline")]
        for (typ, loc), status in sorted(evidence.items(), key=lambda kv: kv[0][1]):
            right.append(location_line(status, typ, loc))
        right += [Text(""), Text("a accept · e edit then accept · x reject", style="dim")]
        self.query_one("#proposal", Static).update(Group(*right))

    def action_accept(self, text: str | None = None) -> None:
        """Accept the selected proposal after a confirmation that states the effect."""
        p = self.current()
        if p is None:
            self.notify("No proposal selected.", severity="warning")
            return
        ids = ", ".join(m.memory_id for m in p.members)
        unreviewed = [m.memory_id for m in p.members if m.state not in ("active", "approved")]
        kind = ("a new candidate (waits in the review queue, since "
                f"{', '.join(unreviewed)} {'was' if len(unreviewed) == 1 else 'were'} never reviewed)"
                if unreviewed else "a new active memory")
        then = ("they stay in use until it is approved, then become superseded by it" if unreviewed
                else "those become superseded by it")
        effect = (f"Creates {kind} with the statement\n  {text or p.proposed_statement}\n"
                  f"and all the evidence of {ids}; {then}")

        def apply() -> tuple[str, str]:
            r = self.app.services.resolve.accept_compaction(p.proposal_id, self.app.actor, statement=text)
            return r.decision_id, f"Accepted: new memory {r.new_memory_id}."

        self.decide("Accept this compaction?", effect, apply)

    def action_edit(self) -> None:
        """Edit the proposed statement in a multi-line editor (ctrl+s saves), then accept it."""
        p = self.current()
        if p is None:
            return
        from memtui.screens.dialogs import TextDialog

        def done(value: str | None) -> None:
            if value:
                self.action_accept(value)

        self.app.push_screen(TextDialog(f"Compacted statement ({len(p.members)} members)", p.proposed_statement), done)

    def action_reject(self) -> None:
        """Reject the selected proposal after a confirmation (its members stay as they are)."""
        p = self.current()
        if p is None:
            self.notify("No proposal selected.", severity="warning")
            return
        ids = ", ".join(m.memory_id for m in p.members)

        def apply() -> tuple[str, str]:
            r = self.app.services.resolve.reject_compaction(p.proposal_id, self.app.actor)
            return r.decision_id, f"Rejected {p.proposal_id}."

        self.decide(f"Reject {p.proposal_id}?", f"The proposal is closed; {ids} stay as they are and are not "
                    "proposed together again", apply)
