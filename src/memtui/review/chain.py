"""Sealing the history chain as it is written (issue 9, item 4; hashes in :mod:`memtui.domain.integrity`).

The lifecycle writers (:func:`memtui.review.lifecycle.transition`, ``create_memory``,
``record_note``) call :func:`watch` on the session they add an event to. From then on, at every
flush of that session, each new event gets ``prev_hash`` (the last stored event of its memory) and
``event_hash``, and its memory gets the ``content_hash`` of its content tied to the new head. A
memory whose statement or scope changes later in the same transaction is resealed at the next
flush: the event written in that transaction describes the whole change. A memory changed in a
transaction that wrote no event for it is NOT resealed, so ``memtui check`` finds the change.

Above these per-memory chains, the store chain (issue 21 item 6) seals every memory with its evidence,
and every reviewer, delegation and token, at each commit of any session:
:mod:`memtui.governance.integrity` (imported here so its listeners are in place wherever memory is written).
"""

from __future__ import annotations

from typing import Iterable

import sqlalchemy as sa
from sqlalchemy import event as sa_event
from sqlmodel import Session

from memtui.domain.integrity import CONTENT_FIELDS, content_hash, event_hash
from memtui.governance.integrity import note  # noqa: F401  (the store chain's writer, issue 21 item 6)
from memtui.store.models import Memory, StateHistory

_WATCHED = "memtui.chain.watched"
_TOUCHED = "memtui.chain.touched"  # memory ids that got an event in the open transaction
_EVENT_COLS = [c.name for c in StateHistory.__table__.columns]


def as_mapping(row) -> dict:
    """The column values of a Memory or StateHistory row as a dict (what the domain hashes read)."""
    return {c.name: getattr(row, c.name) for c in row.__table__.columns}


def seal_memory(memory: Memory, head_hash: str | None) -> None:
    """Set ``memory.content_hash`` for its current content and chain head (only when it differs,
    so an unchanged memory is not rewritten and its version does not move)."""
    h = content_hash(as_mapping(memory), head_hash)
    if memory.content_hash != h:
        memory.content_hash = h


def seal_first_event(memory: Memory, event: StateHistory) -> None:
    """Seal the creating event of a memory and the memory itself before the memory is first inserted."""
    event.prev_hash = ""
    event.event_hash = event_hash("", as_mapping(event))
    seal_memory(memory, event.event_hash)


def seal_first_rows(memory: dict, event: dict) -> None:
    """:func:`seal_first_event` for column dicts (rows written with SQLAlchemy core, not the session)."""
    event["prev_hash"] = ""
    event["event_hash"] = event_hash("", event)
    memory["content_hash"] = content_hash(memory, event["event_hash"])


def heads(connection, memory_ids: Iterable[str]) -> dict[str, tuple[str, str | None]]:
    """The last stored event of each memory: memory id -> (event id, event hash)."""
    t = StateHistory.__table__
    ids = sorted(set(memory_ids))
    out: dict[str, tuple[str, str | None]] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        last = (sa.select(t.c.memory_id, sa.func.max(t.c.event_id).label("eid"))
                .where(t.c.memory_id.in_(chunk)).group_by(t.c.memory_id).subquery())
        for mid, eid, h in connection.execute(
                sa.select(t.c.memory_id, t.c.event_id, t.c.event_hash)
                .join(last, sa.and_(t.c.memory_id == last.c.memory_id, t.c.event_id == last.c.eid))):
            out[mid] = (eid, h)
    return out


def _memory(session: Session, memory_id: str) -> Memory | None:
    key = session.identity_key(Memory, memory_id)
    obj = session.identity_map.get(key)
    if obj is None:
        with session.no_autoflush:
            obj = session.get(Memory, memory_id)
    return obj


def _content_changed(memory: Memory) -> bool:
    insp = sa.inspect(memory)
    return any(insp.attrs[f].history.has_changes() for f in CONTENT_FIELDS if f in insp.attrs)


def _before_flush(session: Session, _ctx, _instances) -> None:
    touched: set[str] = session.info.setdefault(_TOUCHED, set())
    new_events = sorted((o for o in session.new if isinstance(o, StateHistory)), key=lambda e: e.event_id)
    changed_events = [o for o in session.dirty if isinstance(o, StateHistory) and session.is_modified(o)]
    changed_memories = [o for o in session.dirty if isinstance(o, Memory) and o.memory_id in touched
                        and _content_changed(o)]
    if not (new_events or changed_events or changed_memories):
        return
    ids = {e.memory_id for e in new_events if e.from_state is not None}
    ids |= {e.memory_id for e in changed_events} | {m.memory_id for m in changed_memories}
    head = heads(session.connection(), ids) if ids else {}
    head_hash = {mid: h for mid, (_eid, h) in head.items()}
    # an event changed after it was flushed (a reason completed later in its transaction): rehash it
    for e in changed_events:
        stored = head.get(e.memory_id)
        e.event_hash = event_hash(e.prev_hash, as_mapping(e))
        if stored and stored[0] == e.event_id:
            head_hash[e.memory_id] = e.event_hash
    for e in new_events:
        if e.from_state is None:
            prev = ""
        else:
            prev = head_hash.get(e.memory_id, "")
        e.prev_hash = prev
        e.event_hash = event_hash(prev, as_mapping(e))
        head_hash[e.memory_id] = e.event_hash
    sealed = {e.memory_id for e in new_events} | {e.memory_id for e in changed_events} | \
        {m.memory_id for m in changed_memories}
    for mid in sealed:
        memory = _memory(session, mid)
        if memory is not None:
            seal_memory(memory, head_hash.get(mid))
    touched.update(e.memory_id for e in new_events)


def _forget(session: Session, *_args) -> None:
    session.info.pop(_TOUCHED, None)


def watch(session: Session) -> None:
    """Seal the events this session writes at each of its flushes (idempotent; one call per writer)."""
    if session.info.get(_WATCHED):
        return
    session.info[_WATCHED] = True
    sa_event.listen(session, "before_flush", _before_flush)
    sa_event.listen(session, "after_commit", _forget)
    sa_event.listen(session, "after_rollback", _forget)

