"""Maintenance job bookkeeping (seed 000 §18, §23.4): every run is a row with its counts.

Jobs are idempotent: the same state, policy and ``now`` give the same result, and a second
run over an unchanged state updates nothing (DESIGN.md, "Maintenance jobs").

A job row names the process running it (pid, host, start; issue 21 item 7). A job killed mid-run
leaves its row ``running`` (its transaction rolled back, so nothing else of it): the next job started
on that host finds the process gone and marks the row ``abandoned`` with a note and an audit event
(:func:`reap_abandoned`); ``memtui check`` lists abandoned jobs (:func:`abandoned_jobs`).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Iterator

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from memtui.clock import iso, new_event_id, utcnow
from memtui.domain.invariants import Actor
from memtui.processes import host_name, process_gone, process_started
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
    """Write the ``running`` job row, naming this process, in its own small transaction (after
    :func:`reap_abandoned`) and return the result to fill in."""
    reap_abandoned(engine)
    job_id = new_event_id("job")
    with Session(engine) as session, session.begin():
        session.add(MaintenanceJob(job_id=job_id, job_type=job_type, status="running",
                                   repository_id=repository_id, dry_run=dry_run, clock=clock,
                                   started_at=utcnow(), pid=os.getpid(), host=host_name(),
                                   process_started=process_started()))
    return JobResult(job_id, job_type, repository_id, dry_run=dry_run)


def _owner_gone(job: MaintenanceJob, host: str) -> bool:
    """Whether the process that runs ``running`` job ``job`` has ended: a row naming no process (written
    before issue 21) has; one of another host cannot be told from here and has not."""
    if job.pid is None:
        return True
    return job.host == host and process_gone(job.pid, job.process_started)


def _abandon_note(job: MaintenanceJob) -> str:
    who = f"process {job.pid} on {job.host}" if job.pid is not None else "a process memtui did not record"
    return (f"{who} ended while the job ran (killed or crashed); its transaction was rolled back, so "
            f"nothing of it was kept")


def reap_abandoned(engine: Engine) -> list[str]:
    """Mark every ``running`` job whose process is gone (:func:`_owner_gone`) ``abandoned``, in one
    transaction: ``completed_at`` now, ``summary.abandoned`` the note, and a ``job_abandoned`` audit
    event. Returns their ids, oldest first (issue 21 item 7). A row another process marked first is
    left to it (the update names ``status = 'running'``), so two starts never audit one job twice."""
    from memtui.governance.audit import audit

    host = host_name()
    table = MaintenanceJob.__table__
    marked: list[str] = []
    with Session(engine) as session, session.begin():
        running = session.exec(select(MaintenanceJob).where(MaintenanceJob.status == "running")
                               .order_by(MaintenanceJob.started_at, MaintenanceJob.job_id)).all()
        for job in running:
            if not _owner_gone(job, host):
                continue
            note = _abandon_note(job)
            done = session.execute(
                sa.update(table).where(table.c.job_id == job.job_id, table.c.status == "running")
                .values(status="abandoned", completed_at=utcnow(),
                        summary={**(job.summary or {}), "abandoned": note})).rowcount
            if done:
                audit(session, "job_abandoned", MAINTENANCE_ACTOR.id, job.job_id, jobType=job.job_type,
                      repositoryId=job.repository_id, pid=job.pid, host=job.host,
                      startedAt=iso(job.started_at), note=note)
                marked.append(job.job_id)
    return marked


def abandoned_jobs(engine: Engine) -> list[str]:
    """One sentence per abandoned job, oldest first: the rows marked ``abandoned`` and the ``running``
    rows whose process is gone but that no job start has marked yet (a read-only store). Reads only."""
    host = host_name()
    with Session(engine) as session:
        rows = session.exec(select(MaintenanceJob).where(MaintenanceJob.status.in_(("abandoned", "running")))
                            .order_by(MaintenanceJob.started_at, MaintenanceJob.job_id)).all()
        out = []
        for job in rows:
            if job.status == "running" and not _owner_gone(job, host):
                continue
            note = (job.summary or {}).get("abandoned") or _abandon_note(job)
            where = f" of {job.repository_id}" if job.repository_id else ""
            out.append(f"maintenance job {job.job_id} ({job.job_type}{where}, started {iso(job.started_at)}) "
                       f"was abandoned: {note}")
        return out


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
