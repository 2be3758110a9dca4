"""Bearer tokens of the HTTP API, per reviewer and per agent (issue 12; DESIGN.md "Identity").

A token is ``mtk_`` + :func:`secrets.token_urlsafe` (32 bytes); the store keeps only its sha256
(:class:`memtui.store.models.ApiToken`), so the secret is shown once, by :func:`create_token`.

- A **reviewer** token acts as the reviewer ``name``: its role and scopes are resolved through the
  reviewer table at every request (:func:`memtui.governance.reviewers.resolve_actor`; in a
  single-user store the holder holds every role, as on the CLI). A governed store issues reviewer
  tokens only to registered reviewers; a token whose reviewer was removed no longer authenticates.
- An **agent** token is an agent actor (``Actor(type="agent")``): it recalls (never a ``private``
  repository's memory, :mod:`memtui.governance.visibility`) and reports usage; it never decides
  (:func:`refuse_agent`, audited ``role_refused``).

Creating and revoking tokens follows the rule of ``memtui reviewers add``
(:func:`memtui.governance.reviewers.check_admin`: a lead or maintainer once one exists) and is
audited (``token_created``, ``token_revoked``; never the secret or its hash). Using a revoked or
expired token is audited ``token_refused``.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, or_, select

from memtui.clock import iso, new_event_id, utcnow
from memtui.domain.invariants import Actor
from memtui.governance.audit import audit
from memtui.governance.reviewers import (ActorRefused, GovernanceError, ReviewerUsageError, _clean_name,
                                         audit_apart, check_admin, is_governed, resolve_actor)
from memtui.store.engine import is_lock_conflict, read_only_reason
from memtui.store.models import ApiToken, Reviewer

KINDS = ("reviewer", "agent")
SECRET_PREFIX = "mtk_"
#: ``last_used_at`` is written at most this often per token (a read must not become a write each time).
LAST_USED_EVERY = timedelta(seconds=60)


class TokenRefused(GovernanceError):
    """A bearer token that does not authenticate: unknown, revoked, expired, or its reviewer is gone
    (the HTTP API answers 401). ``reason``: ``unknown``, ``revoked``, ``expired``, ``no_reviewer``."""

    def __init__(self, reason: str, message: str):
        self.reason = reason
        super().__init__(message)


@dataclass(frozen=True)
class TokenView:
    """One token as listed (never its secret nor its hash)."""

    token_id: str
    name: str
    kind: str
    created_by: str
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    revoked_by: str | None
    last_used_at: datetime | None

    def status(self, now: datetime) -> str:
        """``active``, ``revoked`` or ``expired`` at ``now``."""
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= now:
            return "expired"
        return "active"

    def to_json(self, now: datetime) -> dict:
        """camelCase keys, times ISO-8601."""
        return {"tokenId": self.token_id, "name": self.name, "kind": self.kind, "status": self.status(now),
                "createdBy": self.created_by, "createdAt": iso(self.created_at), "expiresAt": iso(self.expires_at),
                "revokedAt": iso(self.revoked_at), "revokedBy": self.revoked_by,
                "lastUsedAt": iso(self.last_used_at)}


def _view(t: ApiToken) -> TokenView:
    return TokenView(t.token_id, t.name, t.kind, t.created_by, t.created_at, t.expires_at, t.revoked_at,
                     t.revoked_by, t.last_used_at)


def hash_secret(secret: str) -> str:
    """The sha256 (hex) the store keeps of a token's secret."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def create_token(engine: Engine, name: str, kind: str, by: str, *,
                 expires_days: float | None = None) -> tuple[TokenView, str]:
    """Issue a token for reviewer or agent ``name``; ``by`` is the acting login. Returns the token and
    its secret (shown once; only the hash is stored). One transaction, audited ``token_created``.

    Raises ReviewerUsageError (bad kind, name or expiry; a reviewer token for someone who is not a
    reviewer of a governed store) or ActorRefused (``by`` may not administer this store)."""
    name = _clean_name(name)
    if kind not in KINDS:
        raise ReviewerUsageError(f"token kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if expires_days is not None and not expires_days > 0:
        raise ReviewerUsageError(f"--expires must be a positive number of days, not {expires_days}")
    secret = SECRET_PREFIX + secrets.token_urlsafe(32)
    now = utcnow()
    with Session(engine) as session, session.begin():
        check_admin(session, by, f"creating a token for {name!r}")
        if kind == "reviewer" and is_governed(session) and session.get(Reviewer, name) is None:
            raise ReviewerUsageError(f"{name!r} is not a reviewer of this store: add it first "
                                     "(memtui reviewers add), or create an agent token with --agent")
        row = ApiToken(token_id=new_event_id("tok"), name=name, kind=kind, token_hash=hash_secret(secret),
                       created_by=by, created_at=now,
                       expires_at=now + timedelta(days=expires_days) if expires_days is not None else None)
        session.add(row)
        audit(session, "token_created", by, name, tokenId=row.token_id, tokenKind=kind, expiresAt=iso(row.expires_at))
        session.flush()
        return _view(row), secret


def list_tokens(engine: Engine) -> list[TokenView]:
    """Every token, by name then creation."""
    with Session(engine) as session:
        return [_view(t) for t in session.exec(select(ApiToken).order_by(ApiToken.name, ApiToken.token_id))]


def revoke_token(engine: Engine, name_or_id: str, by: str) -> list[TokenView]:
    """Revoke the token with this id, or every unrevoked token of this name; returns them. One
    transaction, audited ``token_revoked`` per token. Raises ActorRefused (``by`` may not administer)
    or ReviewerUsageError (no such unrevoked token)."""
    now = utcnow()
    with Session(engine) as session, session.begin():
        check_admin(session, by, f"revoking token {name_or_id!r}")
        rows = list(session.exec(select(ApiToken).where(
            or_(ApiToken.token_id == name_or_id, ApiToken.name == name_or_id), ApiToken.revoked_at.is_(None))
            .order_by(ApiToken.token_id)))
        if not rows:
            raise ReviewerUsageError(f"no unrevoked token named {name_or_id!r} or with that id "
                                     "(see memtui tokens list)")
        for row in rows:
            row.revoked_at, row.revoked_by = now, by
            session.add(row)
            audit(session, "token_revoked", by, row.name, tokenId=row.token_id, tokenKind=row.kind)
        session.flush()
        return [_view(r) for r in rows]


def authenticate(engine: Engine, secret: str | None) -> Actor:
    """The actor a bearer secret stands for. Raises :class:`TokenRefused` (unknown, revoked, expired,
    the reviewer removed). Notes ``last_used_at`` at most every :data:`LAST_USED_EVERY`."""
    if not secret:
        raise TokenRefused("missing", "a bearer token is required (Authorization: Bearer TOKEN; memtui tokens create)")
    digest = hash_secret(secret)
    now = utcnow()
    with Session(engine) as session:
        row = session.exec(select(ApiToken).where(ApiToken.token_hash == digest)).first()
        token = _view(row) if row is not None else None
    if token is None:
        raise TokenRefused("unknown", "the bearer token is not known to this store")
    status = token.status(now)
    if status != "active":
        audit_apart(engine, "token_refused", token.name, token.name, tokenId=token.token_id, reason=status)
        when = iso(token.revoked_at if status == "revoked" else token.expires_at)
        raise TokenRefused(status, f"the bearer token {token.token_id} was {status} at {when}")
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_EVERY:
        _note_use(engine, token.token_id, now)
    if token.kind == "agent":
        return Actor(type="agent", id=token.name, role="agent")
    try:
        return resolve_actor(engine, token.name, None)
    except ActorRefused as exc:
        raise TokenRefused("no_reviewer", f"the bearer token {token.token_id} belongs to {token.name!r}, "
                                          "who is no longer a reviewer of this store") from exc


def _note_use(engine: Engine, token_id: str, now: datetime) -> None:
    """Write ``last_used_at``; a lost SQLite write lock skips it (it is a hint, not a record), and a
    read-only store keeps none (issue 21 item 7)."""
    if read_only_reason(engine) is not None:
        return
    try:
        with engine.begin() as conn:
            conn.execute(sa.update(ApiToken.__table__).where(ApiToken.__table__.c.token_id == token_id)
                         .values(last_used_at=now))
    except sa.exc.OperationalError as exc:
        if not is_lock_conflict(exc):
            raise


def refuse_agent(engine: Engine, actor: Actor, what: str) -> None:
    """Refuse (ActorRefused, audited ``role_refused``) an agent actor ``what`` (a decision): agents
    recall, report usage and propose, never decide (DESIGN.md "Identity")."""
    if actor.type != "agent":
        return
    audit_apart(engine, "role_refused", actor.id, None, operation=what, role="agent")
    raise ActorRefused(f"{what}: agent token of {actor.id!r}: agents recall and report usage, they never decide")
