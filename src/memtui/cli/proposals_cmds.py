"""Commands on proposals: duplicate clusters, conflicts, compactions, and undoing those decisions."""

from __future__ import annotations

from memtui.text import json_text

from typing import Annotated, Optional

import typer

from memtui.cli.common import (ActorOpt, DbOpt, RoleOpt, _actor, _echo, _engine, _fail,
                               app)

CommentOpt = Annotated[Optional[str], typer.Option("--comment", help="Why; kept with the decision (decision report).")]


def _resolve_call(fn, *args, **kwargs):
    from memtui.domain.invariants import LifecycleError

    try:
        return fn(*args, **kwargs)
    except LifecycleError as exc:
        raise _fail(str(exc))


def _visible_ids(engine, actor, role):
    """The memory ids the acting reviewer may see (None: all), for the listings below (issue 9)."""
    from memtui.governance.visibility import visible_memory_ids

    return visible_memory_ids(engine, _actor(actor, role, engine))


def _print_result(r) -> None:
    for mid, (before, after) in sorted(r.changes.items()):
        _echo(f"  {mid}: {before} -> {after}")
    _echo(f"decision {r.decision_id} ({r.kind}: {r.action})" + (f"; new memory {r.new_memory_id}" if r.new_memory_id else ""))


@app.command()
def duplicates(
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """List open near-duplicate clusters (run `memtui maintain` to detect them): id, size, best pair score
    (0-100), method, scope; the explanation; the members, * marking the proposed canonical."""
    from memtui.governance.visibility import all_visible

    from memtui.maintenance.dedupe import cluster_records

    engine = _engine(db)
    seen = _visible_ids(engine, actor, role)
    rows = [c for c in cluster_records(engine) if c["status"] == "open" and all_visible(c["members"], seen)]
    if as_json:
        _echo(json_text(rows))
        return
    if not rows:
        _echo("no open duplicate clusters")
    for c in rows:
        _echo(f"{c['clusterId']}  {len(c['members'])} members  best {c['bestScore']:.0f}  {c['method']}  {c['scopeKey']}")
        _echo(f"   {c['explanation']}")
        for m in c["members"]:
            _echo(f"   {'*' if m == c['canonical'] else ' '} {m}")


@app.command()
def merge(
    cluster_id: Annotated[str, typer.Argument(help="The duplicate cluster.")],
    canonical: Annotated[Optional[str], typer.Option("--canonical", help="Keep this member (default: the proposed one).")] = None,
    text: Annotated[Optional[str], typer.Option("--text", help="Edited canonical statement.")] = None,
    comment: CommentOpt = None,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Merge a cluster: the canonical keeps all evidence, the others are superseded by it."""
    from memtui.review.resolve import ResolveService

    engine = _engine(db)
    r = _resolve_call(ResolveService(engine).merge, cluster_id, _actor(actor, role, engine), canonical_id=canonical,
                      canonical_text=text, comment=comment)
    _print_result(r)


@app.command("not-duplicates")
def not_duplicates(
    cluster_id: Annotated[str, typer.Argument(help="The duplicate cluster.")],
    comment: CommentOpt = None,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Dismiss a cluster; its members are never proposed as duplicates of each other again."""
    from memtui.review.resolve import ResolveService

    engine = _engine(db)
    _print_result(_resolve_call(ResolveService(engine).not_duplicates, cluster_id, _actor(actor, role, engine),
                                comment=comment))


@app.command()
def conflicts(
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    all_: Annotated[bool, typer.Option("--all", help="Also resolved ones.")] = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """List conflicts (open ones; --all for every record). Severity: the lexical rule's when one fires
    (high: negation, opposite predicates; medium: a different object or number), else high from the
    scorer's P(conflict) 0.9, medium below."""
    from memtui.governance.visibility import all_visible

    from memtui.maintenance.conflicts import conflict_records

    engine = _engine(db)
    seen = _visible_ids(engine, actor, role)
    rows = [c for c in conflict_records(engine) if (all_ or c["status"] == "open")
            and all_visible(c["memories"], seen)]
    if as_json:
        _echo(json_text(rows))
        return
    if not rows:
        _echo("no open conflicts")
    for c in rows:
        a, b = c["memories"]
        _echo(f"{c['conflictId']}  [{c['severity']}] {c['status']}  A={a}  B={b}\n   {c['reason']}")
        if c.get("proposedResolution"):
            _echo(f"   proposed: {c['proposedResolution']['why']} (memtui resolve {c['conflictId']} keep-newer)")


@app.command()
def resolve(
    conflict_id: Annotated[str, typer.Argument(help="The conflict.")],
    action: Annotated[str, typer.Argument(help="keep-a | keep-b | keep-newer | neither | not-a-conflict | narrow")],
    supersede: Annotated[bool, typer.Option("--supersede", help="The loser is superseded by the winner, not invalidated.")] = False,
    scope: Annotated[Optional[list[str]], typer.Option("--scope", help="With narrow: ID=MODULE_PATH (repeatable).")] = None,
    comment: CommentOpt = None,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Resolve a conflict: keep one side, keep the newer (the older superseded), neither, not a conflict, or narrow."""
    from memtui.review.resolve import ResolveService

    scopes = {}
    for item in scope or []:
        if "=" not in item:
            raise _fail(f"--scope {item!r}: expected ID=MODULE_PATH", 2)
        mid, module = item.split("=", 1)
        scopes[mid] = {"modulePath": module}
    engine = _engine(db)
    r = _resolve_call(ResolveService(engine).resolve_conflict, conflict_id, action.replace("-", "_"),
                      _actor(actor, role, engine), supersede=supersede, scopes=scopes, comment=comment)
    _print_result(r)


@app.command()
def compactions(
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """List open compaction proposals."""
    from memtui.governance.visibility import all_visible

    from memtui.maintenance.compaction import compaction_records

    engine = _engine(db)
    seen = _visible_ids(engine, actor, role)
    rows = [p for p in compaction_records(engine) if p["status"] == "open" and all_visible(p["members"], seen)]
    if as_json:
        _echo(json_text(rows))
        return
    if not rows:
        _echo("no open compaction proposals")
    for p in rows:
        flag = "  (scope broadens: a lead must accept)" if p["broadensScope"] else ""
        _echo(f"{p['proposalId']}  {', '.join(p['members'])}{flag}\n   {p['proposedStatement']}")


@app.command()
def compaction(
    action: Annotated[str, typer.Argument(help="accept | reject")],
    proposal_id: Annotated[str, typer.Argument(help="The compaction proposal.")],
    text: Annotated[Optional[str], typer.Option("--text", help="Edited statement (accept).")] = None,
    keep: Annotated[Optional[list[str]], typer.Option("--keep", help="Member to keep beside the new memory.")] = None,
    candidate: Annotated[bool, typer.Option("--candidate", help="Create the new memory as a candidate, not active.")] = False,
    comment: CommentOpt = None,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Accept (optionally with edited text) or reject a compaction proposal."""
    from memtui.review.resolve import ResolveService

    engine = _engine(db)
    svc = ResolveService(engine)
    who = _actor(actor, role, engine)
    if action == "accept":
        r = _resolve_call(svc.accept_compaction, proposal_id, who, statement=text, keep=keep, activate=not candidate,
                          comment=comment)
    elif action == "reject":
        r = _resolve_call(svc.reject_compaction, proposal_id, who, comment=comment)
    else:
        raise _fail("usage: memtui compaction accept|reject PROPOSAL", 2)
    _print_result(r)


@app.command("undo-decision")
def undo_decision(
    decision_id: Annotated[str, typer.Argument(help="A merge, conflict or compaction decision id.")],
    comment: CommentOpt = None,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Undo a merge, conflict resolution or compaction with compensating events."""
    from memtui.review.resolve import ResolveService

    engine = _engine(db)
    _print_result(_resolve_call(ResolveService(engine).undo, decision_id, _actor(actor, role, engine),
                                comment=comment))
