"""Reviewer commands on single memories: ``decide``, ``undo``, ``edit``, ``show``, ``history``, ``health``."""

from __future__ import annotations

from memtui.text import json_text

import json
from typing import Annotated, Optional

import typer

from memtui.clock import iso
from memtui.cli.common import (ActorOpt, DbOpt, RoleOpt, _actor, _echo, _engine, _fail,
                               app)


@app.command()
def decide(
    memory_id: Annotated[str, typer.Argument(help="The memory to decide on.")],
    decision: Annotated[str, typer.Argument(help="approve | reject | needs-review | archive | block")],
    comment: Annotated[Optional[str], typer.Option("--comment", help="Why; kept on the history event.")] = None,
    expect_version: Annotated[Optional[int], typer.Option(
        "--expect-version", help="The version you looked at (memtui show); refused if the memory changed since.")] = None,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Record a reviewer decision (one transaction with its history event)."""
    from memtui.domain.decisions import Decision
    from memtui.domain.invariants import LifecycleError
    from memtui.review.lifecycle import MemoryNotFound
    from memtui.review.service import ReviewService

    try:
        dec = Decision(decision)
    except ValueError:
        raise _fail(f"unknown decision {decision!r}; use approve, reject, needs-review, archive or block", 2)
    engine = _engine(db)
    try:
        out = ReviewService(engine).decide(memory_id, dec, _actor(actor, role, engine), comment=comment,
                                           expected_version=expect_version)
    except (LifecycleError, MemoryNotFound) as exc:
        raise _fail(str(exc))
    _echo(f"{out.memory_id}: {out.from_state} -> {out.to_state} (event {out.event_id})")


@app.command()
def undo(
    memory_id: Annotated[str, typer.Argument(help="Undo the latest decision on this memory.")],
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Undo the latest human decision on a memory with a compensating event."""
    from memtui.domain.invariants import LifecycleError
    from memtui.review.lifecycle import MemoryNotFound
    from memtui.review.service import ReviewService

    engine = _engine(db)
    who = _actor(actor, role, engine)
    svc = ReviewService(engine, who)
    try:
        svc.detail(memory_id)
    except MemoryNotFound as exc:
        raise _fail(str(exc))
    event_id = svc.last_undoable_event(memory_id)
    if event_id is None:
        raise _fail(f"{memory_id}: no decision to undo")
    try:
        out = svc.undo(event_id, who)
    except (LifecycleError, MemoryNotFound) as exc:
        raise _fail(str(exc))
    _echo(f"{out.memory_id}: {out.from_state} -> {out.to_state} (undid {out.compensates})")


@app.command()
def show(
    memory_id: Annotated[str, typer.Argument(help="The memory to show.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the record as JSON.")] = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Show one memory: statement, scope, state, version and evidence."""
    from memtui.review.lifecycle import MemoryNotFound
    from memtui.review.service import ReviewService

    try:
        engine = _engine(db)
        d = ReviewService(engine, _actor(actor, role, engine)).detail(memory_id)
    except MemoryNotFound as exc:
        raise _fail(str(exc))
    from memtui.review.views import detail_json

    data = detail_json(d)
    if as_json:
        _echo(json_text(data))
        return
    _echo(f"{d.memory_id}  [{d.state}]  version {d.version}")
    _echo(f"  statement:  {d.statement}")
    _echo(f"  type:       {d.type}   impact {d.impact}   confidence {d.confidence:.2f}")
    _echo(f"  scope:      {d.scope.label}")
    if d.scope.applies_to or d.scope.does_not_apply_to:
        _echo(f"  applies to: {', '.join(d.scope.applies_to) or '-'};  not to: "
                   f"{', '.join(d.scope.does_not_apply_to) or '-'}")
    _echo(f"  review:     {d.review_state}   conflict {d.conflict_state}   origin {d.origin}")
    if d.waits_for:
        _echo(f"  waits for:  {d.waits_for}")
    if d.failure_class:
        _echo(f"  failure:    {d.failure_class}   promotion {d.promotion_status}")
    _echo(f"  created:    {iso(d.created_at)}   last validated {iso(d.last_validated_at) or '-'}")
    if d.superseded_by:
        _echo(f"  superseded by {d.superseded_by}")
    if d.sources:
        _echo(f"  made from:  {', '.join(d.sources)}"
              + ("   (compaction pending review: they stay in use until it is approved)"
                 if d.compaction_status == "pending_review" else ""))
    _echo(f"  evidence ({len(d.evidence)}):")
    for e in d.evidence:
        _echo(f"    - {e.type:<10} {e.location}  [{e.status}]")
        if e.current_location and e.current_location != e.location:
            _echo(f"      now at {e.current_location}")
        if e.status_reason and e.status not in ("valid", "unchecked"):
            _echo(f"      {e.status_reason}")
    if d.revalidation_status and d.revalidation_reasons:
        _echo(f"  revalidation: {d.revalidation_status}")
        for r in d.revalidation_reasons:
            _echo(f"    - {r}")
    if d.proposed_statement:
        _echo(f"  proposed edit (memtui edit {d.memory_id} --proposed):")
        _echo(f"    {d.proposed_statement}")


@app.command()
def history(
    memory_id: Annotated[str, typer.Argument(help="The memory whose history to print.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the events as JSON.")] = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Print the append-only state history of a memory, oldest first."""
    from memtui.review.lifecycle import MemoryNotFound
    from memtui.review.service import ReviewService

    try:
        engine = _engine(db)
        events = ReviewService(engine, _actor(actor, role, engine)).history(memory_id)
    except MemoryNotFound as exc:
        raise _fail(str(exc))
    if as_json:
        from memtui.review.views import event_json

        _echo(json_text([event_json(e) for e in events]))
        return
    for e in events:
        actor = f"{e.actor_type}:{e.actor_id}" + (f" ({e.actor_role})" if e.actor_role else "")
        line = f"{iso(e.created_at)}  {e.from_state or '(new)':>12} -> {e.to_state:<12}  {actor}  {e.reason}"
        if e.comment:
            line += f"  — {e.comment}"
        _echo(line + f"  [{e.event_id}]")


def print_health(engine, as_json: bool, viewer=None) -> None:
    """Print the per-repository state counts (text table or ``{"memoryHealth": [...]}`` JSON) of the
    memory ``viewer`` may see."""
    from memtui.domain.states import ALL_STATES
    from memtui.review.service import health_json

    report = health_json(engine, viewer)
    data = report["memoryHealth"]
    from memtui.cli.safety_cmds import incident_lines

    if as_json:
        _echo(json.dumps(report, indent=2))
        return
    if not data:
        _echo("the store holds no memories yet (memtui import FILE, or memtui demo)")
    for h in data:
        _echo(f"{h['repositoryId'] or '(org-wide)'}: {h['total']} memories")
        for state in ALL_STATES:
            _echo(f"  {state:<13}{h['byState'][state]:>6}")
        b = h["reviewBacklog"]
        if b["waiting"]:
            _echo(f"  review backlog: {b['waiting']} waiting, oldest {b['oldestDays']} days ({b['oldestMemoryId']}), "
                  f"median {b['medianDays']:g} days")
        for u in h["highUse"]:
            _echo(f"  high use: {u['memoryId']} ({u['uses']} uses)")
        for x in h["harmful"]:
            _echo(f"  harmful: {x['memoryId']} ({x['harmEvents']} harm events, latest {x['lastHarmAt']}, {x['state']})")
        for v in h["policyViolations"]:
            _echo(f"  policy violation: {v['memoryId']} {v['violation']}")
        for a in h["actionRequired"]:
            _echo(f"  action required: {a}")
    for line in incident_lines(engine, viewer):
        _echo(line)


@app.command()
def health(
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Counts of memories per state for each repository (inside your scopes)."""
    from pathlib import Path

    from memtui.cli.common import _ctx
    from memtui.store.engine import resolve_url

    url = resolve_url(db or _ctx.db)
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///"):]).exists():  # issue 24 item 8: no new file
        raise _fail(f"no store at {url[len('sqlite:///'):]}. Make one with memtui import FILE (memories in "
                    "YAML, JSON or Markdown) or memtui demo (sample data), or point --db / MEMTUI_DB at a store.")
    engine = _engine(db)
    print_health(engine, as_json, _actor(actor, role, engine))

@app.command()
def edit(
    memory_id: Annotated[str, typer.Argument(help="The memory whose statement to edit.")],
    proposed: Annotated[bool, typer.Option("--proposed", help="Take revalidation's proposed statement "
                                           "(moved paths rewritten).")] = False,
    text: Annotated[Optional[str], typer.Option("--text", help="The new statement.")] = None,
    expect_version: Annotated[Optional[int], typer.Option("--expect-version", help="Refuse if the memory "
                                                          "is no longer at this version.")] = None,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Edit a memory's statement (recorded in its history); --proposed accepts revalidation's edit for
    moved paths and points the moved references at their new paths. The memory keeps its state:
    approve it afterwards."""
    from memtui.domain.invariants import LifecycleError
    from memtui.review.lifecycle import MemoryNotFound
    from memtui.review.service import ReviewService

    if proposed == (text is not None):
        raise _fail("give exactly one of --proposed and --text", 2)
    try:
        engine = _engine(db)
        out = ReviewService(engine).edit_statement(memory_id, _actor(actor, role, engine), text=text,
                                                        proposed=proposed, expected_version=expect_version)
    except (LifecycleError, MemoryNotFound) as exc:
        raise _fail(str(exc))
    _echo(f"{memory_id}: statement edited (event {out})")
