"""A memory's whole page (issue 11, item 3): the record, its full history, its usage and harm events and
the memories related to it, as frozen views for the TUI's memory screen (no ORM rows leave here).

Related, in this order: the duplicate clusters it is a member of, its conflicts, the compaction
proposals that list it (as member or as the new memory), then lineage (what it was made from, what
was made from it, what supersedes it). Each names where a jump goes (``jump``: ``duplicates``,
``conflicts``, ``compaction`` or ``memory``) and whether there is anything to decide there
(``open``). Related items outside the viewer's scopes are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, select

from memtui.governance.visibility import can_see
from memtui.review.views import EventView, MemoryDetailView
from memtui.store.models import (CompactionProposal, DuplicateCluster, HarmEvent, MaintenanceJob, Memory,
                                 MemoryConflict, UsageEvent)

#: statuses in which a cluster, conflict or proposal still waits for a decision on its screen
OPEN_STATUSES = {"duplicates": ("open", "possible"), "conflicts": ("open", "possible"), "compaction": ("open",)}


@dataclass(frozen=True)
class UsageLine:
    """One usage or harm event: ``kind`` ``use`` or ``harm``; ``what`` the usage type and outcome, or the
    harm's action; ``detail`` the issue or the actor that reported it (untrusted text)."""

    created_at: datetime
    kind: str
    what: str
    detail: str


@dataclass(frozen=True)
class RelatedItem:
    """A cluster, conflict, proposal or memory related to the page's memory, and where a jump goes."""

    relation: str  # duplicate cluster | conflict | compaction | made from | made into | superseded by
    subject_id: str  # cluster, conflict or proposal id, or the other memory's id
    status: str
    about: str  # the other members, the reason, the proposed statement or the statement (untrusted)
    jump: str  # duplicates | conflicts | compaction | memory
    #: the other memories of a duplicate cluster or conflict: (id, statement as shown), for the lists (issue 24)
    others: tuple[tuple[str, str], ...] = ()

    @property
    def open(self) -> bool:
        """Whether its screen has something to decide about it (a memory is always there to open)."""
        return self.jump == "memory" or self.status in OPEN_STATUSES.get(self.jump, ())


@dataclass(frozen=True)
class MemoryPage:
    """Everything the memory screen shows. ``job_types`` maps a history event's job id to its job type."""

    detail: MemoryDetailView
    history: tuple[EventView, ...]
    job_types: dict[str, str]
    usage: tuple[UsageLine, ...]
    related: tuple[RelatedItem, ...]
    quality: tuple[float, str] | None  # (overall score, band)


def _others(members, memory_id: str) -> str:
    return ", ".join(m for m in members if m != memory_id)


def memory_page(svc, memory_id: str) -> MemoryPage:
    """The page of ``memory_id`` as the viewer of ``svc`` (a :class:`memtui.review.service.ReviewService`)
    may see it. Raises MemoryNotFound / MemoryOutOfScope."""
    from collections import Counter

    from memtui.domain.quality import quality, quality_input
    from memtui.review import lineage
    from memtui.review.lifecycle import load_evidence
    from memtui.safety.guard import redact_for_display, shown_text

    engine, viewer = svc.engine, svc.viewer
    detail = svc.detail(memory_id)
    history = tuple(svc.history(memory_id))
    with Session(engine) as session:
        jobs = sorted({e.job_id for e in history if e.job_id})
        job_types = dict(session.exec(select(MaintenanceJob.job_id, MaintenanceJob.job_type)
                                      .where(MaintenanceJob.job_id.in_(jobs))).all()) if jobs else {}
        usage_rows = list(session.exec(select(UsageEvent).where(UsageEvent.memory_id == memory_id)
                                       .order_by(UsageEvent.usage_id)))
        harm_rows = list(session.exec(select(HarmEvent).where(HarmEvent.memory_id == memory_id)
                                      .order_by(HarmEvent.harm_id)))
        harm_at = {h.created_at: h for h in harm_rows}  # a harmful use writes both rows, at one instant
        usage = []
        for u in usage_rows:
            said = u.detail or {}
            h = harm_at.pop(u.created_at, None) if u.outcome == "harm" else None
            usage.append(UsageLine(u.created_at, "harm" if h else "use",
                                   f"{u.usage_type} {u.outcome}" + (f" ({h.action})" if h else ""),
                                   redact_for_display(str(said.get("issue") or said.get("actor") or ""))))
        usage += [UsageLine(h.created_at, "harm", h.action, redact_for_display(h.issue)) for h in harm_at.values()]
        usage.sort(key=lambda u: u.created_at)  # stable: recorded order within one instant

        memory = session.get(Memory, memory_id)
        outcomes = Counter(u.outcome for u in usage_rows)
        q = quality(quality_input(memory, load_evidence(session, memory_id), outcomes, len(harm_rows)))

        def visible_ids(ids) -> bool:
            return all(can_see(session, viewer, m) for m in (session.get(Memory, i) for i in ids) if m is not None)

        def said(ids) -> tuple[tuple[str, str], ...]:  # the rows are in the session already (visible_ids)
            rows = [session.get(Memory, i) for i in ids if i != memory_id]
            return tuple((m.memory_id, shown_text(session, m)[0]) for m in rows if m is not None)

        related: list[RelatedItem] = []
        strength: dict[str, float] = {}  # a possible item's score in [0, 1], for the order
        for c in session.exec(select(DuplicateCluster).order_by(DuplicateCluster.cluster_id)):
            if memory_id in (c.members or []) and visible_ids(c.members):
                score = f"score {c.best_score:.0f} " if c.status == "possible" else ""
                strength[c.cluster_id] = c.best_score / 100
                related.append(RelatedItem("duplicate cluster", c.cluster_id, c.status,
                                           f"{score}with {_others(c.members, memory_id)}"
                                           + (f": {c.explanation}" if c.status == "possible" else ""), "duplicates",
                                           said(c.members)))
        for c in session.exec(select(MemoryConflict).where(
                (MemoryConflict.memory_a == memory_id) | (MemoryConflict.memory_b == memory_id))
                .order_by(MemoryConflict.conflict_id)):
            other = c.memory_b if c.memory_a == memory_id else c.memory_a
            if visible_ids([other]):
                score = f"P {c.score:.2f} " if c.status == "possible" and c.score is not None else ""
                strength[c.conflict_id] = c.score or 0.0
                related.append(RelatedItem("conflict", c.conflict_id, c.status, f"{score}with {other}: {c.reason}",
                                           "conflicts", said([other])))
        # the possible ones after everything else, strongest first (issue 20: ranked related memories)
        related.sort(key=lambda r: (r.status == "possible", -strength.get(r.subject_id, 0.0) if r.status == "possible" else 0))
        for p in session.exec(select(CompactionProposal).order_by(CompactionProposal.proposal_id)):
            if (memory_id in (p.members or []) or p.new_memory_id == memory_id) and visible_ids(p.members):
                role = "its new memory" if p.new_memory_id == memory_id else "member"
                related.append(RelatedItem("compaction", p.proposal_id, p.status,
                                           f"{role}: {redact_for_display(p.proposed_statement)}", "compaction"))
        links = [("made from", mid) for mid in lineage.sources_of(session, memory_id)]
        links += [("made into", mid) for mid in lineage.derived_of(session, memory)]
        if memory.superseded_by:
            links.append(("superseded by", memory.superseded_by))
        seen: set[str] = {memory_id}
        for relation, mid in links:  # a merge's canonical is both "made into" and "superseded by": once
            other = session.get(Memory, mid)
            if other is None or mid in seen or not can_see(session, viewer, other):
                continue
            seen.add(mid)
            related.append(RelatedItem(relation, mid, other.state, shown_text(session, other)[0], "memory"))
    return MemoryPage(detail, history, job_types, tuple(usage), tuple(related), (q.overall, q.band))
