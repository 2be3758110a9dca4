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


def _fail(message: str, code: int = 1) -> "typer.Exit":
    typer.echo(f"memtui: {message}", err=True)
    return typer.Exit(code)


def _engine(db: str | None):
    from memtui.store.engine import StoreError, open_store

    try:
        return open_store(db or _ctx.db)
    except StoreError as exc:
        raise _fail(str(exc))


def _actor(actor: str | None, role: str | None):
    from memtui.domain.invariants import Actor

    role = role or _ctx.role or os.environ.get("MEMTUI_ROLE") or "reviewer"
    if role not in ("reviewer", "lead"):
        raise _fail(f"--role must be reviewer or lead, not {role!r}", 2)
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
        typer.echo(f"store {url} is up to date (revision {after})")
    else:
        typer.echo(f"store {url} upgraded from {before or 'empty'} to revision {after}")


@app.command("import")
def import_(
    files: Annotated[list[Path], typer.Argument(help="YAML, JSON or JSONL files in the design's record shapes.")],
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help="Import the valid records, list the rejects.")] = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Import memory and candidate records; one transaction, all or nothing unless --skip-invalid."""
    from memtui.importers.native import ImportRefused, import_files

    engine = _engine(db)
    try:
        report = import_files(engine, list(files), _actor(actor, role), skip_invalid=skip_invalid)
    except ImportRefused as exc:
        raise _fail(str(exc))
    typer.echo(f"imported {len(report.imported)}, already present {len(report.unchanged)}, "
               f"rejected {len(report.rejected)}")
    for err in report.rejected:
        typer.echo(f"  rejected: {err}")
    if report.rejected:
        raise typer.Exit(1)


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
    typer.echo(f"{out.memory_id}: {out.from_state} -> {out.to_state} (event {out.event_id})")


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
    event_id = svc.last_undoable_event(memory_id)
    if event_id is None:
        raise _fail(f"{memory_id}: no decision to undo")
    try:
        out = svc.undo(event_id, _actor(actor, role))
    except (LifecycleError, MemoryNotFound) as exc:
        raise _fail(str(exc))
    typer.echo(f"{out.memory_id}: {out.from_state} -> {out.to_state} (undid {out.compensates})")


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
             "status": e.status, "repositoryId": e.repository_id}
            for e in d.evidence
        ],
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
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    typer.echo(f"{d.memory_id}  [{d.state}]  version {d.version}")
    typer.echo(f"  statement:  {d.statement}")
    typer.echo(f"  type:       {d.type}   impact {d.impact}   confidence {d.confidence:.2f}")
    typer.echo(f"  scope:      {d.scope.label}")
    if d.scope.applies_to or d.scope.does_not_apply_to:
        typer.echo(f"  applies to: {', '.join(d.scope.applies_to) or '-'};  not to: "
                   f"{', '.join(d.scope.does_not_apply_to) or '-'}")
    typer.echo(f"  review:     {d.review_state}   conflict {d.conflict_state}   origin {d.origin}")
    if d.failure_class:
        typer.echo(f"  failure:    {d.failure_class}   promotion {d.promotion_status}")
    typer.echo(f"  created:    {iso(d.created_at)}   last validated {iso(d.last_validated_at) or '-'}")
    typer.echo(f"  evidence ({len(d.evidence)}):")
    for e in d.evidence:
        typer.echo(f"    - {e.type:<10} {e.location}  [{e.status}]")


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
        typer.echo(json.dumps([
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
        typer.echo(line + f"  [{e.event_id}]")


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
        typer.echo(json.dumps({"memoryHealth": data}, indent=2))
        return
    if not data:
        typer.echo("the store holds no memories yet (memtui import FILE, or memtui demo)")
    for h in data:
        typer.echo(f"{h['repositoryId'] or '(org-wide)'}: {h['total']} memories")
        for state in ALL_STATES:
            typer.echo(f"  {state:<13}{h['byState'][state]:>6}")
        for a in h["actionRequired"]:
            typer.echo(f"  action required: {a}")


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
    """Clone the sample order-service repository, load its memories, then open the TUI."""
    from memtui.importers.native import ImportRefused
    from memtui.sample import SampleDataMissing, set_up_demo
    from memtui.sources.git import SourceError

    engine = _engine(db)
    who = _actor(actor, role)
    try:
        setup = set_up_demo(engine, workdir, who, fresh=fresh,
                            progress=lambda msg: typer.echo(f"demo: {msg}", err=True))
    except (SampleDataMissing, SourceError, ImportRefused) as exc:
        raise _fail(str(exc))
    typer.echo(f"demo: repository order-service at {setup.checkout} (HEAD {setup.head[:10]}); "
               f"imported {len(setup.report.imported)}, already present {len(setup.report.unchanged)}",
               err=True)
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
        for rid, tid, p in list_repositories(engine):
            typer.echo(f"{rid}\t{tid}\t{p or '-'}")
        return
    if action != "add" or not name or not path:
        raise _fail("usage: memtui repo add NAME PATH | memtui repo list", 2)
    try:
        head_sha(path)
    except SourceError as exc:
        raise _fail(str(exc))
    register_repository(engine, name, path, tenant_id=tenant)
    typer.echo(f"registered {name} at {path.resolve()}")


def main() -> None:
    """Console-script entry point."""
    app(prog_name="memtui")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
