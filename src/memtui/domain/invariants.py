"""The memory invariants of DESIGN.md ("Invariants"), as pure checks.

The lifecycle function (:func:`memtui.review.lifecycle.transition`) builds a
:class:`MemoryFacts` snapshot, calls :func:`check_transition` and only then writes.
Each refusal names the invariant, so a reviewer knows which rule stopped the change.

Roles (issue 9, item 2; the ``reviewer`` table, :mod:`memtui.governance.reviewers`):

============  ===========================================  ======================================
role          decides                                      also
============  ===========================================  ======================================
reviewer      normal memory inside its scopes              -
lead          normal and high-impact memory in its scopes  administers reviewers
maintainer    normal memory inside its scopes              maintenance, policy apply, prune,
                                                           purge, reviewers, scope set-visibility
============  ===========================================  ======================================

Who may cause which outcome to high-impact memory (put it in use, take it out of use, reject a
candidate) is judged by outcome, not by edge: :mod:`memtui.domain.authority` (issue 21, item 1).

A human actor with ``scopes`` (a governed store) changes only memory inside them
(:func:`check_actor_scope`, :class:`ScopeRefused`); ``scopes`` None is unrestricted (a
single-user store, system and agent actors).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memtui.domain.states import LIVE_STATES, EvidenceStatus, EvidenceType, State, is_allowed


class LifecycleError(Exception):
    """Base of the errors the lifecycle raises; ``str(err)`` is a sentence for the user."""


class TransitionRefused(LifecycleError):
    """The transition table does not allow this change of state."""

    def __init__(self, memory_id: str, from_state: str | None, to_state: str):
        self.memory_id, self.from_state, self.to_state = memory_id, from_state, to_state
        super().__init__(
            f"{memory_id}: transition {from_state} -> {to_state} is not allowed by the lifecycle"
        )


class ScopeRefused(LifecycleError):
    """A human actor tried to change memory outside its reviewer scopes (issue 9, item 2)."""

    def __init__(self, memory_id: str, actor_id: str, scopes: tuple[str, ...], where: str):
        self.memory_id, self.actor_id, self.scopes, self.where = memory_id, actor_id, scopes, where
        super().__init__(
            f"{memory_id}: scope refused: {where} lies outside the scopes of {actor_id!r} "
            f"({', '.join(scopes) or 'none'})"
        )


class InvariantViolation(LifecycleError):
    """A change would break one of the named invariants (evidence, scope, conflict, review, lineage, promotion)."""

    def __init__(self, invariant: str, memory_id: str, message: str):
        self.invariant, self.memory_id = invariant, memory_id
        super().__init__(f"{memory_id}: {invariant} invariant: {message}")


@dataclass(frozen=True)
class EvidenceFacts:
    """What the invariants need to know of one piece of evidence."""

    type: str
    status: str = EvidenceStatus.UNCHECKED
    repository_id: str | None = None  # None: the memory's own repository


@dataclass(frozen=True)
class MemoryFacts:
    """What the invariants need to know of a memory (a snapshot, never an ORM row)."""

    memory_id: str
    type: str
    state: str | None
    repository_id: str | None
    impact: str = "normal"
    tenant_id: str = "default"
    module_path: str | None = None
    origin: str = "agent"
    failure_class: str | None = None
    promotion_status: str | None = None
    conflict_state: str = "none"
    evidence: tuple[EvidenceFacts, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Actor:
    """Who makes a change: ``type`` human/agent/system, ``id`` (login, job id), ``role``
    reviewer/lead/maintainer, ``scopes`` the reviewer's ``tenant[/repository[/module]]`` scopes
    (None: unrestricted, as in a single-user store and for system actors)."""

    type: str
    id: str
    role: str = "reviewer"
    scopes: tuple[str, ...] | None = None


#: Memory types that are high-impact by nature (DESIGN.md invariant 6).
HIGH_IMPACT_TYPES: frozenset[str] = frozenset({"architecture_decision"})
#: Evidence that is not tied to one repository's files and may ground an org-wide memory.
ORG_EVIDENCE_TYPES: frozenset[str] = frozenset({EvidenceType.DOC, EvidenceType.ADR, EvidenceType.HUMAN})
#: Evidence that counts as original (not derived from generated docs) for the lineage invariant.
ORIGINAL_EVIDENCE_TYPES: frozenset[str] = frozenset(
    {EvidenceType.FILE_SPAN, EvidenceType.SYMBOL, EvidenceType.CALL_EDGE, EvidenceType.ADR,
     EvidenceType.HUMAN, EvidenceType.REPLAY}
)
_GONE = frozenset({EvidenceStatus.DELETED, EvidenceStatus.UNVERIFIABLE, EvidenceStatus.UNRESOLVABLE,
                   EvidenceStatus.RETIRED})


def is_high_impact(m: MemoryFacts) -> bool:
    """High impact: an architecture decision, impact ``high``, or an org-wide (no repository) scope."""
    return m.type in HIGH_IMPACT_TYPES or m.impact == "high" or m.repository_id is None


def _usable_evidence(m: MemoryFacts) -> list[EvidenceFacts]:
    return [e for e in m.evidence if e.status not in _GONE]


def check_evidence(m: MemoryFacts) -> None:
    """Invariant 1 (evidence): a live memory has usable evidence or an approved human source."""
    if not _usable_evidence(m):
        raise InvariantViolation(
            "evidence", m.memory_id,
            "an approved or active memory needs evidence that still exists or a human source",
        )


def check_scope(m: MemoryFacts) -> None:
    """Invariant 2 (scope): the memory's scope is never broader than its evidence's.

    An org-wide memory (no repository) needs doc, ADR or human evidence that is itself
    org-wide; a repository memory needs at least one piece of evidence in that repository.
    """
    ev = _usable_evidence(m) or list(m.evidence)
    if not ev:
        return
    if m.repository_id is None:
        if not any(e.type in ORG_EVIDENCE_TYPES and e.repository_id is None for e in ev):
            raise InvariantViolation(
                "scope", m.memory_id,
                "an org-wide memory needs org-wide doc, ADR or human evidence; "
                "its evidence is bound to repositories",
            )
        return
    if not any(e.repository_id in (None, m.repository_id) for e in ev):
        raise InvariantViolation(
            "scope", m.memory_id,
            f"scope is repository {m.repository_id!r} but no evidence comes from it",
        )


def check_conflict(m: MemoryFacts) -> None:
    """Invariant 4 (conflict): a memory in an open conflict does not become live."""
    if m.conflict_state == "open":
        raise InvariantViolation(
            "conflict", m.memory_id, "the memory is in an open conflict; resolve the conflict first"
        )


def check_actor_scope(m: MemoryFacts, actor: Actor) -> None:
    """Issue 9, item 2: a human with reviewer scopes changes only memory inside them.
    Raises :class:`ScopeRefused` naming the memory, its scope and the actor's scopes."""
    from memtui.domain.scopes import in_scopes

    if actor.type != "human" or actor.scopes is None:
        return
    if not in_scopes(m.tenant_id, m.repository_id, m.module_path, actor.scopes):
        where = f"{m.tenant_id}/{m.repository_id or '(org-wide)'}" + (f"/{m.module_path}" if m.module_path else "")
        raise ScopeRefused(m.memory_id, actor.id, actor.scopes, where)


def live_arrival_refused(m: MemoryFacts, actor: Actor) -> str | None:
    """Issue 9, item 2 (import): why a record arriving live must arrive as a candidate, or None.

    A high-impact record (:func:`is_high_impact`) arriving approved or active from a human of a
    governed store (``scopes`` set) who is not a lead is kept as a candidate for a lead to decide.
    A single-user store (``scopes`` None) imports as before (invariant 6 still asks for a
    recorded approval, see :func:`memtui.review.lifecycle.create_memory`)."""
    if (m.state is None or State(m.state) not in LIVE_STATES or not is_high_impact(m)
            or actor.type != "human" or actor.scopes is None or actor.role == "lead"):
        return None
    return (f"arrived {m.state} but high-impact memory (architecture decision, impact high or org-wide "
            f"scope) needs a lead's approval; {actor.id!r} has role {actor.role!r}: kept as a candidate")


def check_review(m: MemoryFacts, actor: Actor) -> None:
    """Invariant 6 (review): high-impact memory needs a lead's approval (and a lead to retire it)."""
    if is_high_impact(m) and not (actor.type == "human" and actor.role == "lead"):
        raise InvariantViolation(
            "review", m.memory_id,
            "high-impact memory (architecture decision, impact high or org-wide scope) "
            f"needs a lead's approval; {actor.type} {actor.id!r} has role {actor.role!r}",
        )


def check_rewrite(m: MemoryFacts, actor: Actor, what: str) -> None:
    """Invariant 6 judged by outcome (issue 21 item 1) for changes that are no transition: editing the
    statement of, or purging, high-impact memory in use or held for review (live, ``needs_review``,
    ``challenged``) needs a lead — rewriting it in place changes what is in use as surely as
    replacing it. ``what`` names the change ("edit", "purge"). Candidates and memory out of use: anyone
    the other rules let. Raises :class:`InvariantViolation` ("review")."""
    in_use = m.state in LIVE_STATES or m.state in (State.NEEDS_REVIEW, State.CHALLENGED)
    if in_use and is_high_impact(m) and not (actor.type == "human" and actor.role == "lead"):
        raise InvariantViolation(
            "review", m.memory_id,
            f"a {what} of high-impact memory in use or held for review needs a lead (high-impact: "
            f"architecture decision, impact high or org-wide scope; state {m.state}); "
            f"{actor.type} {actor.id!r} has role {actor.role!r}")


def check_lineage(m: MemoryFacts) -> None:
    """Invariant 7 (lineage): memory derived from generated docs still carries original evidence."""
    if m.origin == "docs_generated" and not any(
        e.type in ORIGINAL_EVIDENCE_TYPES for e in _usable_evidence(m)
    ):
        raise InvariantViolation(
            "lineage", m.memory_id,
            "derived from generated docs but carries no original evidence (code, ADR, human, replay)",
        )


def check_promotion(m: MemoryFacts, actor: Actor) -> None:
    """Invariant 8 (promotion): only a human promotes an imported-only or environment-blocker
    candidate; any automatic promotion needs replay evidence (seed 003, promotion pipeline)."""
    if actor.type == "human":
        return
    if m.failure_class == "environment_blocker":
        raise InvariantViolation(
            "promotion", m.memory_id,
            "an environment-blocker candidate is never auto-promoted; a human must decide",
        )
    if m.origin in ("imported", "awtl") and not any(e.type == EvidenceType.REPLAY for e in m.evidence):
        raise InvariantViolation(
            "promotion", m.memory_id, "an imported-only candidate is never auto-promoted"
        )
    if not any(e.type == EvidenceType.REPLAY for e in m.evidence):
        raise InvariantViolation(
            "promotion", m.memory_id,
            f"automatic promotion by {actor.type} {actor.id!r} needs replay evidence",
        )


#: The review gates the queue shows before a decision (issue 11, item 2): name -> the check behind it.
GATES = ("missing evidence", "scope broader than evidence", "open conflict", "high impact needs a lead")


def approval_gates(m: MemoryFacts, actor: Actor) -> list[tuple[str, str]]:
    """What would stop ``actor`` approving ``m`` now: ``(gate, reason)`` pairs in :data:`GATES` order,
    each reason the message of the invariant check that refuses it (the same checks
    :func:`check_transition` runs, so the queue's warning and the refusal never disagree)."""
    checks = (("missing evidence", check_evidence), ("scope broader than evidence", check_scope),
              ("open conflict", check_conflict), ("high impact needs a lead", lambda f: check_review(f, actor)))
    out = []
    for gate, check in checks:
        try:
            check(m)
        except InvariantViolation as exc:
            out.append((gate, str(exc)))
    return out


_CURRENT = object()


def check_authority(m: MemoryFacts, to_state: str, actor: Actor, *, review_start=_CURRENT, undo: bool = False,
                    undoes_creation: bool = False) -> None:
    """Invariant 6 judged by outcome (issue 21, Build item 1): refuse ``actor`` an outcome
    :data:`memtui.domain.authority.AUTHORITY` does not give it for this memory. ``review_start``: where the
    memory's current review began (:func:`memtui.domain.authority.review_start`; default its state).
    Raises :class:`InvariantViolation` ("review invariant: taking high-impact memory out of use needs a
    lead …") naming the path from the review start."""
    from memtui.domain import authority

    start = m.state if review_start is _CURRENT else review_start
    kind = authority.outcome(start, m.state, to_state, undo=undo, undoes_creation=undoes_creation)
    why = authority.refusal(kind, is_high_impact(m), authority.who(actor.type, actor.role))
    if why is None:
        return
    if kind == "admit" and start == m.state:  # the plain approval keeps the words of check_review
        check_review(m, actor)
    raise InvariantViolation(
        "review", m.memory_id,
        f"{why} (high-impact: {authority.HIGH_IMPACT_WORDS}; "
        f"{authority.describe(kind, start, m.state, to_state)}); "
        f"{actor.type} {actor.id!r} has role {actor.role!r}",
    )


def check_transition(m: MemoryFacts, to_state: str, actor: Actor, *, undo: bool = False,
                     review_start=_CURRENT, undoes_creation: bool = False) -> None:
    """Refuse the change ``m.state -> to_state`` by ``actor`` unless the table and invariants allow it.

    ``undo`` marks a compensating change that returns a memory to the state it had before
    a decision: the table is not consulted (the step back is the inverse of an allowed one),
    the invariants still are. ``review_start`` (where the memory's current review began) and
    ``undoes_creation`` feed :func:`check_authority`, which judges who may cause the outcome
    (issue 21). Raises :class:`TransitionRefused` or :class:`InvariantViolation`;
    returns None when the change may be written. A human outside its scopes gets
    :class:`ScopeRefused` first, on every path (decide, undo, batch, merge, resolve, compaction,
    policy, prune, import).
    """
    check_actor_scope(m, actor)
    if not undo and not is_allowed(m.state, to_state):
        raise TransitionRefused(m.memory_id, m.state, to_state)

    def authority() -> None:
        check_authority(m, to_state, actor, review_start=review_start, undo=undo, undoes_creation=undoes_creation)

    if State(to_state) in LIVE_STATES and m.state not in LIVE_STATES:
        check_evidence(m)
        check_scope(m)
        if not undo:  # an undo restores a live state that coexisted with the conflict (still excluded from recall)
            check_conflict(m)
        check_lineage(m)
        authority()
        check_promotion(m, actor)
    elif State(to_state) in LIVE_STATES:
        # approved -> active (or the reverse): the facts may have changed since approval
        check_evidence(m)
        check_scope(m)
        check_conflict(m)
    else:
        authority()
