"""Time-based expiry (seed 000 §14): which memories are past their limit at a given instant. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

#: Default lifetimes by memory type when the record sets none (seed 000 §14.1, §21.3):
#: evaluation lessons expire after 90 days unless renewed; task and session memory are short-lived.
DEFAULT_EXPIRES_AFTER_DAYS: dict[str, int] = {"evaluation_lesson": 90, "task": 30, "session": 1}

EXPIRABLE_STATES = frozenset({"active", "approved", "candidate", "needs_review", "challenged"})


@dataclass(frozen=True)
class ExpiryFacts:
    """What expiry needs of a memory. ``renewed_at`` is the last human validation (renews the clock)."""

    memory_id: str
    type: str
    state: str
    created_at: datetime
    last_validated_at: datetime | None
    expires_at: datetime | None
    expires_after_days: int | None
    review_after_days: int | None


@dataclass(frozen=True)
class ExpiryDecision:
    """``action`` is ``expire`` (state -> expired) or ``review`` (state -> needs_review); ``reason`` is
    ``expires_at_reached`` / ``expires_after_days_elapsed`` / ``review_after_days_elapsed``
    (seed 000 §14.4); ``due_at`` when the limit was reached."""

    memory_id: str
    action: str
    reason: str
    due_at: datetime


def expiry_decision(m: ExpiryFacts, now: datetime) -> ExpiryDecision | None:
    """The expiry action due for ``m`` at ``now``, or None.

    Order: an explicit ``expires_at``; then ``expires_after_days`` (or the type's default)
    counted from the last validation, else creation; then ``review_after_days`` from the same
    start, which sends an active memory to review instead of expiring it.
    """
    if m.state not in EXPIRABLE_STATES:
        return None
    if m.expires_at is not None and m.expires_at <= now:
        return ExpiryDecision(m.memory_id, "expire", "expires_at_reached", m.expires_at)
    start = m.last_validated_at or m.created_at
    days = m.expires_after_days if m.expires_after_days is not None else DEFAULT_EXPIRES_AFTER_DAYS.get(m.type)
    if days is not None and start + timedelta(days=days) <= now:
        return ExpiryDecision(m.memory_id, "expire", "expires_after_days_elapsed", start + timedelta(days=days))
    if (m.review_after_days is not None and m.state in ("active", "approved")
            and start + timedelta(days=m.review_after_days) <= now):
        return ExpiryDecision(m.memory_id, "review", "review_after_days_elapsed",
                              start + timedelta(days=m.review_after_days))
    return None
