"""Maintenance commands: ``lint``, ``maintain``, ``report``, ``policy``, ``prune``, ``usage``, ``quality``, ``replay``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from memtui.cli.common import (ActorOpt, DbOpt, NowOpt, RoleOpt, _actor, _echo, _engine, _fail,
                               _fix_clock, _governance_call, _require, app)
from memtui.text import visible


@app.command()
def lint(
    files: Annotated[list[Path], typer.Argument(help="Memory files to check (CLAUDE.md, AGENTS.md, rules...).")],
    repo: Annotated[Path, typer.Option("--repo", help="The git checkout the files describe.")] = Path("."),
    fmt: Annotated[str, typer.Option("--format", help="text | json | github")] = "text",
    suggest: Annotated[bool, typer.Option("--suggest", help="Print a unified diff that rewrites moved paths.")] = False,
) -> None:
    """Check the paths, folders and symbols memory files name against the checkout's HEAD, without a
    store. Exit 1 when a reference went stale (moved or deleted since its line was written)."""
    from memtui.maintenance.lint import LintError, format_findings, lint_files, suggest_diff

    if fmt not in ("text", "json", "github"):
        raise _fail(f"--format must be text, json or github, not {fmt!r}", 2)
    try:
        findings = lint_files(list(files), repo)
    except LintError as exc:
        raise _fail(str(exc), 2)
    text = format_findings(findings, fmt)
    if text:
        _echo(text, err=suggest)  # with --suggest, stdout is the diff alone (pipe it to git apply)
    if suggest:
        diff = suggest_diff(findings, repo)  # printed, never applied
        if diff:
            typer.echo(visible(diff), nl=False)
    if fmt == "text":
        stale = sum(1 for f in findings if f.kind == "stale")
        _echo(f"memtui lint: {len(files)} file(s), {stale} stale, "
              f"{len(findings) - stale} other finding(s)", err=True)
    if any(f.kind == "stale" for f in findings):
        raise typer.Exit(1)


@app.command()
def maintain(
    repo: Annotated[Optional[str], typer.Option("--repo", help="A registered repository's checkout folder or name "
                                                 "(default: every registered repository).")] = None,
    now: NowOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report what would change; write nothing.")] = False,
    only: Annotated[Optional[str], typer.Option("--only", help="Comma-separated jobs: secrets, revalidate, expire, dedupe, "
                                                 "conflicts, compaction.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the job results as JSON.")] = False,
    judge_url: Annotated[Optional[str], typer.Option("--judge", metavar="URL", help="An OpenAI-compatible "
                                                     "chat-completions endpoint asked about the pairs the embedded "
                                                     "scorer is unsure of (overrides the judge: section of "
                                                     "~/.config/memtui/config.yaml).")] = None,
    judge_model: Annotated[Optional[str], typer.Option("--judge-model", metavar="NAME",
                                                       help="The model the judge is asked for.")] = None,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Run the maintenance jobs (revalidation, expiry, dedupe, conflicts, compaction); idempotent."""
    from memtui.maintenance.runner import JOBS, MaintenanceError, maintain as run
    from memtui.similarity.judge import resolve_judge_config

    clock = _fix_clock(now)
    jobs = None
    if only:
        jobs = [j.strip() for j in only.split(",") if j.strip()]
        unknown = [j for j in jobs if j not in JOBS]
        if unknown:
            raise _fail(f"--only: unknown job {unknown[0]!r}; jobs are {', '.join(JOBS)}", 2)
    try:
        judge = resolve_judge_config(judge_url, judge_model)
    except ValueError as exc:
        raise _fail(str(exc), 2)
    engine = _engine(db)
    if not dry_run:
        _require(engine, _actor(actor, role, engine), "memtui maintain")
    try:
        results = run(engine, now=clock, repo=repo, dry_run=dry_run, only=jobs, judge=judge,
                      progress=None if as_json else lambda msg: _echo(f"maintain: {msg}", err=True))
    except MaintenanceError as exc:
        raise _fail(str(exc))
    if as_json:
        _echo(json.dumps([{"jobId": r.job_id, "jobType": r.job_type, "repositoryId": r.repository_id,
                                "selected": r.selected, "updated": r.updated, "dryRun": r.dry_run,
                                "summary": r.summary} for r in results], indent=2, default=str))
        return
    from memtui.maintenance.runner import result_notes

    for r in results:
        where = f" {r.repository_id}" if r.repository_id else ""
        verb = "would update" if r.dry_run else "updated"
        brief = {k: v for k, v in (r.summary or {}).items() if k not in ("couldNotCheck", "gitErrors")}
        _echo(f"{r.job_type}{where}: selected {r.selected}, {verb} {r.updated}"
              + (f"  {json.dumps(brief, default=str)}" if brief else ""))
        for note in result_notes(r):
            if not note.startswith("skipped "):  # already said while running
                _echo(f"  {note}")


@app.command()
def report(
    out: Annotated[Path, typer.Option("--out", help="Folder to write the report files into.")],
    now: NowOpt = None,
    pruning_policy: Annotated[Optional[Path], typer.Option("--pruning-policy", help="Pruning policy YAML "
                                                           "(default: the design's policy).")] = None,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Write the maintenance reports: health, revalidation, conflicts, pruning plan, review queue,
    duplicates and compaction proposals (seven YAML files). They cover the whole store: in a store
    with reviewers, one who sees only part of it is refused, as by the HTTP API (issue 21 item 7)."""
    from memtui.domain.pruning import PolicyError
    from memtui.governance.reviewers import require_whole_store
    from memtui.reports.maintenance import write_reports

    clock = _fix_clock(now)
    engine = _engine(db)
    _governance_call(require_whole_store, engine, _actor(actor, role, engine), "memtui report")
    if out.exists() and not out.is_dir():
        raise _fail(f"--out {out}: exists and is not a folder")
    try:
        paths = write_reports(engine, out, clock, pruning_policy=pruning_policy)
    except PolicyError as exc:
        raise _fail(str(exc))
    except OSError as exc:
        raise _fail(f"--out {out}: {exc.strerror or exc}")
    for p in paths:
        _echo(str(p))


@app.command()
def policy(
    action: Annotated[str, typer.Argument(help="apply")],
    file: Annotated[Path, typer.Argument(help="Policy YAML (policy: name, description, sendToReviewIf).")],
    now: NowOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List the affected memories; change nothing.")] = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Apply a review policy: every live memory it matches goes to needs_review, the policy named."""
    from memtui.maintenance.policy import PolicyFileError, apply_review_policy, load_review_policy

    if action != "apply":
        raise _fail("usage: memtui policy apply FILE", 2)
    clock = _fix_clock(now)
    try:
        pol = load_review_policy(file)
    except PolicyFileError as exc:
        raise _fail(str(exc))
    engine = _engine(db)
    who = _actor(actor, role, engine)
    if not dry_run:
        _require(engine, who, "policy apply")
    result = apply_review_policy(engine, pol, now=clock, dry_run=dry_run, requested_by=who.id,
                                 viewer=who)  # only memory inside the caller's scopes (issue 21)
    for c in result.changes:
        _echo(f"{c['memoryId']}: {c['from']} -> {c['to']}")
    _echo(f"policy {pol.name}: {'would send' if dry_run else 'sent'} {result.updated} memories to review")


@app.command()
def prune(
    pruning_policy: Annotated[Optional[Path], typer.Option("--policy", help="Pruning policy YAML "
                                                           "(default: the design's policy).")] = None,
    apply: Annotated[bool, typer.Option("--apply", help="Accept the plan: archive its archive list.")] = False,
    only: Annotated[Optional[list[str]], typer.Option("--only", help="With --apply: archive only these ids.")] = None,
    now: NowOpt = None,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Show the pruning plan (archive / keep with reasons); --apply archives (never deletes)."""
    from memtui.domain.pruning import PolicyError
    from memtui.maintenance.prune import apply_pruning_plan, load_pruning_policy, pruning_plan

    clock = _fix_clock(now)
    try:
        rules = load_pruning_policy(pruning_policy)
    except PolicyError as exc:
        raise _fail(str(exc))
    engine = _engine(db)
    who = _actor(actor, role, engine)
    plan = pruning_plan(engine, rules, clock, viewer=who)  # only memory inside the caller's scopes (issue 21)
    for item in plan.archive:
        _echo(f"archive  {item.memory_id}: {'; '.join(item.reasons)}")
    for item in plan.keep:
        _echo(f"keep     {item.memory_id}: {'; '.join(item.reasons)}")
    if apply:
        _require(engine, who, "prune --apply")
        try:
            result = apply_pruning_plan(engine, plan, who, set(only) if only else None, now=clock)
        except PolicyError as exc:
            raise _fail(str(exc))
        for c in result.changes:
            if "refused" in c:
                _echo(f"  not archived: {c['refused']}")
        _echo(f"archived {result.updated} memories")
    else:
        _echo(f"plan: archive {len(plan.archive)}, keep {len(plan.keep)} (run with --apply to accept)")


@app.command()
def usage(
    memory_id: Annotated[str, typer.Argument(help="The memory that was used.")],
    outcome: Annotated[str, typer.Option("--outcome", help="positive | negative | neutral | harm")],
    issue: Annotated[Optional[str], typer.Option("--issue", help="What went wrong (harm).")] = None,
    workflow_run: Annotated[Optional[str], typer.Option("--workflow-run", help="The workflow run id.")] = None,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Record a usage event; a harm outcome challenges the memory."""
    from memtui.maintenance.usage import record_usage
    from memtui.review.lifecycle import MemoryNotFound
    from memtui.safety.guard import SecretInComment

    try:
        engine = _engine(db)
        out = record_usage(engine, memory_id, outcome, _actor(actor, role, engine), workflow_run_id=workflow_run,
                           issue=issue)
    except (MemoryNotFound, SecretInComment) as exc:  # a secret in --issue/--workflow-run (issue 21 item 4)
        raise _fail(str(exc))
    except ValueError as exc:
        raise _fail(str(exc), 2)
    _echo(f"{memory_id}: usage {outcome} recorded ({out.usage_id})"
               + (f"; memory is now {out.new_state}" if out.new_state else ""))


@app.command()
def quality(
    memory_id: Annotated[Optional[str], typer.Argument(help="One memory (default: all).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Quality score, band and retrieval eligibility (with reasons) per memory (inside your scopes)."""
    from memtui.governance.visibility import visible_memory_ids
    from memtui.maintenance.assess import assess

    engine = _engine(db)
    seen = visible_memory_ids(engine, _actor(actor, role, engine))
    rows = [a for a in assess(engine) if memory_id in (None, a.memory_id) and (seen is None or a.memory_id in seen)]
    if memory_id and not rows:
        raise _fail(f"no memory {memory_id!r} in the store")
    if as_json:
        _echo(json.dumps([{"memoryId": a.memory_id, "state": a.state, "quality": {
            **a.quality.factors, "overall": a.quality.overall, "band": a.quality.band},
            "retrievalEligibility": {"eligible": a.eligibility.eligible, "reasons": list(a.eligibility.reasons)}}
            for a in rows], indent=2))
        return
    for a in rows:
        flag = "eligible" if a.eligibility.eligible else "excluded"
        _echo(f"{a.memory_id:<44} {a.state:<12} {a.quality.overall:.2f} {a.quality.band:<6} {flag}: "
                   f"{', '.join(a.eligibility.reasons)}")

@app.command()
def replay(
    action: Annotated[str, typer.Argument(help="record")],
    memory_id: Annotated[str, typer.Argument(help="The candidate the replay verified.")],
    probe: Annotated[str, typer.Option("--probe", help="The verification probe that was run.")],
    passed: Annotated[bool, typer.Option("--passed/--failed", help="Did the replay pass?")] = True,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Record a replay result as evidence; a passed replay promotes the candidate if the promotion gate allows."""
    from memtui.maintenance.promotion import record_replay
    from memtui.review.lifecycle import MemoryNotFound

    if action != "record":
        raise _fail("usage: memtui replay record CANDIDATE --probe NAME --passed|--failed", 2)
    try:
        engine = _engine(db)
        out = record_replay(engine, memory_id, probe, passed, _actor(actor, role, engine))
    except MemoryNotFound as exc:
        raise _fail(str(exc))
    except ValueError as exc:
        raise _fail(str(exc), 2)
    verdict = "promoted to active by the gate" if out.promoted else f"not promoted: {out.reason}"
    _echo(f"{memory_id}: replay {probe} {'passed' if passed else 'failed'}; {verdict}")
