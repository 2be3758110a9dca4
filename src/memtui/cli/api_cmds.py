"""The HTTP API's commands (issue 12): ``serve`` and ``tokens create|list|revoke``.

``serve`` only parses and starts :func:`memtui.api.app.create_app` on uvicorn; fastapi and uvicorn
are imported inside it so every other command starts as fast as before.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memtui.cli.common import (ActorOpt, DbOpt, _acting_name, _actor, _ctx, _echo, _engine, _fail, _governance_call,
                               _require, app)
from memtui.text import json_text

tokens_app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                         help="Bearer tokens of the HTTP API (memtui serve), per reviewer or agent.")


@tokens_app.command("create")
def tokens_create(
    name: Annotated[str, typer.Argument(help="The reviewer (as in memtui reviewers) or agent the token is for.")],
    agent: Annotated[bool, typer.Option("--agent", help="An agent token: recall and usage, never decisions.")] = False,
    expires: Annotated[Optional[float], typer.Option("--expires", help="Expire after this many days (default never).")] = None,
    db: DbOpt = None, actor: ActorOpt = None,
) -> None:
    """Issue a token and print its secret once (only its hash is stored); audited. Needs a lead or
    maintainer once the store has one (as memtui reviewers add)."""
    from memtui.clock import iso
    from memtui.governance.tokens import create_token

    engine = _engine(db)
    view, secret = _governance_call(create_token, engine, name, "agent" if agent else "reviewer",
                                    _acting_name(actor, engine), expires_days=expires)
    _echo(secret)
    _echo(f"token {view.token_id} for {view.kind} {view.name}"
          + (f", expires {iso(view.expires_at)}" if view.expires_at else "")
          + ": shown once, keep it (Authorization: Bearer TOKEN)", err=True)


@tokens_app.command("list")
def tokens_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    db: DbOpt = None, actor: ActorOpt = None,
) -> None:
    """List the tokens (never their secrets): name, kind, status, created, expires, last used. Needs a
    lead or maintainer in a store with reviewers (issue 21 item 8; refused exit 1, audited)."""
    from memtui.clock import iso, utcnow
    from memtui.governance.reviewers import ADMIN_ROLES
    from memtui.governance.tokens import list_tokens

    engine = _engine(db)
    _require(engine, _actor(actor, None, engine), "tokens list", ADMIN_ROLES)
    rows, now = list_tokens(engine), utcnow()
    if as_json:
        _echo(json_text([t.to_json(now) for t in rows]))
        return
    if not rows:
        _echo("no tokens (memtui tokens create NAME [--agent])")
    for t in rows:
        _echo(f"{t.token_id}  {t.name:<16} {t.kind:<8} {t.status(now):<8} created {iso(t.created_at)} by "
              f"{t.created_by}  expires {iso(t.expires_at) or 'never'}  last used {iso(t.last_used_at) or '-'}")


@tokens_app.command("revoke")
def tokens_revoke(
    name_or_id: Annotated[str, typer.Argument(help="A token id, or a name (all its unrevoked tokens).")],
    db: DbOpt = None, actor: ActorOpt = None,
) -> None:
    """Revoke a token (or every token of a name); audited. The same rule as memtui reviewers remove."""
    from memtui.governance.tokens import revoke_token

    engine = _engine(db)
    for t in _governance_call(revoke_token, engine, name_or_id, _acting_name(actor, engine)):
        _echo(f"revoked {t.token_id} ({t.kind} {t.name})")


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host", help="Interface to bind (default localhost only).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="TCP port.")] = 8765,
    workers: Annotated[int, typer.Option("--workers", min=1, max=64, help="Server processes (PostgreSQL: one "
                                         "per core; SQLite: 1 is best, one writer at a time).")] = 1,
    access_log: Annotated[bool, typer.Option("--access-log", help="Log every request.")] = False,
    db: DbOpt = None,
) -> None:
    """Serve the maintenance HTTP API (design §24; OpenAPI at /docs); every request needs a bearer token."""
    import os

    from memtui.store.engine import StoreError, open_store, resolve_url

    try:
        engine = open_store(db or _ctx.db, pool_size=20)  # migrated once, before any worker starts
    except StoreError as exc:
        raise _fail(str(exc))
    import uvicorn

    _echo(f"memtui API on http://{host}:{port} (OpenAPI at /docs)", err=True)
    options = {"host": host, "port": port, "access_log": access_log, "log_level": "warning"}
    if workers > 1:
        engine.dispose()
        os.environ["MEMTUI_DB"] = resolve_url(db or _ctx.db)
        uvicorn.run("memtui.api.app:app_from_env", factory=True, workers=workers, **options)
        return
    from memtui.api.app import create_app

    uvicorn.run(create_app(engine), **options)


app.add_typer(tokens_app, name="tokens")
