"""Maintenance job bookkeeping (seed 000 §18, §23.4): every run is a row with its counts.

Jobs are idempotent: the same state, policy and ``now`` give the same result, and a second
run over an unchanged state updates nothing (DESIGN.md, "Maintenance jobs").
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Iterator

from sqlalchemy.engine import Engine
from sqlmodel import Session

from memtui.clock import new_event_id, utcnow
from memtui.domain.invariants import Actor
from memtui.store.models import MaintenanceJob

#: The actor of every change a maintenance job makes (issue 3: "actor system:maintenance").
MAINTENANCE_ACTOR = Actor(type="system", id="maintenance", role="reviewer")


@dataclass
class JobResult:
    """What one job did: ``selected`` memories looked at, ``updated`` changed, and details per memory."""

    job_id: str
    job_type: str
    repository_id: str | None
    selected: int = 0
    updated: int = 0
    dry_run: bool = False
    changes: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)


def start_job(engine: Engine, job_type: str, *, repository_id: str | None = None, dry_run: bool = False,
              clock: datetime | None = None) -> JobResult:
    """Write the ``running`` job row (its own small transaction) and return the result to fill in."""
    job_id = new_event_id("job")
    with Session(engine) as session, session.begin():
        session.add(MaintenanceJob(job_id=job_id, job_type=job_type, status="running",
                                   repository_id=repository_id, dry_run=dry_run, clock=clock,
                                   started_at=utcnow()))
    return JobResult(job_id, job_type, repository_id, dry_run=dry_run)


def finish_job(session: Session, result: JobResult, status: str | None = None) -> None:
    """Complete the job row inside the job's own transaction (``session``), with its counts."""
    job = session.get(MaintenanceJob, result.job_id)
    job.status = status or ("dry_run" if result.dry_run else "completed")
    job.selected_count, job.updated_count = result.selected, result.updated
    job.summary = result.summary
    job.completed_at = utcnow()
    session.add(job)


def fail_job(engine: Engine, result: JobResult, error: str) -> None:
    """Mark the job failed with the error (after its transaction rolled back)."""
    with Session(engine) as session, session.begin():
        job = session.get(MaintenanceJob, result.job_id)
        job.status, job.summary, job.completed_at = "failed", {"error": error}, utcnow()
        session.add(job)


@contextmanager
def job_transaction(engine: Engine, job_type: str, *, repository_id: str | None = None, dry_run: bool = False,
                    clock: datetime | None = None, autoflush: bool = True) -> Iterator[tuple[Session, JobResult]]:
    """Run a job's body in ONE transaction with its job row.

    Yields ``(session, result)``; the body fills ``result``. On success the job row is completed
    in the same transaction; with ``dry_run`` the body's writes are rolled back and only the job
    row (status ``dry_run``) is written; on an exception the job is marked failed and the
    exception propagates (nothing of the body is kept).
    """
    result = start_job(engine, job_type, repository_id=repository_id, dry_run=dry_run, clock=clock)
    try:
        with Session(engine, autoflush=autoflush) as session, session.begin():
            yield session, result
            if dry_run:
                session.rollback()
            else:
                finish_job(session, result)
        if dry_run:
            with Session(engine) as s2, s2.begin():
                finish_job(s2, result)
    except Exception as exc:
        fail_job(engine, result, str(exc))
        raise


def sync_proposals(session: Session, result: JobResult, existing: dict[str, Any], proposed: dict[str, Any],
                   build: Callable[[str], Any], *, repository_id: str | None, dry_run: bool) -> list[str]:
    """Reconcile a job's proposals (duplicate clusters, compaction proposals) with their rows.

    ``existing``: id -> row with ``status`` and ``repository_id``; ``proposed``: id -> what the job
    found now; ``build(id)`` makes the row of a new proposal. New ids are added (status open), a
    ``stale`` row found again reopens, an ``open`` row of the job's repository no longer found
    becomes ``stale``; decided rows (merged, dismissed, accepted, rejected) are never touched, so
    a decision is never proposed again. Counts every change in ``result.updated``; with
    ``dry_run`` nothing is written. Returns the new ids, in ``proposed`` order.
    """
    new = []
    for pid in proposed:
        row = existing.get(pid)
        if row is None:
            new.append(pid)
            result.updated += 1
            if not dry_run:
                session.add(build(pid))
        elif row.status == "stale":
            result.updated += 1
            if not dry_run:
                row.status = "open"
                session.add(row)
    for pid, row in existing.items():
        if row.status == "open" and pid not in proposed and repository_id in (None, row.repository_id):
            result.updated += 1
            if not dry_run:
                row.status = "stale"
                session.add(row)
    return new
