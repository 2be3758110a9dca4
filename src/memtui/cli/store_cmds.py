"""Commands that set up a store and fill it: ``init``, ``import``, ``demo``, ``repo``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer


from memtui.cli.common import (ActorOpt, DbOpt, RoleOpt, _actor, _ctx, _echo, _engine, _fail,
                               app)


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
    max_statement_bytes: Annotated[Optional[int], typer.Option(
        "--max-statement-bytes", help="Refuse a statement longer than this (UTF-8 bytes; env "
        "MEMTUI_MAX_STATEMENT_BYTES; default 4096).")] = None,
    max_excerpt_bytes: Annotated[Optional[int], typer.Option(
        "--max-excerpt-bytes", help="Refuse an evidence excerpt longer than this (env MEMTUI_MAX_EXCERPT_BYTES; "
        "default 65536).")] = None,
    max_file_bytes: Annotated[Optional[int], typer.Option(
        "--max-file-bytes", help="Refuse a file larger than this (env MEMTUI_MAX_FILE_BYTES; default 52428800 "
        "= 50 MB).")] = None,
    keep_personal_data: Annotated[bool, typer.Option("--keep-personal-data", help="Keep home-directory paths, "
                                                     "e-mail addresses and phone numbers (default: redacted).")] = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Import records: the design's shapes (YAML/JSON/JSONL) and the formats agents write (CLAUDE.md,
    AGENTS.md, Cursor rules, memory banks, MCP memory graph, Mem0, Letta). One transaction, all
    or nothing unless --skip-invalid; importing the same files twice adds nothing."""
    from memtui.importers.formats import FORMATS, import_paths
    from memtui.importers.limits import ImportLimits, use_limits
    from memtui.importers.native import ImportRefused
    from memtui.importers.reader import ImportFileError

    if fmt != "auto" and fmt not in FORMATS:
        raise _fail(f"--format must be auto or one of {', '.join(FORMATS)}, not {fmt!r}", 2)
    try:
        limits = ImportLimits.from_env(statement_bytes=max_statement_bytes, excerpt_bytes=max_excerpt_bytes,
                                       file_bytes=max_file_bytes)
    except ValueError as exc:
        raise _fail(str(exc), 2)
    engine = _engine(db)
    try:
        with use_limits(limits):
            report = import_paths(engine, list(files), _actor(actor, role, engine), fmt=fmt, repo_dir=repo,
                                  repository_id=repository_id, skip_invalid=skip_invalid,
                                  keep_personal_data=keep_personal_data)
    except ImportRefused as exc:
        raise _fail(str(exc))
    except ImportFileError as exc:  # --repo is not a git checkout (or has no commit)
        raise _fail(str(exc), 2)
    if repo is not None:
        # the checkout the evidence points into is the one maintenance must read: register it
        from memtui.maintenance.repositories import SourceError, register_checkout

        try:
            register_checkout(engine, repository_id or repo.resolve().name, repo)
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
    for mid, why in getattr(report, "demoted", []) or []:  # issue 21 item 3: the evidence invariant
        _echo(f"  imported as a candidate: {mid}: {why}")
    from memtui.cli.safety_cmds import print_import_safety

    print_import_safety(report)
    if report.rejected and not report.imported and not report.unchanged:
        raise typer.Exit(1)  # --skip-invalid and nothing valid at all

@app.command()
def demo(
    no_tui: Annotated[bool, typer.Option("--no-tui", help="Print the health summary and exit.")] = False,
    workdir: Annotated[Path, typer.Option("--workdir", help="Where the sample repository is cloned.")] = Path("memtui-demo"),
    fresh: Annotated[bool, typer.Option("--fresh", help="Re-clone the sample repository.")] = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Clone the sample order-service repository, load its memories, run maintenance, then open the TUI."""
    from memtui.importers.native import ImportRefused
    from memtui.maintenance.repositories import SourceError
    from memtui.sample import SampleDataMissing, set_up_demo

    workdir.mkdir(parents=True, exist_ok=True)  # the demo's own folder (its store may live in it)
    engine = _engine(db)
    who = _actor(actor, role, engine)
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
        from memtui.cli.review_cmds import print_health

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
    from memtui.maintenance.repositories import SourceError, list_repositories, register_checkout

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
    from memtui.safety.guard import SecretInComment

    try:
        register_checkout(engine, name, path, tenant_id=tenant)
    except SourceError as exc:  # not a git checkout with a commit
        raise _fail(str(exc))
    except SecretInComment as exc:  # issue 21 item 4
        raise _fail(str(exc))
    _echo(f"registered {name} at {path.resolve()}")
