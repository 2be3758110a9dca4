"""Conflicts: memory A and memory B side by side, each with its evidence at HEAD, and one key per resolution.

``a`` keep A (B invalidated), ``b`` keep B, ``o`` the proposed "newer supersedes older" (dated facts),
``n`` neither, ``c`` not a conflict (remembered), ``s`` both valid in narrower scopes (asks for each
module path), ``u`` undo.
"""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from memtui.review.proposals import ConflictView
from memtui.review.views import MemoryDetailView
from memtui.widgets.decisions import DecisionScreenMixin
from memtui.widgets.literal import one_line, visible
from memtui.widgets.memory_detail import STATUS_STYLE

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
             Text(f"{m.state} · {m.type} · conf {m.confidence:.2f} · {visible(m.scope.label)}", style="dim"),
             Text(""), Text(visible(m.statement), style="bold"), Text("")]
    valid = sum(e.status == "valid" for e in m.evidence)
    parts.append(Text(f"Evidence ({len(m.evidence)}, {valid} valid at HEAD)", style="underline"))
    for e in m.evidence:
        t = Text("• ")
        t.append(e.status, style=STATUS_STYLE.get(e.status, ""))
        t.append(f" {e.type} {visible(e.current_location or e.location)}")
        if e.status_reason and e.status not in ("valid", "unchecked"):
            t.append(f"\n  {visible(e.status_reason)}", style=STATUS_STYLE.get(e.status, ""))
        parts.append(t)
    return Group(*parts)


class ConflictsScreen(DecisionScreenMixin, Screen):
    """Open conflicts; A and B side by side with the detector's reason."""

    CSS_PATH = "proposals.tcss"
    BINDINGS = [
        Binding("a", "resolve('keep_a')", "Keep A", id="conflicts.keep_a"),
        Binding("b", "resolve('keep_b')", "Keep B", id="conflicts.keep_b"),
        Binding("o", "resolve('keep_newer')", "Newer wins", id="conflicts.keep_newer"),
        Binding("n", "resolve('neither')", "Neither", id="conflicts.neither"),
        Binding("c", "resolve('not_a_conflict')", "Not a conflict", id="conflicts.not_a_conflict"),
        Binding("s", "narrow", "Narrow scopes", id="conflicts.narrow"),
        Binding("u", "undo", "Undo", id="conflicts.undo"),
        Binding("escape", "app.pop_screen", "Back", id="conflicts.back"),
        Binding("question_mark", "help", "Help", key_display="?", id="conflicts.help"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.conflicts: list[ConflictView] = []
        self._undo: list[str] = []

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical():
            yield DataTable(id="conflict-list", cursor_type="row", zebra_stripes=True)
            yield Static("", id="reason")
            with Horizontal(id="body"):
                with VerticalScroll(id="pane-a", classes="pane"):
                    yield Static("", id="a")
                with VerticalScroll(id="pane-b", classes="pane"):
                    yield Static("", id="b")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "conflicts"
        table = self.query_one("#conflict-list", DataTable)
        table.styles.height = 8
        table.add_column("severity", key="severity", width=8)
        table.add_column("A", key="a", width=34)
        table.add_column("B", key="b", width=34)
        table.add_column("reason", key="reason", width=50)
        table.focus()
        self.reload()

    @work(thread=True, exclusive=True, group="conflicts")
    def reload(self) -> None:
        """Load the open conflicts (thread worker)."""
        from memtui.review.proposals import ProposalQueries

        rows = ProposalQueries(self.app.engine, self.app.actor).conflicts()
        self.app.call_from_thread(self._show, rows)

    def _show(self, rows: list[ConflictView]) -> None:
        self.conflicts = rows
        table = self.query_one("#conflict-list", DataTable)
        table.clear()
        for c in rows:
            table.add_row(Text(c.severity, style="bold red" if c.severity == "high" else "yellow"),
                          one_line(c.a.memory_id, 60), one_line(c.b.memory_id, 60), one_line(c.reason, 200),
                          key=c.conflict_id)
        self._select_wanted(table)
        self._render_current()

    def _current(self) -> ConflictView | None:
        table = self.query_one("#conflict-list", DataTable)
        if not self.conflicts or table.cursor_row is None or table.cursor_row >= len(self.conflicts):
            return None
        return self.conflicts[table.cursor_row]

    @on(DataTable.RowHighlighted, "#conflict-list")
    def _highlighted(self, _event) -> None:
        self._render_current()

    def _render_current(self) -> None:
        c = self._current()
        if c is None:
            self.query_one("#reason", Static).update(Text("No open conflicts.", style="dim"))
            self.query_one("#a", Static).update("")
            self.query_one("#b", Static).update("")
            return
        reason = Text()
        if c.newer:
            reason.append(f"proposed: {visible(c.newer[2])} — o accepts\n", style="bold cyan")
        reason.append(f"{c.conflict_id}  ", style="bold")
        reason.append(f"[{c.severity}] ", style="bold red" if c.severity == "high" else "yellow")
        reason.append(visible(c.reason))
        reason.append("   both excluded from default recall while open", style="dim")
        self.query_one("#reason", Static).update(reason)
        self.query_one("#a", Static).update(memory_pane("A", c.a))
        self.query_one("#b", Static).update(memory_pane("B", c.b))

    def action_resolve(self, action: str) -> None:
        """Resolve the selected conflict; keep/neither ask for confirmation with the effect."""
        c = self._current()
        if c is None:
            self.notify("No conflict selected.", severity="warning")
            return
        from memtui.screens.dialogs import ConfirmDialog

        if action == "keep_newer" and not c.newer:
            self.notify("No newer fact here can replace the other (same type, no less confidence, the older "
                        "not high impact): choose a or b.", severity="warning")
            return
        effect = c.newer[2] if action == "keep_newer" else effect_of(action, c.a.memory_id, c.b.memory_id)

        def done(yes: bool | None) -> None:
            if yes:
                self.run_resolve(c.conflict_id, action, None)

        self.app.push_screen(ConfirmDialog(f"Resolve {c.conflict_id}?", effect + ".\nUndo (u) restores them."), done)

    def action_narrow(self) -> None:
        """Both stay valid in narrower scopes: ask for A's module path, then B's."""
        c = self._current()
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
            from memtui.screens.dialogs import ConfirmDialog

            lines = "\n".join(f"{mid}: module path becomes {v['modulePath']}" for mid, v in scopes.items())

            def done(yes: bool | None) -> None:
                if yes:
                    self.run_resolve(c.conflict_id, "narrow", scopes)

            self.app.push_screen(ConfirmDialog(f"Narrow the scopes of {c.conflict_id}?",
                                               lines + "\nBoth stay valid; the conflict is resolved."), done)

        def got_a(value: str | None) -> None:
            if value and value != (c.a.scope.module_path or ""):
                scopes[c.a.memory_id] = {"modulePath": value}
            self.app.push_screen(EditDialog(f"Narrower module path for B ({c.b.memory_id})",
                                            c.b.scope.module_path or ""), got_b)

        self.app.push_screen(EditDialog(f"Narrower module path for A ({c.a.memory_id})",
                                        c.a.scope.module_path or ""), got_a)

    @work(thread=True, group="conflicts-decide")
    def run_resolve(self, conflict_id: str, action: str, scopes: dict | None) -> None:
        """Apply a resolution through the resolve service (thread worker)."""
        from memtui.domain.invariants import LifecycleError
        from memtui.review.resolve import ResolveService

        try:
            r = ResolveService(self.app.engine).resolve_conflict(conflict_id, action, self.app.actor, scopes=scopes)
        except LifecycleError as exc:
            self.app.call_from_thread(self._refused, str(exc))
            return
        self.app.call_from_thread(self._decided, r.decision_id, f"{conflict_id}: {action.replace('_', ' ')}.")

    def action_help(self) -> None:
        """Show the keys of this screen."""
        from memtui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.active_bindings.values(), title="Conflict keys"))
