"""Lineage: which memories a compacted or merged memory was made from (issue 10, items 6-7; seed 000 §20.3).

No table of its own: the sources of a derived memory are read from what the deciding already
recorded — the members of the compaction proposal whose ``new_memory_id`` it is, and the
memories a merge or compaction ``superseded_by`` it. Queries only (no state changes): the rules
that act on lineage live in :mod:`memtui.review.lifecycle`, the one home of state changes.

Compaction statuses (``CompactionProposal.status``): ``open`` (proposed), ``pending_review``
(accepted, its new memory a candidate; the members stay in use), ``accepted`` (the new memory
became active and superseded the members), ``rejected``, ``withdrawn`` (its pending new memory
was rejected or archived), ``stale``.
"""

from __future__ import annotations

from sqlmodel import Session, select

from memtui.store.models import CompactionProposal, Memory, ReviewDecision, StateHistory

#: A source entering one of these states takes its derived memory back to review (seed 000 §20.3).
RETRACTED_STATES = frozenset({"invalidated", "rejected", "archived", "blocked"})
#: Derived memory in these states is sent to ``needs_review`` when a source is retracted.
REVIEWABLE_STATES = frozenset({"active", "approved", "candidate", "challenged"})


def compaction_of(session: Session, derived_id: str) -> CompactionProposal | None:
    """The compaction proposal that created ``derived_id`` (accepted or pending), or None."""
    return session.exec(select(CompactionProposal).where(
        CompactionProposal.new_memory_id == derived_id,
        CompactionProposal.status.in_(("pending_review", "accepted")))).first()


def _merged_into(session: Session, memory_id: str) -> bool:
    """Whether the newest ``superseded`` event of ``memory_id`` belongs to a merge decision."""
    event = session.exec(select(StateHistory).where(
        StateHistory.memory_id == memory_id, StateHistory.to_state == "superseded")
        .order_by(StateHistory.event_id.desc())).first()
    if event is None or event.decision_id is None:
        return False
    decision = session.get(ReviewDecision, event.decision_id)
    return decision is not None and decision.kind == "merge"


def sources_of(session: Session, derived_id: str) -> list[str]:
    """Ids of the memories ``derived_id`` was compacted or merged from, sorted; [] when none."""
    ids = {mid for mid in session.exec(select(Memory.memory_id).where(Memory.superseded_by == derived_id))
           if _merged_into(session, mid)}
    proposal = compaction_of(session, derived_id)
    if proposal is not None:
        ids |= set(proposal.members)
    ids.discard(derived_id)
    return sorted(ids)


def derived_of(session: Session, source: Memory) -> list[str]:
    """Ids of the memories made from ``source``: what a merge superseded it by
    and the new memory of every accepted or pending compaction listing it as a member (kept ones too)."""
    ids = {source.superseded_by} if source.superseded_by and _merged_into(session, source.memory_id) else set()
    for p in session.exec(select(CompactionProposal).where(
            CompactionProposal.status.in_(("pending_review", "accepted")),
            CompactionProposal.new_memory_id.is_not(None))):
        if source.memory_id in (p.members or []):
            ids.add(p.new_memory_id)
    ids.discard(source.memory_id)
    return sorted(ids)


def kept_members(session: Session, proposal: CompactionProposal) -> set[str]:
    """The members its acceptance kept beside the new memory (``--keep``), from the accept decision."""
    row = session.exec(select(ReviewDecision).where(
        ReviewDecision.kind == "compaction", ReviewDecision.subject_id == proposal.proposal_id,
        ReviewDecision.action == "accept", ReviewDecision.undone_by.is_(None))
        .order_by(ReviewDecision.created_at.desc())).first()
    return set((row.payload or {}).get("keep", [])) if row is not None else set()
