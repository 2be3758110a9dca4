"""The expiry job (seed 000 §14): time-based expiry and review-after limits, one transaction."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.engine import Engine
from sqlmodel import select

from memtui.domain.expiry import ExpiryFacts, expiry_decision
from memtui.domain.states import is_allowed
from memtui.maintenance.jobs import MAINTENANCE_ACTOR, JobResult, job_transaction
from memtui.review.lifecycle import transition
from memtui.store.models import Memory

_ACTIVE_LIKE = ("active", "approved", "candidate", "needs_review", "challenged")


def run_expiry(engine: Engine, now: datetime, *, repository_id: str | None = None,
               dry_run: bool = False) -> JobResult:
    """Expire memories past ``expires_at``/``expiresAfterDays`` and send those past
    ``reviewAfterDays`` to review, at instant ``now``. Returns the JobResult; ``dry_run``
    reports the same changes without writing them."""
    with job_transaction(engine, "expire", repository_id=repository_id, dry_run=dry_run, clock=now) as (session, result):
        q = select(Memory).where(Memory.state.in_(_ACTIVE_LIKE))
        if repository_id is not None:
            q = q.where(Memory.repository_id == repository_id)
        for m in session.exec(q.order_by(Memory.memory_id)):
            result.selected += 1
            d = expiry_decision(ExpiryFacts(m.memory_id, m.type, m.state, m.created_at, m.last_validated_at,
                                            m.expires_at, m.expires_after_days, m.review_after_days), now)
            if d is None:
                continue
            to = "expired" if d.action == "expire" else "needs_review"
            if m.state == to or not is_allowed(m.state, to):
                continue
            result.changes.append({"memoryId": m.memory_id, "from": m.state, "to": to, "reason": d.reason,
                                   "dueAt": d.due_at})
            result.updated += 1
            if not dry_run:
                transition(session, m, to, MAINTENANCE_ACTOR, reason=d.reason, job_id=result.job_id)
        result.summary = {"expired": sum(c["to"] == "expired" for c in result.changes),
                          "sentToReview": sum(c["to"] == "needs_review" for c in result.changes)}
    return result
