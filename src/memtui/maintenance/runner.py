"""``memtui maintain``: run the maintenance jobs in order over the registered repositories.

Each job is idempotent and recorded (jobs table); each state change is a history event by
``system:maintenance`` with the job id (issue 3).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from sqlalchemy.engine import Engine

from memtui.maintenance.jobs import JobResult, reap_abandoned
from memtui.maintenance.repositories import list_repositories

if TYPE_CHECKING:
    from memtui.similarity.judge import JudgeConfig

#: Jobs in the order they run.
JOBS: tuple[str, ...] = ("secrets", "revalidate", "expire", "dedupe", "conflicts", "compaction")


class MaintenanceError(Exception):
    """Maintenance cannot start (unknown repository, missing checkout); the message says which."""


def result_notes(result: JobResult) -> list[str]:
    """What a reader of one job's result must not miss, one sentence each: a repository skipped,
    evidence that could not be checked and why, git errors worked around, moved references and
    references that never existed (issue 8, item 6). The CLI and the TUI both print these."""
    s = result.summary or {}
    notes: list[str] = []
    if s.get("skipped"):
        notes.append(f"skipped {result.repository_id or result.job_type}: {s['skipped']}")
    for line in s.get("couldNotCheck") or []:
        notes.append(f"could not check {line}")
    for err in s.get("gitErrors") or []:
        notes.append(f"git: {err}")
    if s.get("moved"):
        notes.append(f"{s['moved']} named reference(s) moved: the memories wait in the queue with the new path")
    if s.get("unresolvable"):
        notes.append(f"{s['unresolvable']} named reference(s) never existed (low-severity notes in the report)")
    return notes


def _select_repositories(engine: Engine, repo: str | None) -> list[tuple[str, str | None]]:
    repos = [(rid, path) for rid, _tenant, path in list_repositories(engine)]
    if repo is None:
        return repos
    wanted = Path(repo).expanduser().resolve() if Path(repo).expanduser().exists() else None
    for rid, path in repos:
        if rid == repo or (wanted is not None and path and Path(path) == wanted):
            return [(rid, path)]
    raise MaintenanceError(f"{repo}: not a registered repository; register it with "
                           f"'memtui repo add NAME {repo}' (registered: {', '.join(r for r, _ in repos) or 'none'})")


def maintain(engine: Engine, *, now: datetime, repo: str | None = None, dry_run: bool = False,
             only: list[str] | None = None, progress: Callable[[str], None] | None = None,
             on_progress: Callable[[int, int], None] | None = None,
             cancelled: Callable[[], bool] | None = None, judge: "JudgeConfig | None" = None) -> list[JobResult]:
    """Run ``only`` (default all of :data:`JOBS`) at instant ``now``; returns one JobResult per job and repository.

    ``progress(message)`` reports each step; ``on_progress(done, total)`` the fraction of evidence
    revalidated (for a progress bar). ``cancelled()`` is asked before each job and repository: once
    it answers True no further job starts (a job under way finishes, its transaction is whole) and the
    results so far are returned; :func:`jobs_not_run` says which were left. Jobs an earlier run left
    ``running`` from a process now gone are marked abandoned first (:func:`reap_abandoned`). ``judge`` (None: the
    embedded scorer alone) is handed to the conflict job, which asks it about its uncertain band
    (:mod:`memtui.similarity.judge`). Raises MaintenanceError for an unknown repository.
    """
    say = progress or (lambda _m: None)
    stop = cancelled or (lambda: False)
    jobs = [j for j in JOBS if only is None or j in only]
    repos = _select_repositories(engine, repo)
    abandoned = reap_abandoned(engine)  # issue 21 item 7 (each job start does it too)
    if abandoned:
        say(f"marked {len(abandoned)} earlier maintenance job(s) abandoned, their process gone mid-run: "
            f"{', '.join(abandoned)} (memtui check lists them)")
    scope = None if repo is None else repos[0][0]
    results: list[JobResult] = []
    if "secrets" in jobs and not stop():  # first: a memory holding a secret is blocked before anything else reads it
        from memtui.maintenance.secrets_job import run_secret_rescan

        say("rescanning memory text for secrets (when the scanner changed)")
        results.append(run_secret_rescan(engine, now, dry_run=dry_run))
    if "revalidate" in jobs:
        from memtui.maintenance.revalidation_job import run_revalidation

        if not repos:
            say("no repository registered: nothing to revalidate (memtui repo add NAME PATH)")
        from memtui.sources.gitdiff import GitError

        for rid, path in repos:
            if stop():
                break
            # one broken checkout must not stop maintenance of the others: it is skipped and reported
            if not path or not Path(path).is_dir():
                problem = (f"checkout {path or '(none)'} does not exist; register it again with "
                           f"'memtui repo add {rid} PATH'")
            else:
                say(f"revalidating {rid} against {path}")
                try:
                    results.append(run_revalidation(engine, rid, Path(path), now, dry_run=dry_run,
                                                    on_progress=on_progress))
                    continue
                except GitError as exc:
                    problem = str(exc)
            say(f"skipped {rid}: {problem}")
            if repo is not None:
                raise MaintenanceError(f"{rid}: {problem}")
            skipped = JobResult(job_id="-", job_type="revalidate", repository_id=rid, dry_run=dry_run)
            skipped.summary = {"skipped": problem}
            results.append(skipped)
    if "expire" in jobs and not stop():
        from memtui.maintenance.expire import run_expiry

        say("expiring")
        results.append(run_expiry(engine, now, repository_id=scope, dry_run=dry_run))
    if "dedupe" in jobs and not stop():
        from memtui.maintenance.dedupe import detect_duplicates

        say("looking for near-duplicates")
        results.append(detect_duplicates(engine, now, repository_id=scope, dry_run=dry_run))
    if "conflicts" in jobs and not stop():
        from memtui.maintenance.conflicts import detect_conflicts

        say("looking for conflicts")
        if judge is not None:
            say(f"judge for uncertain pairs: {judge.endpoint} (model {judge.model}, at most {judge.budget} "
                f"requests, {judge.timeout_s:g} s each)")
        results.append(detect_conflicts(engine, now, repository_id=scope, dry_run=dry_run, judge=judge))
    if "compaction" in jobs and not stop():
        from memtui.maintenance.compaction import propose_compactions

        say("proposing compactions")
        results.append(propose_compactions(engine, now, repository_id=scope, dry_run=dry_run))
    return results


def jobs_not_run(results: list[JobResult], only: list[str] | None = None) -> list[str]:
    """The jobs of :data:`JOBS` (or ``only``) with no result in ``results``: what a cancelled run left."""
    ran = {r.job_type for r in results}
    return [j for j in JOBS if (only is None or j in only) and j not in ran]
