"""Integrity commands (issue 9): ``check`` (is the store what its history says?) and ``claim``."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from memtui.cli.common import ActorOpt, DbOpt, RoleOpt, _actor, _echo, _engine, _fail, app


@app.command()
def check(
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    db: DbOpt = None,
) -> None:
    """Verify the store: states against history, the hash chain, content hashes, evidence and scope of
    active memory, blocked memory, foreign keys, secrets in the clear. Exit 0 when clean, else one line
    per finding naming the memory and exit 1."""
    from memtui.governance.integrity import check_store, default_scanner

    result = check_store(_engine(db), scanner=default_scanner())
    if as_json:
        _echo(json.dumps({"clean": result.clean, "memories": result.memories, "events": result.events,
                          "secretsScanned": result.secrets_scanned, "findings": list(result.findings)},
                         indent=2, ensure_ascii=False))
    else:
        for line in result.findings:
            _echo(line)
        summary = (f"checked {result.memories} memories and {result.events} history events: "
                   + ("clean" if result.clean else f"{len(result.findings)} findings")
                   + ("" if result.secrets_scanned else " (secret scan not available)"))
        _echo(summary, err=True)
    if not result.clean:
        raise typer.Exit(1)
