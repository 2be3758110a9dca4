"""``memtui mcp``: serve the store to coding agents over the Model Context Protocol (stdio; issue 12 item 1).

The SDK is imported inside the command, so ``memtui`` starts as fast without it.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memtui.cli.common import DbOpt, _ctx, _engine, _fail, app


@app.command("mcp")
def mcp_command(
    scope: Annotated[Optional[str], typer.Option(
        "--scope", help="Serve only this scope: tenant[/repository[/module]] or repository:NAME[/module] "
                         "(default: the whole store).")] = None,
    allow_propose: Annotated[bool, typer.Option(
        "--allow-propose", help="Offer propose_memory (agents may propose candidates; never more).")] = False,
    actor: Annotated[Optional[str], typer.Option(
        "--actor", help="The agent's name on usage events and proposals (default: the name the MCP client "
                        "announces).")] = None,
    db: DbOpt = None,
) -> None:
    """An MCP server over stdio: recall, get_memory, report_usage, report_harm (and propose_memory)."""
    from memtui.recall import RecallError, resolve_any_scope
    from memtui.text import control_problem

    actor = actor or _ctx.actor
    if actor is not None and (problem := control_problem("--actor", actor) or (
            None if actor.strip() else "--actor is empty")):
        raise _fail(problem, 2)
    engine = _engine(db)
    parsed = None
    if scope is not None:
        try:
            parsed = resolve_any_scope(engine, scope)
        except RecallError as exc:
            raise _fail(f"--scope: {exc}", 2)
    from memtui.mcp_server.server import run_stdio

    run_stdio(engine, scope=parsed, allow_propose=allow_propose, actor=actor)
