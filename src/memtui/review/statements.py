"""The statements of many memories for display, in one query (issue 24, Build 1: lists show what a memory
says beside a short id). Statements are shown as everywhere: secrets redacted, a blocked memory without
secret findings withheld (:func:`memtui.safety.guard.shown_text`)."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from memtui.safety.guard import WITHHELD, redact_for_display
from memtui.store.models import Memory, SecretFinding

#: ids per ``IN (...)`` (SQLite allows 32766 parameters; PostgreSQL many more)
_CHUNK = 900


def shown_statements(engine: Engine, memory_ids: Iterable[str]) -> dict[str, str]:
    """memory id -> its statement as it may be shown, for those of ``memory_ids`` that exist (a purged or
    unknown id is left out). One query per 900 ids, plus one for blocked memories."""
    wanted = sorted(set(memory_ids))
    out: dict[str, str] = {}
    blocked: list[str] = []
    with Session(engine) as session:
        for i in range(0, len(wanted), _CHUNK):
            chunk = wanted[i:i + _CHUNK]
            for mid, statement, state in session.exec(
                    select(Memory.memory_id, Memory.statement, Memory.state).where(Memory.memory_id.in_(chunk))):
                out[mid] = redact_for_display(statement) or ""
                if state == "blocked":
                    blocked.append(mid)
        if blocked:
            found = set(session.exec(select(SecretFinding.memory_id).where(SecretFinding.memory_id.in_(blocked))))
            out.update({mid: WITHHELD for mid in blocked if mid not in found})
    return out


def find_memories(engine: Engine, viewer, part: str, limit: int = 10) -> list[tuple[str, str]]:
    """Up to ``limit`` (id, statement as shown) of memories ``viewer`` may see whose id or statement holds
    ``part`` (case-insensitive): ids starting with it first, then ids holding it, then statements holding
    it (not a blocked memory's), each in id order (the palette's and the jump dialog's finder, issue 24)."""
    from sqlalchemy import and_, case, or_

    from memtui.governance.visibility import restrict

    part = part.strip()
    if not part:
        return []
    with Session(engine) as session:
        rank = case((Memory.memory_id.istartswith(part, autoescape=True), 0),
                    (Memory.memory_id.icontains(part, autoescape=True), 1), else_=2)
        said = and_(Memory.statement.icontains(part, autoescape=True), Memory.state != "blocked")  # never a
        # blocked memory by its (withheld) words
        q = restrict(select(Memory.memory_id).where(or_(Memory.memory_id.icontains(part, autoescape=True), said)),
                     session, viewer)
        ids = list(session.exec(q.order_by(rank, Memory.memory_id).limit(limit)))
    said = shown_statements(engine, ids)
    return [(mid, said.get(mid, "")) for mid in ids]
