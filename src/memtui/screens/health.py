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
            yield Static("", id="sections")
            yield Static(Text("Growth: memories in the store, last 26 weeks", style="bold"), classes="section")
            yield Sparkline([], id="growth")
            yield Static("", id="growth-label")
        yield Footer()

    action_lines: list[tuple[str | None, str]] = []

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
        """Load the one health model and the growth from the store (thread worker), then show them."""
        svc = self.app.service
        model, growth = svc.health_model(), svc.growth(26)
        self.app.call_from_thread(self._show, model, growth)

    def _show(self, model, growth) -> None:
        table = self.query_one("#health-table", DataTable)
        table.clear()
        for r in model.repositories:
            name = r.repository_id or "(org-wide)"
            cells = [Text(visible(name)), Text(str(r.total))]
            for state in ALL_STATES:
                n = r.by_state[state]
                style = "bold yellow" if n and state in ("needs_review", "challenged") else (
                    "bold red" if n and state == "blocked" else ("dim" if n == 0 else ""))
                cells.append(Text(str(n), style=style))
            table.add_row(*cells, key=name)
        #: (repository, sentence) exactly as shown under "Action required" (the model's, in its order)
        self.action_lines = model.actions()
        actions = Text()
        for repo, item in self.action_lines:
            actions.append(f"• {visible(repo or '(org-wide)')}: ", style="bold")
            actions.append(visible(item) + "\n")
        if not model.repositories:
            actions.append("The store holds no memories yet.", style="dim")
        elif not self.action_lines:
            actions.append("Nothing needs action.", style="green")
        self.query_one("#actions", Static).update(actions)
        self.query_one("#sections", Static).update(_sections(model))
        self.query_one("#growth", Sparkline).data = [n for _w, n in growth] or [0]
        if growth:
            first, last = growth[0], growth[-1]
            self.query_one("#growth-label", Static).update(Text(
                f"{first[0]:%Y-%m-%d}: {first[1]}   →   {last[0]:%Y-%m-%d}: {last[1]}", style="dim"))


def _sections(model) -> Text:
    """Review backlog, high-use, harmful memory, policy violations and secret incidents (seed 000 §19.2)."""
    out = Text()

    def head(title: str) -> None:
        out.append(("\n" if out.plain else "") + title + "\n", style="bold")

    def line(repo: str | None, text: str, style: str = "") -> None:
        out.append(f"  {visible(repo or '(org-wide)')}: ", style="dim")
        out.append(visible(text) + "\n", style=style)

    head("Review backlog")
    for r in model.repositories:
        b = r.backlog
        line(r.repository_id, f"{b.waiting} waiting, oldest {b.oldest_days} days ({b.oldest_memory_id}), "
                              f"median {b.median_days:g} days" if b.waiting and b.oldest_days is not None
             else f"{b.waiting} waiting")
    sections = (
        ("High-use memory", lambda r: [f"{m} ({n} uses)" for m, n in r.high_use], ""),
        ("Harmful memory", lambda r: [f"{m} ({n} harm events, latest {last:%Y-%m-%d}, {st})"
                                      for m, n, last, st in r.harmful], "magenta"),
        ("Policy violations", lambda r: [f"{m} {v}" for m, v in r.violations], "red"),
    )
    for title, items, style in sections:
        head(title)
        rows = [(r.repository_id, t) for r in model.repositories for t in items(r)]
        for repo, t in rows:
            line(repo, t, style)
        if not rows:
            out.append("  none\n", style="dim")
    if model.secret_incidents:
        head("Secret incidents")
        for i in model.secret_incidents:
            line(i["repositoryId"], f"{i['memoryId']}: {', '.join(i['types'])} (owner {i['owner']}); "
                                    "blocked — memtui purge ID --comment WHY", "red")
    return out
