"""The memtui command line: parses, calls services, prints (DESIGN.md, "Layers").

Global options come before the command: ``memtui --db d.db decide ...``; each command also
accepts ``--db``, ``--actor`` and ``--role`` after its name. Exit codes: 0 success, 1 a refused
operation (invariant, transition, invalid import), 2 usage errors.
"""

from __future__ import annotations

import getpass
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from memtui.clock import iso
from memtui.text import visible

app = typer.Typer(add_completion=False, no_args_is_help=False, rich_markup_mode=None,
                  help="memtui: keep coding-agent memory evidence-backed, scoped and reviewed.")

DbOpt = Annotated[Optional[str], typer.Option("--db", help="Store: a SQLite path or a postgresql:// URL "
                                               "(env MEMTUI_DB; default memtui.db here).")]
ActorOpt = Annotated[Optional[str], typer.Option("--actor", help="Who acts (env MEMTUI_ACTOR; default: login name).")]
RoleOpt = Annotated[Optional[str], typer.Option("--role", help="reviewer or lead (env MEMTUI_ROLE; default reviewer).")]


class _Ctx:
    db: str | None = None
    actor: str | None = None
    role: str | None = None


_ctx = _Ctx()


def _echo(message: object = "", err: bool = False) -> None:
    """Print one line; control characters in it (ANSI escapes from untrusted text) are shown, not obeyed."""
    typer.echo(visible(str(message)), err=err)


def _fail(message: str, code: int = 1) -> "typer.Exit":
    _echo(f"memtui: {message}", err=True)
    return typer.Exit(code)


def _engine(db: str | None):
    from memtui.store.engine import StoreError, open_store

    try:
        return open_store(db or _ctx.db)
    except StoreError as exc:
        raise _fail(str(exc))


def _actor(actor: str | None, role: str | None):
    from memtui.domain.invariants import Actor

    source = "--role" if (role or _ctx.role) else "MEMTUI_ROLE"
    role = role or _ctx.role or os.environ.get("MEMTUI_ROLE") or "reviewer"
    if role not in ("reviewer", "lead"):
        raise _fail(f"{source} must be reviewer or lead, not {role!r}", 2)
    who = actor or _ctx.actor or os.environ.get("MEMTUI_ACTOR")
    if not who:
        try:
            who = getpass.getuser()
        except Exception:  # no login name in some containers
            who = "unknown"
    return Actor(type="human", id=who, role=role)


@app.callback(invoke_without_command=True)
def main_callback(
    ctx: typer.Context,
    db: DbOpt = None,
    actor: ActorOpt = None,
    role: RoleOpt = None,
) -> None:
    """memtui: with no command, open the review queue TUI."""
    _ctx.db, _ctx.actor, _ctx.role = db, actor, role
    if ctx.invoked_subcommand is None:
        _open_tui(db, _actor(actor, role))


def _open_tui(db: str | None, actor) -> None:
    engine = _engine(db)
    from memtui.app import MemtuiApp

    MemtuiApp(engine, actor).run()


@app.command()
def init(db: DbOpt = None) -> None:
    """Create the store or bring it up to the newest schema revision."""
    from memtui.store.engine import StoreError, make_engine, upgrade

    try:
        engine = make_engine(db or _ctx.db)
        before, after = upgrade(engine)
    except StoreError as exc:
        raise _fail(str(exc))
    url = engine.url.render_as_string(hide_password=True)
    if before == after:
        _echo(f"store {url} is up to date (revision {after})")
    else:
        _echo(f"store {url} upgraded from {before or 'empty'} to revision {after}")


@app.command("import")
def import_(
    files: Annotated[list[Path], typer.Argument(help="Files (or folders of instruction files) to import.")],
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help="Import the valid records, list the rejects.")] = False,
    fmt: Annotated[str, typer.Option("--format", help="auto | native | markdown | mcp | mem0 | letta | awtl")] = "auto",
    repo: Annotated[Optional[Path], typer.Option("--repo", help="The git checkout the files belong to "
                                                 "(evidence is anchored at its HEAD).")] = None,
    repository_id: Annotated[Optional[str], typer.Option("--repository-id", help="Repository scope of the "
                                                         "imported candidates (default: the checkout's name).")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="List every line read but not imported "
                                          "(blank lines aside), with why.")] = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Import records: the design's shapes (YAML/JSON/JSONL) and the formats agents write (CLAUDE.md,
    AGENTS.md, Cursor rules, memory banks, MCP memory graph, Mem0, Letta). One transaction, all
    or nothing unless --skip-invalid; importing the same files twice adds nothing."""
    from memtui.importers.formats import FORMATS, import_paths
    from memtui.importers.native import ImportRefused

    if fmt != "auto" and fmt not in FORMATS:
        raise _fail(f"--format must be auto or one of {', '.join(FORMATS)}, not {fmt!r}", 2)
    engine = _engine(db)
    try:
        report = import_paths(engine, list(files), _actor(actor, role), fmt=fmt, repo_dir=repo,
                              repository_id=repository_id, skip_invalid=skip_invalid)
    except ImportRefused as exc:
        raise _fail(str(exc))
    if repo is not None:
        # the checkout the evidence points into is the one maintenance must read: register it
        from memtui.maintenance.repositories import register_repository
        from memtui.sources.git import SourceError, head_sha

        try:
            head_sha(repo)
            register_repository(engine, repository_id or repo.resolve().name, repo)
        except SourceError:
            pass
    extra = [f"{k} {len(getattr(report, k))}" for k in ("superseded", "withdrawn") if getattr(report, k, None)]
    _echo(f"imported {len(report.imported)}, already present {len(report.unchanged)}, "
          f"rejected {len(report.rejected)}" + (", " + ", ".join(extra) if extra else ""))
    for w in getattr(report, "warnings", []) or []:
        _echo(f"  warning: {w}")
    skipped = getattr(report, "skipped", []) or []
    if skipped:
        from collections import Counter

        counts = Counter(why for _, _, why in skipped)
        _echo(f"  skipped {len(skipped)} lines: " + ", ".join(f"{why} {n}" for why, n in counts.most_common()))
        if verbose:
            for source, line, why in skipped:
                if why != "blank":
                    _echo(f"  skipped: {source}:{line}: {why}")
    for err in report.rejected:
        _echo(f"  rejected: {err}")
    if report.rejected and not report.imported and not report.unchanged:
        raise typer.Exit(1)  # --skip-invalid and nothing valid at all


@app.command()
def decide(
    memory_id: Annotated[str, typer.Argument(help="The memory to decide on.")],
    decision: Annotated[str, typer.Argument(help="approve | reject | needs-review | archive")],
    comment: Annotated[Optional[str], typer.Option("--comment", help="Why; kept on the history event.")] = None,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Record a reviewer decision (one transaction with its history event)."""
    from memtui.domain.decisions import Decision
    from memtui.domain.invariants import LifecycleError
    from memtui.review.lifecycle import MemoryNotFound
    from memtui.review.service import ReviewService

    try:
        dec = Decision(decision)
    except ValueError:
        raise _fail(f"unknown decision {decision!r}; use approve, reject, needs-review or archive", 2)
    engine = _engine(db)
    try:
        out = ReviewService(engine).decide(memory_id, dec, _actor(actor, role), comment=comment)
    except (LifecycleError, MemoryNotFound) as exc:
        raise _fail(str(exc))
    _echo(f"{out.memory_id}: {out.from_state} -> {out.to_state} (event {out.event_id})")


@app.command()
def undo(
    memory_id: Annotated[str, typer.Argument(help="Undo the latest decision on this memory.")],
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Undo the latest human decision on a memory with a compensating event."""
    from memtui.domain.invariants import LifecycleError
    from memtui.review.lifecycle import MemoryNotFound
    from memtui.review.service import ReviewService

    engine = _engine(db)
    svc = ReviewService(engine)
    try:
        svc.detail(memory_id)
    except MemoryNotFound as exc:
        raise _fail(str(exc))
    event_id = svc.last_undoable_event(memory_id)
    if event_id is None:
        raise _fail(f"{memory_id}: no decision to undo")
    try:
        out = svc.undo(event_id, _actor(actor, role))
    except (LifecycleError, MemoryNotFound) as exc:
        raise _fail(str(exc))
    _echo(f"{out.memory_id}: {out.from_state} -> {out.to_state} (undid {out.compensates})")


def _detail_dict(d) -> dict:
    return {
        "memoryId": d.memory_id, "logicalMemoryId": d.logical_memory_id, "type": d.type,
        "statement": d.statement,
        "scope": {"tenantId": d.scope.tenant_id, "repositoryId": d.scope.repository_id,
                  "modulePath": d.scope.module_path, "appliesTo": list(d.scope.applies_to),
                  "doesNotApplyTo": list(d.scope.does_not_apply_to)},
        "state": d.state, "confidence": d.confidence, "reviewState": d.review_state,
        "conflictState": d.conflict_state, "impact": d.impact, "origin": d.origin,
        "proposedBy": {"type": d.proposer_type, "id": d.proposer_id} if d.proposer_type else None,
        "failureClass": d.failure_class, "promotionStatus": d.promotion_status,
        "requiresHumanReview": d.requires_human_review, "tags": list(d.tags),
        "invalidationPolicy": list(d.invalidation_policy),
        "createdAt": iso(d.created_at), "lastValidatedAt": iso(d.last_validated_at),
        "lastUsedAt": iso(d.last_used_at), "expiresAt": iso(d.expires_at),
        "expiresAfterDays": d.expires_after_days, "reviewAfterDays": d.review_after_days,
        "supersededBy": d.superseded_by, "version": d.version,
        "evidence": [
            {"type": e.type, "path": e.path, "commitSha": e.commit_sha,
             "lines": [e.line_start, e.line_end] if e.line_start is not None else None,
             "symbol": e.symbol, "target": e.target, "ref": e.ref, "spanHash": e.span_hash,
             "status": e.status, "repositoryId": e.repository_id,
             "current": {"path": e.current_path, "lines": [e.current_line_start, e.current_line_end],
                         "commitSha": e.current_commit} if e.current_path else None,
             "reasonCode": e.reason_code, "reason": e.status_reason}
            for e in d.evidence
        ],
        "revalidation": {"status": d.revalidation_status, "reasons": list(d.revalidation_reasons),
                         "proposedStatement": d.proposed_statement}
        if d.revalidation_status else None,
    }


@app.command()
def show(
    memory_id: Annotated[str, typer.Argument(help="The memory to show.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the record as JSON.")] = False,
    db: DbOpt = None,
) -> None:
    """Show one memory: statement, scope, state, version and evidence."""
    from memtui.review.lifecycle import MemoryNotFound
    from memtui.review.service import ReviewService

    try:
        d = ReviewService(_engine(db)).detail(memory_id)
    except MemoryNotFound as exc:
        raise _fail(str(exc))
    data = _detail_dict(d)
    if as_json:
        _echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    _echo(f"{d.memory_id}  [{d.state}]  version {d.version}")
    _echo(f"  statement:  {d.statement}")
    _echo(f"  type:       {d.type}   impact {d.impact}   confidence {d.confidence:.2f}")
    _echo(f"  scope:      {d.scope.label}")
    if d.scope.applies_to or d.scope.does_not_apply_to:
        _echo(f"  applies to: {', '.join(d.scope.applies_to) or '-'};  not to: "
                   f"{', '.join(d.scope.does_not_apply_to) or '-'}")
    _echo(f"  review:     {d.review_state}   conflict {d.conflict_state}   origin {d.origin}")
    if d.failure_class:
        _echo(f"  failure:    {d.failure_class}   promotion {d.promotion_status}")
    _echo(f"  created:    {iso(d.created_at)}   last validated {iso(d.last_validated_at) or '-'}")
    _echo(f"  evidence ({len(d.evidence)}):")
    for e in d.evidence:
        _echo(f"    - {e.type:<10} {e.location}  [{e.status}]")
        if e.current_location and e.current_location != e.location:
            _echo(f"      now at {e.current_location}")
        if e.status_reason and e.status not in ("valid", "unchecked"):
            _echo(f"      {e.status_reason}")
    if d.revalidation_status and d.revalidation_reasons:
        _echo(f"  revalidation: {d.revalidation_status}")
        for r in d.revalidation_reasons:
            _echo(f"    - {r}")
    if d.proposed_statement:
        _echo(f"  proposed edit (memtui edit {d.memory_id} --proposed):")
        _echo(f"    {d.proposed_statement}")


@app.command()
def history(
    memory_id: Annotated[str, typer.Argument(help="The memory whose history to print.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the events as JSON.")] = False,
    db: DbOpt = None,
) -> None:
    """Print the append-only state history of a memory, oldest first."""
    from memtui.review.lifecycle import MemoryNotFound
    from memtui.review.service import ReviewService

    try:
        events = ReviewService(_engine(db)).history(memory_id)
    except MemoryNotFound as exc:
        raise _fail(str(exc))
    if as_json:
        _echo(json.dumps([
            {"eventId": e.event_id, "memoryId": e.memory_id, "fromState": e.from_state, "toState": e.to_state,
             "reason": e.reason, "comment": e.comment, "actorType": e.actor_type, "actorId": e.actor_id,
             "actorRole": e.actor_role, "jobId": e.job_id, "compensates": e.compensates,
             "createdAt": iso(e.created_at)} for e in events], indent=2, ensure_ascii=False))
        return
    for e in events:
        actor = f"{e.actor_type}:{e.actor_id}" + (f" ({e.actor_role})" if e.actor_role else "")
        line = f"{iso(e.created_at)}  {e.from_state or '(new)':>12} -> {e.to_state:<12}  {actor}  {e.reason}"
        if e.comment:
            line += f"  — {e.comment}"
        _echo(line + f"  [{e.event_id}]")


def _health_dicts(rows, conflicted: dict) -> list[dict]:
    out = []
    for r in rows:
        s = r.by_state
        queue = s["candidate"] + s["needs_review"] + s["challenged"] + s["approved"]
        action = []
        if s["needs_review"] or s["challenged"]:
            action.append(f"review {s['needs_review'] + s['challenged']} memories that need review")
        if s["candidate"]:
            action.append(f"decide {s['candidate']} pending candidates")
        if conflicted.get(r.repository_id):
            action.append(f"resolve conflicts of {conflicted[r.repository_id]} memories")
        out.append({
            "repositoryId": r.repository_id, "total": r.total,
            "active": s["active"], "candidatesPending": s["candidate"], "needsReview": s["needs_review"],
            "conflicted": conflicted.get(r.repository_id, 0), "expired": s["expired"],
            "reviewQueue": queue, "byState": s, "actionRequired": action,
        })
    return out


def print_health(engine, as_json: bool) -> None:
    """Print the per-repository state counts (text table or ``{"memoryHealth": [...]}`` JSON)."""
    from memtui.domain.states import ALL_STATES
    from memtui.review.service import ReviewService

    svc = ReviewService(engine)
    data = _health_dicts(svc.health(), svc.conflict_open_count())
    if as_json:
        _echo(json.dumps({"memoryHealth": data}, indent=2))
        return
    if not data:
        _echo("the store holds no memories yet (memtui import FILE, or memtui demo)")
    for h in data:
        _echo(f"{h['repositoryId'] or '(org-wide)'}: {h['total']} memories")
        for state in ALL_STATES:
            _echo(f"  {state:<13}{h['byState'][state]:>6}")
        for a in h["actionRequired"]:
            _echo(f"  action required: {a}")


@app.command()
def health(
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    db: DbOpt = None,
) -> None:
    """Counts of memories per state for each repository."""
    print_health(_engine(db), as_json)


@app.command()
def demo(
    no_tui: Annotated[bool, typer.Option("--no-tui", help="Print the health summary and exit.")] = False,
    workdir: Annotated[Path, typer.Option("--workdir", help="Where the sample repository is cloned.")] = Path("memtui-demo"),
    fresh: Annotated[bool, typer.Option("--fresh", help="Re-clone the sample repository.")] = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Clone the sample order-service repository, load its memories, run maintenance, then open the TUI."""
    from memtui.importers.native import ImportRefused
    from memtui.sample import SampleDataMissing, set_up_demo
    from memtui.sources.git import SourceError

    engine = _engine(db)
    who = _actor(actor, role)
    try:
        setup = set_up_demo(engine, workdir, who, fresh=fresh,
                            progress=lambda msg: _echo(f"demo: {msg}", err=True))
    except (SampleDataMissing, SourceError, ImportRefused) as exc:
        raise _fail(str(exc))
    _echo(f"demo: repository order-service at {setup.checkout} (HEAD {setup.head[:10]}); "
               f"imported {len(setup.report.imported)}, already present {len(setup.report.unchanged)}",
               err=True)
    from memtui.clock import utcnow
    from memtui.maintenance.runner import maintain as run_maintenance

    for r in run_maintenance(engine, now=utcnow(), repo="order-service",
                             progress=lambda msg: _echo(f"demo: maintenance: {msg}", err=True)):
        _echo(f"demo: {r.job_type}: looked at {r.selected}, updated {r.updated}", err=True)
    if no_tui:
        print_health(engine, as_json=False)
        return
    from memtui.app import MemtuiApp

    MemtuiApp(engine, who).run()


@app.command("repo")
def repo_add(
    action: Annotated[str, typer.Argument(help="add | list")],
    name: Annotated[Optional[str], typer.Argument(help="Repository id, as memories' scope names it.")] = None,
    path: Annotated[Optional[Path], typer.Argument(help="Its git checkout.")] = None,
    tenant: Annotated[str, typer.Option("--tenant", help="Tenant id.")] = "default",
    db: DbOpt = None,
) -> None:
    """Register a repository checkout (``repo add NAME PATH``) or list them (``repo list``)."""
    from memtui.maintenance.repositories import list_repositories, register_repository
    from memtui.sources.git import SourceError, head_sha

    engine = _engine(db)
    if action == "list":
        repos = list_repositories(engine)
        if not repos:
            _echo("no repositories registered (memtui repo add NAME PATH)")
        for rid, tid, p in repos:
            _echo(f"{rid}\t{tid}\t{p or '-'}")
        return
    if action != "add" or not name or not path:
        raise _fail("usage: memtui repo add NAME PATH | memtui repo list", 2)
    try:
        head_sha(path)
    except SourceError as exc:
        raise _fail(str(exc))
    register_repository(engine, name, path, tenant_id=tenant)
    _echo(f"registered {name} at {path.resolve()}")


NowOpt = Annotated[Optional[str], typer.Option("--now", help="Fix the clock (ISO-8601), for reproducible runs.")]


def _fix_clock(now: str | None):
    """Parse ``--now`` and make it the process clock (history events, jobs and reports use it)."""
    from memtui.clock import parse_time, utcnow

    if now:
        try:
            parse_time(now)
        except ValueError as exc:
            raise _fail(f"--now: {exc}", 2)
        os.environ["MEMTUI_NOW"] = now
    return utcnow()


@app.command()
def edit(
    memory_id: Annotated[str, typer.Argument(help="The memory whose statement to edit.")],
    proposed: Annotated[bool, typer.Option("--proposed", help="Take revalidation's proposed statement "
                                           "(moved paths rewritten).")] = False,
    text: Annotated[Optional[str], typer.Option("--text", help="The new statement.")] = None,
    expect_version: Annotated[Optional[int], typer.Option("--expect-version", help="Refuse if the memory "
                                                          "is no longer at this version.")] = None,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Edit a memory's statement (recorded in its history); --proposed accepts revalidation's edit for
    moved paths and points the moved references at their new paths. The memory keeps its state:
    approve it afterwards."""
    from memtui.domain.invariants import LifecycleError
    from memtui.review.service import ReviewService

    if proposed == (text is not None):
        raise _fail("give exactly one of --proposed and --text", 2)
    try:
        out = ReviewService(_engine(db)).edit_statement(memory_id, _actor(actor, role), text=text,
                                                        proposed=proposed, expected_version=expect_version)
    except LifecycleError as exc:
        raise _fail(str(exc))
    _echo(f"{memory_id}: statement edited (event {out})")


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
    only: Annotated[Optional[str], typer.Option("--only", help="Comma-separated jobs: revalidate, expire, dedupe, "
                                                 "conflicts, compaction.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the job results as JSON.")] = False,
    db: DbOpt = None,
) -> None:
    """Run the maintenance jobs (revalidation, expiry, dedupe, conflicts, compaction); idempotent."""
    from memtui.maintenance.runner import JOBS, MaintenanceError, maintain as run

    clock = _fix_clock(now)
    jobs = None
    if only:
        jobs = [j.strip() for j in only.split(",") if j.strip()]
        unknown = [j for j in jobs if j not in JOBS]
        if unknown:
            raise _fail(f"--only: unknown job {unknown[0]!r}; jobs are {', '.join(JOBS)}", 2)
    engine = _engine(db)
    try:
        results = run(engine, now=clock, repo=repo, dry_run=dry_run, only=jobs,
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
    db: DbOpt = None,
) -> None:
    """Write the maintenance reports: health, revalidation, conflicts, pruning plan, review queue,
    duplicates and compaction proposals (seven YAML files)."""
    from memtui.domain.pruning import PolicyError
    from memtui.reports.maintenance import write_reports

    clock = _fix_clock(now)
    engine = _engine(db)
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
    result = apply_review_policy(_engine(db), pol, now=clock, dry_run=dry_run, requested_by=_actor(actor, role).id)
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
    plan = pruning_plan(engine, rules, clock)
    for item in plan.archive:
        _echo(f"archive  {item.memory_id}: {'; '.join(item.reasons)}")
    for item in plan.keep:
        _echo(f"keep     {item.memory_id}: {'; '.join(item.reasons)}")
    if apply:
        try:
            result = apply_pruning_plan(engine, plan, _actor(actor, role), set(only) if only else None, now=clock)
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

    try:
        out = record_usage(_engine(db), memory_id, outcome, _actor(actor, role), workflow_run_id=workflow_run,
                           issue=issue)
    except MemoryNotFound as exc:
        raise _fail(str(exc))
    except ValueError as exc:
        raise _fail(str(exc), 2)
    _echo(f"{memory_id}: usage {outcome} recorded ({out.usage_id})"
               + (f"; memory is now {out.new_state}" if out.new_state else ""))


@app.command()
def quality(
    memory_id: Annotated[Optional[str], typer.Argument(help="One memory (default: all).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    db: DbOpt = None,
) -> None:
    """Quality score, band and retrieval eligibility (with reasons) per memory."""
    from memtui.maintenance.assess import assess

    rows = [a for a in assess(_engine(db)) if memory_id in (None, a.memory_id)]
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


def _resolve_call(fn, *args, **kwargs):
    from memtui.domain.invariants import LifecycleError

    try:
        return fn(*args, **kwargs)
    except LifecycleError as exc:
        raise _fail(str(exc))


def _print_result(r) -> None:
    for mid, (before, after) in sorted(r.changes.items()):
        _echo(f"  {mid}: {before} -> {after}")
    _echo(f"decision {r.decision_id} ({r.kind}: {r.action})" + (f"; new memory {r.new_memory_id}" if r.new_memory_id else ""))


@app.command()
def duplicates(
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    db: DbOpt = None,
) -> None:
    """List open near-duplicate clusters (run `memtui maintain` to detect them)."""
    from memtui.maintenance.dedupe import cluster_records

    rows = [c for c in cluster_records(_engine(db)) if c["status"] == "open"]
    if as_json:
        _echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        _echo("no open duplicate clusters")
    for c in rows:
        _echo(f"{c['clusterId']}  {len(c['members'])} members  best {c['bestScore']:.0f}  {c['method']}  {c['scopeKey']}")
        for m in c["members"]:
            _echo(f"   {'*' if m == c['canonical'] else ' '} {m}")


@app.command()
def merge(
    cluster_id: Annotated[str, typer.Argument(help="The duplicate cluster.")],
    canonical: Annotated[Optional[str], typer.Option("--canonical", help="Keep this member (default: the proposed one).")] = None,
    text: Annotated[Optional[str], typer.Option("--text", help="Edited canonical statement.")] = None,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Merge a cluster: the canonical keeps all evidence, the others are superseded by it."""
    from memtui.review.resolve import ResolveService

    r = _resolve_call(ResolveService(_engine(db)).merge, cluster_id, _actor(actor, role), canonical_id=canonical,
                      canonical_text=text)
    _print_result(r)


@app.command("not-duplicates")
def not_duplicates(
    cluster_id: Annotated[str, typer.Argument(help="The duplicate cluster.")],
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Dismiss a cluster; its members are never proposed as duplicates of each other again."""
    from memtui.review.resolve import ResolveService

    _print_result(_resolve_call(ResolveService(_engine(db)).not_duplicates, cluster_id, _actor(actor, role)))


@app.command()
def conflicts(
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    all_: Annotated[bool, typer.Option("--all", help="Also resolved ones.")] = False,
    db: DbOpt = None,
) -> None:
    """List conflicts (open ones; --all for every record)."""
    from memtui.maintenance.conflicts import conflict_records

    rows = [c for c in conflict_records(_engine(db)) if all_ or c["status"] == "open"]
    if as_json:
        _echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        _echo("no open conflicts")
    for c in rows:
        a, b = c["memories"]
        _echo(f"{c['conflictId']}  [{c['severity']}] {c['status']}  A={a}  B={b}\n   {c['reason']}")


@app.command()
def resolve(
    conflict_id: Annotated[str, typer.Argument(help="The conflict.")],
    action: Annotated[str, typer.Argument(help="keep-a | keep-b | neither | not-a-conflict | narrow")],
    supersede: Annotated[bool, typer.Option("--supersede", help="The loser is superseded by the winner, not invalidated.")] = False,
    scope: Annotated[Optional[list[str]], typer.Option("--scope", help="With narrow: ID=MODULE_PATH (repeatable).")] = None,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Resolve a conflict with one of the five resolutions."""
    from memtui.review.resolve import ResolveService

    scopes = {}
    for item in scope or []:
        if "=" not in item:
            raise _fail(f"--scope {item!r}: expected ID=MODULE_PATH", 2)
        mid, module = item.split("=", 1)
        scopes[mid] = {"modulePath": module}
    r = _resolve_call(ResolveService(_engine(db)).resolve_conflict, conflict_id, action.replace("-", "_"),
                      _actor(actor, role), supersede=supersede, scopes=scopes)
    _print_result(r)


@app.command()
def compactions(
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    db: DbOpt = None,
) -> None:
    """List open compaction proposals."""
    from memtui.maintenance.compaction import compaction_records

    rows = [p for p in compaction_records(_engine(db)) if p["status"] == "open"]
    if as_json:
        _echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        _echo("no open compaction proposals")
    for p in rows:
        flag = "  (scope broadens: a lead must accept)" if p["broadensScope"] else ""
        _echo(f"{p['proposalId']}  {', '.join(p['members'])}{flag}\n   {p['proposedStatement']}")


@app.command()
def compaction(
    action: Annotated[str, typer.Argument(help="accept | reject")],
    proposal_id: Annotated[str, typer.Argument(help="The compaction proposal.")],
    text: Annotated[Optional[str], typer.Option("--text", help="Edited statement (accept).")] = None,
    keep: Annotated[Optional[list[str]], typer.Option("--keep", help="Member to keep beside the new memory.")] = None,
    candidate: Annotated[bool, typer.Option("--candidate", help="Create the new memory as a candidate, not active.")] = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Accept (optionally with edited text) or reject a compaction proposal."""
    from memtui.review.resolve import ResolveService

    svc = ResolveService(_engine(db))
    who = _actor(actor, role)
    if action == "accept":
        r = _resolve_call(svc.accept_compaction, proposal_id, who, statement=text, keep=keep, activate=not candidate)
    elif action == "reject":
        r = _resolve_call(svc.reject_compaction, proposal_id, who)
    else:
        raise _fail("usage: memtui compaction accept|reject PROPOSAL", 2)
    _print_result(r)


@app.command("undo-decision")
def undo_decision(
    decision_id: Annotated[str, typer.Argument(help="A merge, conflict or compaction decision id.")],
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Undo a merge, conflict resolution or compaction with compensating events."""
    from memtui.review.resolve import ResolveService

    _print_result(_resolve_call(ResolveService(_engine(db)).undo, decision_id, _actor(actor, role)))


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
        out = record_replay(_engine(db), memory_id, probe, passed, _actor(actor, role))
    except MemoryNotFound as exc:
        raise _fail(str(exc))
    except ValueError as exc:
        raise _fail(str(exc), 2)
    verdict = "promoted to active by the gate" if out.promoted else f"not promoted: {out.reason}"
    _echo(f"{memory_id}: replay {probe} {'passed' if passed else 'failed'}; {verdict}")


def main() -> None:
    """Console-script entry point."""
    app(prog_name="memtui")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


def _register_extra_commands() -> None:
    """Recall and export commands live in memtui.cli_io (issue 5)."""
    from memtui.cli_io import register

    register(app)


_register_extra_commands()
