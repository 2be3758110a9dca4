"""Conflicts: memory A and memory B side by side, each with its evidence at HEAD, and one key per resolution.

``a`` keep A (B invalidated), ``b`` keep B, ``o`` the proposed "newer supersedes older" (dated facts),
``n`` neither, ``c`` not a conflict (remembered), ``s`` both valid in narrower scopes (asks for each
module path), ``u`` undo.
"""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Static

from memtui.review.proposals import ConflictView
from memtui.review.views import MemoryDetailView
from memtui.screens.proposals import ProposalScreen
from memtui.widgets.list_table import Col, memory_cell
from memtui.widgets.literal import visible
from memtui.widgets.memory_detail import STATUS_STYLE
from memtui.widgets.memory_detail import location_line
from memtui.widgets.wrap import Wrapped

def effect_of(action: str, a: str, b: str) -> str:
    """What a resolution does, in words, for the confirmation dialog."""
    return {
        "keep_a": f"{a} stays; {b} is invalidated (rejected if it is a candidate)",
        "keep_b": f"{b} stays; {a} is invalidated (rejected if it is a candidate)",
        "keep_newer": f"the newer of {a} and {b} stays; the older is superseded by it",
        "neither": f"both are wrong: {a} and {b} are invalidated (rejected if candidates)",
        "not_a_conflict": f"{a} and {b} do not conflict: both stay, and this pair is never reported again",
        "narrow": "both stay valid, each in the narrower module path you gave",
    }[action]


def memory_pane(label: str, m: MemoryDetailView) -> Group:
    """One side of the comparison: the statement, state and scope, and each evidence with its status at HEAD."""
    parts = [Text(f"{label}  {visible(m.memory_id)}", style="bold"),
             Wrapped(Text(f"{m.state} · {m.type} · conf {m.confidence:.2f} · {visible(m.scope.label)}", style="dim")),
             Text(""), Wrapped(Text(visible(m.statement), style="bold")), Text("")]
    valid = sum(e.status == "valid" for e in m.evidence)
    parts.append(Text(f"Evidence ({len(m.evidence)}, {valid} valid at HEAD)", style="underline"))
    for e in m.evidence:
        parts.append(location_line(e.status, e.type, e.current_location or e.location))
        if e.status_reason and e.status not in ("valid", "unchecked"):
            parts.append(Wrapped(Text(f"  {visible(e.status_reason)}", style=STATUS_STYLE.get(e.status, ""))))
    return Group(*parts)


class ConflictsScreen(ProposalScreen):
    """Open conflicts; A and B side by side with the detector's reason."""

    HELP_TITLE = "Conflict keys"
    SUB_TITLE = "conflicts"
    #: A and B say what they state (the reason is in the detail below; the / filter matches it too)
    COLUMNS = [Col("tier", "tier", 8, 8), Col("A says", "a", 0, 20), Col("B says", "b", 0, 20)]
    BINDINGS = [
        Binding("a", "resolve('keep_a')", "Keep A", id="conflicts.keep_a"),
        Binding("b", "resolve('keep_b')", "Keep B", id="conflicts.keep_b"),
        Binding("o", "resolve('keep_newer')", "Newer wins", id="conflicts.keep_newer"),
        Binding("n", "resolve('neither')", "Neither", id="conflicts.neither"),
        Binding("c", "not_a_conflict", "Not a conflict", id="conflicts.not_a_conflict"),
        Binding("p", "promote", "Promote", id="conflicts.promote"),
        Binding("s", "narrow", "Narrow scopes", id="conflicts.narrow"),
        Binding("u", "undo", "Undo", id="conflicts.undo"),
    ]

    def compose_detail(self) -> ComposeResult:
        with Vertical(id="detail-pane"):
            yield Static("", id="reason")
            with Horizontal(id="panes"):
                with VerticalScroll(id="pane-a", classes="pane"):
                    yield Static("", id="a")
                with VerticalScroll(id="pane-b", classes="pane"):
                    yield Static("", id="b")

    def load(self) -> list[ConflictView]:
        return self.app.services.proposals.conflicts(("open", "possible"))

    def counts(self) -> str:
        possible = sum(c.status == "possible" for c in self._all)
        return f"{len(self._all) - possible} likely · {possible} possible"

    def row_text(self, c: ConflictView) -> str:
        return " ".join([super().row_text(c), c.a.memory_id, c.a.statement, c.b.memory_id, c.b.statement, c.reason])

    def item_key(self, item: ConflictView) -> str:
        return item.conflict_id

    def row(self, c: ConflictView) -> list[Text]:
        tier = (Text("possible", style="dim") if c.status == "possible" else  # likely: its severity
                Text(c.severity, style="bold red" if c.severity == "high" else "bold yellow"))
        return [tier, memory_cell(c.a.memory_id, c.a.statement), memory_cell(c.b.memory_id, c.b.statement)]

    def current_memory_id(self) -> str | None:
        """Memory A of the highlighted conflict."""
        c = self.current()
        return None if c is None else c.a.memory_id

    def show_item(self, c: ConflictView | None) -> None:
        if c is None:
            self.query_one("#reason", Static).update(Text("No open or possible conflicts.", style="dim"))
            self.query_one("#a", Static).update("")
            self.query_one("#b", Static).update("")
            return
        reason = Text()
        if c.newer:
            reason.append(f"proposed: {visible(c.newer[2])} — o accepts\n", style="bold cyan")
        reason.append(f"{c.conflict_id}  ", style="bold")
        if c.status == "possible":
            reason.append(f"[possible · P {c.score or 0:.2f}] ", style="yellow")
            reason.append(visible(c.reason))
            reason.append("   a suggestion: both stay in recall · p promotes to likely · c dismisses", style="dim")
        else:
            reason.append(f"[{c.severity}] ", style="bold red" if c.severity == "high" else "yellow")
            reason.append(visible(c.reason))
            reason.append("   both excluded from default recall while open", style="dim")
        self.query_one("#reason", Static).update(reason)
        self.query_one("#a", Static).update(memory_pane("A", c.a))
        self.query_one("#b", Static).update(memory_pane("B", c.b))

    def action_resolve(self, action: str) -> None:
        """Resolve the selected conflict; keep/neither ask for confirmation with the effect."""
        c = self.current()
        if c is None:
            self.notify("No conflict selected.", severity="warning")
            return
        if action == "keep_newer" and not c.newer:
            self.notify("No newer fact here can replace the other (same type, no less confidence, the older "
                        "not high impact): choose a or b.", severity="warning")
            return
        effect = c.newer[2] if action == "keep_newer" else effect_of(action, c.a.memory_id, c.b.memory_id)
        self.decide(f"Resolve {c.conflict_id}?", effect, self._resolution(c.conflict_id, action, None))

    def action_not_a_conflict(self) -> None:
        """``c``: the highlighted conflict, or every selected one (``v`` range, ``space`` marks) in one
        decision, is not a conflict; both memories stay and the pairs are not reported again until a
        statement changes. One undo restores them all."""
        chosen = self.selected()
        if len(chosen) <= 1:
            self.action_resolve("not_a_conflict")
            return
        ids = [c.conflict_id for c in chosen]
        likely = sum(c.status == "open" for c in chosen)

        def apply() -> tuple[str, str]:
            r = self.app.services.resolve.dismiss_conflicts(ids, self.app.actor)
            return r.decision_id, f"{len(ids)} pairs are not conflicts."

        self.decide(f"Not a conflict: {len(ids)} pairs?",
                    f"{len(ids)} pairs ({likely} likely, {len(ids) - likely} possible) are not conflicts: every memory "
                    "stays, and no pair is reported again until one of its statements changes (one decision)", apply)

    def action_promote(self) -> None:
        """``p``: the highlighted possible conflict becomes likely (both memories held out of default recall)."""
        c = self.current()
        self.promote_current("conflict", "" if c is None else f"{c.a.memory_id} and {c.b.memory_id} are held out "
                             "of default recall and wait for a resolution", self.app.services.resolve.promote_conflict)

    def action_narrow(self) -> None:
        """Both stay valid in narrower scopes: ask for A's module path, then B's."""
        c = self.current()
        if c is None:
            return
        from memtui.screens.dialogs import EditDialog

        scopes: dict[str, dict] = {}

        def got_b(value: str | None) -> None:
            if value and value != (c.b.scope.module_path or ""):
                scopes[c.b.memory_id] = {"modulePath": value}
            if not scopes:
                self.notify("Nothing was narrowed; the conflict stays open.", severity="warning")
                return
            lines = "\n".join(f"{mid}: module path becomes {v['modulePath']}" for mid, v in scopes.items())
            self.decide(f"Narrow the scopes of {c.conflict_id}?", lines + "\nBoth stay valid; the conflict is resolved",
                        self._resolution(c.conflict_id, "narrow", scopes))

        def got_a(value: str | None) -> None:
            if value and value != (c.a.scope.module_path or ""):
                scopes[c.a.memory_id] = {"modulePath": value}
            self.app.push_screen(EditDialog(f"Narrower module path for B ({c.b.memory_id})",
                                            c.b.scope.module_path or ""), got_b)

        self.app.push_screen(EditDialog(f"Narrower module path for A ({c.a.memory_id})",
                                        c.a.scope.module_path or ""), got_a)

    def _resolution(self, conflict_id: str, action: str, scopes: dict | None):
        """The service call that applies a resolution (run by :meth:`ProposalScreen.decide`)."""
        def apply() -> tuple[str, str]:
            r = self.app.services.resolve.resolve_conflict(conflict_id, action, self.app.actor, scopes=scopes)
            return r.decision_id, f"{conflict_id}: {action.replace('_', ' ')}."

        return apply
