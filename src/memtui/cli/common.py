"""The command line's shared parts: the typer app, global options, the actor, printing and failing.

Global options come before the command: ``memtui --db d.db decide ...``; each command also
accepts ``--db``, ``--actor`` and ``--role`` after its name. Exit codes: 0 success, 1 a refused
operation (invariant, transition, invalid import), 2 usage errors.
"""

from __future__ import annotations

import getpass
import os
from typing import Annotated, Optional

import typer

from memtui.text import control_problem, visible

app = typer.Typer(add_completion=False, no_args_is_help=False, rich_markup_mode=None,
                  help="memtui: keep coding-agent memory evidence-backed, scoped and reviewed.")

DbOpt = Annotated[Optional[str], typer.Option("--db", help="Store: a SQLite path or a postgresql:// URL "
                                               "(env MEMTUI_DB; default memtui.db here).")]
ActorOpt = Annotated[Optional[str], typer.Option("--actor", help="Who acts (env MEMTUI_ACTOR; default: login name).")]
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
    from memtui.store.engine import StoreError, open_store

    try:
        return open_store(db or _ctx.db)
    except StoreError as exc:
        raise _fail(str(exc))


def _actor_name(actor: str | None) -> str:
    """Who acts: ``--actor``, the global ``--actor``, ``MEMTUI_ACTOR`` or the login name."""
    who = actor or _ctx.actor or os.environ.get("MEMTUI_ACTOR")
    if not who:
        try:
            who = getpass.getuser()
        except Exception:  # no login name in some containers
            who = "unknown"
    if problem := control_problem("--actor", who):  # issue 9 item 5
        raise _fail(problem, 2)
    return who


def _actor(actor: str | None, role: str | None, engine):
    """The acting human as the store the command opened knows it
    (:func:`memtui.governance.reviewers.resolve_actor`): exit 2 for a declared role in a store
    with reviewers, exit 1 for a name that is not one of its reviewers."""
    from memtui.governance.reviewers import GovernanceError, resolve_actor

    source = "--role" if (role or _ctx.role) else "MEMTUI_ROLE"
    declared = role or _ctx.role or os.environ.get("MEMTUI_ROLE")
    try:
        return resolve_actor(engine, _actor_name(actor), declared, role_source=source)
    except GovernanceError as exc:
        raise _fail(str(exc), exc.exit_code)


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
    engine = _engine(db)
    who = _actor(actor, role, engine)
    from memtui.app import MemtuiApp

    MemtuiApp(engine, who).run()


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
