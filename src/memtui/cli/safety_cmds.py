"""Safety commands and printing (issue 9, item 1; design §22.4): ``purge``, the secret and
personal-data lines of the import summary, the secret incidents of ``memtui health``."""

from __future__ import annotations

from typing import Annotated

import typer

from memtui.cli.common import ActorOpt, DbOpt, RoleOpt, _actor, _echo, _engine, _fail, _require, app


def print_import_safety(report) -> None:
    """The import summary's safety lines: each memory imported blocked (secret types only) and each
    personal-data redaction (memory, field, kind)."""
    for mid, types in getattr(report, "blocked", []) or []:
        _echo(f"  blocked: {mid}: secret found ({', '.join(types)}); stored redacted, never recalled or exported")
    for mid, fieldname, kind in getattr(report, "redacted", []) or []:
        _echo(f"  redacted: {mid}: {kind} in {fieldname} (--keep-personal-data keeps it)")


def incident_lines(engine, viewer=None) -> list[str]:
    """One line per open secret incident, for its owner: memory, owner, types, date (only memory
    inside ``viewer``'s scopes)."""
    from sqlmodel import Session

    from memtui.safety.incidents import secret_incidents

    with Session(engine) as session:
        incidents = secret_incidents(session, viewer)
    return [f"secret incident: {i['memoryId']} ({i['repositoryId'] or 'org-wide'}) owner {i['owner'] or '-'}: "
            f"{', '.join(i['types'])} found {i['foundAt']}" + ("; purged" if i["purged"] else
                                                               "; blocked — memtui purge ID --comment WHY")
            for i in incidents]


@app.command()
def purge(
    memory_id: Annotated[str, typer.Argument(help="The blocked memory to delete for good.")],
    comment: Annotated[str, typer.Option("--comment", help="Why (required; audited).")] = "",
    force: Annotated[bool, typer.Option("--force", help="Purge a memory that is not blocked.")] = False,
    db: DbOpt = None, actor: ActorOpt = None, role: RoleOpt = None,
) -> None:
    """Delete a blocked memory with its evidence, history and usage in one transaction (design §22.4);
    its secret findings stay; the audit event and the output list the recalls and exports that included it."""
    from memtui.domain.invariants import LifecycleError
    from memtui.safety.incidents import purge as run_purge

    if not comment.strip():
        raise _fail("purge needs --comment WHY (it is audited)", 2)
    engine = _engine(db)
    who = _actor(actor, role, engine)
    _require(engine, who, "purge")  # a maintainer's operation in a store with reviewers (issue 9 item 2)
    try:
        out = run_purge(engine, memory_id, who, comment, force=force)
    except LifecycleError as exc:
        raise _fail(str(exc))
    rows = sum(n for n in out.deleted.values())
    _echo(f"{out.memory_id}: purged ({rows} rows; audit {out.audit_id})")
    _echo(f"  recalled {len(out.recalls)} time(s)" + (":" if out.recalls else ""))
    for usage_id, pack, run, at in out.recalls:
        _echo(f"    - {at}  context pack {pack or '-'}  run {run or '-'}  [{usage_id}]")
    _echo(f"  exported {len(out.exports)} time(s)" + (":" if out.exports else ""))
    for audit_id, kind, at in out.exports:
        _echo(f"    - {at}  export {kind}  [{audit_id}]")
