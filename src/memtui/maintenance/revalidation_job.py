"""The revalidation job: check every memory's evidence against the repository's HEAD and act on it.

Unresolvable references (named nothing at their anchor commit) are checked again at every run, until a
reviewer retires them; one that exists at a later HEAD is anchored at that HEAD (issue 23, item 1), so its
later move or deletion is reported as stale, not as "never existed".

The git work is :func:`memtui.revalidation.engine.revalidate` (one diff per distinct
commit, one blob batch); this module loads the evidence, and writes the outcome in ONE
transaction: evidence status and where it is at HEAD, the latest revalidation result per
memory, and state changes by ``system:maintenance`` with the job id (issue 3).
"""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace
from datetime import datetime
from pathlib import Path
from typing import Callable, Sequence

from sqlalchemy import insert, update
from sqlalchemy.engine import Engine
from sqlmodel import select

from memtui.domain.states import is_allowed
from memtui.maintenance.jobs import MAINTENANCE_ACTOR, JobResult, job_transaction
from memtui.revalidation.references import propose_statement
from memtui.revalidation.engine import EvidenceRef, MemoryVerdict, revalidate
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
    """The state the verdict moves a memory in ``state`` to, or None (no change).

    Depends only on the current state and the verdict, so a second run over the same source
    changes nothing (an invalidated memory is no longer revalidated; a needs_review one stays).
    """
    if verdict.outcome == "invalidate" and state != "invalidated" and is_allowed(state, "invalidated"):
        return "invalidated"
    if verdict.outcome in ("needs_review", "invalidate") and state != "needs_review" \
            and is_allowed(state, "needs_review"):
        return "needs_review"
    return None


#: How many unverifiable pieces of evidence a job summary names (the rest are counted).
MAX_LISTED = 20

#: Above this many distinct commits, hunks are computed in Python from the blobs already read
#: (one batch) instead of extra ``git diff-tree`` processes: the same hunks, fewer processes.
PYTHON_HUNKS_ABOVE_COMMITS = 100


def run_revalidation(engine: Engine, repository_id: str, checkout: Path, now: datetime, *, dry_run: bool = False,
                     on_progress: Callable[[int, int], None] | None = None,
                     memory_ids: Sequence[str] | None = None) -> JobResult:
    """Revalidate the memories of ``repository_id`` (only ``memory_ids`` when given) against HEAD of
    ``checkout`` at instant ``now``.

    Returns the JobResult (selected: memories checked; updated: memories whose state or evidence
    changed). A second run over the same state updates 0. Evidence and result rows are written
    in bulk; state changes go through the lifecycle function one by one. Raises
    :class:`memtui.sources.gitdiff.GitError` when the checkout is not a usable git repository.
    """
    progress = on_progress or (lambda _d, _t: None)
    with job_transaction(engine, "revalidate", repository_id=repository_id, dry_run=dry_run, clock=now, autoflush=False) as (session, result):
        # plain rows, not ORM objects: 10,000 memories and their evidence load in a fraction
        # of the time; ORM objects are loaded only for the memories whose state changes
        states: dict[str, str] = {}
        policies: dict[str, list] = {}
        selected = (select(Memory.memory_id, Memory.state, Memory.invalidation_policy)
                    .where(Memory.repository_id == repository_id, Memory.state.in_(REVALIDATED_STATES)))
        if memory_ids is not None:
            selected = selected.where(Memory.memory_id.in_(list(memory_ids)))
        for mid, state, policy in session.exec(selected.order_by(Memory.memory_id)):
            states[mid], policies[mid] = state, list(policy or [])
        cols = (Evidence.evidence_id, Evidence.memory_id, Evidence.type, Evidence.path, Evidence.commit_sha,
                Evidence.line_start, Evidence.line_end, Evidence.symbol, Evidence.target, Evidence.span_hash,
                Evidence.ref, Evidence.excerpt, Evidence.repository_id, *(getattr(Evidence, f) for f in _EVIDENCE_FIELDS))
        rows: dict[int, dict] = {}
        for ids in _chunks(list(states), 500):
            for r in session.exec(select(*cols).where(Evidence.memory_id.in_(ids))
                                  .order_by(Evidence.memory_id, Evidence.ordinal)):
                if r.status != "retired":  # approved knowing it is gone (review.anchor)
                    rows[r.evidence_id] = r._asdict()
        refs = [EvidenceRef(r["evidence_id"], r["memory_id"], r["type"], r["path"], r["commit_sha"],
                            r["line_start"], r["line_end"], r["symbol"], r["target"], r["span_hash"], r["ref"],
                            r["excerpt"])
                for r in rows.values()]
        total = len(states)
        progress(0, total)
        distinct_commits = len({r.commit_sha for r in refs if r.commit_sha})
        outcome = revalidate(refs, policies, GitRepo(checkout), memory_ids=list(states),
                             hunks="python" if distinct_commits > PYTHON_HUNKS_ABOVE_COMMITS else "git")
        result.selected = total
        progress(total // 2, total)

        changed_memories: set[str] = set()
        evidence_updates: list[dict] = []
        for check in outcome.checks:
            row = rows[check.evidence_id]
            new = {"status": check.status, "current_path": check.current_path,
                   "current_line_start": check.current_line_start, "current_line_end": check.current_line_end,
                   "current_commit": check.current_commit, "reason_code": check.reason_code,
                   "status_reason": check.reason}
            if row["reason_code"] == "reference_unresolvable" and check.status == "valid" \
                    and check.reason_code == "exists" and row["commit_sha"] != outcome.head:
                # named nothing when written, exists now: anchored here, so a later move or deletion is stale
                new["commit_sha"] = outcome.head
            if any(row[f] != new[f] for f in new):
                changed_memories.add(row["memory_id"])
                evidence_updates.append({"evidence_id": row["evidence_id"], **new})
                row.update(new)
        # what the invariant checks of the state changes below need, with the new evidence status
        by_memory: dict[str, list[SimpleNamespace]] = defaultdict(list)
        for r in rows.values():
            by_memory[r["memory_id"]].append(
                SimpleNamespace(type=r["type"], status=r["status"], repository_id=r["repository_id"]))
        if evidence_updates and not dry_run:
            session.execute(update(Evidence), evidence_updates)

        previous = {r.memory_id: r for ids in _chunks(list(states), 500) for r in session.exec(
            select(Revalidation).where(Revalidation.memory_id.in_(ids)))}
        counts: dict[str, int] = defaultdict(int)
        inserts, updates = [], []
        moves = {v.memory_id: _target_state(states[v.memory_id], v) for v in outcome.verdicts}
        to_load = [mid for mid, to in moves.items() if to is not None]
        loaded = {m.memory_id: m for ids in _chunks(to_load, 500)
                  for m in session.exec(select(Memory).where(Memory.memory_id.in_(ids)))}
        # a statement edit for every memory whose named paths moved (issue 8, item 4)
        moved_paths: dict[str, list[tuple[str, str | None, str]]] = defaultdict(list)
        for check in outcome.checks:
            if check.reason_code == "path_moved" and check.current_path:
                row = rows[check.evidence_id]
                moved_paths[row["memory_id"]].append((row["target"] or row["path"] or "", row["path"], check.current_path))
            elif check.reason_code == "symbol_renamed" and check.renamed_to:
                row = rows[check.evidence_id]
                moved_paths[row["memory_id"]].append((row["target"] or row["symbol"] or "", None, check.renamed_to))
        statements = {mid: st for ids in _chunks(sorted(moved_paths), 500) for mid, st in session.exec(
            select(Memory.memory_id, Memory.statement).where(Memory.memory_id.in_(ids)))}
        proposals = {mid: propose_statement(statements.get(mid) or "", mv) for mid, mv in moved_paths.items()}
        for n, verdict in enumerate(outcome.verdicts, start=1):
            mid = verdict.memory_id
            counts[verdict.outcome] += 1
            to = moves[mid]
            if to is not None:
                changed_memories.add(mid)
                result.changes.append({"memoryId": mid, "from": states[mid], "to": to,
                                       "reasonCodes": verdict.reason_codes})
                if not dry_run:
                    codes = ", ".join(verdict.reason_codes)
                    transition(session, loaded[mid], to, MAINTENANCE_ACTOR,
                               reason=f"revalidation: {codes}: " + "; ".join(verdict.reasons),
                               job_id=result.job_id, evidence=by_memory.get(mid, []))
            values = _result_values(verdict)
            values["proposed_statement"] = proposals.get(mid)
            prev = previous.get(mid)
            if prev is None:
                inserts.append({"memory_id": mid, "job_id": result.job_id, "checked_at": now, **values})
            elif any(getattr(prev, k) != v for k, v in values.items()) or prev.checked_at != now:
                updates.append({"memory_id": mid, "job_id": result.job_id, "checked_at": now, **values})
            if n % 500 == 0:
                progress(total // 2 + n // 2, total)
        if not dry_run:
            session.flush()
            if inserts:
                session.execute(insert(Revalidation), inserts)
            if updates:
                session.execute(update(Revalidation), updates)
        progress(total, total)
        result.updated = len(changed_memories)
        result.summary = {"head": outcome.head[:12], "kept": counts["keep"],
                          "needsReview": counts["needs_review"], "invalidated": counts["invalidate"],
                          "commits": outcome.stats.get("commits", 0),
                          "gitProcesses": outcome.stats.get("git_processes", 0)}
        # what could not be checked and why (issue 8, item 6): the rest was revalidated
        unchecked = [c for c in outcome.checks if c.status == "unverifiable"]
        if unchecked:
            result.summary["unverifiable"] = len(unchecked)
            result.summary["couldNotCheck"] = [f"{c.memory_id}: {c.reason}" for c in unchecked[:MAX_LISTED]] + (
                [f"... and {len(unchecked) - MAX_LISTED} more"] if len(unchecked) > MAX_LISTED else [])
        moved = sum(1 for c in outcome.checks if c.reason_code == "path_moved")
        if moved:
            result.summary["moved"] = moved
        unresolvable = sum(1 for c in outcome.checks if c.status == "unresolvable")
        if unresolvable:
            result.summary["unresolvable"] = unresolvable
        if outcome.unreadable:
            result.summary["gitErrors"] = outcome.unreadable[:MAX_LISTED]
    return result


def _result_values(verdict: MemoryVerdict) -> dict:
    """The columns of a memory's latest revalidation result (seed 000 §8.3)."""
    return {"status": STATUS[verdict.outcome], "severity": verdict.severity, "reasons": list(verdict.reasons),
            "reason_codes": list(verdict.reason_codes), "current_evidence": list(verdict.current_evidence),
            "recommended_action": RECOMMENDED[verdict.outcome]}


def _chunks(items: list, n: int):
    for i in range(0, len(items), n):
        yield items[i:i + n]


class RevalidationUnavailable(ValueError):
    """One memory cannot be revalidated (org-wide, its repository has no usable checkout, or its state
    is not revalidated); the message says why."""


def revalidate_memory(engine: Engine, memory_id: str, now: datetime) -> JobResult:
    """Revalidate one memory against HEAD of its repository's registered checkout: the revalidation
    job (:func:`run_revalidation`) narrowed to that memory, one transaction with its job row; state
    changes are made by ``system:maintenance`` with the job id. Raises MemoryNotFound,
    :class:`RevalidationUnavailable` or GitError."""
    from sqlmodel import Session

    from memtui.review.lifecycle import MemoryNotFound
    from memtui.store.models import Repository

    with Session(engine) as session:
        memory = session.get(Memory, memory_id)
        if memory is None:
            raise MemoryNotFound(memory_id)
        repository_id, state = memory.repository_id, memory.state
        repo = session.get(Repository, repository_id) if repository_id else None
    if repository_id is None:
        raise RevalidationUnavailable(f"{memory_id} is org-wide: it has no repository to revalidate against")
    if state not in REVALIDATED_STATES:
        raise RevalidationUnavailable(f"{memory_id} is {state}; only {', '.join(REVALIDATED_STATES)} memory is "
                                      "revalidated")
    if repo is None or not repo.checkout_path or not Path(repo.checkout_path).is_dir():
        where = repo.checkout_path if repo and repo.checkout_path else "(none registered)"
        raise RevalidationUnavailable(f"repository {repository_id!r} has no checkout to revalidate against "
                                      f"({where}); register it with memtui repo add {repository_id} PATH")
    return run_revalidation(engine, repository_id, Path(repo.checkout_path), now, memory_ids=[memory_id])
