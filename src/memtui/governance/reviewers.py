"""Reviewer identities, roles and scopes kept in the store (issue 9, item 2; DESIGN.md "Identity").

A store with an EMPTY ``reviewer`` table is single-user: whoever runs memtui is unrestricted
(scopes None), may declare a role (``--role``/``MEMTUI_ROLE``, default ``reviewer``) and may run
every maintainer operation. Once a reviewer exists, role and scopes come from the table only
(:func:`resolve_actor`): a declared role is a usage error and an unknown name is refused.
Roles: see :mod:`memtui.domain.invariants`. Every change here is audited
(:func:`memtui.governance.audit.audit`: ``reviewer_added``, ``reviewer_removed``; refusals
``unknown_actor``, ``scope_refused``, ``role_refused`` in a transaction of their own).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlmodel import Session, func, select

from memtui.clock import utcnow
from memtui.domain.invariants import Actor
from memtui.domain.scopes import EVERY_TENANT, ScopeSyntaxError, parse_scope
from memtui.governance.audit import audit
from memtui.store.models import Reviewer

ROLES = ("reviewer", "lead", "maintainer")
ADMIN_ROLES = ("lead", "maintainer")


class GovernanceError(Exception):
    """A refused identity or administration request; ``exit_code`` 1 (refused) or 2 (usage)."""

    exit_code = 1


class ActorRefused(GovernanceError):
    """The actor is not a reviewer of a governed store, or lacks the role an operation needs."""


class RoleDeclared(GovernanceError):
    """A role was declared (``--role``/``MEMTUI_ROLE``) in a store whose roles come from its table."""

    exit_code = 2


class ReviewerUsageError(GovernanceError):
    """A malformed reviewer request (unknown role, bad scope, bad name)."""

    exit_code = 2


@dataclass(frozen=True)
class ReviewerView:
    """One registered reviewer."""

    name: str
    role: str
    scopes: tuple[str, ...]
    added_by: str
    added_at: datetime


def _view(r: Reviewer) -> ReviewerView:
    return ReviewerView(r.name, r.role, tuple(r.scopes or ()), r.added_by, r.added_at)


def is_governed(session: Session) -> bool:
    """Whether the store has reviewers (roles and scopes then come from the table)."""
    return session.exec(select(func.count()).select_from(Reviewer)).one() > 0


def audit_apart(engine: Engine, kind: str, actor_id: str, subject: str | None = None, **detail: Any) -> None:
    """Write one audit event in a transaction of its own (a refusal: the refused change rolls back)."""
    with Session(engine) as session, session.begin():
        audit(session, kind, actor_id, subject, **detail)


def audit_when_done(session: Session, kind: str, actor_id: str, subject: str | None = None,
                    **detail: Any) -> None:
    """Audit in a transaction of its own once ``session``'s transaction ends, committed or rolled
    back (the lifecycle's refusals: the caller usually rolls its change back)."""
    pending = session.info.get("memtui_audit_pending")
    if pending is None:
        pending = session.info["memtui_audit_pending"] = []

        def flush(sess: Session, transaction) -> None:
            if transaction.parent is not None or transaction.nested:
                return  # a savepoint ended; the caller's transaction (and its locks) is still open
            todo = list(sess.info.get("memtui_audit_pending") or [])
            sess.info["memtui_audit_pending"] = []
            for args, kw in todo:
                audit_apart(sess.get_bind(), *args, **kw)

        event.listen(session, "after_transaction_end", flush)
    pending.append(((kind, actor_id, subject), detail))


def _clean_name(name: str) -> str:
    name = (name or "").strip()
    if not name or any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise ReviewerUsageError(f"reviewer name {name!r} is empty or holds control characters")
    return name


def _parse_scopes(scopes: list[str] | tuple[str, ...]) -> list[str]:
    out = []
    for s in scopes or (EVERY_TENANT,):
        try:
            out.append(parse_scope(s).label)
        except ScopeSyntaxError as exc:
            raise ReviewerUsageError(f"--scope: {exc}") from exc
    return out


def check_admin(session: Session, who: str, what: str) -> None:
    admins = session.exec(select(Reviewer).where(Reviewer.role.in_(ADMIN_ROLES))).all()
    if not admins:
        return  # bootstrap: nobody administers yet, so anyone may add the first lead or maintainer
    me = session.get(Reviewer, who)
    if me is None or me.role not in ADMIN_ROLES:
        raise ActorRefused(f"{what} needs a lead or maintainer of this store; {who!r} is "
                           + (f"a {me.role}" if me else "not a reviewer") + " (see memtui reviewers list)")


def add_reviewer(engine: Engine, name: str, role: str, scopes: list[str] | tuple[str, ...], by: str) -> ReviewerView:
    """Register ``name`` with ``role`` and ``scopes`` (default ``*``), or replace an existing
    reviewer's role and scopes; ``by`` is the acting login. Audited ``reviewer_added``.
    Raises ReviewerUsageError (bad role, scope or name) or ActorRefused (``by`` may not administer)."""
    name = _clean_name(name)
    if role not in ROLES:
        raise ReviewerUsageError(f"--role must be one of {', '.join(ROLES)}, not {role!r}")
    clean = _parse_scopes(scopes)
    with Session(engine) as session, session.begin():
        check_admin(session, by, f"adding reviewer {name!r}")
        row = session.get(Reviewer, name)
        before = {"role": row.role, "scopes": list(row.scopes)} if row else None
        if row is not None and row.role in ADMIN_ROLES and role not in ADMIN_ROLES:
            _refuse_last_admin(session, row)
        row = row or Reviewer(name=name, role=role, scopes=clean, added_by=by, added_at=utcnow())
        row.role, row.scopes, row.added_by, row.added_at = role, clean, by, utcnow()
        session.add(row)
        audit(session, "reviewer_added", by, name, role=role, scopes=clean, replaced=before)
        session.flush()
        return _view(row)


def _refuse_last_admin(session: Session, row: Reviewer) -> None:
    admins = session.exec(select(func.count()).select_from(Reviewer).where(
        Reviewer.role.in_(ADMIN_ROLES), Reviewer.name != row.name)).one()
    others = session.exec(select(func.count()).select_from(Reviewer).where(Reviewer.name != row.name)).one()
    if admins == 0 and others > 0:
        raise ActorRefused(f"{row.name!r} is the last lead or maintainer; add another before "
                           f"removing or demoting {row.name!r}")


def remove_reviewer(engine: Engine, name: str, by: str) -> ReviewerView:
    """Remove a reviewer; audited ``reviewer_removed``. Refused (ActorRefused) when ``by`` may not
    administer, the name is unknown, or it is the last lead/maintainer while others remain."""
    with Session(engine) as session, session.begin():
        check_admin(session, by, f"removing reviewer {name!r}")
        row = session.get(Reviewer, name)
        if row is None:
            raise ActorRefused(f"{name!r} is not a reviewer of this store (see memtui reviewers list)")
        _refuse_last_admin(session, row)
        view = _view(row)
        session.delete(row)
        audit(session, "reviewer_removed", by, name, role=row.role, scopes=list(row.scopes))
        return view


def list_reviewers(engine: Engine) -> list[ReviewerView]:
    """All reviewers, by name."""
    with Session(engine) as session:
        return [_view(r) for r in session.exec(select(Reviewer).order_by(Reviewer.name))]


def resolve_actor(engine: Engine, name: str, declared_role: str | None, *,
                  role_source: str = "--role") -> Actor:
    """The human actor ``name`` as this store knows it.

    Single-user store (no reviewers): unrestricted (scopes None); the login user holds every role
    (issue 9: role ``lead`` unless a role is declared to act as less; a declared role must be reviewer, lead or maintainer: RoleDeclared otherwise).
    Governed store: role and scopes from the table; a declared role raises RoleDeclared (exit 2),
    an unknown name raises ActorRefused (exit 1) after auditing ``unknown_actor``."""
    with Session(engine) as session:
        governed = is_governed(session)
        row = session.get(Reviewer, name) if governed else None
    if not governed:
        role = declared_role or "lead"
        if role not in ROLES:
            raise RoleDeclared(f"{role_source} must be one of {', '.join(ROLES)}, not {role!r}")
        return Actor(type="human", id=name, role=role)
    if declared_role:
        raise RoleDeclared(f"{role_source} is not accepted in this store: roles come from "
                           "memtui reviewers (see memtui reviewers list)")
    if row is None:
        audit_apart(engine, "unknown_actor", name, None)
        raise ActorRefused(f"{name} is not a reviewer of this store (see memtui reviewers list)")
    return Actor(type="human", id=row.name, role=row.role, scopes=tuple(row.scopes or ()))


def require_role(engine: Engine, actor: Actor, roles: tuple[str, ...], what: str) -> None:
    """Refuse (ActorRefused, audited ``role_refused``) a governed actor without one of ``roles``
    for ``what`` (e.g. maintenance, policy apply, prune, set-visibility); unrestricted actors pass."""
    if actor.scopes is None or actor.role in roles:
        return
    audit_apart(engine, "role_refused", actor.id, None, operation=what, role=actor.role)
    raise ActorRefused(f"{what} needs the role {' or '.join(roles)}; {actor.id!r} is a {actor.role}")


def note_scope_refusal(session: Session, exc, actor: Actor) -> None:
    """Audit a :class:`memtui.domain.invariants.ScopeRefused` once the caller's transaction ends."""
    audit_when_done(session, "scope_refused", actor.id, exc.memory_id,
                    scopes=list(exc.scopes), memoryScope=exc.where)
