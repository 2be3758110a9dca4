"""Integrity commands (issue 9): ``check`` (is the store what its history says?) and ``claim``."""

from __future__ import annotations

import sys

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
    active memory, blocked memory, foreign keys, secrets in the clear, and the store chain (every memory
    with its evidence, reviewer, delegation and token as memtui sealed it; keyed with
    MEMTUI_INTEGRITY_KEY / MEMTUI_INTEGRITY_KEY_FILE when the store is keyed, and never clean without
    that key). Exit 0 when clean, else one line per finding naming the memory and exit 1. Maintenance jobs abandoned by a process that died
    mid-run are named on ``note:`` lines without failing the check (their transactions rolled back:
    a fault, not a change of the store; issue 21 item 7)."""
    from memtui.governance.integrity import check_store, default_scanner
    from memtui.maintenance.jobs import abandoned_jobs

    from memtui.governance.integrity import IntegrityKeyError

    engine = _engine(db)
    try:
        result = check_store(engine, scanner=default_scanner())
    except IntegrityKeyError as exc:
        raise _fail(str(exc), 2)
    from dataclasses import replace

    from memtui.governance.scope_check import noncanonical_scopes  # issue 21 item 2

    result = replace(result, findings=result.findings + tuple(noncanonical_scopes(engine)))
    abandoned = abandoned_jobs(engine)
    if as_json:
        _echo(json.dumps({"clean": result.clean, "memories": result.memories, "events": result.events,
                          "secretsScanned": result.secrets_scanned, "findings": list(result.findings),
                          "abandonedJobs": abandoned,
                          "integrity": {"mode": result.integrity_mode, "verified": result.integrity_verified,
                                        "chainRows": result.chain_rows}},
                         indent=2, ensure_ascii=False))
    else:
        for line in result.findings:
            _echo(line)
        for line in abandoned:
            _echo(f"note: {line}")
        summary = (f"checked {result.memories} memories and {result.events} history events: "
                   + ("clean" if result.clean else f"{len(result.findings)} finding{'s' * (len(result.findings) != 1)}")
                   + ("" if result.secrets_scanned else " (secret scan not available)")
                   + f"; store chain {result.integrity_mode}"
                   + ("" if result.integrity_verified else " and NOT verified (its key is not set)"))
        _echo(summary, err=True)
    if not result.clean:
        raise typer.Exit(1)


@app.command()
def seal(
    force: Annotated[bool, typer.Option("--force", help="Seal even when `memtui check` finds changes to the "
                                        "store (accepts them: review them first).")] = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Seal the store chain afresh from the store as it is (issue 21 item 6): with MEMTUI_INTEGRITY_KEY
    (or MEMTUI_INTEGRITY_KEY_FILE) set the store becomes keyed (HMAC), else unkeyed. Refused while the
    store chain has findings, unless --force. Needs a lead or maintainer on a store with reviewers."""
    from memtui.cli.common import _require
    from memtui.governance.integrity import (IntegrityKeyError, check_store_chain, integrity_key, lock_head,
                                             seal_store)

    engine = _engine(db)
    who = _actor(actor, role, engine)
    _require(engine, who, "seal", ("lead", "maintainer"))
    try:
        key = integrity_key()
        with engine.begin() as conn:
            lock_head(conn)
            found = check_store_chain(conn, key)
            problems = [f for f in found.findings if "a key is set" not in f]
            if problems and not force:
                for line in problems:
                    _echo(line)
                raise _fail(f"refusing to seal: the store chain has {len(problems)} findings (review them; "
                            "--force accepts the store as it is)")
            n = seal_store(conn, key)
    except IntegrityKeyError as exc:
        raise _fail(str(exc), 2)
    from memtui.governance.reviewers import audit_apart

    audit_apart(engine, "integrity_sealed", who.id, None, keyed=key is not None, subjects=n, forced=force,
                previousMode=found.mode)
    _echo(f"sealed {n} subjects (memories, reviewers, delegations, tokens); the store chain is "
          f"{'keyed (HMAC)' if key is not None else 'unkeyed'}")


@app.command()
def claim(
    n: Annotated[int, typer.Option("--n", help="How many queue items to claim.")] = 1,
    ttl: Annotated[float, typer.Option("--ttl", help="Minutes until the claims expire.")] = 30.0,
    release: Annotated[bool, typer.Option("--release", help="Give back your claims instead.")] = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Claim the next review queue items nobody else holds (one id a line; on a terminal each with its
    statement), so two reviewers never
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
    if ids and sys.stdout.isatty():  # a person reads id and statement; a pipe gets one id a line
        import shutil

        from memtui.review.statements import shown_statements
        from memtui.review.views import labelled

        said, width = shown_statements(engine, ids), shutil.get_terminal_size((100, 24)).columns
        for mid in ids:
            _echo(labelled(mid, said.get(mid, ""), width))
        return
    for mid in ids:
        _echo(mid)
    if not ids:
        _echo("nothing to claim: every queue item is claimed or the queue is empty", err=True)
