"""Lifecycle states and the transition table (DESIGN.md, "Lifecycle").

A memory has exactly one ``state``. Every change of it goes through
:func:`memtui.review.lifecycle.transition`, which consults :data:`TRANSITIONS` here.
"""

from __future__ import annotations

from enum import StrEnum


class State(StrEnum):
    """The twelve lifecycle states of a memory (DESIGN.md; seed 000 §3, seed 003 fact lifecycle)."""

    CANDIDATE = "candidate"
    APPROVED = "approved"
    ACTIVE = "active"
    NEEDS_REVIEW = "needs_review"
    CHALLENGED = "challenged"
    INVALIDATED = "invalidated"
    REJECTED = "rejected"
    SUPERSEDED = "superseded"
    EXPIRED = "expired"
    DEPRECATED = "deprecated"
    ARCHIVED = "archived"
    BLOCKED = "blocked"


ALL_STATES: tuple[str, ...] = tuple(s.value for s in State)

S = State
#: Allowed transitions: from-state -> set of to-states. Anything not listed is refused.
#: A candidate or approved memory whose evidence is all gone is ``invalidated`` by maintenance
#: directly, so one run decides it (a second run must change nothing).
#: ``archived`` is terminal except for an audited restore to review (and blocking, when a
#: rescan finds a secret in archived text); ``blocked`` (a secret or
#: other unsafe content) can only be archived, never shown again (safety invariant).
TRANSITIONS: dict[State, frozenset[State]] = {
    S.CANDIDATE: frozenset({S.APPROVED, S.ACTIVE, S.NEEDS_REVIEW, S.REJECTED, S.INVALIDATED, S.SUPERSEDED,
                            S.ARCHIVED, S.BLOCKED}),
    S.APPROVED: frozenset({S.ACTIVE, S.NEEDS_REVIEW, S.CHALLENGED, S.REJECTED, S.INVALIDATED, S.SUPERSEDED,
                           S.ARCHIVED, S.BLOCKED, S.EXPIRED}),
    S.ACTIVE: frozenset({S.NEEDS_REVIEW, S.CHALLENGED, S.INVALIDATED, S.SUPERSEDED, S.EXPIRED,
                         S.DEPRECATED, S.ARCHIVED, S.BLOCKED}),
    S.NEEDS_REVIEW: frozenset({S.APPROVED, S.ACTIVE, S.INVALIDATED, S.REJECTED, S.SUPERSEDED,
                               S.EXPIRED, S.DEPRECATED, S.ARCHIVED, S.BLOCKED}),
    S.CHALLENGED: frozenset({S.ACTIVE, S.NEEDS_REVIEW, S.INVALIDATED, S.SUPERSEDED,
                             S.DEPRECATED, S.ARCHIVED, S.BLOCKED}),
    S.INVALIDATED: frozenset({S.NEEDS_REVIEW, S.ARCHIVED, S.BLOCKED}),
    S.REJECTED: frozenset({S.CANDIDATE, S.ARCHIVED, S.BLOCKED}),
    S.SUPERSEDED: frozenset({S.INVALIDATED, S.REJECTED, S.ARCHIVED, S.BLOCKED}),  # a retracted source (issue 10)
    S.EXPIRED: frozenset({S.NEEDS_REVIEW, S.ACTIVE, S.ARCHIVED, S.BLOCKED}),
    S.DEPRECATED: frozenset({S.NEEDS_REVIEW, S.ARCHIVED, S.BLOCKED}),
    S.ARCHIVED: frozenset({S.NEEDS_REVIEW, S.BLOCKED}),
    S.BLOCKED: frozenset({S.ARCHIVED}),
}

#: States a reviewer is asked to decide on, in the order the review queue shows them.
QUEUE_STATES: tuple[State, ...] = (S.NEEDS_REVIEW, S.CHALLENGED, S.CANDIDATE, S.APPROVED)

#: States that make a memory retrievable or about to be (the gates that check invariants).
LIVE_STATES: frozenset[State] = frozenset({S.APPROVED, S.ACTIVE})


def is_allowed(from_state: str | None, to_state: str) -> bool:
    """Return whether the transition table allows ``from_state`` -> ``to_state``.

    ``from_state`` None means the memory is being created: any state but ``blocked``-only
    rules apply at creation (every state is a valid initial state of an imported record).
    Raises ValueError for a name that is not a state.
    """
    to = State(to_state)
    if from_state is None:
        return True
    return to in TRANSITIONS[State(from_state)]


class ReviewState(StrEnum):
    """Orthogonal flag: where the memory is in human review."""

    NONE = "none"
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    CHANGES_REQUESTED = "changes_requested"


class ConflictState(StrEnum):
    """Orthogonal flag: whether the memory is part of an open conflict (DESIGN.md invariant 4)."""

    NONE = "none"
    OPEN = "open"
    RESOLVED = "resolved"


class EvidenceType(StrEnum):
    """Kinds of evidence (seed 000 §5, §9; ``replay`` and ``ref`` from seed 003)."""

    FILE_SPAN = "file_span"
    SYMBOL = "symbol"
    CALL_EDGE = "call_edge"
    DOC = "doc"
    ADR = "adr"
    HUMAN = "human"
    REPLAY = "replay"
    REF = "ref"
    FOLDER = "folder"  # a folder a line names (existence only)
    GLOB = "glob"  # a glob a line names: must match a file


class EvidenceStatus(StrEnum):
    """What revalidation last found for a piece of evidence."""

    UNCHECKED = "unchecked"
    VALID = "valid"
    CHANGED = "changed"
    DELETED = "deleted"
    UNVERIFIABLE = "unverifiable"
    UNRESOLVABLE = "unresolvable"  # a named reference that did not exist when the line was written
    RETIRED = "retired"  # gone at HEAD when a reviewer approved the memory: no longer checked


class FailureClass(StrEnum):
    """Failure classes of promotion-gate candidates (seed 003, "Divide the failure class first")."""

    AGENT_FAILURE = "agent_failure"
    ENVIRONMENT_BLOCKER = "environment_blocker"
    FLAKY_TEST = "flaky_test"
    USER_DENIED = "user_denied"
    WRONG_ASSUMPTION = "wrong_assumption"
    INCOMPLETE_TRACE = "incomplete_trace"
    UNKNOWN = "unknown"


IMPACTS: tuple[str, ...] = ("low", "normal", "high")
ORIGINS: tuple[str, ...] = ("agent", "human", "system", "imported", "awtl", "docs_generated")
ACTOR_TYPES: tuple[str, ...] = ("human", "agent", "system")
ROLES: tuple[str, ...] = ("reviewer", "lead")
