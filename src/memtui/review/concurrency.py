"""Decisions against the state the reviewer saw, and review claims (issue 9, item 3).

A decision or edit that carries the version the reviewer was shown is refused with "ID changed by
ACTOR at TIME: look again" (:func:`changed_by`) when the memory changed meanwhile: found by the
version check before anything is written, by the optimistic ``UPDATE … WHERE version = N`` that
matches no row (StaleDataError), or, on SQLite, by retrying after another process took the write
lock first (:func:`retry_when_outraced`).

Claims: two reviewers working one queue never get the same item, and a claim is enforced (issue 21,
Build item 5): a memory someone holds an unexpired claim on is decided (any change of state through
:func:`memtui.review.lifecycle.transition`) only by its claimer, or by a lead, who breaks the claim
(:func:`check_claim`; audited ``claim_broken``). An expired claim binds no one.

:func:`claim_next` picks the next queue items without an unexpired claim and claims them for the
reviewer until ``now + ttl``. On PostgreSQL the pick is ``SELECT … FOR UPDATE SKIP LOCKED`` over
the memory rows, so a concurrent claimer skips the rows being claimed; the claim row itself is
written with an upsert that only replaces an *expired* claim, so an item whose claim was committed
by someone else meanwhile is never taken over. On SQLite the one-writer transaction gives the same
guarantee (a claimer that lost the write lock retries from a fresh read).
"""

from __future__ import annotations

import functools
import time
from datetime import timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.orm.exc import StaleDataError
from sqlmodel import Session, select

from memtui.clock import iso, utcnow
from memtui.domain.decisions import DecisionError
from memtui.domain.states import QUEUE_STATES
from memtui.store.engine import is_lock_conflict  # noqa: F401  (re-exported: callers import it from here)
from memtui.store.models import Memory, ReviewClaim, StateHistory

_M = Memory.__table__
_C = ReviewClaim.__table__


def changed_by(session: Session, memory: Memory, expected_version: int | None = None) -> str:
    """"ID changed by ACTOR at TIME: look again", from the memory's last history event."""
    last = session.exec(select(StateHistory).where(StateHistory.memory_id == memory.memory_id)
                        .order_by(StateHistory.event_id.desc()).limit(1)).first()
    who = f"{last.actor_type}:{last.actor_id}" if last else "someone"
    when = iso(last.created_at) if last else "an unknown time"
    seen = f" (you saw version {expected_version}, it is now {memory.version})" if expected_version else ""
    return f"{memory.memory_id} changed by {who} at {when}: look again{seen}"


def changed_by_now(engine: Engine, memory_id: str, expected_version: int | None = None) -> str:
    """:func:`changed_by` read in a fresh session (after the losing transaction rolled back)."""
    with Session(engine) as session:
        memory = session.get(Memory, memory_id)
        if memory is None:
            return f"{memory_id} was removed meanwhile: look again"
        return changed_by(session, memory, expected_version)


def retry_when_outraced(method):
    """Decorate a one-transaction service method ``(self, memory_id, …, expected_version=None)``: a
    lost SQLite write lock runs it again from a fresh read (which then sees the other write); a lost
    optimistic UPDATE (StaleDataError) becomes a VersionChanged "changed by ACTOR at TIME"."""

    @functools.wraps(method)
    def wrapper(self, memory_id, *args, **kwargs):
        from memtui.domain.decisions import VersionChanged

        for attempt in range(40):
            try:
                return method(self, memory_id, *args, **kwargs)
            except StaleDataError as exc:
                raise VersionChanged(changed_by_now(self.engine, memory_id, kwargs.get("expected_version"))) from exc
            except sa.exc.OperationalError as exc:
                if not is_lock_conflict(exc) or attempt == 39:
                    raise
                time.sleep(0.02 * (1 + attempt % 5))
        raise AssertionError("unreachable")  # pragma: no cover

    return wrapper


class ClaimHeld(DecisionError):
    """A human other than the claimer (and not a lead) tried to change a claimed memory (issue 21, item 5)."""


def check_claim(session: Session, memory_id: str, actor) -> None:
    """Refuse (:class:`ClaimHeld`) ``actor`` changing ``memory_id`` while another reviewer holds an
    unexpired claim on it; a lead breaks the claim instead: the claim row is removed and an audit event
    ``claim_broken`` (claimer, expiry) is added to the caller's transaction, so both stand or fall with
    the lead's change. An expired claim, or the actor's own, passes."""
    now = utcnow()
    row = session.connection().execute(sa.select(_C.c.claimed_by, _C.c.expires_at).where(
        _C.c.memory_id == memory_id, _C.c.expires_at > now)).first()
    if row is None or row.claimed_by == actor.id:
        return
    if actor.role != "lead":
        raise ClaimHeld(f"{memory_id} is claimed by {row.claimed_by} until {iso(row.expires_at)}: only they, "
                        f"or a lead who breaks the claim, may decide it until then ({actor.id!r} has role "
                        f"{actor.role!r})")
    from memtui.governance.audit import audit

    session.connection().execute(sa.delete(_C).where(_C.c.memory_id == memory_id))
    audit(session, "claim_broken", actor.id, memory_id, claimedBy=row.claimed_by, expiresAt=iso(row.expires_at))


def _upsert(dialect: str):
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert


def claim_next(engine: Engine, actor_id: str, n: int = 1, ttl_minutes: float = 30.0, viewer=None) -> list[str]:
    """Claim up to ``n`` queue items (queue order: needs_review, challenged, candidate, approved; then id)
    that nobody holds an unexpired claim on and ``viewer`` (an Actor; None: anyone) may see; returns
    their ids. Raises ValueError for n < 1 or ttl <= 0."""
    if n < 1:
        raise ValueError(f"n must be at least 1, not {n}")
    if ttl_minutes <= 0:
        raise ValueError(f"the claim's time to live must be positive, not {ttl_minutes}")
    for attempt in range(20):
        try:
            return _claim_once(engine, actor_id, n, ttl_minutes, viewer)
        except sa.exc.OperationalError as exc:
            if not is_lock_conflict(exc) or attempt == 19:
                raise
            time.sleep(0.05 * (attempt + 1))
    return []  # pragma: no cover


def _claim_once(engine: Engine, actor_id: str, n: int, ttl_minutes: float, viewer) -> list[str]:
    from memtui.governance.visibility import memory_clause

    now = utcnow()
    expires = now + timedelta(minutes=ttl_minutes)
    rank = sa.case({s.value: i for i, s in enumerate(QUEUE_STATES)}, value=_M.c.state)
    held = sa.exists().where(_C.c.memory_id == _M.c.memory_id, _C.c.expires_at > now)
    with Session(engine) as session, session.begin():
        conn = session.connection()
        dialect = conn.dialect.name
        q = (sa.select(_M.c.memory_id).where(_M.c.state.in_([s.value for s in QUEUE_STATES]), ~held)
             .order_by(rank, _M.c.memory_id).limit(n))
        visible = memory_clause(session, viewer)
        if visible is not None:  # only memory inside the reviewer's scopes (issue 9 item 2)
            q = q.where(visible)
        if dialect == "postgresql":
            q = q.with_for_update(skip_locked=True, of=_M)
        picked = [r[0] for r in conn.execute(q)]
        if not picked:
            return []
        insert = _upsert(dialect)
        stmt = insert(_C).values([{"memory_id": m, "claimed_by": actor_id, "claimed_at": now, "expires_at": expires}
                                  for m in picked])
        stmt = stmt.on_conflict_do_update(
            index_elements=[_C.c.memory_id],
            set_={"claimed_by": stmt.excluded.claimed_by, "claimed_at": stmt.excluded.claimed_at,
                  "expires_at": stmt.excluded.expires_at},
            where=_C.c.expires_at <= now)
        conn.execute(stmt)
        got = {r[0] for r in conn.execute(sa.select(_C.c.memory_id).where(
            _C.c.memory_id.in_(picked), _C.c.claimed_by == actor_id, _C.c.expires_at == expires))}
        return [m for m in picked if m in got]


def release(engine: Engine, actor_id: str, memory_ids: list[str] | None = None) -> int:
    """Give back ``actor_id``'s claims (all, or on ``memory_ids``); returns how many were released."""
    with Session(engine) as session, session.begin():
        q = sa.delete(_C).where(_C.c.claimed_by == actor_id)
        if memory_ids:
            q = q.where(_C.c.memory_id.in_(memory_ids))
        return session.connection().execute(q).rowcount
