"""The audit log (design §22): governance events that are not state changes of one memory.

Reviewer changes, refused out-of-scope decisions, secret incidents, purges, exports,
visibility changes. :func:`audit` adds a row to the *caller's* session, so the event commits
or rolls back with the change it records (for a refusal, the caller commits it on its own).
"""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, select

from memtui.clock import new_event_id, utcnow
from memtui.store.models import AuditEvent


def audit(session: Session, kind: str, actor_id: str, subject: str | None = None, **detail: Any) -> AuditEvent:
    """Add one audit event; ``kind`` e.g. ``reviewer_added``, ``scope_refused``, ``secret_blocked``,
    ``purge``, ``export``; ``subject`` the memory id or reviewer name; ``detail`` JSON-able values.
    Never put a secret in ``detail``: name its type and hash instead."""
    event = AuditEvent(audit_id=new_event_id("aud"), kind=kind, actor_id=actor_id, subject=subject,
                       detail=dict(detail), created_at=utcnow())
    session.add(event)
    return event


def audit_events(session: Session, *, kind: str | None = None, subject: str | None = None) -> list[AuditEvent]:
    """Audit events in the order written, optionally of one kind and/or one subject."""
    q = select(AuditEvent)
    if kind is not None:
        q = q.where(AuditEvent.kind == kind)
    if subject is not None:
        q = q.where(AuditEvent.subject == subject)
    return list(session.exec(q.order_by(AuditEvent.audit_id)))
