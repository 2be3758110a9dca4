"""Stored scopes that are not canonical (issue 21, item 2), for ``memtui check``.

Every entry writes canonical scopes (:mod:`memtui.domain.scopes`); a row written before that rule,
or by editing the database, may still hold ``..``, ``//``, a backslash or an upper-case key. Such a
row is a finding: a memory's tenant, repository or module path, an evidence row's repository, a
registered repository's key or tenant, a reviewer's scopes. Read-only.
"""

from __future__ import annotations

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from memtui.domain.scopes import ScopeSyntaxError, parse_scope, scope_problems
from memtui.store.models import Evidence, Memory, Repository, Reviewer

__all__ = ["noncanonical_scopes"]


def _reviewer_scope(scope: str) -> str | None:
    """Why a stored reviewer scope is not canonical, or None."""
    try:
        label = parse_scope(scope).label
    except ScopeSyntaxError as exc:
        return str(exc)
    return None if label == scope else f"{scope!r} is not canonical (canonical: {label!r})"


def noncanonical_scopes(engine: Engine) -> list[str]:
    """One finding a line (``memory ID: scope not canonical: field 'module_path': ...``), sorted by
    what it names; [] when every stored scope is canonical."""
    out: list[str] = []
    with Session(engine) as session:
        for mid, tenant, repo, module in session.exec(
                select(Memory.memory_id, Memory.tenant_id, Memory.repository_id, Memory.module_path)
                .order_by(Memory.memory_id)):
            out += [f"memory {mid}: scope not canonical: {why}" for why in scope_problems(tenant, repo, module)]
        for mid, ordinal, repo in session.exec(
                select(Evidence.memory_id, Evidence.ordinal, Evidence.repository_id)
                .where(Evidence.repository_id.is_not(None)).order_by(Evidence.memory_id, Evidence.ordinal)):
            out += [f"memory {mid}: evidence {ordinal}: scope not canonical: {why}"
                    for why in scope_problems(None, repo, None, ("tenant_id", "repository_id", "module_path"))]
        for rid, tenant in session.exec(select(Repository.repository_id, Repository.tenant_id)
                                        .order_by(Repository.repository_id)):
            out += [f"repository {rid!r}: scope not canonical: {why}" for why in scope_problems(tenant, rid, None)]
        for name, scopes in session.exec(select(Reviewer.name, Reviewer.scopes).order_by(Reviewer.name)):
            for scope in scopes or ():
                why = _reviewer_scope(scope)
                if why:
                    out.append(f"reviewer {name!r}: scope not canonical: {why}")
    return out
