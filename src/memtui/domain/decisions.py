"""Reviewer decisions and the state each leads to (pure)."""

from __future__ import annotations

from enum import StrEnum

from memtui.domain.invariants import LifecycleError
from memtui.domain.states import State


class DecisionError(LifecycleError):
    """A decision or undo that cannot be carried out; the message says why."""


class VersionChanged(DecisionError):
    """The memory changed since the version the reviewer saw: "ID changed by ACTOR at TIME: look
    again" (issue 9 item 3; the HTTP API answers 409)."""


class Decision(StrEnum):
    """What a reviewer can decide on one memory (CLI ``memtui decide``, the queue keys)."""

    APPROVE = "approve"
    REJECT = "reject"
    NEEDS_REVIEW = "needs-review"
    ARCHIVE = "archive"
    BLOCK = "block"  # unsafe content (a secret); audited (issue 9)


def target_state(decision: Decision, current: str) -> State:
    """The state a decision moves a memory in ``current`` to.

    approve: -> active (a human approval is the verification that makes memory retrievable);
    reject: a candidate or approved memory -> rejected; one that was already in use
    (active, needs_review, challenged) -> invalidated, since it was wrong;
    needs-review -> needs_review; archive -> archived; block -> blocked.
    """
    if decision is Decision.APPROVE:
        return State.ACTIVE
    if decision is Decision.REJECT:
        if current in (State.CANDIDATE, State.APPROVED):
            return State.REJECTED
        return State.INVALIDATED
    if decision is Decision.NEEDS_REVIEW:
        return State.NEEDS_REVIEW
    if decision is Decision.BLOCK:
        return State.BLOCKED
    return State.ARCHIVED


def review_state_after(decision: Decision) -> str:
    """The ``review_state`` flag a decision leaves behind."""
    return {
        Decision.APPROVE: "approved",
        Decision.REJECT: "rejected",
        Decision.NEEDS_REVIEW: "pending",
        Decision.ARCHIVE: "none",
        Decision.BLOCK: "none",
    }[decision]
