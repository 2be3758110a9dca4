"""Reviewer identities, roles and scopes kept in the store (issue 9, item 2; DESIGN.md "Identity").

A store with an EMPTY ``reviewer`` table is single-user: whoever runs memtui is unrestricted
(scopes None), may declare a role (``--role``/``MEMTUI_ROLE``, default ``reviewer``) and may run
every maintainer operation. Once a reviewer exists, role and scopes come from the table only
(:func:`resolve_actor`): a declared role is a usage error and an unknown name is refused.
Roles: see :mod:`memtui.domain.invariants`. Every change here is audited
(:func:`memtui.governance.audit.audit`: ``reviewer_added``, ``reviewer_removed``,
``delegation_granted``, ``delegation_revoked``; refusals ``unknown_actor``, ``actor_refused``,
``grant_refused``, ``scope_refused``, ``role_refused`` in a transaction of their own).

Who acts (issue 21 item 5): on a store with reviewers the acting human is the connection's identity
(:func:`connection_identity`), never a name typed in a flag: ``--actor``/``MEMTUI_ACTOR`` may only
name that identity or a reviewer it may act for by a ``reviewer_delegation`` row
(:func:`resolve_connection_actor`). On HTTP and MCP the bearer token is the identity
(:mod:`memtui.governance.tokens`).

Who may grant what (issue 21 item 8; :data:`GRANTABLE`), once a lead or maintainer exists:

- a **lead** may make reviewers, maintainers and leads, and delegate acting for any of them;
- a **maintainer** may make reviewers and maintainers, never a lead (himself included);
- a **reviewer** grants nothing.

Every scope granted must lie within one of the granter's own scopes (``*`` covers all), and a
reviewer already registered may be changed or removed only by someone who could have granted its
current role and scopes (a maintainer cannot demote or remove a lead, nor anyone outside his
scopes). Only a lead grants delegations, for a principal he could have granted. While no lead or
maintainer is registered (bootstrap) anyone may add reviewers.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import getpass
import os

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlmodel import Session, func, select

from memtui.clock import utcnow
from memtui.domain.invariants import Actor
from memtui.domain.scopes import EVERY_TENANT, ScopeSyntaxError, in_scope, parse_scope
from memtui.governance.audit import audit
from memtui.governance import integrity as _integrity  # noqa: F401  (seals reviewer rows, issue 21 item 6)
from memtui.store.models import Reviewer, ReviewerDelegation

ROLES = ("reviewer", "lead", "maintainer")
ADMIN_ROLES = ("lead", "maintainer")
#: The roles each role may grant (issue 21 item 8; the module docstring).
GRANTABLE: dict[str, tuple[str, ...]] = {"lead": ROLES, "maintainer": ("reviewer", "maintainer"), "reviewer": ()}


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
    """Write one audit event in a transaction of its own (a refusal: the refused change rolls back).
    A read-only store records nothing; the refusal itself still stands (issue 21 item 7)."""
    from memtui.store.engine import read_only_reason

    if read_only_reason(engine) is not None:
        return
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
    _refuse_secret(("reviewer name", name))
    if not name or any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise ReviewerUsageError(f"reviewer name {name!r} is empty or holds control characters")
    return name


def _refuse_secret(*fields: tuple[str, str | None]) -> None:
    """A name or scope holding a secret is refused, naming the field, never echoing it (issue 21 item 4)."""
    from memtui.safety.guard import SecretRefused, refuse_secret_fields

    try:
        refuse_secret_fields(*fields)
    except SecretRefused as exc:
        raise ReviewerUsageError(str(exc)) from None


def _parse_scopes(scopes: list[str] | tuple[str, ...]) -> list[str]:
    out = []
    _refuse_secret(*(("--scope", s) for s in scopes or ()))
    for s in scopes or (EVERY_TENANT,):
        try:
            out.append(parse_scope(s).label)
        except ScopeSyntaxError as exc:
            raise ReviewerUsageError(f"--scope: {exc}") from exc
    return out


def check_admin(session: Session, who: str, what: str) -> Reviewer | None:
    """``who``'s reviewer row if he may administer (a lead or maintainer); None while no lead or
    maintainer is registered (bootstrap: anyone may). Raises ActorRefused otherwise (audited
    ``grant_refused`` once the caller's transaction ends)."""
    admins = session.exec(select(Reviewer).where(Reviewer.role.in_(ADMIN_ROLES))).all()
    if not admins:
        return None  # bootstrap: nobody administers yet, so anyone may add the first lead or maintainer
    me = session.get(Reviewer, who)
    if me is None or me.role not in ADMIN_ROLES:
        audit_when_done(session, "grant_refused", who, None, operation=what,
                        reason="not a lead or maintainer")  # issue 21: every refused grant is audited
        raise ActorRefused(f"{what} needs a lead or maintainer of this store; {who!r} is "
                           + (f"a {me.role}" if me else "not a reviewer") + " (see memtui reviewers list)")
    return me


def _within(scope: str, granter_scopes) -> bool:
    """Whether ``scope`` lies within one of ``granter_scopes`` (``*`` covers every scope)."""
    s = parse_scope(scope)
    return any(in_scope(s.tenant, s.repository, s.module, parse_scope(g)) for g in granter_scopes or ())


def _grant_problem(me: Reviewer, role: str, scopes) -> str | None:
    """Why ``me`` may not grant ``role`` with ``scopes`` (issue 21 item 8; module docstring), or None."""
    if role not in GRANTABLE.get(me.role, ()):
        may = ", ".join(GRANTABLE.get(me.role, ())) or "nothing"
        return f"a {me.role} may not grant the role {role} (a {me.role} grants: {may})"
    outside = [s for s in scopes if not _within(s, me.scopes)]
    if outside:
        return (f"the scope {', '.join(outside)} lies outside the scopes of {me.name!r} "
                f"({', '.join(me.scopes or ())})")
    return None


def _check_grant(session: Session, me: Reviewer | None, what: str, subject: str,
                 grants: list[tuple[str, list[str]]]) -> None:
    """Refuse (ActorRefused, audited ``grant_refused`` once the transaction ends) ``what`` unless
    ``me`` may grant each (role, scopes) of ``grants``; ``me`` None (bootstrap) may."""
    if me is None:
        return
    for role, scopes in grants:
        if problem := _grant_problem(me, role, scopes):
            audit_when_done(session, "grant_refused", me.name, subject, operation=what, role=role,
                            scopes=list(scopes), reason=problem)
            raise ActorRefused(f"{what}: refused, {problem} (issue 21: a grant is bounded by the "
                               "granter's own role and scopes)")


def add_reviewer(engine: Engine, name: str, role: str, scopes: list[str] | tuple[str, ...], by: str) -> ReviewerView:
    """Register ``name`` with ``role`` and ``scopes`` (default ``*``), or replace an existing
    reviewer's role and scopes; ``by`` is the acting identity. Audited ``reviewer_added``.
    Raises ReviewerUsageError (bad role, scope or name) or ActorRefused (``by`` may not administer,
    or may not grant this role or these scopes, or may not change this reviewer: :data:`GRANTABLE`)."""
    name = _clean_name(name)
    if role not in ROLES:
        raise ReviewerUsageError(f"--role must be one of {', '.join(ROLES)}, not {role!r}")
    clean = _parse_scopes(scopes)
    with Session(engine) as session, session.begin():
        what = f"making {name!r} a {role}"
        me = check_admin(session, by, f"adding reviewer {name!r}")
        row = session.get(Reviewer, name)
        _check_grant(session, me, what, name,
                     [(role, clean)] + ([(row.role, list(row.scopes or ()))] if row is not None else []))
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
    """Remove a reviewer and the delegations naming it; audited ``reviewer_removed``. Refused
    (ActorRefused) when ``by`` may not administer or could not have granted the reviewer's role and
    scopes, the name is unknown, or it is the last lead/maintainer while others remain."""
    with Session(engine) as session, session.begin():
        me = check_admin(session, by, f"removing reviewer {name!r}")
        row = session.get(Reviewer, name)
        if row is None:
            raise ActorRefused(f"{name!r} is not a reviewer of this store (see memtui reviewers list)")
        _check_grant(session, me, f"removing {name!r} (a {row.role})", name, [(row.role, list(row.scopes or ()))])
        _refuse_last_admin(session, row)
        view = _view(row)
        session.delete(row)
        for d in session.exec(select(ReviewerDelegation).where(
                sa.or_(ReviewerDelegation.delegate == name, ReviewerDelegation.principal == name))):
            session.delete(d)
        audit(session, "reviewer_removed", by, name, role=row.role, scopes=list(row.scopes))
        return view


def list_reviewers(engine: Engine) -> list[ReviewerView]:
    """All reviewers, by name."""
    with Session(engine) as session:
        return [_view(r) for r in session.exec(select(Reviewer).order_by(Reviewer.name))]


# ---- delegation (issue 21 item 5) ----------------------------------------------------------------

@dataclass(frozen=True)
class DelegationView:
    """``delegate`` may act as ``principal`` (``--actor principal``)."""

    delegate: str
    principal: str
    granted_by: str
    granted_at: datetime


def _delegation_view(d: ReviewerDelegation) -> DelegationView:
    return DelegationView(d.delegate, d.principal, d.granted_by, d.granted_at)


def _delegation_rights(session: Session, delegate: str, principal: str, by: str, what: str) -> None:
    """Refuse ``what`` (ActorRefused) unless ``by`` is a lead who could have granted ``principal``'s
    role and scopes, and both names are distinct reviewers."""
    me = session.get(Reviewer, by)
    if me is None or me.role != "lead":
        audit_when_done(session, "grant_refused", by, f"{delegate} -> {principal}", operation=what,
                        reason="not a lead")
        raise ActorRefused(f"{what} needs a lead of this store; {by!r} is "
                           + (f"a {me.role}" if me else "not a reviewer") + " (see memtui reviewers list)")
    for who in (delegate, principal):
        if session.get(Reviewer, who) is None:
            raise ActorRefused(f"{what}: {who!r} is not a reviewer of this store (see memtui reviewers list)")
    if delegate == principal:
        raise ReviewerUsageError(f"{what}: a reviewer always acts as himself")
    target = session.get(Reviewer, principal)
    _check_grant(session, me, what, principal, [(target.role, list(target.scopes or ()))])


def grant_delegation(engine: Engine, delegate: str, principal: str, by: str) -> DelegationView:
    """Let reviewer ``delegate`` act as reviewer ``principal``; ``by`` a lead whose own role and scopes
    cover ``principal``'s. Audited ``delegation_granted``. Raises ActorRefused or ReviewerUsageError."""
    delegate, principal = _clean_name(delegate), _clean_name(principal)
    what = f"letting {delegate!r} act for {principal!r}"
    with Session(engine) as session, session.begin():
        _delegation_rights(session, delegate, principal, by, what)
        row = session.get(ReviewerDelegation, (delegate, principal))
        if row is None:
            row = ReviewerDelegation(delegate=delegate, principal=principal, granted_by=by, granted_at=utcnow())
            session.add(row)
            audit(session, "delegation_granted", by, principal, delegate=delegate, principal=principal)
        session.flush()
        return _delegation_view(row)


def revoke_delegation(engine: Engine, delegate: str, principal: str, by: str) -> DelegationView:
    """Withdraw a delegation (the same rights as granting it); audited ``delegation_revoked``.
    Raises ActorRefused (``by`` may not, or no such delegation) or ReviewerUsageError."""
    what = f"withdrawing {delegate!r}'s acting for {principal!r}"
    with Session(engine) as session, session.begin():
        row = session.get(ReviewerDelegation, (delegate, principal))
        if row is None:
            raise ActorRefused(f"{what}: {delegate!r} does not act for {principal!r} (see memtui reviewers list)")
        _delegation_rights(session, delegate, principal, by, what)
        view = _delegation_view(row)
        session.delete(row)
        audit(session, "delegation_revoked", by, principal, delegate=delegate, principal=principal)
        return view


def list_delegations(engine: Engine) -> list[DelegationView]:
    """All delegations, by delegate then principal."""
    with Session(engine) as session:
        return [_delegation_view(d) for d in session.exec(
            select(ReviewerDelegation).order_by(ReviewerDelegation.delegate, ReviewerDelegation.principal))]


# ---- who acts (issue 21 item 5) ------------------------------------------------------------------

@dataclass(frozen=True)
class ConnectionIdentity:
    """Who a store connection is: ``name`` the reviewer it stands for; ``source`` says how it was
    found (``the login name``, ``PostgreSQL role 'ann'``, ...), for refusals and audit rows."""

    name: str
    source: str


def login_name() -> str:
    """The login name (:func:`getpass.getuser`: LOGNAME, USER, LNAME, USERNAME, then the password
    database); ``unknown`` where there is none (some containers)."""
    try:
        return getpass.getuser()
    except Exception:
        return "unknown"


_PG_IDENTITY = sa.text(
    "SELECT current_user, "
    "COALESCE((SELECT rolsuper FROM pg_roles WHERE rolname = current_user), false) OR "
    "COALESCE(pg_has_role(current_user, (SELECT tableowner FROM pg_tables "
    "  WHERE tablename = 'reviewer' AND schemaname = current_schema()), 'MEMBER'), false)")


def connection_identity(engine: Engine) -> ConnectionIdentity:
    """The identity of a connection to the store (issue 21 item 5; README "Who acts").

    SQLite: the login name (whoever can write the file is trusted to be who he logs in as).
    PostgreSQL: ``current_user``, which must be the name of a reviewer (each reviewer connects with
    a role of their own). A superuser, or a role that owns the ``reviewer`` table (or is a member of
    its owner), falls back to the login name: such a connection can rewrite the reviewer table and
    every hash without memtui, so the store cannot hold it to a reviewer identity; it is the
    administrator's connection (migrations, bootstrap), trusted as SQLite's file owner is."""
    if engine.dialect.name != "postgresql":
        return ConnectionIdentity(login_name(), "the login name")
    with engine.connect() as conn:
        role, owner = conn.execute(_PG_IDENTITY).one()
    if owner:
        return ConnectionIdentity(login_name(), f"the login name (PostgreSQL role {role!r} owns the store)")
    return ConnectionIdentity(role, f"PostgreSQL role {role!r}")


def _refuse_declared_role(declared_role: str | None, role_source: str) -> None:
    if declared_role:
        raise RoleDeclared(f"{role_source} is not accepted in this store: roles come from "
                           "memtui reviewers (see memtui reviewers list)")


def acting_name(engine: Engine, claimed: str | None, *, claim_source: str = "--actor") -> str:
    """The name a command acts under (issue 21 item 5).

    Single-user store: ``claimed`` or the login name (the single user holds every role; any name).
    Store with reviewers: the connection's identity (:func:`connection_identity`); ``claimed`` may
    name only that identity or a reviewer it acts for by a delegation row. Anything else raises
    ActorRefused (exit 1) after auditing ``actor_refused`` (actor: the connection's identity;
    subject and ``claimed``: the name claimed; ``via``: ``claim_source``)."""
    with Session(engine) as session:
        governed = is_governed(session)
    if not governed:
        return claimed or login_name()
    ident = connection_identity(engine)
    if claimed is None or claimed == ident.name:
        return ident.name
    with Session(engine) as session:
        delegated = (session.get(Reviewer, ident.name) is not None
                     and session.get(ReviewerDelegation, (ident.name, claimed)) is not None)
    if delegated:
        return claimed
    audit_apart(engine, "actor_refused", ident.name, claimed, claimed=claimed, via=claim_source,
                connection=ident.source)
    raise ActorRefused(f"{claim_source} {claimed!r} refused: this connection is {ident.name!r} ({ident.source}), "
                       f"which does not act for {claimed!r} (issue 21: who acts is the connection's identity; "
                       "a lead may grant memtui reviewers delegate)")


def resolve_connection_actor(engine: Engine, claimed: str | None, declared_role: str | None, *,
                             role_source: str = "--role", claim_source: str = "--actor") -> Actor:
    """The acting human of a CLI or TUI session: :func:`acting_name` resolved by :func:`resolve_actor`.
    A declared role in a store with reviewers raises RoleDeclared (exit 2) before the identity is checked."""
    with Session(engine) as session:
        governed = is_governed(session)
    if governed:
        _refuse_declared_role(declared_role, role_source)
    return resolve_actor(engine, acting_name(engine, claimed, claim_source=claim_source), declared_role,
                         role_source=role_source)


def resolve_actor(engine: Engine, name: str, declared_role: str | None, *,
                  role_source: str = "--role") -> Actor:
    """The human actor ``name`` as this store knows it (``name`` already established: a token's
    reviewer, or :func:`acting_name`).

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
    _refuse_declared_role(declared_role, role_source)
    if row is None:
        audit_apart(engine, "unknown_actor", name, None)
        raise ActorRefused(f"{name} is not a reviewer of this store (see memtui reviewers list)")
    if not _row_as_sealed(engine, row.name):
        audit_apart(engine, "unsealed_reviewer", name, None)
        raise ActorRefused(f"the reviewer row of {name!r} is not what the store chain sealed (written outside "
                           "memtui?): it grants nothing until a lead or maintainer reviews `memtui check` and "
                           "reseals (issue 21 item 6)")
    return Actor(type="human", id=row.name, role=row.role, scopes=tuple(row.scopes or ()))


def _row_as_sealed(engine: Engine, name: str) -> bool:
    """Whether reviewer ``name``'s row is the one the store chain last sealed (issue 21 item 6): a row
    inserted or changed by SQL grants no role. Without a store chain (before migration 0011): True."""
    from memtui.governance.integrity import current_digests, last_sealed

    with engine.connect() as conn:
        try:
            sealed = last_sealed(conn, "reviewer", [name])
        except Exception:  # no chain table in this store
            return True
        return name in sealed and sealed[name] == current_digests(conn, "reviewer", [name]).get(name)


def require_role(engine: Engine, actor: Actor, roles: tuple[str, ...], what: str) -> None:
    """Refuse (ActorRefused, audited ``role_refused``) a governed actor without one of ``roles``
    for ``what`` (e.g. maintenance, policy apply, prune, set-visibility); unrestricted actors pass."""
    if actor.scopes is None or actor.role in roles:
        return
    audit_apart(engine, "role_refused", actor.id, None, operation=what, role=actor.role)
    raise ActorRefused(f"{what} needs the role {' or '.join(roles)}; {actor.id!r} is a {actor.role}")


def require_whole_store(engine: Engine, actor: Actor, what: str) -> None:
    """Refuse (ActorRefused, audited ``scope_refused``) ``what`` to an actor who does not see the whole
    store: the maintenance reports cover all of it (``memtui report`` and ``GET /reports/{name}``
    alike; issue 21 item 7). Unrestricted actors and ``*`` scopes pass."""
    from memtui.governance.visibility import memory_clause

    with Session(engine) as session:
        partial = memory_clause(session, actor) is not None
    if partial:
        audit_apart(engine, "scope_refused", actor.id, None, operation=what, scopes=list(actor.scopes or ()))
        raise ActorRefused(f"{what}: reports cover the whole store; {actor.id!r} sees only "
                           f"{', '.join(actor.scopes or ()) or 'nothing'}")


def note_scope_refusal(session: Session, exc, actor: Actor) -> None:
    """Audit a :class:`memtui.domain.invariants.ScopeRefused` once the caller's transaction ends."""
    audit_when_done(session, "scope_refused", actor.id, exc.memory_id,
                    scopes=list(exc.scopes), memoryScope=exc.where)
