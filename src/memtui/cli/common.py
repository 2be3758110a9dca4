"""The command line's shared parts: the typer app, global options, the actor, printing and failing.

Global options come before the command: ``memtui --db d.db decide ...``; each command also
accepts ``--db``, ``--actor`` and ``--role`` after its name. Exit codes: 0 success, 1 a refused
operation (invariant, transition, invalid import), 2 usage errors.
"""

from __future__ import annotations

import os
from typing import Annotated, Optional

import typer

from memtui.text import visible

app = typer.Typer(add_completion=False, no_args_is_help=False, rich_markup_mode=None,
                  help="memtui: keep coding-agent memory evidence-backed, scoped and reviewed.")

DbOpt = Annotated[Optional[str], typer.Option("--db", help="Store: a SQLite path or a postgresql:// URL "
                                               "(env MEMTUI_DB; default memtui.db here).")]
ActorOpt = Annotated[Optional[str], typer.Option("--actor", help="Who acts (env MEMTUI_ACTOR; default: login name). "
                                                   "In a store with reviewers only the connection's identity "
                                                   "or a reviewer it acts for by delegation.")]
RoleOpt = Annotated[Optional[str], typer.Option("--role", help="reviewer, lead or maintainer, in a store without "
                                                 "registered reviewers only (env MEMTUI_ROLE; default lead: the single user holds every role).")]


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
    from memtui.cli.launch import CommandFailed, open_engine

    try:
        return open_engine(db or _ctx.db)
    except CommandFailed as exc:
        raise _fail(exc.message, exc.code)


def _acting_name(actor: str | None, engine) -> str:
    """Who acts on ``engine``'s store (:func:`memtui.cli.launch.actor_name`): with reviewers the
    connection's identity, which ``--actor`` (this one or the global one) or ``MEMTUI_ACTOR`` may
    only confirm or name a reviewer it acts for (exit 1, audited); without, the claim or the login."""
    from memtui.cli.launch import CommandFailed, actor_name

    try:
        return actor_name(engine, actor or _ctx.actor)
    except CommandFailed as exc:
        raise _fail(exc.message, exc.code)


def _actor(actor: str | None, role: str | None, engine):
    """The acting human as the store the command opened knows it
    (:func:`memtui.cli.launch.acting`): exit 2 for a declared role in a store
    with reviewers, exit 1 for a name that is not one of its reviewers or not the connection's
    identity (nor one it acts for by delegation; issue 21 item 5)."""
    from memtui.cli.launch import CommandFailed, acting

    try:
        return acting(engine, actor or _ctx.actor, role or _ctx.role)
    except CommandFailed as exc:
        raise _fail(exc.message, exc.code)


def _governance_call(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``; a GovernanceError (refused identity or administration) fails the command
    with its exit code (1 refused, 2 usage)."""
    from memtui.governance.reviewers import GovernanceError

    try:
        return fn(*args, **kwargs)
    except GovernanceError as exc:
        raise _fail(str(exc), exc.exit_code)


def _require(engine, actor, what: str, roles: tuple[str, ...] = ("maintainer",)) -> None:
    """Refuse (exit 1, audited) a governed actor without one of ``roles`` for ``what`` (issue 9)."""
    from memtui.governance.reviewers import GovernanceError, require_role

    try:
        require_role(engine, actor, roles, what)
    except GovernanceError as exc:
        raise _fail(str(exc), exc.exit_code)


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
        _open_tui(db, actor, role)


def _open_tui(db: str | None, actor: str | None, role: str | None) -> None:
    from memtui.cli.launch import run_tui

    code = run_tui(db, actor, role)
    if code:
        raise typer.Exit(code)


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
