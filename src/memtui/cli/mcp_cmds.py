"""``memtui mcp``: serve the store to coding agents over the Model Context Protocol (stdio; issue 12 item 1).

The SDK and the store are loaded in the background while ``initialize`` is answered
(:mod:`memtui.mcp_server.stdio`; issue 22 item 2), so an agent's session starts at once; nothing heavy
is imported at module level.
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
    from memtui.text import control_problem

    actor = actor or _ctx.actor
    if actor is not None and (problem := control_problem("--actor", actor) or (
            None if actor.strip() else "--actor is empty")):
        raise _fail(problem, 2)
    engine = parsed = None
    if scope is not None:  # checked against the store before serving (exit 2): the store opens first
        from memtui.recall import RecallError, resolve_any_scope

        engine = _engine(db)
        try:
            parsed = resolve_any_scope(engine, scope)
        except RecallError as exc:
            raise _fail(f"--scope: {exc}", 2)
    served = parsed if parsed is not None and parsed.tenant is not None else None

    def build():
        """In the loader thread: the store, then the recall warm-up in a thread of its own while the SDK
        loads and its server is built (a recall waits for both)."""
        import threading

        from memtui.domain.invariants import Actor

        store = engine if engine is not None else _engine(db)
        agent = Actor(type="agent", id=actor or "mcp-client")  # all visibility reads of an agent is its type
        threading.Thread(target=_warm, args=(store, served, agent), name="memtui-mcp-warm", daemon=True).start()
        from memtui.mcp_server.server import build_server

        return build_server(store, scope=parsed, allow_propose=allow_propose, actor=actor)

    from memtui.mcp_server.stdio import serve

    serve(build, served.label if served is not None else "the whole store")


def _warm(engine, within, agent) -> None:
    from memtui.recall import warm_quietly  # imported in the warm-up thread, not before the SDK

    warm_quietly(engine, within, agent, "memtui mcp")
