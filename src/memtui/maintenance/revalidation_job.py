"""The revalidation job: check every memory's evidence against the repository's HEAD and act on it.

The git work is :func:`memtui.maintenance.revalidate.revalidate` (one diff per distinct
commit, one blob batch); this module loads the evidence, and writes the outcome in ONE
transaction: evidence status and where it is at HEAD, the latest revalidation result per
memory, and state changes by ``system:maintenance`` with the job id (issue 3).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Callable

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from memtui.domain.states import is_allowed
from memtui.maintenance.jobs import MAINTENANCE_ACTOR, JobResult, fail_job, finish_job, start_job
from memtui.maintenance.revalidate import EvidenceRef, MemoryVerdict, revalidate
from memtui.review.lifecycle import transition
from memtui.sources.gitdiff import GitRepo
from memtui.store.models import Evidence, Memory, Revalidation

#: States whose memories are revalidated (live, or waiting for a decision).
REVALIDATED_STATES = ("candidate", "approved", "active", "needs_review", "challenged")
RECOMMENDED = {"keep": "none", "needs_review": "human_review", "invalidate": "archive"}
STATUS = {"keep": "valid", "needs_review": "needs_review", "invalidate": "invalidated"}
_EVIDENCE_FIELDS = ("status", "current_path", "current_line_start", "current_line_end", "current_commit",
                    "reason_code", "status_reason")


def _target_state(state: str, verdict: MemoryVerdict) -> str | None:
    """The state the verdict moves a memory in ``state`` to, or None (no change)."""
    if verdict.outcome == "invalidate":
        if state != "invalidated" and is_allowed(state, "invalidated"):
            return "invalidated"
        return None if state == "needs_review" else ("needs_review" if is_allowed(state, "needs_review") else None)
    if verdict.outcome == "needs_review" and state != "needs_review" and is_allowed(state, "needs_review"):
        return "needs_review"
    return None


def run_revalidation(engine: Engine, repository_id: str, checkout: Path, now: datetime, *, dry_run: bool = False,
                     on_progress: Callable[[int, int], None] | None = None) -> JobResult:
    """Revalidate the memories of ``repository_id`` against HEAD of ``checkout`` at instant ``now``.

    Returns the JobResult (selected: memories checked; updated: memories whose state or evidence
    changed). A second run over the same state updates 0. Raises
    :class:`memtui.sources.gitdiff.GitError` when the checkout is not a usable git repository.
    """
    result = start_job(engine, "revalidate", repository_id=repository_id, dry_run=dry_run, clock=now)
    progress = on_progress or (lambda _d, _t: None)
    try:
        with Session(engine) as session, session.begin():
            memories = {m.memory_id: m for m in session.exec(
                select(Memory).where(Memory.repository_id == repository_id,
                                     Memory.state.in_(REVALIDATED_STATES)).order_by(Memory.memory_id))}
            rows: dict[int, Evidence] = {}
            for ids in _chunks(list(memories), 500):
                for e in session.exec(select(Evidence).where(Evidence.memory_id.in_(ids))):
                    rows[e.evidence_id] = e
            refs = [EvidenceRef(e.evidence_id, e.memory_id, e.type, e.path, e.commit_sha, e.line_start,
                                e.line_end, e.symbol, e.target, e.span_hash, e.ref) for e in rows.values()]
            policies = {mid: list(m.invalidation_policy or []) for mid, m in memories.items()}
            total = len(memories)
            progress(0, total)
            outcome = revalidate(refs, policies, GitRepo(checkout), memory_ids=list(memories))
            result.selected = total

            changed_memories: set[str] = set()
            for check in outcome.checks:
                row = rows[check.evidence_id]
                new = {"status": check.status, "current_path": check.current_path,
                       "current_line_start": check.current_line_start, "current_line_end": check.current_line_end,
                       "current_commit": check.current_commit, "reason_code": check.reason_code,
                       "status_reason": check.reason}
                if any(getattr(row, f) != new[f] for f in _EVIDENCE_FIELDS):
                    changed_memories.add(row.memory_id)
                    if not dry_run:
                        for f, v in new.items():
                            setattr(row, f, v)
                        session.add(row)
            if not dry_run:
                session.flush()

            previous = {r.memory_id: r for r in session.exec(
                select(Revalidation).where(Revalidation.memory_id.in_(list(memories))))} if memories else {}
            counts: dict[str, int] = defaultdict(int)
            for n, verdict in enumerate(outcome.verdicts, start=1):
                m = memories[verdict.memory_id]
                counts[verdict.outcome] += 1
                to = _target_state(m.state, verdict)
                if to is not None:
                    changed_memories.add(m.memory_id)
                    result.changes.append({"memoryId": m.memory_id, "from": m.state, "to": to,
                                           "reasonCodes": verdict.reason_codes})
                    if not dry_run:
                        codes = ", ".join(verdict.reason_codes)
                        transition(session, m, to, MAINTENANCE_ACTOR,
                                   reason=f"revalidation: {codes}: " + "; ".join(verdict.reasons),
                                   job_id=result.job_id)
                if not dry_run:
                    _record(session, previous.get(m.memory_id), verdict, result.job_id, now)
                if n % 200 == 0:
                    progress(n, total)
            progress(total, total)
            result.updated = len(changed_memories)
            result.summary = {"head": outcome.head[:12], "kept": counts["keep"],
                              "needsReview": counts["needs_review"], "invalidated": counts["invalidate"],
                              "commits": outcome.stats.get("commits", 0),
                              "gitProcesses": outcome.stats.get("git_processes", 0)}
            if dry_run:
                session.rollback()
                with Session(engine) as s2, s2.begin():
                    finish_job(s2, result)
            else:
                finish_job(session, result)
    except Exception as exc:
        fail_job(engine, result, str(exc))
        raise
    return result


def _record(session: Session, row: Revalidation | None, verdict: MemoryVerdict, job_id: str, now: datetime) -> None:
    """Upsert the latest revalidation result of a memory (unchanged values are not rewritten)."""
    values = {"status": STATUS[verdict.outcome], "severity": verdict.severity, "reasons": list(verdict.reasons),
              "reason_codes": list(verdict.reason_codes), "current_evidence": list(verdict.current_evidence),
              "recommended_action": RECOMMENDED[verdict.outcome]}
    if row is None:
        session.add(Revalidation(memory_id=verdict.memory_id, job_id=job_id, checked_at=now, **values))
        return
    if any(getattr(row, k) != v for k, v in values.items()) or row.checked_at != now:
        for k, v in values.items():
            setattr(row, k, v)
        row.job_id, row.checked_at = job_id, now
        session.add(row)


def _chunks(items: list, n: int):
    for i in range(0, len(items), n):
        yield items[i:i + n]
