"""Reviewer administration and repository visibility (issue 9, item 2): ``reviewers add|list|remove|delegate``
and ``scope set-visibility``. Adding or removing reviewers needs a lead or maintainer of the store
(anyone while none is registered), bounded by the granter's own role and scopes (issue 21 item 8:
:mod:`memtui.governance.reviewers`); ``delegate`` needs a lead; ``set-visibility`` needs a maintainer
(anyone in a single-user store). The acting name is the connection's identity (issue 21 item 5)."""

from __future__ import annotations

from memtui.text import json_text

from typing import Annotated, Optional

import typer

from memtui.cli.common import (ActorOpt, DbOpt, _acting_name, _actor, _echo, _engine, _fail, _governance_call,
                               _require, app)

reviewers_app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                            help="Reviewers of a shared store: their role and scopes (roles come from here).")
scope_app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                        help="Repository visibility (private | internal | public).")


@reviewers_app.command("add")
def reviewers_add(
    name: Annotated[str, typer.Argument(help="The reviewer's name: the login name (SQLite) or PostgreSQL "
                                              "role they connect as.")],
    role: Annotated[str, typer.Option("--role", help="reviewer | lead | maintainer")],
    scope: Annotated[Optional[list[str]], typer.Option("--scope", help="tenant[/repository[/module]] or * "
                                                       "(repeatable; default *).")] = None,
    db: DbOpt = None, actor: ActorOpt = None,
) -> None:
    """Register a reviewer (or replace one's role and scopes); audited."""
    from memtui.governance.reviewers import add_reviewer

    engine = _engine(db)
    r = _governance_call(add_reviewer, engine, name, role, scope or [], _acting_name(actor, engine))
    _echo(f"reviewer {r.name}: {r.role}, scopes {', '.join(r.scopes)}")


@reviewers_app.command("list")
def reviewers_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    db: DbOpt = None,
) -> None:
    """List the reviewers (none: a single-user store)."""
    from memtui.clock import iso
    from memtui.governance.reviewers import list_delegations, list_reviewers

    engine = _engine(db)
    rows = list_reviewers(engine)
    acts_for: dict[str, list[str]] = {}
    for d in list_delegations(engine):
        acts_for.setdefault(d.delegate, []).append(d.principal)
    if as_json:
        _echo(json_text([{"name": r.name, "role": r.role, "scopes": list(r.scopes), "addedBy": r.added_by,
                           "addedAt": iso(r.added_at), **({"actsFor": acts_for[r.name]} if r.name in acts_for else {})}
                          for r in rows]))
        return
    if not rows:
        _echo("no reviewers: a single-user store (memtui reviewers add NAME --role lead)")
    for r in rows:
        _echo(f"{r.name}\t{r.role}\t{', '.join(r.scopes)}"
              + (f"\tacts for {', '.join(acts_for[r.name])}" if r.name in acts_for else ""))


@reviewers_app.command("remove")
def reviewers_remove(
    name: Annotated[str, typer.Argument(help="The reviewer to remove.")],
    db: DbOpt = None, actor: ActorOpt = None,
) -> None:
    """Remove a reviewer; audited. The last lead or maintainer stays while others remain."""
    from memtui.governance.reviewers import remove_reviewer

    engine = _engine(db)
    r = _governance_call(remove_reviewer, engine, name, _acting_name(actor, engine))
    _echo(f"removed reviewer {r.name} ({r.role})")


@reviewers_app.command("delegate")
def reviewers_delegate(
    delegate: Annotated[str, typer.Argument(help="The reviewer who will act (the connection's identity).")],
    principal: Annotated[str, typer.Argument(help="The reviewer he may act for (--actor PRINCIPAL).")],
    revoke: Annotated[bool, typer.Option("--revoke", help="Withdraw the delegation instead.")] = False,
    db: DbOpt = None, actor: ActorOpt = None,
) -> None:
    """Let DELEGATE act as PRINCIPAL (or withdraw it); needs a lead whose own role and scopes cover
    PRINCIPAL's; audited (issue 21 item 5)."""
    from memtui.governance.reviewers import grant_delegation, revoke_delegation

    engine = _engine(db)
    by = _acting_name(actor, engine)
    if revoke:
        d = _governance_call(revoke_delegation, engine, delegate, principal, by)
        _echo(f"{d.delegate} no longer acts for {d.principal}")
    else:
        d = _governance_call(grant_delegation, engine, delegate, principal, by)
        _echo(f"{d.delegate} may act for {d.principal} (granted by {d.granted_by})")


@scope_app.command("set-visibility")
def scope_set_visibility(
    repository: Annotated[str, typer.Argument(help="The repository id.")],
    level: Annotated[str, typer.Argument(help="private | internal | public")],
    db: DbOpt = None, actor: ActorOpt = None,
) -> None:
    """Set a repository's visibility, recompute who may recall its memory, audit it (design §22.2)."""
    from memtui.governance.visibility import VISIBILITY_LEVELS, VisibilityError, set_visibility

    if level not in VISIBILITY_LEVELS:
        raise _fail(f"visibility must be one of {', '.join(VISIBILITY_LEVELS)}, not {level!r}", 2)
    engine = _engine(db)
    who = _actor(actor, None, engine)
    _require(engine, who, "scope set-visibility")
    try:
        c = set_visibility(engine, repository, level, who)
    except VisibilityError as exc:
        raise _fail(str(exc))
    _echo(f"{c.repository_id}: visibility {c.before} -> {c.after}; {c.memories} memories, "
          f"{c.dropped_from_recall} dropped from recall outside it"
          + (f"; reviewers outside: {', '.join(c.reviewers_outside)}" if c.reviewers_outside else ""))


app.add_typer(reviewers_app, name="reviewers")
app.add_typer(scope_app, name="scope")
