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
    per finding naming the memory and exit 1. Maintenance jobs abandoned by a process that died
    mid-run are named on ``note:`` lines without failing the check (their transactions rolled back:
    a fault, not a change of the store; issue 21 item 7)."""
    from memtui.governance.integrity import check_store, default_scanner
    from memtui.maintenance.jobs import abandoned_jobs

    engine = _engine(db)
    result = check_store(engine, scanner=default_scanner())
    from dataclasses import replace

    from memtui.governance.scope_check import noncanonical_scopes  # issue 21 item 2

    result = replace(result, findings=result.findings + tuple(noncanonical_scopes(engine)))
    abandoned = abandoned_jobs(engine)
    if as_json:
        _echo(json.dumps({"clean": result.clean, "memories": result.memories, "events": result.events,
                          "secretsScanned": result.secrets_scanned, "findings": list(result.findings),
                          "abandonedJobs": abandoned},
                         indent=2, ensure_ascii=False))
    else:
        for line in result.findings:
            _echo(line)
        for line in abandoned:
            _echo(f"note: {line}")
        summary = (f"checked {result.memories} memories and {result.events} history events: "
                   + ("clean" if result.clean else f"{len(result.findings)} findings")
                   + ("" if result.secrets_scanned else " (secret scan not available)"))
        _echo(summary, err=True)
    if not result.clean:
        raise typer.Exit(1)


@app.command()
def claim(
    n: Annotated[int, typer.Option("--n", help="How many queue items to claim.")] = 1,
    ttl: Annotated[float, typer.Option("--ttl", help="Minutes until the claims expire.")] = 30.0,
    release: Annotated[bool, typer.Option("--release", help="Give back your claims instead.")] = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Claim the next review queue items nobody else holds (one id a line), so two reviewers never
    work the same item; claims expire after --ttl minutes."""
    from memtui.review.service import ReviewService

    if n < 1:
        raise _fail(f"--n must be at least 1, not {n}", 2)
    if ttl <= 0:
        raise _fail(f"--ttl must be a positive number of minutes, not {ttl}", 2)
    engine = _engine(db)
    who = _actor(actor, role, engine)
    svc = ReviewService(engine, viewer=who)
    if release:
        _echo(f"released {svc.release(who)} claims of {who.id}", err=True)
        return
    ids = svc.claim_next(who, n, ttl)
    for mid in ids:
        _echo(mid)
    if not ids:
        _echo("nothing to claim: every queue item is claimed or the queue is empty", err=True)
