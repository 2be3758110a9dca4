"""The conflict job (issue 4; seed 000 §10): same scope, same subject, incompatible claims ⇒ a conflict
record, and both memories excluded from default recall while it is open.

Candidate pairs come from an inverted index on the code identifiers a statement names and the
evidence paths it rests on, and from embedding nearest neighbours (at most ``SEMANTIC_TOP_N`` a
memory, issue 10 item 4), within one (tenant, repository) and overlapping module paths; each pair is
judged by :func:`memtui.similarity.scorer.conflict_verdicts`. A pair that has a
conflict record already (open, resolved, or judged not a conflict) is never reopened.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from memtui.domain.statements import identifiers
from memtui.similarity.candidates import knn_pairs
from memtui.similarity.embed import embed
from memtui.similarity.features import prime, profile
from memtui.similarity.scorer import conflict_verdicts
from memtui.maintenance.jobs import MAINTENANCE_ACTOR, JobResult, job_transaction
from memtui.review.lifecycle import record_note
from memtui.review.lifecycle import RETIRED_STATES, close_conflicts_of_retired
from memtui.store.models import Evidence, Memory, MemoryConflict

if TYPE_CHECKING:
    from memtui.similarity.judge import JudgeConfig

CONSIDERED_STATES = ("candidate", "approved", "active", "needs_review", "challenged")
#: An anchor shared by more memories than this says nothing about a subject (a hub); it forms no pairs.
MAX_ANCHOR_FANOUT = 200
#: Embedding neighbours per memory compared for conflicts, and the cosine they need.
SEMANTIC_TOP_N = 8
SEMANTIC_MIN_COSINE = 0.5


def conflict_id_for(a: str, b: str) -> str:
    """Deterministic conflict id of a pair (order-independent)."""
    x, y = sorted((a, b))
    return "memconf_" + hashlib.sha256(f"{x}\x00{y}".encode()).hexdigest()[:16]


def _modules_overlap(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return True
    a, b = a.rstrip("/") + "/", b.rstrip("/") + "/"
    return a.startswith(b) or b.startswith(a)


def _shared_module(a: str | None, b: str | None) -> str | None:
    """The conflict's scope: the broader of two overlapping module paths (None: the whole repository)."""
    if a is None or b is None:
        return None
    return a if len(a) <= len(b) else b


def detect_conflicts(engine: Engine, now: datetime, *, repository_id: str | None = None,
                     dry_run: bool = False, judge: "JudgeConfig | None" = None) -> JobResult:
    """Find new conflicts among live and waiting memories and record them (one transaction).

    Each new conflict: a :class:`MemoryConflict` row (status open, action
    ``exclude_both_from_default_context``, the reason in words), both memories' ``conflict_state``
    set to open, and a history note on each with the job id. Idempotent.
    """
    with job_transaction(engine, "conflicts", repository_id=repository_id, dry_run=dry_run, clock=now) as (session, result):
        q = select(Memory).where(Memory.state.in_(CONSIDERED_STATES))
        if repository_id is not None:
            q = q.where(Memory.repository_id == repository_id)
        memories = {m.memory_id: m for m in session.exec(q.order_by(Memory.memory_id))}
        paths: dict[str, set[str]] = defaultdict(set)
        for mid, path in session.exec(select(Evidence.memory_id, Evidence.path).where(Evidence.path.is_not(None))):
            if mid in memories:
                paths[mid].add(path)
        known = {tuple(sorted((a, b))) for a, b in session.exec(select(MemoryConflict.memory_a, MemoryConflict.memory_b))}
        ids_sorted = list(memories)
        row_of = {mid: i for i, mid in enumerate(ids_sorted)}
        E = embed([memories[mid].statement for mid in ids_sorted])
        index: dict[tuple, list[str]] = defaultdict(list)
        for mid, m in memories.items():
            scope = (m.tenant_id, m.repository_id)
            for ident in identifiers(m.statement):
                index[scope + ("id", ident.casefold())].append(mid)
            for p in paths[mid]:
                index[scope + ("path", p)].append(mid)
        from memtui.maintenance.compaction import log_group_of

        logs = log_group_of(list(memories.values()))  # one proposal for a log, not its pairs
        pairs: set[tuple[str, str]] = set()
        for ids in index.values():
            if len(ids) < 2 or len(ids) > MAX_ANCHOR_FANOUT:
                continue
            ids = sorted(set(ids))
            for i, a in enumerate(ids):
                for b in ids[i + 1:]:
                    if a not in logs or logs[a] != logs.get(b):
                        pairs.add((a, b))
        scope_ids: dict[tuple, int] = {}
        blocks = np.array([scope_ids.setdefault((memories[mid].tenant_id, memories[mid].repository_id), len(scope_ids))
                           for mid in ids_sorted], np.int64)
        rows = np.arange(len(ids_sorted), dtype=np.int64)
        anchored = set(pairs)
        sa, sb, _ = knn_pairs(E, rows, rows, blocks, SEMANTIC_TOP_N, SEMANTIC_MIN_COSINE)
        for i, j in zip(sa.tolist(), sb.tolist()):
            a, b = sorted((ids_sorted[i], ids_sorted[j]))
            if a not in logs or logs[a] != logs.get(b):
                pairs.add((a, b))
        result.selected = len(memories)
        # conflicts of a memory that has left use since (invalidated, superseded, ...) are over
        closed = 0
        for c in list(session.exec(select(MemoryConflict).where(MemoryConflict.status == "open"))):
            for mid in (c.memory_a, c.memory_b):
                gone = memories.get(mid) or session.get(Memory, mid)
                if gone is not None and gone.state in RETIRED_STATES:
                    if not dry_run:
                        closed += len(close_conflicts_of_retired(session, gone, MAINTENANCE_ACTOR, None,
                                                                 job_id=result.job_id))
                    break
        found: list[dict[str, Any]] = []
        todo = [(a, b) for a, b in sorted(pairs) if (a, b) not in known
                and _modules_overlap(memories[a].module_path, memories[b].module_path)]
        judged = sorted({m for p in todo for m in p})
        prime([memories[m].statement for m in judged])
        profiles = {m: profile(memories[m].statement) for m in judged}
        verdicts = conflict_verdicts([profiles[a] for a, _ in todo], [profiles[b] for _, b in todo],
                                     [float(E[row_of[a]] @ E[row_of[b]]) for a, b in todo],
                                     [p in anchored for p in todo])
        for (a, b), verdict in zip(todo, verdicts):
            ma, mb = memories[a], memories[b]
            if verdict is None:
                continue
            severity, reason = verdict
            cid = conflict_id_for(a, b)
            found.append({"conflictId": cid, "memories": [a, b], "severity": severity, "reason": reason})
            if dry_run:
                continue
            session.add(MemoryConflict(
                conflict_id=cid, severity=severity, tenant_id=ma.tenant_id, repository_id=ma.repository_id,
                module_path=_shared_module(ma.module_path, mb.module_path),
                memory_a=a, memory_b=b, status="open", reason=reason, job_id=result.job_id, created_at=now))
            for m, other in ((ma, b), (mb, a)):
                m.conflict_state = "open"
                session.add(m)
                record_note(session, m, MAINTENANCE_ACTOR, f"conflict {cid} opened with {other}: {reason}",
                            job_id=result.job_id)
        result.changes = found
        result.updated = len(found) + closed
        result.summary = {"pairsChecked": len(pairs), "newConflicts": len(found), "closed": closed,
                          "logLikeGroups": len(set(logs.values()))}
    return result


def conflict_records(engine: Engine) -> list[dict[str, Any]]:
    """Every conflict record in the design's shape (seed 000 §10.3), open ones first, then by id."""
    from memtui.review.resolve import newer_side

    with Session(engine) as session:
        rows = list(session.exec(select(MemoryConflict)))
        rows.sort(key=lambda c: (c.status != "open", c.conflict_id))
        newer = {c.conflict_id: newer_side(session, c.memory_a, c.memory_b) for c in rows if c.status == "open"}
    return [{
        "conflictId": c.conflict_id, "severity": c.severity,
        "scope": {"tenantId": c.tenant_id, "repositoryId": c.repository_id, "modulePath": c.module_path},
        "memories": [c.memory_a, c.memory_b], "status": c.status, "action": c.action, "reason": c.reason,
        **({"resolution": c.resolution, "resolvedBy": c.resolved_by} if c.resolution else {}),
        **({"proposedResolution": {"action": "keep_newer", "keep": n[0], "supersede": n[1], "why": n[2]}}
           if (n := newer.get(c.conflict_id)) else {}),
    } for c in rows]
