"""The detail pane: one memory's statement, scope and evidence, rendered literally."""

from __future__ import annotations

from datetime import datetime

from rich.console import Group
from rich.text import Text
from textual.widgets import Static

from memtui.clock import iso
from memtui.review.views import EvidenceView, MemoryDetailView, freshness_note
from memtui.widgets.literal import literal, visible
from memtui.widgets.wrap import Wrapped

STATUS_STYLE = {
    "valid": "green", "unchecked": "dim", "changed": "yellow", "deleted": "red", "unverifiable": "magenta",
}





def _row(name: str, *parts: Text | str) -> Text:
    t = Text(f"{name:<11}", style="bold")
    for p in parts:
        t.append(p if isinstance(p, Text) else Text(visible(p)))
    return t


def _evidence_line(e: EvidenceView) -> Text:
    t = Text("• ")
    t.append(e.status, style=STATUS_STYLE.get(e.status, ""))
    t.append(f" {e.type} ", style="cyan")
    t.append(visible(e.location))
    if e.ref and (e.path or e.symbol):
        t.append(f"  ({visible(e.ref)})", style="dim")
    current = e.current_location
    if current and current != e.location:
        t.append("\n    now at ", style="dim")
        t.append(visible(current))
    if e.status_reason and e.status not in ("valid", "unchecked"):
        t.append("\n    ")
        t.append(visible(e.status_reason), style=STATUS_STYLE.get(e.status, ""))
    return t


def _when(dt: datetime | None) -> str:
    return iso(dt) or "—"


def impact_label(d: MemoryDetailView) -> str:
    """The impact the gates act on (:func:`memtui.domain.invariants.is_high_impact`): ``high`` with
    why when the recorded impact is lower (``high (org-wide)``, ``high (architecture_decision)``)."""
    if d.impact == "high":
        return "high"
    if d.scope.repository_id is None:
        return f"high (org-wide; recorded {d.impact})"
    if d.type == "architecture_decision":
        return f"high ({d.type}; recorded {d.impact})"
    return d.impact


def render_detail(d: MemoryDetailView) -> list[Text]:
    """The detail pane's content for ``d``: every untrusted string goes through :func:`literal`."""
    head = Text()
    head.append(visible(d.memory_id), style="bold")
    head.append("   ")
    head.append(f" {d.state} ", style="reverse bold")
    head.append(f"   version {d.version}", style="dim")
    statement = literal(d.statement)
    statement.stylize("bold")
    scope = d.scope
    lines = [
        head,
        Text(""),
        statement,
        Text(""),
        _row("type", f"{d.type}   impact {impact_label(d)}"),
        _row("confidence", f"{d.confidence:.2f}"),
        _row("scope", scope.label),
    ]
    if scope.applies_to or scope.does_not_apply_to:
        lines.append(_row("applies to", ", ".join(scope.applies_to) or "—"))
        lines.append(_row("not to", ", ".join(scope.does_not_apply_to) or "—"))
    lines.append(_row("review", f"{d.review_state}   conflict {d.conflict_state}"))
    for gate, reason in d.gates:  # what would refuse an approval by the viewer now (issue 11, item 2)
        t = Text("⛔ gate: ", style="bold red")
        t.append(gate, style="bold red")
        t.append(" — " + visible(reason.split(" invariant: ", 1)[-1]), style="red")
        lines.append(t)
    gated = {gate for gate, _ in d.gates}
    if (d.type == "architecture_decision" or d.impact == "high" or d.scope.repository_id is None) \
            and "high impact needs a lead" not in gated:
        lines.append(Text("⚑ high impact: approving or retiring it needs a lead (--role lead)", style="bold magenta"))
    if d.conflict_state == "open":
        lines.append(Text("⚑ in an open conflict: excluded from recall until resolved", style="bold red"))
    note = freshness_note(d)
    if note:
        lines.append(Text("⚑ " + note, style="yellow" if note.startswith("evidence not") else "dim"))
    proposer = f"   proposed by {d.proposer_type}:{d.proposer_id or '?'}" if d.proposer_type else ""
    lines.append(_row("origin", f"{d.origin}{proposer}"))
    if d.failure_class:
        lines.append(_row("failure", f"{d.failure_class}   promotion {d.promotion_status or '—'}"
                                      + ("   requires human review" if d.requires_human_review else "")))
    if d.root_cause_summary:
        lines.append(_row("root cause", d.root_cause_summary))
    lines.append(_row("created", f"{_when(d.created_at)}   validated {_when(d.last_validated_at)}"))
    if d.expires_at or d.expires_after_days or d.review_after_days:
        lines.append(_row("expiry", f"expires {_when(d.expires_at)}   after {d.expires_after_days or '—'} d"
                                     f"   review every {d.review_after_days or '—'} d"))
    if d.superseded_by:
        lines.append(_row("superseded", f"by {d.superseded_by}"))
    if d.sources:
        lines.append(_row("made from", ", ".join(d.sources)))
    if d.compaction_status == "pending_review":
        lines.append(Text("⚑ compaction pending review: its members stay in use until it is approved",
                          style="bold cyan"))
    if d.invalidation_policy:
        policies = "; ".join(f"{k}: {v}" for p in d.invalidation_policy for k, v in p.items())
        lines.append(_row("invalidate", policies))
    if d.revalidation_status and d.revalidation_reasons:
        lines.append(Text(""))
        lines.append(Text(f"Revalidation: {d.revalidation_status}", style="bold yellow"))
        lines.extend(Text("  • " + visible(r), style="yellow") for r in d.revalidation_reasons)
    if d.proposed_statement:
        lines.append(Text("Proposed edit (E accepts it):", style="bold cyan"))
        lines.append(Text("  " + visible(d.proposed_statement), style="cyan"))
    lines.append(Text(""))
    lines.append(Text(f"Evidence ({len(d.evidence)})", style="bold underline"))
    if not d.evidence:
        lines.append(Text("  none — this memory cannot be approved until it has evidence", style="yellow"))
    lines.extend(_evidence_line(e) for e in d.evidence)
    return lines


class MemoryDetail(Static):
    """Shows one memory (:func:`render_detail`), or a hint when nothing is selected.

    ``lines`` keeps the Text lines shown, so tests can read exactly what is on screen.
    """

    lines: list[Text] = []

    def show_memory(self, detail: MemoryDetailView | None, filtered: bool = False) -> None:
        """Render ``detail``; None shows what to do about an empty list (``filtered``: a filter or
        search hides rows, else the queue itself is empty)."""
        if detail is None and filtered:
            self.lines = [Text("No memory matches the filter.", style="bold"), Text(""),
                          Text("escape clears a search, f edits the filters (an empty line clears them).",
                               style="dim")]
        elif detail is None:
            self.lines = [Text("The review queue is empty: nothing waits for a decision.", style="bold"),
                          Text(""),
                          Text("A new store? Load memories with memtui import FILE (YAML, JSON or Markdown), "
                               "or try memtui demo (sample memories and repositories). q quits; "
                               "memtui --help lists every command.", style="dim")]
        else:
            self.lines = render_detail(detail)
        self.update(Group(*(Wrapped(line) for line in self.lines)))  # paths break at "/", not mid-name


def location_line(status: str, kind: str, location: str | None, *, indent: int = 0, style: str = "") -> Wrapped:
    """``• status kind location`` for an evidence list: the status coloured, the location breaking at ``/``."""
    t = Text(" " * indent + "• ")
    t.append(status, style=STATUS_STYLE.get(status, ""))
    t.append(f" {kind} {visible(location)}", style=style)
    return Wrapped(t)
