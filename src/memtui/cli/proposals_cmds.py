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


def _width() -> int:
    """The terminal's width for one-line listings (100 when not a terminal)."""
    import shutil

    return max(60, shutil.get_terminal_size((100, 24)).columns)


def _statements(engine, ids) -> dict[str, str]:
    from memtui.review.statements import shown_statements

    return shown_statements(engine, ids)


def _memory_line(prefix: str, memory_id: str, said: dict[str, str]) -> str:
    """``prefix`` then the memory's id and its statement shortened to the width (issue 24, Build 1)."""
    from memtui.review.views import labelled

    return prefix + labelled(memory_id, said.get(memory_id, "(not found)"), _width() - len(prefix))


def _print_result(r) -> None:
    for mid, (before, after) in sorted(r.changes.items()):
        _echo(f"  {mid}: {before} -> {after}")
    _echo(f"decision {r.decision_id} ({r.kind}: {r.action})" + (f"; new memory {r.new_memory_id}" if r.new_memory_id else ""))


PossibleOpt = Annotated[bool, typer.Option("--possible", help="List the possible ones instead: ranked suggestions "
                                          "that hold nothing out of recall (promote or dismiss them).")]


def _in_scope(tenant: str, repository: str | None, module: str | None, scope: str | None) -> bool:
    """Whether a record lies in ``scope`` (``tenant[/repository[/module path]]``; None: everywhere)."""
    if not scope:
        return True
    where = "/".join(x for x in (tenant, repository or "", (module or "").strip("/")) if x)
    return where == scope.strip("/") or where.startswith(scope.strip("/") + "/")


@app.command()
def duplicates(
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    possible: PossibleOpt = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """List open (likely) near-duplicate clusters (run `memtui maintain` to detect them): id, size, best pair
    score (0-100), method, scope; the members (id and statement), * marking the proposed canonical; the explanation.
    --possible lists the possible pairs instead, strongest first."""
    from memtui.governance.visibility import all_visible

    from memtui.maintenance.dedupe import cluster_records

    engine = _engine(db)
    seen = _visible_ids(engine, actor, role)
    want = "possible" if possible else "open"
    rows = [c for c in cluster_records(engine) if c["status"] == want and all_visible(c["members"], seen)]
    if possible:
        rows.sort(key=lambda c: (-c["bestScore"], c["clusterId"]))
    if as_json:
        _echo(json_text(rows))
        return
    if not rows:
        _echo("no possible duplicates" if possible else "no open duplicate clusters")
    said = _statements(engine, [m for c in rows for m in c["members"]])
    for c in rows:
        _echo(f"{c['clusterId']}  {len(c['members'])} members  best {c['bestScore']:.0f}  {c['method']}  {c['scopeKey']}")
        for m in c["members"]:
            _echo(_memory_line(f"   {'*' if m == c['canonical'] else ' '} ", m, said))
        _echo(f"   {c['explanation']}")


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


AllOpt = Annotated[bool, typer.Option("--all", help="Every open and possible one in --scope (with --reason-contains).")]
ScopeOpt = Annotated[Optional[str], typer.Option("--scope", help="With --all: tenant[/repository[/module path]].")]
ReasonOpt = Annotated[Optional[str], typer.Option("--reason-contains", help="With --all: only those whose reason "
                                                                          "or explanation contains TEXT.")]


def _select(ids: list[str] | None, all_: bool, scope: str | None, reason: str | None, rows, key: str, text: str) -> list[str]:
    if ids and all_:
        raise _fail("give ids or --all, not both", 2)
    if ids:
        return list(ids)
    if not all_:
        raise _fail("give one or more ids, or --all --scope S", 2)
    if not scope:
        raise _fail("--all needs --scope (tenant[/repository[/module path]])", 2)
    return [r[key] for r in rows if _in_scope(r["tenant"], r["repositoryId"], r["modulePath"], scope)
            and (reason is None or reason.casefold() in r[text].casefold())]


@app.command("not-duplicates")
def not_duplicates(
    cluster_ids: Annotated[Optional[list[str]], typer.Argument(help="Duplicate clusters (open or possible).")] = None,
    all_: AllOpt = False, scope: ScopeOpt = None, reason_contains: ReasonOpt = None,
    comment: CommentOpt = None,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Dismiss clusters (one decision, one undo): their members are not proposed as duplicates of each other
    again until a statement changes."""
    from memtui.governance.visibility import all_visible
    from memtui.maintenance.dedupe import cluster_records
    from memtui.review.resolve import ResolveService

    engine = _engine(db)
    who = _actor(actor, role, engine)
    seen = _visible_ids(engine, actor, role)
    rows = [{**c, "tenant": c["scopeKey"].split("/", 1)[0], "modulePath": c["scopeKey"].rsplit(":", 1)[-1] or None}
            for c in cluster_records(engine) if c["status"] in ("open", "possible") and all_visible(c["members"], seen)]
    ids = _select(cluster_ids, all_, scope, reason_contains, rows, "clusterId", "explanation")
    if not ids:
        raise _fail("nothing matches: no open or possible duplicate clusters in that scope")
    svc = ResolveService(engine)
    if len(ids) == 1:
        _print_result(_resolve_call(svc.not_duplicates, ids[0], who, comment=comment))
        return
    r = _resolve_call(svc.dismiss_duplicates, ids, who, comment=comment)
    _echo(f"{len(ids)} clusters dismissed")
    _print_result(r)


@app.command("not-a-conflict")
def not_a_conflict(
    conflict_ids: Annotated[Optional[list[str]], typer.Argument(help="Conflicts (open or possible).")] = None,
    all_: AllOpt = False, scope: ScopeOpt = None, reason_contains: ReasonOpt = None,
    comment: CommentOpt = None,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Dismiss conflicts as "not a conflict" in one decision (one undo): both memories stay, and each pair is
    not reported again until either statement changes."""
    from memtui.governance.visibility import all_visible
    from memtui.maintenance.conflicts import conflict_records
    from memtui.review.resolve import ResolveService

    engine = _engine(db)
    who = _actor(actor, role, engine)
    seen = _visible_ids(engine, actor, role)
    rows = [{**c, "tenant": c["scope"]["tenantId"], "repositoryId": c["scope"]["repositoryId"],
             "modulePath": c["scope"]["modulePath"]}
            for c in conflict_records(engine) if c["status"] in ("open", "possible") and all_visible(c["memories"], seen)]
    ids = _select(conflict_ids, all_, scope, reason_contains, rows, "conflictId", "reason")
    if not ids:
        raise _fail("nothing matches: no open or possible conflicts in that scope")
    r = _resolve_call(ResolveService(engine).dismiss_conflicts, ids, who, comment=comment)
    _echo(f"{len(ids)} conflict(s) dismissed as not a conflict")
    _print_result(r)


@app.command()
def promote(
    item_id: Annotated[str, typer.Argument(help="A possible conflict (memconf_...) or possible duplicate pair.")],
    comment: CommentOpt = None,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Promote a possible conflict to likely (opened: both held out of default recall until resolved), or a
    possible duplicate pair to a likely cluster (it can then be merged)."""
    from memtui.review.resolve import ResolveService

    engine = _engine(db)
    svc = ResolveService(engine)
    fn = svc.promote_conflict if item_id.startswith("memconf_") else svc.promote_duplicate
    _print_result(_resolve_call(fn, item_id, _actor(actor, role, engine), comment=comment))


@app.command()
def conflicts(
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    all_: Annotated[bool, typer.Option("--all", help="Also possible, resolved and dismissed ones.")] = False,
    possible: PossibleOpt = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """List likely conflicts (open: both memories held out of default recall), each with memory A's and B's
    id and statement and the reason; --possible the ranked
    suggestions instead (score = the scorer's P(conflict)); --all every record. Severity: high from the
    scorer's P(conflict) 0.9 or a negation / opposite predicate, medium below; possible ones are low."""
    from memtui.governance.visibility import all_visible

    from memtui.maintenance.conflicts import conflict_records

    engine = _engine(db)
    seen = _visible_ids(engine, actor, role)
    want = "possible" if possible else "open"
    rows = [c for c in conflict_records(engine) if (all_ or c["status"] == want)
            and all_visible(c["memories"], seen)]
    if as_json:
        _echo(json_text(rows))
        return
    if not rows:
        _echo("no possible conflicts" if possible else "no open conflicts")
    said = _statements(engine, [m for c in rows for m in c["memories"]])
    for c in rows:
        a, b = c["memories"]
        score = f"  P {c['score']:.2f}" if c.get("score") is not None else ""
        _echo(f"{c['conflictId']}  [{c['severity']}] {c['status']}{score}")
        _echo(_memory_line("   A ", a, said))
        _echo(_memory_line("   B ", b, said))
        _echo(f"   {c['reason']}")
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
    """List open compaction proposals: each member (id and statement), then the proposed statement."""
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
    said = _statements(engine, [m for p in rows for m in p["members"]])
    for p in rows:
        flag = "  (scope broadens: a lead must accept)" if p["broadensScope"] else ""
        _echo(f"{p['proposalId']}  {len(p['members'])} members{flag}")
        for m in p["members"]:
            _echo(_memory_line("   - ", m, said))
        _echo(f"   proposed: {p['proposedStatement']}")


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
