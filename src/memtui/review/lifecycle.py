"""The one function through which every change of a memory's ``state`` passes (DESIGN.md, "Lifecycle").

:func:`transition` checks the transition table and the invariants
(:mod:`memtui.domain.invariants`) and adds the append-only history event to the *caller's*
session, so the change and its event commit or roll back together.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlmodel import Session, select

from memtui.clock import new_event_id, utcnow
from memtui.domain.invariants import (Actor, EvidenceFacts, InvariantViolation, MemoryFacts, ScopeRefused,
                                      check_actor_scope, check_transition)
from memtui.domain.states import LIVE_STATES, State
from memtui.review import chain, lineage
from memtui.store.models import Evidence, Memory, MemoryConflict, StateHistory

if TYPE_CHECKING:
    from memtui.safety.secrets import SecretHit

#: States in which a memory is out of use: it cannot conflict with anything.
RETIRED_STATES = ("invalidated", "rejected", "superseded", "archived", "blocked", "expired", "deprecated")


class MemoryNotFound(LookupError):
    """No memory with this id is in the store."""

    def __init__(self, memory_id: str):
        self.memory_id = memory_id
        super().__init__(f"no memory {memory_id!r} in the store")


def facts_of(memory: Memory, evidence: list[Evidence]) -> MemoryFacts:
    """Snapshot a memory row and its evidence rows for the pure invariant checks."""
    return MemoryFacts(
        memory_id=memory.memory_id,
        type=memory.type,
        state=memory.state,
        repository_id=memory.repository_id,
        impact=memory.impact,
        tenant_id=memory.tenant_id,
        module_path=memory.module_path,
        origin=memory.origin,
        failure_class=memory.failure_class,
        promotion_status=memory.promotion_status,
        conflict_state=memory.conflict_state,
        evidence=tuple(
            EvidenceFacts(type=e.type, status=e.status, repository_id=e.repository_id) for e in evidence
        ),
    )


def _audited(session: Session, actor: Actor, check, *args, **kwargs) -> None:
    """Run an invariant check; a scope refusal is audited once the caller's transaction ends (issue 9)."""
    try:
        check(*args, **kwargs)
    except ScopeRefused as exc:
        from memtui.governance.reviewers import note_scope_refusal

        note_scope_refusal(session, exc, actor)
        raise


def load_evidence(session: Session, memory_id: str) -> list[Evidence]:
    """The evidence rows of a memory, in their recorded order."""
    return list(
        session.exec(select(Evidence).where(Evidence.memory_id == memory_id).order_by(Evidence.ordinal))
    )


def transition(
    session: Session,
    memory: Memory | str,
    to_state: str,
    actor: Actor,
    reason: str,
    *,
    comment: str | None = None,
    job_id: str | None = None,
    compensates: str | None = None,
    review_state: str | None = None,
    decision_id: str | None = None,
    evidence: list[Evidence] | None = None,
    check_claim: bool = True,
) -> StateHistory:
    """Move ``memory`` to ``to_state`` as ``actor`` and record why; the caller commits.

    ``memory`` is a row or a memory id. ``review_state``, when given, is set in the same
    update (one version step per change). ``compensates`` is the event id an undo reverses:
    the step back skips the transition table (it inverts an allowed step) but not the
    invariants. Returns the history event added to the session. Raises
    :class:`MemoryNotFound`, :class:`memtui.domain.invariants.TransitionRefused` or
    :class:`memtui.domain.invariants.InvariantViolation`; nothing is written then.
    """
    if isinstance(memory, str):
        row = session.get(Memory, memory)
        if row is None:
            raise MemoryNotFound(memory)
        memory = row
    to = State(to_state)
    if evidence is None:
        evidence = load_evidence(session, memory.memory_id)
    undone = session.get(StateHistory, compensates) if compensates is not None else None
    _audited(session, actor, check_transition, facts_of(memory, evidence), to, actor, undo=compensates is not None,
             review_start=review_start_of(session, memory),
             undoes_creation=undone is not None and undone.from_state is None)
    if check_claim and actor.type == "human":
        from memtui.review.concurrency import check_claim as held

        held(session, memory.memory_id, actor)  # issue 21: a claimed memory is decided by its claimer
    chain.watch(session)  # the event and the memory are sealed at flush (issue 9)
    now = utcnow()
    event = StateHistory(
        event_id=new_event_id(),
        memory_id=memory.memory_id,
        from_state=memory.state,
        to_state=to.value,
        reason=_reason(reason),  # issue 21 item 4: a job never copies a secret into the history
        comment=comment,
        actor_type=actor.type,
        actor_id=actor.id,
        actor_role=actor.role if actor.type == "human" else None,
        job_id=job_id,
        compensates=compensates,
        review_state_before=memory.review_state,
        decision_id=decision_id,
        created_at=now,
    )
    before = memory.state
    memory.state = to.value
    if review_state is not None:
        memory.review_state = review_state
    if to in LIVE_STATES and actor.type == "human":
        memory.last_validated_at = now
    session.add(memory)
    session.add(event)
    if compensates is None:
        _follow_lineage(session, memory, before, actor, decision_id=decision_id, job_id=job_id)
    elif before == State.ACTIVE.value:
        _reopen_compaction(session, memory, actor, decision_id=decision_id)
    return event


def _follow_lineage(session: Session, memory: Memory, before: str, actor: Actor, *,
                    decision_id: str | None, job_id: str | None) -> None:
    """What a state change means for the memories made from or into ``memory`` (issue 10, items 6-7).

    * A compacted memory that becomes active supersedes the members of its pending proposal (not
      the kept ones): until then they stay in use, so accepting a compaction never empties recall.
    * A pending compacted memory rejected or archived withdraws its proposal; the members stay.
    * A source invalidated, rejected, archived or blocked sends each memory derived from it to
      review naming it (seed 000 §20.3). Archiving a source already superseded is housekeeping and
      does not count.
    """
    to = memory.state
    if memory.proposer_type == "compaction":
        with session.no_autoflush:  # a lookup: the caller's pending change is flushed when it commits
            proposal = lineage.compaction_of(session, memory.memory_id)
        if proposal is not None and proposal.status == "pending_review":
            if to == State.ACTIVE.value:
                _complete_compaction(session, memory, proposal, actor, decision_id=decision_id, job_id=job_id)
            elif to in ("rejected", "archived", "invalidated", "blocked"):
                proposal.status = "withdrawn"
                session.add(proposal)
    if to in lineage.RETRACTED_STATES and not (to == "archived" and before == State.SUPERSEDED.value):
        with session.no_autoflush:
            derived_ids = lineage.derived_of(session, memory)
        for derived_id in derived_ids:
            derived = session.get(Memory, derived_id)
            if derived is None:
                continue
            why = f"lineage: source {memory.memory_id} is {to} (seed 000 §20.3)"
            if derived.state in lineage.REVIEWABLE_STATES:
                transition(session, derived, State.NEEDS_REVIEW.value, actor, reason=why, review_state="pending",
                           decision_id=decision_id, job_id=job_id, check_claim=False)
            elif derived.state == State.NEEDS_REVIEW.value:
                record_note(session, derived, actor, why, decision_id=decision_id, job_id=job_id)


def _complete_compaction(session: Session, new: Memory, proposal, actor: Actor, *,
                         decision_id: str | None, job_id: str | None) -> None:
    """The compacted memory is active: its members (but the kept ones) are superseded by it."""
    keep = lineage.kept_members(session, proposal)
    proposal.status = "accepted"
    session.add(proposal)
    for mid in proposal.members:
        m = session.get(Memory, mid)
        if m is None or mid in keep or m.state == State.SUPERSEDED.value:
            continue
        if m.state in RETIRED_STATES:
            record_note(session, m, actor, f"{new.memory_id} is active; {mid} was already {m.state}",
                        decision_id=decision_id, job_id=job_id)
            continue
        transition(session, m, State.SUPERSEDED.value, actor,
                   reason=f"compacted into {new.memory_id} ({proposal.proposal_id}), now active",
                   decision_id=decision_id, job_id=job_id)
        m.superseded_by = new.memory_id
        session.add(m)
        session.flush()
        close_conflicts_of_retired(session, m, actor, decision_id, job_id)


def _reopen_compaction(session: Session, new: Memory, actor: Actor, *, decision_id: str | None) -> None:
    """Undoing the activation of a compacted memory gives its members back their use: each member
    superseded when it became active returns to its state before, and the proposal is pending again."""
    if new.proposer_type != "compaction":
        return
    proposal = lineage.compaction_of(session, new.memory_id)
    if proposal is None or proposal.status != "accepted":
        return
    for mid in proposal.members:
        m = session.get(Memory, mid)
        if m is None or m.state != State.SUPERSEDED.value or m.superseded_by != new.memory_id:
            continue
        last = session.exec(select(StateHistory).where(StateHistory.memory_id == mid)
                            .order_by(StateHistory.event_id.desc())).first()
        if last is None or last.to_state != State.SUPERSEDED.value or last.from_state is None:
            continue
        transition(session, m, last.from_state, actor, reason=f"{new.memory_id} is no longer active: back in use",
                   compensates=last.event_id, review_state=last.review_state_before, decision_id=decision_id)
        m.superseded_by = None
        session.add(m)
    proposal.status = "pending_review"
    session.add(proposal)


def close_conflicts_of_retired(session: Session, memory: Memory, actor: Actor, decision_id: str | None,
                               job_id: str | None = None) -> list[str]:
    """A memory that left use (invalidated, rejected, superseded, archived, blocked) cannot conflict:
    its open conflicts are resolved ("member retired") and the other member's flag refreshed."""
    closed = []
    for c in session.exec(select(MemoryConflict).where(
            MemoryConflict.status == "open",
            (MemoryConflict.memory_a == memory.memory_id) | (MemoryConflict.memory_b == memory.memory_id))):
        c.status, c.resolution, c.resolved_by, c.resolved_at = "resolved", "member_retired", actor.id, utcnow()
        session.add(c)
        closed.append(c.conflict_id)
    if closed:
        session.flush()
        for c_id in closed:
            c = session.get(MemoryConflict, c_id)
            for mid in (c.memory_a, c.memory_b):
                other = session.get(Memory, mid)
                refresh_conflict_state(session, other)
                record_note(session, other, actor, f"conflict {c_id} closed: {memory.memory_id} is {memory.state}",
                            decision_id=decision_id, job_id=job_id)
    return closed


def refresh_conflict_state(session: Session, memory: Memory) -> None:
    """A memory's conflict flag: open while any conflict naming it is open, else resolved (or none)."""
    rows = session.exec(select(MemoryConflict.status).where(
        (MemoryConflict.memory_a == memory.memory_id) | (MemoryConflict.memory_b == memory.memory_id))).all()
    memory.conflict_state = "open" if "open" in rows else ("resolved" if "resolved" in rows else "none")
    session.add(memory)


def _admit(session: Session, memory, evidence, actor: Actor, reason: str) -> str:
    """The checks a new memory passes before it is written (see :func:`create_memory`); ``memory`` and
    ``evidence`` are rows or :class:`memtui.store.rows.RowView` s. Returns the creation reason (with why
    it was demoted to a candidate, if it was); raises ScopeRefused or InvariantViolation."""
    from memtui.domain import invariants as inv

    facts = facts_of(memory, evidence)
    _audited(session, actor, check_actor_scope, facts, actor)
    demoted = inv.live_arrival_refused(facts, actor)
    if demoted:  # issue 9: a non-lead's high-impact record waits for a lead
        memory.state, memory.review_state = State.CANDIDATE.value, "pending"
        reason = f"{reason}; {demoted}"
    if State(memory.state) in LIVE_STATES:
        inv.check_evidence(facts)
        inv.check_scope(facts)
        inv.check_conflict(facts)
        inv.check_lineage(facts)
        if inv.is_high_impact(facts) and memory.review_state != "approved":
            raise inv.InvariantViolation(
                "review", memory.memory_id,
                "a high-impact memory arrives live only with reviewState approved",
            )
    return reason


def _reason(text: str) -> str:
    """A history reason as stored: any secret in it redacted (issue 21 item 4; the history is append-only)."""
    from memtui.safety.guard import redact_for_display

    return redact_for_display(text) or text


def _first_event(memory_id: str, state: str, reason: str, actor: Actor, decision_id: str | None) -> dict:
    """The column values of a memory's creating history event (``None`` -> ``state``)."""
    return dict(event_id=new_event_id(), memory_id=memory_id, from_state=None, to_state=state, reason=_reason(reason),
                comment=None, actor_type=actor.type, actor_id=actor.id,
                actor_role=actor.role if actor.type == "human" else None, job_id=None, compensates=None,
                review_state_before=None, decision_id=decision_id, created_at=utcnow())


def create_memory(session: Session, memory: Memory, evidence: list[Evidence], actor: Actor,
                  reason: str, *, decision_id: str | None = None) -> StateHistory:
    """Add a new memory, its evidence and its first history event (``None`` -> initial state).

    The initial state is the record's own (an import carries state it had elsewhere). A record
    that arrives live must satisfy the fact invariants (evidence, scope, conflict, lineage);
    a high-impact one must come with a recorded approval (``review_state`` approved), since
    the importing user is not approving it here; from a non-lead of a governed store it arrives
    as a candidate instead (:func:`memtui.domain.invariants.live_arrival_refused`, the reason
    says so). Raises ScopeRefused (outside the actor's scopes) or InvariantViolation before
    anything is added; the caller commits. Many at once: :func:`admit_row` and :func:`insert_created`.
    """
    reason = _admit(session, memory, evidence, actor, reason)
    event = StateHistory(**_first_event(memory.memory_id, memory.state, reason, actor, decision_id))
    chain.watch(session)
    chain.seal_first_event(memory, event)  # sealed before the first insert: no second write of the row
    session.add(memory)
    session.flush()  # the memory row first: evidence and history refer to it
    session.add_all(evidence)
    session.add(event)
    return event


def admit_row(session: Session, memory: dict, evidence: list[dict], actor: Actor, reason: str, *,
              decision_id: str | None = None) -> dict:
    """:func:`create_memory` for column dicts (:func:`memtui.store.rows.new_row`), writing nothing: the
    same checks (``memory`` may be demoted in place), then the creating event's column dict, with the
    event and ``memory["content_hash"]`` sealed. Write a batch of them with :func:`insert_created`.
    Raises ScopeRefused or InvariantViolation."""
    from memtui.store.rows import RowView

    view = RowView(memory)
    reason = _admit(session, view, [RowView(e) for e in evidence], actor, reason)
    event = _first_event(memory["memory_id"], memory["state"], reason, actor, decision_id)
    chain.seal_first_rows(memory, event)
    return event


def insert_created(session: Session, memories: list[dict], evidence: list[dict], events: list[dict]) -> None:
    """Insert admitted rows (:func:`admit_row`) in the caller's transaction, one executemany per table
    (memories first: evidence and history refer to them)."""
    from memtui.store.rows import insert_many

    chain.note(session, "memory", [m["memory_id"] for m in memories])  # sealed at commit (issue 21 item 6)
    connection = session.connection()
    for table, rows in ((Memory.__table__, memories), (Evidence.__table__, evidence),
                        (StateHistory.__table__, events)):
        insert_many(connection, table, rows)


def record_note(session: Session, memory: Memory, actor: Actor, reason: str, *,
                decision_id: str | None = None, job_id: str | None = None,
                compensates: str | None = None) -> StateHistory:
    """Write a history event that changes no state (from = to = the current state): the audit
    trail of a change to something else about the memory (its text, scope, evidence, conflict).
    Raises ScopeRefused when a human changes memory outside its scopes. The memory's content hash
    is resealed to the note at flush (issue 9)."""
    _audited(session, actor, check_actor_scope, facts_of(memory, []), actor)
    chain.watch(session)
    event = StateHistory(
        event_id=new_event_id(), memory_id=memory.memory_id, from_state=memory.state, to_state=memory.state,
        reason=_reason(reason), actor_type=actor.type, actor_id=actor.id,
        actor_role=actor.role if actor.type == "human" else None, job_id=job_id, compensates=compensates,
        review_state_before=memory.review_state, decision_id=decision_id, created_at=utcnow(),
    )
    session.add(event)
    return event


def effective_events(events) -> list:
    """The changes of state that stand, oldest first: notes (from = to) left out and each undone event
    struck with its undo (an undo that leads where no kept event did stays, as a change of its own).
    ``events``: a memory's history oldest first (rows or views with ``event_id``, ``from_state``,
    ``to_state``, ``compensates``)."""
    effective: list = []
    for e in events:
        if e.from_state is not None and e.from_state == e.to_state:
            continue
        if e.compensates is not None:
            at = next((i for i in range(len(effective) - 1, -1, -1) if effective[i].event_id == e.compensates), None)
            if at is not None:
                del effective[at]
                if effective and effective[-1].to_state == e.to_state:
                    continue
        effective.append(e)
    return effective


def review_start_of(session: Session, memory: Memory) -> str | None:
    """Where ``memory``'s current review began (:func:`memtui.domain.authority.review_start` over its
    :func:`effective_events`, those of the caller's transaction included): its state, unless it is in
    review (one history query then)."""
    from memtui.domain.authority import REVIEW_STATES, review_start

    if memory.state not in REVIEW_STATES:
        return memory.state
    with session.no_autoflush:
        rows = session.exec(select(StateHistory.event_id, StateHistory.from_state, StateHistory.to_state,
                                   StateHistory.compensates)
                            .where(StateHistory.memory_id == memory.memory_id).order_by(StateHistory.event_id)).all()
    pending = [o for o in session.new if isinstance(o, StateHistory) and o.memory_id == memory.memory_id]
    events = sorted([*rows, *pending], key=lambda e: e.event_id)  # this transaction's changes count too
    return review_start(memory.state, [(e.from_state, e.to_state) for e in effective_events(events)])


def waiting_reason(events) -> str | None:
    """Why a memory is in its state now: the reason of the event that put it there (issue 11, item 3).

    ``events``: the memory's history, oldest first (rows or views with ``event_id``, ``from_state``,
    ``to_state``, ``reason``, ``compensates``). Notes (from = to) change no state and are skipped; an
    undo takes its undone event out (:func:`effective_events`), so after "needs review -> approve -> undo"
    the reason is the one the memory was sent to review with, not "undo of …". An undo that leads
    somewhere no kept event did (a created memory archived) is its own reason. None for no events."""
    effective = effective_events(events)
    return effective[-1].reason if effective else None


def waiting_reasons(session: Session, memory_ids: list[str]) -> dict[str, str]:
    """:func:`waiting_reason` of each memory in ``memory_ids`` (those with history), in one query per 500."""
    out: dict[str, str] = {}
    for i in range(0, len(memory_ids), 500):
        chunk = memory_ids[i:i + 500]
        by_memory: dict[str, list] = {}
        for e in session.exec(select(StateHistory).where(StateHistory.memory_id.in_(chunk))
                              .order_by(StateHistory.memory_id, StateHistory.event_id)):
            by_memory.setdefault(e.memory_id, []).append(e)
        for mid, events in by_memory.items():
            reason = waiting_reason(events)
            if reason is not None:
                out[mid] = reason
    return out


def block_for_secret(session: Session, memory: Memory, found: list[tuple[str, SecretHit]], actor: Actor, *,
                     how: str, job_id: str | None = None) -> None:
    """Block ``memory`` (unless it is already) because of ``found``, with its findings and audit event."""
    from memtui.safety.guard import record_secret_findings, secret_types

    types = secret_types(h for _, h in found)
    if memory.state != "blocked":
        reason = f"secret found ({', '.join(types)}); text redacted"
        try:
            transition(session, memory, "blocked", actor, reason=reason, job_id=job_id, review_state="none")
        except InvariantViolation as exc:  # the scanner contains, not the editor (issue 21 item 1: "contain")
            if exc.invariant != "review":
                raise
            transition(session, memory, "blocked", Actor(type="system", id="secret-scan"),
                       reason=f"{reason} (found in what {actor.id!r} wrote)", job_id=job_id, review_state="none")
    record_secret_findings(session, memory.memory_id, found, actor, job_id=job_id, how=how)
