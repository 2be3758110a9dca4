"""The dedupe job (issue 4; seed 000 §11): near-duplicate clusters within one scope and type.

Detection is :class:`memtui.maintenance.dedupe_index.DedupeIndex` (exact, fingerprint, TF-IDF and
WordLlama-embedding neighbours verified by the learned pair scorer of :mod:`memtui.similarity.scorer`,
no chaining). This job feeds it the memories of the store, remembers the pairs reviewers
marked "not duplicates", and records proposed clusters; a cluster already decided (merged or
dismissed) is never proposed again, an open one no longer found becomes ``stale``.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from memtui.maintenance.dedupe_index import DedupeIndex, DedupeItem
from memtui.maintenance.jobs import JobResult, job_transaction, sync_proposals
from memtui.store.models import DuplicateCluster, Evidence, Memory, NotDuplicatePair

CONSIDERED_STATES = ("candidate", "approved", "active", "needs_review", "challenged")
STALE_STATUSES = ("changed", "deleted", "unverifiable")


def scope_key(tenant_id: str, repository_id: str | None, module_path: str | None) -> str:
    """The scope a duplicate must share: ``tenant/repository:module`` (``*`` for org-wide)."""
    return f"{tenant_id}/{repository_id or '*'}:{module_path or ''}"


def detect_duplicates(engine: Engine, now: datetime, *, repository_id: str | None = None,
                      dry_run: bool = False) -> JobResult:
    """Detect near-duplicate clusters and record them (one transaction); returns the JobResult.

    A memory whose evidence is stale (changed, deleted, unverifiable) or that waits in
    ``needs_review`` is passed as stale, so it is never proposed for a merge (seed 000 §11.3).
    """
    with job_transaction(engine, "dedupe", repository_id=repository_id, dry_run=dry_run, clock=now) as (session, result):
        q = select(Memory).where(Memory.state.in_(CONSIDERED_STATES))
        if repository_id is not None:
            q = q.where(Memory.repository_id == repository_id)
        memories = list(session.exec(q.order_by(Memory.memory_id)))
        from memtui.maintenance.compaction import log_group_of

        logs = log_group_of(memories)  # a log's observations go to one compaction proposal instead
        memories = [m for m in memories if m.memory_id not in logs]
        ids = {m.memory_id for m in memories}
        ev_count: dict[str, int] = defaultdict(int)
        stale: set[str] = set()
        for mid, status in session.exec(select(Evidence.memory_id, Evidence.status)):
            if mid in ids:
                ev_count[mid] += 1
                if status in STALE_STATUSES:
                    stale.add(mid)
        # a dismissal lasts until either statement changes (issue 20, item 4; no hash: a dismissal from before)
        from memtui.similarity.tiers import pair_hash

        said = {m.memory_id: m.statement for m in memories}
        not_dup = [(a, b) for a, b, h in session.exec(select(NotDuplicatePair.memory_a, NotDuplicatePair.memory_b,
                                                             NotDuplicatePair.pair_hash))
                   if h is None or a not in said or b not in said or h == pair_hash(said[a], said[b])]
        items = [DedupeItem(m.memory_id, scope_key(m.tenant_id, m.repository_id, m.module_path), m.type,
                            m.statement, stale=m.memory_id in stale or m.state == "needs_review",
                            weight=ev_count[m.memory_id] + m.confidence) for m in memories]
        repo_of = {m.memory_id: m.repository_id for m in memories}
        index = DedupeIndex(not_duplicates=not_dup)
        clusters = index.build(items) or index.clusters()
        result.selected = len(items)
        existing = {c.cluster_id: c for c in session.exec(select(DuplicateCluster))}
        proposed = {c.cluster_id: c for c in clusters}

        def build(cid: str) -> DuplicateCluster:
            c = proposed[cid]
            return DuplicateCluster(
                cluster_id=cid, repository_id=repo_of.get(c.canonical), scope_key=c.scope_key, type=c.type,
                members=list(c.members), canonical_id=c.canonical, best_score=round(float(c.best_score), 1),
                scores={f"{a}|{b}": round(float(s), 1) for (a, b), s in sorted(c.scores.items())},
                method=c.method, explanation=c.explanation, status="open", job_id=result.job_id, created_at=now)

        new = [{"clusterId": cid, "members": list(proposed[cid].members), "canonical": proposed[cid].canonical}
               for cid in sync_proposals(session, result, existing, proposed, build,
                                         repository_id=repository_id, dry_run=dry_run)]
        result.changes = new
        result.summary = {"clusters": len(clusters), "new": len(new)}
    return result


def cluster_records(engine: Engine) -> list[dict[str, Any]]:
    """Every duplicate cluster for the report and ``memtui duplicates``: open first, then by id."""
    with Session(engine) as session:
        rows = list(session.exec(select(DuplicateCluster)))
    rows.sort(key=lambda c: (c.status != "open", c.cluster_id))
    return [{
        "clusterId": c.cluster_id, "status": c.status, "scopeKey": c.scope_key, "repositoryId": c.repository_id,
        "type": c.type, "members": list(c.members), "canonical": c.canonical_id, "bestScore": c.best_score,
        "method": c.method, "explanation": c.explanation, "scores": dict(sorted((c.scores or {}).items())),
    } for c in rows]
