"""Memory health: counts per state per repository, what needs action, and growth over time."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Header, Sparkline, Static

from memtui.domain.states import ALL_STATES
from memtui.screens.base import BaseScreen
from memtui.widgets.literal import visible

SHORT = {"candidate": "cand", "approved": "appr", "active": "active", "needs_review": "review",
         "challenged": "chall", "invalidated": "inval", "rejected": "rej", "superseded": "super",
         "expired": "exp", "deprecated": "depr", "archived": "arch", "blocked": "block"}


class HealthScreen(BaseScreen):
    """Per-repository state counts, the action-required list and a growth sparkline (lead's view)."""

    CSS_PATH = "health.tcss"
    HELP_TITLE = "Health keys"
    MAIN_LIST = "#health-body"
    BINDINGS = [
        Binding("m", "app.maintain", "Run maintenance", id="health.maintain"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="health-body"):
            yield Static(Text("Memories per state", style="bold"), classes="section")
            yield DataTable(id="health-table", cursor_type="row", show_cursor=False)
            yield Static(Text("Action required", style="bold"), classes="section")
            yield Static("", id="actions")
            yield Static(Text("Growth: memories in the store, last 26 weeks", style="bold"), classes="section")
            yield Sparkline([], id="growth")
            yield Static("", id="growth-label")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "memory health"
        table = self.query_one("#health-table", DataTable)
        table.add_column("repository", key="repo", width=20)
        table.add_column("total", key="total", width=6)
        for state in ALL_STATES:
            table.add_column(SHORT[state], key=state, width=max(5, len(SHORT[state])))
        self.refresh_health()

    def reload(self) -> None:
        """Reload the numbers (after maintenance)."""
        self.refresh_health()

    @work(thread=True, exclusive=True, group="health")
    def refresh_health(self) -> None:
        """Load counts, conflicts and growth from the store (thread worker), then show them."""
        svc = self.app.service
        rows, conflicts, growth = svc.health(), svc.conflict_open_count(), svc.growth(26)
        self.app.call_from_thread(self._show, rows, conflicts, growth)

    def _show(self, rows, conflicts, growth) -> None:
        table = self.query_one("#health-table", DataTable)
        table.clear()
        actions = Text()
        for r in rows:
            name = r.repository_id or "(org-wide)"
            cells = [Text(visible(name)), Text(str(r.total))]
            for state in ALL_STATES:
                n = r.by_state[state]
                style = "bold yellow" if n and state in ("needs_review", "challenged") else (
                    "bold red" if n and state == "blocked" else ("dim" if n == 0 else ""))
                cells.append(Text(str(n), style=style))
            table.add_row(*cells, key=name)
            s = r.by_state
            items = []
            if s["needs_review"] or s["challenged"]:
                items.append(f"review {s['needs_review'] + s['challenged']} memories that need review")
            if conflicts.get(r.repository_id):
                items.append(f"resolve conflicts of {conflicts[r.repository_id]} memories")
            if s["candidate"]:
                items.append(f"decide {s['candidate']} pending candidates")
            if s["expired"]:
                items.append(f"archive or renew {s['expired']} expired memories")
            for item in items:
                actions.append(f"• {visible(name)}: {item}\n")
        if not rows:
            actions.append("The store holds no memories yet.", style="dim")
        elif not actions.plain:
            actions.append("Nothing needs action.", style="green")
        self.query_one("#actions", Static).update(actions)
        self.query_one("#growth", Sparkline).data = [n for _w, n in growth] or [0]
        if growth:
            first, last = growth[0], growth[-1]
            self.query_one("#growth-label", Static).update(Text(
                f"{first[0]:%Y-%m-%d}: {first[1]}   →   {last[0]:%Y-%m-%d}: {last[1]}", style="dim"))
