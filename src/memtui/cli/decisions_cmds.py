"""``memtui decisions export``: the reviewer decisions as a report (issue 11, item 7) — Markdown
for a weekly review, CSV, JSON or YAML; see :mod:`memtui.reports.decisions`."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memtui.cli.common import DbOpt, _actor, _echo, _engine, _fail, app
from memtui.cli.io_cmds import OutOpt

decisions_app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                            help="Reports of reviewer decisions.")


@decisions_app.command("export")
def export_decisions(
    fmt: Annotated[str, typer.Option("--format", help="md | csv | json | yaml")] = "md",
    since: Annotated[Optional[str], typer.Option("--since", help="Only decisions at or after this "
                                                 "ISO-8601 time (a date alone is midnight UTC).")] = None,
    actor: Annotated[Optional[str], typer.Option("--actor", help="Only this reviewer's decisions.")] = None,
    repository: Annotated[Optional[str], typer.Option("--repository", help="Only decisions on memory "
                                                      "of this repository.")] = None,
    out: OutOpt = None,
    db: DbOpt = None,
) -> None:
    """Every reviewer decision with its memory, the statement at the time, from/to state, actor,
    time, comment and evidence summary; Markdown groups them by reviewer and outcome."""
    from memtui.clock import parse_time
    from memtui.reports.decisions import FORMATS, DecisionFilters, decision_report, write_decision_report

    if fmt not in FORMATS:
        raise _fail(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}", 2)
    try:
        when = parse_time(since) if since is not None else None
    except ValueError as exc:
        raise _fail(f"--since: {exc}", 2)
    engine = _engine(db)
    # the reader is the global --actor (``memtui --actor ann decisions export``); --actor here filters
    filters = DecisionFilters(since=when, actor=actor, repository=repository, viewer=_actor(None, None, engine))
    if out is None:
        text, _n = decision_report(engine, fmt, filters)
        _echo(text.rstrip("\n"))
        return
    try:
        n = write_decision_report(engine, out, fmt, filters)
    except OSError as exc:
        raise _fail(f"--out {out}: cannot write: {exc.strerror or exc}")
    _echo(f"wrote {n} decision{'' if n == 1 else 's'} to {out}", err=True)


app.add_typer(decisions_app, name="decisions")
