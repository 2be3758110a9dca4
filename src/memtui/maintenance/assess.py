"""Quality scores and retrieval eligibility for every memory (seed 000 §15, §17), read-only."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy.engine import Engine
from sqlmodel import Session, func, select

from memtui.domain.quality import Eligibility, Quality, QualityInput, eligibility, quality
from memtui.store.models import Evidence, HarmEvent, Memory, UsageEvent


@dataclass(frozen=True)
class Assessment:
    """A memory's quality and its default-recall eligibility."""

    memory_id: str
    repository_id: str | None
    state: str
    quality: Quality
    eligibility: Eligibility


def quality_inputs(session: Session, repository_id: str | None = None) -> list[QualityInput]:
    """Build QualityInput for every memory (optionally of one repository), sorted by id; 4 queries in all."""
    q = select(Memory)
    if repository_id is not None:
        q = q.where(Memory.repository_id == repository_id)
    memories = list(session.exec(q.order_by(Memory.memory_id)))
    ev: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for mid, typ, status in session.exec(select(Evidence.memory_id, Evidence.type, Evidence.status)
                                         .order_by(Evidence.memory_id, Evidence.ordinal)):
        ev[mid].append((typ, status))
    usage: dict[str, dict[str, int]] = defaultdict(dict)
    for mid, outcome, n in session.exec(select(UsageEvent.memory_id, UsageEvent.outcome, func.count())
                                        .group_by(UsageEvent.memory_id, UsageEvent.outcome)):
        usage[mid][outcome] = n
    harm = dict(session.exec(select(HarmEvent.memory_id, func.count()).group_by(HarmEvent.memory_id)).all())
    return [
        QualityInput(m.memory_id, m.statement, m.state, m.confidence, m.review_state, m.conflict_state,
                     m.repository_id, m.module_path, tuple(ev.get(m.memory_id, ())),
                     usage[m.memory_id].get("positive", 0), usage[m.memory_id].get("negative", 0),
                     harm.get(m.memory_id, 0), m.state == "blocked")
        for m in memories
    ]


def assess(engine: Engine, repository_id: str | None = None) -> list[Assessment]:
    """Quality and eligibility (for the memory's own repository scope) of every memory, by id."""
    with Session(engine) as session:
        inputs = quality_inputs(session, repository_id)
    return [Assessment(q.memory_id, q.repository_id, q.state, quality(q),
                       eligibility(q, scope_repository=q.repository_id)) for q in inputs]
