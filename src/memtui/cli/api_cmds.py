"""The HTTP API's commands (issue 12): ``serve`` and ``tokens create|list|revoke``.

``serve`` only parses and starts :func:`memtui.api.app.create_app` on uvicorn; fastapi and uvicorn
are imported inside it so every other command starts as fast as before.
"""

from __future__ import annotations

import os
from pathlib import Path
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


def _log_config(access_log: bool) -> dict:
    """uvicorn's logging configuration: warnings and errors on stderr, and with ``access_log`` one
    line per request on stdout (``INFO: ADDR - "GET /path HTTP/1.1" 200``; issue 21 item 8: with
    ``log_level="warning"`` uvicorn silenced its access logger, so ``--access-log`` printed nothing)."""
    import copy

    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["uvicorn"]["level"] = "WARNING"
    config["loggers"]["uvicorn.error"]["level"] = "WARNING"
    config["loggers"]["uvicorn.access"]["level"] = "INFO" if access_log else "WARNING"
    return config


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is a loopback interface (127.0.0.0/8, ::1)."""
    import ipaddress

    name = host.strip().strip("[]")
    if name.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve to any interface


def _tls_files(cert: Path | None, key: Path | None) -> tuple[str, str] | None:
    """The certificate and key paths (both or neither, usable together) or None; exit 2 otherwise."""
    import ssl

    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise _fail("serve: --tls-cert and --tls-key go together (a PEM certificate chain and its private key)", 2)
    for option, path in (("--tls-cert", cert), ("--tls-key", key)):
        if not path.is_file():
            raise _fail(f"serve: {option} {path}: no such file", 2)
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(str(cert), str(key))
    except (ssl.SSLError, OSError) as exc:
        raise _fail(f"serve: --tls-cert {cert} / --tls-key {key}: not a usable certificate and key ({exc})", 2)
    return str(cert), str(key)


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host", help="Interface to bind (default localhost only). Any other "
                                      "needs --tls-cert/--tls-key, or --insecure-bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="TCP port.")] = 8765,
    workers: Annotated[int, typer.Option("--workers", min=1, max=64, help="Server processes (PostgreSQL: one "
                                         "per core; SQLite: 1 is best, one writer at a time).")] = 1,
    access_log: Annotated[bool, typer.Option("--access-log", help="Print one line per request on stdout.")] = False,
    tls_cert: Annotated[Optional[Path], typer.Option("--tls-cert", help="Serve HTTPS with this PEM certificate "
                                                     "(chain); with --tls-key.")] = None,
    tls_key: Annotated[Optional[Path], typer.Option("--tls-key", help="The certificate's PEM private key.")] = None,
    insecure_bind: Annotated[bool, typer.Option("--insecure-bind", help="Allow plain HTTP on a non-loopback "
                                                "interface (e.g. behind a TLS proxy); warns.")] = False,
    db: DbOpt = None,
) -> None:
    """Serve the maintenance HTTP API (design §24; OpenAPI at /docs); every request needs a bearer token.

    Bearer tokens must not cross a network in the clear (issue 21 item 8): a non-loopback ``--host``
    needs ``--tls-cert`` and ``--tls-key`` (uvicorn serves TLS), or ``--insecure-bind``, which
    serves plain HTTP with a warning on stderr."""
    from memtui.store.engine import StoreError, open_store, resolve_url

    tls = _tls_files(tls_cert, tls_key)
    if tls is None and not is_loopback(host):
        if not insecure_bind:
            raise _fail(f"serve: --host {host} is not a loopback interface and bearer tokens would cross the "
                        "network in plain HTTP; give --tls-cert and --tls-key, or --insecure-bind (behind a "
                        "TLS-terminating proxy)", 2)
        _echo(f"memtui: warning: serving plain HTTP on {host}:{port} (--insecure-bind): bearer tokens and memory "
              "travel unencrypted; terminate TLS in front of it", err=True)
    try:
        engine = open_store(db or _ctx.db, pool_size=20)  # migrated once, before any worker starts
    except StoreError as exc:
        raise _fail(str(exc))
    import uvicorn

    scheme = "https" if tls else "http"
    _echo(f"memtui API on {scheme}://{host}:{port} (OpenAPI at /docs)", err=True)
    options = {"host": host, "port": port, "access_log": access_log, "log_level": None,
               "log_config": _log_config(access_log)}
    if tls:
        options.update(ssl_certfile=tls[0], ssl_keyfile=tls[1])
    if workers > 1:
        engine.dispose()
        os.environ["MEMTUI_DB"] = resolve_url(db or _ctx.db)
        uvicorn.run("memtui.cli.api_cmds:app_from_env", factory=True, workers=workers, **options)
        return
    from memtui.api.app import create_app

    uvicorn.run(create_app(engine), **options)


def app_from_env():
    """The API over the store ``MEMTUI_DB`` names: the factory each worker process of ``memtui serve
    --workers N`` builds (uvicorn imports it by name)."""
    from memtui.api.app import create_app
    from memtui.store.engine import open_store

    return create_app(open_store(os.environ.get("MEMTUI_DB"), pool_size=20))


app.add_typer(tokens_app, name="tokens")
