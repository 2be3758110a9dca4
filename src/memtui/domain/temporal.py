"""Which of two conflicting facts about one slot is the newer one (issue 10, item 5). Pure.

A store fed by an agent's log holds dated facts ("drinks tea" in January, "drinks coffee now" in
May; "uses Postgres", later "moved to CockroachDB"). When two such facts conflict, the proposed
resolution is "newer supersedes older": shown first and decided by a reviewer, never applied alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

#: Two memories recorded closer together than this carry no usable order (one import, one session).
NEWER_GAP = timedelta(hours=1)


@dataclass(frozen=True)
class Dated:
    """When a fact was recorded: ``created_at``, and for observations of one source (an MCP entity,
    ``source``) their position ``order`` in its list (1 = oldest; 0 = unknown)."""

    memory_id: str
    created_at: datetime | None
    source: str | None = None
    order: int = 0
    type: str | None = None
    high_impact: bool = False
    confidence: float = 0.0


def observation_order(tags: list[str] | tuple[str, ...] | None) -> int:
    """The ``observation:K`` tag an MCP-graph import gives each observation (K from 1, oldest first), else 0."""
    for t in tags or ():
        if t.startswith("observation:") and t[12:].isdigit():
            return int(t[12:])
    return 0


def newer(a: Dated, b: Dated) -> str | None:
    """The id of the newer of two facts, or None when their order is unknown or it would not settle
    them: the later position among one source's observations, else the later ``created_at`` when they
    lie at least NEWER_GAP apart. Only facts of one type count (a newer convention does not overrule an
    architecture decision), never over a high-impact older fact (a lead decides those), and never for a
    newer fact held with less confidence than the older (a doubtful claim does not replace a trusted one)."""
    if a.type != b.type:
        return None
    winner = None
    if a.source and a.source == b.source and a.order and b.order and a.order != b.order:
        winner = a if a.order > b.order else b
    elif a.created_at and b.created_at and abs(a.created_at - b.created_at) >= NEWER_GAP:
        winner = a if a.created_at > b.created_at else b
    loser = b if winner is a else a
    if winner is None or loser.high_impact or winner.confidence < loser.confidence:
        return None
    return winner.memory_id
