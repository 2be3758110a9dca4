"""CLI commands for memory in and out of the store (issue 5): ``recall``, ``export agents-md``,
``export json`` and ``import-store``."""

from __future__ import annotations

from memtui.text import json_text

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from memtui.cli.common import ActorOpt, DbOpt, RoleOpt, _actor, _echo, _engine, _fail, _require, app

OutOpt = Annotated[Optional[Path], typer.Option("--out", help="Write to this file instead of printing.")]


def _write_or_echo(text: str, out: Path | None, what: str) -> None:

    if out is None:
        _echo(text.rstrip("\n"))
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise _fail(f"cannot write {out}: {exc.strerror or exc}")
    _echo(f"wrote {what} to {out}", err=True)


def recall_command(
    task: Annotated[str, typer.Argument(help="What the agent is about to do, in words.")],
    scope: Annotated[str, typer.Option("--scope", help="repository:NAME or repository:NAME/module/path.")],
    limit: Annotated[int, typer.Option("--limit", min=1, help="At most this many memories.")] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print the pack as JSON.")] = False,
    no_record: Annotated[bool, typer.Option("--no-record", help="Do not write usage events.")] = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """A small pack of eligible memories relevant to TASK, and what was left out and why."""
    from memtui.recall import RecallError, format_pack_markdown, pack_to_json, recall

    engine = _engine(db)
    try:
        pack = recall(engine, task, scope, limit=limit, actor=_actor(actor, role, engine), record=not no_record)
    except RecallError as exc:
        raise _fail(str(exc))
    if as_json:
        _echo(json_text(pack_to_json(pack)))
    else:
        _echo(format_pack_markdown(pack).rstrip("\n"))


export_app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                         help="Export memory: agents-md (an AGENTS.md section) or json (the whole store).")


@export_app.command("agents-md")
def export_agents_md_command(
    scope: Annotated[str, typer.Option("--scope", help="repository:NAME or repository:NAME/module/path.")],
    out: OutOpt = None,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """The active memories of a scope as a Markdown section an agent reads (grouped by type)."""
    from memtui.recall import RecallError
    from memtui.reports.export import export_agents_md

    try:
        engine = _engine(db)
        who = _actor(actor, role, engine)
        text = export_agents_md(engine, scope, viewer=who)
    except RecallError as exc:
        raise _fail(str(exc))
    _write_or_echo(text, out, "the AGENTS.md section")
    from memtui.reports.export import parse_agents_md
    from memtui.safety.incidents import record_export

    record_export(engine, "agents-md", [mid for mid, _ in parse_agents_md(text)], who.id, scope=scope)


@export_app.command("json")
def export_json_command(out: OutOpt = None, db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None) -> None:
    """The whole store with history, for `memtui import-store` into another store (ids preserved);
    in a store with reviewers, only the memory inside your scopes."""
    from memtui.reports.export import export_json

    engine = _engine(db)
    who = _actor(actor, role, engine)
    data = export_json(engine, who)
    text = json_text(data) + "\n"
    _write_or_echo(text, out, "the store export")
    from memtui.safety.incidents import record_export

    record_export(engine, "json", [m["memoryId"] for m in data["memories"]], who.id)


def import_store_command(
    file: Annotated[Path, typer.Argument(help="A file written by `memtui export json`.")],
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Load a store export into an EMPTY store (one transaction; ids and history preserved)."""
    from memtui.reports.export import ExportError, import_json_store

    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _fail(f"{file}: no such file")
    except (OSError, UnicodeDecodeError) as exc:
        raise _fail(f"{file}: cannot read: {exc}")
    except json.JSONDecodeError as exc:
        raise _fail(f"{file}: line {exc.lineno}: JSON syntax error: {exc.msg}")
    engine = _engine(db)
    who = _actor(actor, role, engine)
    _require(engine, who, "import-store")
    try:
        counts = import_json_store(engine, data, who)
    except ExportError as exc:
        raise _fail(f"{file}: {exc}; nothing was imported")
    _echo(f"imported {counts.get('memories', 0)} memories, {counts.get('evidence', 0)} evidence, "
          f"{counts.get('history', 0)} history events, {counts.get('repositories', 0)} repositories")


app.command("recall")(recall_command)
app.add_typer(export_app, name="export")
app.command("import-store")(import_store_command)
