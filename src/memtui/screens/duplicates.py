"""Duplicate clusters: pick the canonical, merge, or say they are not duplicates.

Clusters on the left (size, best score, scope); the selected cluster's members on the right,
each with its words that differ from the canonical highlighted and its evidence. Number keys
pick the canonical, ``m`` merges after a confirmation that states the effect (default No),
``d`` dismisses the cluster as not duplicates, ``e`` edits the canonical text before merging.
"""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from memtui.review.proposals import ClusterView
from memtui.screens.proposals import ProposalScreen
from memtui.widgets.diff_text import highlight_against
from memtui.widgets.list_table import Col, ListTable, memory_cell
from memtui.widgets.literal import visible
from memtui.widgets.memory_detail import STATUS_STYLE
from memtui.widgets.memory_detail import location_line


class DuplicatesScreen(ProposalScreen):
    """Open duplicate clusters and the decisions on them."""

    HELP_TITLE = "Duplicate cluster keys"
    SUB_TITLE = "duplicate clusters"
    COLUMNS = [Col("tier", "tier", 8, 8), Col("size", "size", 4, 4), Col("best", "best", 4, 4),
               Col("canonical: what it says", "canonical", 0, 20)]
    BINDINGS = [
        Binding("m", "merge", "Merge", id="duplicates.merge"),
        Binding("d", "not_duplicates", "Not duplicates", id="duplicates.not_duplicates"),
        Binding("p", "promote", "Promote", id="duplicates.promote"),
        Binding("e", "edit", "Edit canonical", id="duplicates.edit"),
        Binding("u", "undo", "Undo", id="duplicates.undo"),
    ] + [Binding(str(n), f"pick({n})", f"Canonical {n}", show=False, id=f"duplicates.pick{n}") for n in range(1, 10)]

    def __init__(self) -> None:
        super().__init__()
        self.canonical: dict[str, str] = {}  # cluster id -> chosen canonical
        self.edited: dict[str, str] = {}  # cluster id -> edited canonical text

    def compose_detail(self) -> ComposeResult:
        with VerticalScroll(id="side"):
            yield Static("", id="detail")

    def load(self) -> list[ClusterView]:
        return self.app.services.proposals.clusters(("open", "possible"))

    def counts(self) -> str:
        possible = sum(c.status == "possible" for c in self._all)
        return f"{len(self._all) - possible} likely · {possible} possible"

    def row_text(self, c: ClusterView) -> str:
        return " ".join([super().row_text(c), c.scope_key, c.explanation]
                        + [x for m in c.members for x in (m.memory_id, m.statement)])

    def item_key(self, item: ClusterView) -> str:
        return item.cluster_id

    def row(self, c: ClusterView) -> list[Text]:
        canon = self.canonical.get(c.cluster_id, c.canonical_id)
        tier = Text("possible", style="dim") if c.status == "possible" else Text("likely", style="bold")
        return [tier, Text(str(len(c.members))), Text(f"{c.best_score:.0f}"), self._canonical_cell(c, canon)]

    @staticmethod
    def _canonical_cell(c: ClusterView, canon: str) -> Text:
        return memory_cell(canon, next((m.statement for m in c.members if m.memory_id == canon), ""))

    def current_memory_id(self) -> str | None:
        """The canonical of the highlighted cluster."""
        c = self.current()
        return None if c is None else self.canonical.get(c.cluster_id, c.canonical_id)

    def _render_current(self) -> None:
        self.show_item(self.current())

    def show_item(self, c: ClusterView | None) -> None:
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
        parts += [head, Text(visible(c.explanation), style="dim")]
        if c.status == "possible":
            parts.append(Text("possible duplicates: a suggestion, nothing is held back · p promotes to likely (then "
                              "m merges) · d dismisses", style="yellow"))
        parts.append(Text(""))
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
                parts.append(location_line(e.status, e.type, e.current_location or e.location, indent=5,
                                           style="dim"))
            parts.append(Text(""))
        parts.append(Text("1-9 pick the canonical · m merge · d not duplicates (v range, space mark: all selected) · "
                          "e edit the canonical text · / filter", style="dim"))
        detail.update(Group(*parts))

    def action_pick(self, n: int) -> None:
        """Make member ``n`` (1-based) the canonical of the selected cluster."""
        c = self.current()
        if c is None or not 1 <= n <= len(c.members):
            self.app.bell()
            return
        self.canonical[c.cluster_id] = c.members[n - 1].memory_id
        self.query_one("#list", ListTable).update_cell(c.cluster_id, "canonical",
                                                       self._canonical_cell(c, self.canonical[c.cluster_id]))
        self._render_current()

    def action_edit(self) -> None:
        """Edit the canonical statement before merging."""
        c = self.current()
        if c is None:
            return
        from memtui.screens.dialogs import TextDialog

        canon_id = self.canonical.get(c.cluster_id, c.canonical_id)
        text = self.edited.get(c.cluster_id) or next(m.statement for m in c.members if m.memory_id == canon_id)

        def done(value: str | None) -> None:
            if value:
                self.edited[c.cluster_id] = value
                self._render_current()

        self.app.push_screen(TextDialog(f"Canonical text for {canon_id}", text), done)

    def action_merge(self) -> None:
        """Merge the selected cluster after a confirmation that states the effect (default No)."""
        c = self.current()
        if c is None:
            self.notify("No cluster selected.", severity="warning")
            return
        canon_id = self.canonical.get(c.cluster_id, c.canonical_id)
        text = self.edited.get(c.cluster_id)
        others = ", ".join(m.memory_id for m in c.members if m.memory_id != canon_id)
        effect = (f"{canon_id} stays and takes the evidence, tags and highest confidence of {others}.\n"
                  f"{others} become superseded by {canon_id}."
                  + (f"\nIts statement becomes: {text}" if text else ""))

        def apply() -> tuple[str, str]:
            r = self.app.services.resolve.merge(c.cluster_id, self.app.actor, canonical_id=canon_id, canonical_text=text)
            return r.decision_id, f"Merged {c.cluster_id}."

        self.decide(f"Merge {len(c.members)} memories?", effect, apply)

    def action_not_duplicates(self) -> None:
        """Dismiss the selected cluster (or every selected one, in one decision) after a confirmation: their
        members are not duplicates (remembered until a statement changes)."""
        chosen = self.selected()
        if not chosen:
            self.notify("No cluster selected.", severity="warning")
            return
        if len(chosen) > 1:
            ids = [c.cluster_id for c in chosen]

            def apply_all() -> tuple[str, str]:
                r = self.app.services.resolve.dismiss_duplicates(ids, self.app.actor)
                return r.decision_id, f"Dismissed {len(ids)} clusters."

            self.decide(f"Not duplicates: {len(ids)} clusters?", f"the members of {len(ids)} clusters stay as they "
                        "are and are not proposed as duplicates of each other again (one decision)", apply_all)
            return
        c = chosen[0]
        ids = ", ".join(m.memory_id for m in c.members)

        def apply() -> tuple[str, str]:
            r = self.app.services.resolve.not_duplicates(c.cluster_id, self.app.actor)
            return r.decision_id, f"Dismissed {c.cluster_id}."

        self.decide("Not duplicates?", f"{ids} stay as they are and are never proposed as duplicates of each "
                    "other again", apply)

    def action_promote(self) -> None:
        """``p``: the highlighted possible duplicate pair becomes a likely cluster (``m`` then merges it)."""
        c = self.current()
        self.promote_current("duplicate cluster", "" if c is None else f"{', '.join(m.memory_id for m in c.members)} "
                             "can then be merged (m)", self.app.services.resolve.promote_duplicate)
