"""The conflict job (issue 4; seed 000 §10): same scope, same subject, incompatible claims ⇒ a conflict
record, and both memories excluded from default recall while it is open.

Candidate pairs come from an inverted index on the code identifiers a statement names and the
evidence paths it rests on, and from embedding nearest neighbours (at most ``SEMANTIC_TOP_N`` a
memory, issue 10 item 4), within one (tenant, repository) and overlapping module paths; each pair is
judged by the learned scorer (:func:`memtui.similarity.scorer.judge_profiles`) and put in a tier by
:func:`memtui.similarity.tiers.conflict_tier` (issue 20): only a *likely* conflict is opened; a *possible*
one is a suggestion. A pair with an open or resolved record is never judged again; a suggestion or a
dismissal is judged again once either statement changes (and a suggestion whenever a judge is asked).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from memtui.similarity.statements import conflict_reason_analyzed, identifiers
from memtui.similarity.candidates import knn_pairs
from memtui.similarity.embed import embed
from memtui.similarity.features import prime, profile
from memtui.similarity.scorer import Verdict, judge_profiles
from memtui.similarity.subjects import relation
from memtui.similarity.tiers import (LIKELY_DUPLICATE_P, POSSIBLE_DUPLICATE_P, POSSIBLE_PER_MEMORY, ConflictTier,
                                     conflict_tier, pair_hash, uncertain)
from memtui.maintenance.jobs import MAINTENANCE_ACTOR, JobResult, job_transaction
from memtui.review.lifecycle import record_note
from memtui.review.lifecycle import RETIRED_STATES, close_conflicts_of_retired
from memtui.store.models import DuplicateCluster, Evidence, Memory, MemoryConflict, NotDuplicatePair

if TYPE_CHECKING:
    from memtui.similarity.judge import JudgeConfig

CONSIDERED_STATES = ("candidate", "approved", "active", "needs_review", "challenged")
#: An anchor shared by more memories than this says nothing about a subject (a hub); it forms no pairs.
MAX_ANCHOR_FANOUT = 200
#: Embedding neighbours per memory judged for conflicts and possible duplicates, and the cosine they need
#: (issue 20: 16 and 0.35 raise likely + possible recall on the training split from 0.66 / 0.70 to 0.80 / 0.81).
SEMANTIC_TOP_N = 16
SEMANTIC_MIN_COSINE = 0.35


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
        known_rows = {tuple(sorted((c.memory_a, c.memory_b))): c for c in session.exec(select(MemoryConflict))}

        def settled(a: str, b: str) -> bool:
            """A recorded pair is judged again only when a suggestion's or a dismissal's statements changed."""
            row = known_rows.get((a, b))
            if row is None:
                return False
            if row.status == "possible" and judge is not None:
                return False  # a judge asked for: suggestions are judged again (its answers are cached)
            if row.status in ("possible", "not_a_conflict") and row.pair_hash is not None:
                return row.pair_hash == pair_hash(memories[a].statement, memories[b].statement)
            return True

        todo = [(a, b) for a, b in sorted(pairs) if not settled(a, b)
                and _modules_overlap(memories[a].module_path, memories[b].module_path)]
        judged = sorted({m for p in todo for m in p})
        prime([memories[m].statement for m in judged])
        profiles = {m: profile(memories[m].statement) for m in judged}
        verdicts = judge_profiles([profiles[a] for a, _ in todo], [profiles[b] for _, b in todo],
                                  [float(E[row_of[a]] @ E[row_of[b]]) for a, b in todo])
        origin = origins(session, memories)
        answers, judge_summary = _ask_judge(session, judge, todo, verdicts, memories)
        possible: list[tuple[float, str, str, ConflictTier]] = []
        possible_dups: list[tuple[float, str, str, Verdict]] = []
        for k, ((a, b), v) in enumerate(zip(todo, verdicts)):
            ma, mb = memories[a], memories[b]
            sibling = origin.get(a) is not None and origin.get(a) == origin.get(b)
            rule = conflict_reason_analyzed(profiles[a].analyzed(), profiles[b].analyzed()) if (a, b) in anchored else None
            rel = relation(ma.statement, mb.statement)
            t = conflict_tier(v, rule, rel, sibling, answers.get(k), shared_names=bool(profiles[a].ids & profiles[b].ids))
            if t.tier == "likely":
                found.append(_record(session, known_rows.get((a, b)), ma, mb, "open", t, v.p_conflict,
                                     result, now, dry_run))
                continue
            if possible_duplicate(v) and rel != "different":  # parallel subjects are no duplicates either
                possible_dups.append((v.p_duplicate, a, b, v))
            if t.tier == "possible":
                possible.append((v.p_conflict, a, b, t))
        partners: dict[str, int] = defaultdict(int)  # the possible partners each memory shows already
        todo_set = set(todo)
        for (x, y), row in known_rows.items():
            if row.status == "possible" and (x, y) not in todo_set:
                partners[x] += 1
                partners[y] += 1
        n_possible = 0
        for score, a, b, t in sorted(possible, key=lambda x: (-x[0], x[1], x[2])):
            if partners[a] >= POSSIBLE_PER_MEMORY or partners[b] >= POSSIBLE_PER_MEMORY:
                continue
            partners[a] += 1
            partners[b] += 1
            _record(session, known_rows.get((a, b)), memories[a], memories[b], "possible", t, score, result, now,
                    dry_run)
            n_possible += 1
        n_dups = suggest_duplicates(session, memories, possible_dups, result, now, dry_run)
        result.changes = found
        result.updated += closed
        result.summary = {"pairsChecked": len(pairs), "newConflicts": len(found), "closed": closed,
                          "possibleConflicts": n_possible, "possibleDuplicates": n_dups,
                          "logLikeGroups": len(set(logs.values())), **judge_summary}
    return result


#: importer kinds whose lines are written together in one file (issue 20, item 2)
SIBLING_SOURCES = ("markdown",)


def origins(session: Session, memories: dict[str, Memory]) -> dict[str, str]:
    """memory id -> ``"repository@commit"`` for lines imported from a memory file (read from the file's
    span evidence): the memory files of one checkout at one commit are written together by one team, so
    two memories with one origin are siblings (issue 20, item 2; on 23 public repositories not one of
    1,852 conflicts between such lines was real, bench/README.md). A file outside any commit is its own
    origin."""
    wanted = {mid for mid, m in memories.items() if m.proposer_type in SIBLING_SOURCES and m.proposer_id}
    out: dict[str, str] = {}
    if not wanted:
        return out
    for mid, path, commit in session.exec(select(Evidence.memory_id, Evidence.path, Evidence.commit_sha)
                                          .where(Evidence.ordinal == 0)):
        if mid in wanted and path == memories[mid].proposer_id:
            m = memories[mid]
            out[mid] = f"{m.tenant_id}/{m.repository_id}@{commit}" if commit else f"{path}@uncommitted"
    for mid in wanted - out.keys():
        out[mid] = f"{memories[mid].proposer_id}@?"
    return out


def _record(session: Session, row: MemoryConflict | None, ma: Memory, mb: Memory, status: str, t: ConflictTier,
            score: float, result: JobResult, now: datetime, dry_run: bool) -> dict[str, Any]:
    """Write (or update) one conflict record; a likely one (``open``) flags both memories and notes it."""
    a, b = ma.memory_id, mb.memory_id
    cid = conflict_id_for(a, b)
    change = {"conflictId": cid, "memories": [a, b], "severity": t.severity, "reason": t.reason,
              "tier": "likely" if status == "open" else status, "score": round(score, 4)}
    h = pair_hash(ma.statement, mb.statement)
    if dry_run or (row is not None and (row.status, row.reason, row.pair_hash) == (status, t.reason, h)):
        return change  # the same verdict again (a suggestion a judge re-read): nothing to write
    row = row or MemoryConflict(conflict_id=cid, tenant_id=ma.tenant_id, repository_id=ma.repository_id,
                                memory_a=a, memory_b=b, created_at=now, severity=t.severity, reason=t.reason)
    row.severity, row.reason, row.status, row.job_id = t.severity, t.reason, status, result.job_id
    row.module_path = _shared_module(ma.module_path, mb.module_path)
    row.score, row.pair_hash = round(score, 4), h
    row.resolution = row.resolved_by = row.resolved_at = None
    session.add(row)
    result.updated += 1
    if status == "open":
        for m, other in ((ma, b), (mb, a)):
            m.conflict_state = "open"
            session.add(m)
            record_note(session, m, MAINTENANCE_ACTOR, f"conflict {cid} opened with {other}: {t.reason}",
                        job_id=result.job_id)
    return change


def possible_duplicate(v: Verdict) -> bool:
    """A pair worth showing as a possible duplicate: P(duplicate) in the band below the likely bar, or a
    duplicate verdict the dedupe job did not cluster."""
    return v.p_duplicate >= POSSIBLE_DUPLICATE_P and v.kind != "conflict"


def suggest_duplicates(session: Session, memories: dict[str, Memory], found: list[tuple[float, str, str, Verdict]],
                       result: JobResult, now: datetime, dry_run: bool) -> int:
    """Record the strongest possible duplicate pairs (at most :data:`POSSIBLE_PER_MEMORY` a memory) as
    ``possible`` two-member clusters; a pair already in an open cluster, or dismissed with the same
    statements, is left out. Returns how many were recorded."""
    from memtui.maintenance.dedupe import scope_key

    clustered: dict[str, set[str]] = defaultdict(set)
    existing = {c.cluster_id: c for c in session.exec(select(DuplicateCluster))}
    for c in existing.values():
        if c.status in ("open", "merged"):
            for m in c.members:
                clustered[m].add(c.cluster_id)
    dismissed = {(r.memory_a, r.memory_b): r.pair_hash for r in session.exec(select(NotDuplicatePair))}
    partners: dict[str, int] = defaultdict(int)
    n = 0
    for score, a, b, v in sorted(found, key=lambda x: (-x[0], x[1], x[2])):
        ma, mb = memories[a], memories[b]
        key = (a, b)
        if clustered[a] & clustered[b] or (key in dismissed and dismissed[key] in (
                None, pair_hash(ma.statement, mb.statement))):
            continue
        sk = scope_key(ma.tenant_id, ma.repository_id, ma.module_path)
        if sk != scope_key(mb.tenant_id, mb.repository_id, mb.module_path):
            continue
        if partners[a] >= POSSIBLE_PER_MEMORY or partners[b] >= POSSIBLE_PER_MEMORY:
            continue
        partners[a] += 1
        partners[b] += 1
        cid = "dupp_" + conflict_id_for(a, b)[len("memconf_"):]
        row = existing.get(cid)
        if row is not None and row.status != "stale":
            continue
        n += 1
        if dry_run:
            continue
        row = row or DuplicateCluster(cluster_id=cid, repository_id=ma.repository_id, scope_key=sk, type=ma.type,
                                      members=[a, b], canonical_id=a, method="possible", created_at=now)
        row.status, row.best_score, row.job_id = "possible", round(100 * score, 1), result.job_id
        row.scores = {f"{a}|{b}": round(100 * score, 1)}
        row.explanation = (f"possible duplicate: learned scorer P(duplicate) {score:.2f} (likely from "
                           f"{LIKELY_DUPLICATE_P:.2f}); why: {v.explain()}")
        session.add(row)
        result.updated += 1
    return n


def _ask_judge(session: Session, judge, todo, verdicts, memories) -> tuple[dict[int, tuple[str, str]], dict]:
    """The pluggable judge's ``(verdict, reason)`` for the pairs of the uncertain band (index -> answer),
    and its counts for the job summary; ({}, {}) without a judge. A failure leaves the embedded verdict."""
    if judge is None:
        return {}, {}
    from memtui.similarity.judge import Judge

    ask = [k for k, v in enumerate(verdicts) if uncertain(v)]
    j = Judge(judge)
    answers = j.judge(session, [(memories[todo[k][0]].statement, memories[todo[k][1]].statement) for k in ask])
    out = {k: (ans.verdict, f"judge {ans.model}: {ans.reason}") for k, ans in zip(ask, answers) if ans is not None}
    return out, {"judge": j.counts()}


def conflict_records(engine: Engine) -> list[dict[str, Any]]:
    """Every conflict record in the design's shape (seed 000 §10.3) with its ``tier`` (likely for open,
    possible for a suggestion) and ``score`` (P(conflict)); open ones first, then possible ones by score."""
    from memtui.review.resolve import newer_side

    with Session(engine) as session:
        rows = list(session.exec(select(MemoryConflict)))
        rows.sort(key=lambda c: (c.status != "open", c.status != "possible", -(c.score or 0), c.conflict_id))
        newer = {c.conflict_id: newer_side(session, c.memory_a, c.memory_b) for c in rows if c.status == "open"}
    return [{
        "conflictId": c.conflict_id, "severity": c.severity,
        "scope": {"tenantId": c.tenant_id, "repositoryId": c.repository_id, "modulePath": c.module_path},
        "memories": [c.memory_a, c.memory_b], "status": c.status,
        "tier": "likely" if c.status == "open" else "possible" if c.status == "possible" else None,
        "score": c.score, "action": c.action if c.status != "possible" else "none", "reason": c.reason,
        **({"resolution": c.resolution, "resolvedBy": c.resolved_by} if c.resolution else {}),
        **({"proposedResolution": {"action": "keep_newer", "keep": n[0], "supersede": n[1], "why": n[2]}}
           if (n := newer.get(c.conflict_id)) else {}),
    } for c in rows]
