"""Which memory a viewer may see (issue 9, item 2; design seed 000 §22.2 "Permission Drift").

The one query helper every listing uses (review queue, ``show``, ``history``, health, proposal
screens, ``export json``, ``export agents-md``, ``recall``):

- a human with reviewer scopes sees only memory inside them (:mod:`memtui.domain.scopes`);
- an unrestricted viewer (``scopes`` None: a single-user store, system jobs) sees everything,
  except that a non-human viewer (an agent) never sees a ``private`` repository's memory;
- repository visibility (``private`` / ``internal`` / ``public``, default ``internal``) is kept in
  :class:`memtui.store.models.StoreSetting` under ``visibility:<repository>``. ``private``: only
  actors whose scopes include that repository see and recall its memory. ``internal`` and
  ``public`` leave recall as scopes decide.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, func, select

from memtui.domain.invariants import Actor
from memtui.domain.scopes import ScopeSyntaxError, covers_repository, in_scopes, parse_scope
from memtui.domain.states import LIVE_STATES
from memtui.store.models import Memory, Reviewer, StoreSetting

VISIBILITY_PREFIX = "visibility:"
VISIBILITY_LEVELS = ("private", "internal", "public")
DEFAULT_VISIBILITY = "internal"


class VisibilityError(ValueError):
    """A bad ``scope set-visibility`` request (unknown level, unknown repository); says why."""


def private_repositories(session: Session) -> set[str]:
    """Repositories whose visibility is ``private``."""
    rows = session.exec(select(StoreSetting).where(StoreSetting.key.startswith(VISIBILITY_PREFIX)))
    return {r.key[len(VISIBILITY_PREFIX):] for r in rows if r.value == "private"}


def _scope_clause(text: str):
    s = parse_scope(text)
    if s.tenant is None:
        return sa.true()
    parts = [Memory.tenant_id == s.tenant]
    if s.repository is not None:
        parts.append(Memory.repository_id == s.repository)
    if s.module is not None:
        parts.append(sa.or_(Memory.module_path == s.module,
                            Memory.module_path.startswith(s.module + "/", autoescape=True)))
    return sa.and_(*parts)


def memory_clause(session: Session, viewer: Actor | None):
    """A WHERE clause on :class:`Memory` for what ``viewer`` may see, or None (everything)."""
    if viewer is None:
        return None
    if viewer.scopes is not None:
        if any(s.strip() == "*" for s in viewer.scopes):
            return None
        return sa.or_(*[_scope_clause(s) for s in viewer.scopes]) if viewer.scopes else sa.false()
    if viewer.type != "human":
        private = sorted(private_repositories(session))
        if private:
            return sa.or_(Memory.repository_id.is_(None), Memory.repository_id.not_in(private))
    return None


def restrict(query, session: Session, viewer: Actor | None):
    """``query`` (a select over Memory) narrowed to what ``viewer`` may see."""
    clause = memory_clause(session, viewer)
    return query if clause is None else query.where(clause)


def can_see(session: Session, viewer: Actor | None, memory: Memory) -> bool:
    """Whether ``viewer`` may see ``memory`` (the same rule as :func:`memory_clause`, for one row)."""
    if viewer is None:
        return True
    if viewer.scopes is not None:
        return in_scopes(memory.tenant_id, memory.repository_id, memory.module_path, viewer.scopes)
    if viewer.type != "human" and memory.repository_id is not None:
        return memory.repository_id not in private_repositories(session)
    return True


def visibility_of(session: Session, repository_id: str) -> str:
    """The repository's visibility level (``internal`` when never set)."""
    row = session.get(StoreSetting, VISIBILITY_PREFIX + repository_id)
    return row.value if row else DEFAULT_VISIBILITY


@dataclass(frozen=True)
class VisibilityChange:
    """What ``scope set-visibility`` did: the levels either side and who lost sight of what."""

    repository_id: str
    before: str
    after: str
    memories: int
    dropped_from_recall: int
    reviewers_outside: tuple[str, ...]


def set_visibility(engine: Engine, repository_id: str, level: str, actor: Actor) -> VisibilityChange:
    """Set a repository's visibility, recompute who may see its memory and audit it (design §22.2).

    ``dropped_from_recall`` counts the repository's live memory that actors outside it (agents,
    reviewers whose scopes do not include it) no longer recall when it becomes ``private``.
    Raises :class:`VisibilityError` for an unknown level or a repository no memory names."""
    from memtui.governance.audit import audit
    from memtui.store.models import Repository

    if level not in VISIBILITY_LEVELS:
        raise VisibilityError(f"visibility must be one of {', '.join(VISIBILITY_LEVELS)}, not {level!r}")
    with Session(engine) as session, session.begin():
        tenants = set(session.exec(select(Memory.tenant_id).where(Memory.repository_id == repository_id)
                                   .distinct()).all())
        repo = session.get(Repository, repository_id)
        if repo is not None:
            tenants.add(repo.tenant_id)
        if not tenants:
            raise VisibilityError(f"no repository {repository_id!r} in the store (no memory names it)")
        before = visibility_of(session, repository_id)
        total = session.exec(select(func.count()).select_from(Memory)
                             .where(Memory.repository_id == repository_id)).one()
        live = session.exec(select(func.count()).select_from(Memory).where(
            Memory.repository_id == repository_id, Memory.state.in_([s.value for s in LIVE_STATES]))).one()
        outside = []
        for r in session.exec(select(Reviewer).order_by(Reviewer.name)):
            try:
                covered = any(covers_repository(r.scopes, t, repository_id) for t in tenants)
            except ScopeSyntaxError:
                covered = False
            if not covered:
                outside.append(r.name)
        dropped = live if (level == "private" and before != "private") else 0
        row = session.get(StoreSetting, VISIBILITY_PREFIX + repository_id) or StoreSetting(
            key=VISIBILITY_PREFIX + repository_id, value=level)
        row.value = level
        session.add(row)
        audit(session, "visibility_changed", actor.id, repository_id, before=before, after=level,
              memories=total, droppedFromRecall=dropped, reviewersOutside=outside)
    return VisibilityChange(repository_id, before, level, total, dropped, tuple(outside))


#: Tables about the store's governance, not its memory: left out of an export narrowed to a viewer.
GOVERNANCE_TABLES = ("reviewer", "audit_event", "store_setting", "review_claim", "secret_finding")


def narrow_export(session: Session, viewer: Actor | None, memories: list[Memory], history: list,
                  tables: dict[str, list[dict]]) -> tuple[list[Memory], list, dict[str, list[dict]]]:
    """``export json``'s rows narrowed to what ``viewer`` may see: its memories, their history, and
    the rows of other tables that name no hidden memory (governance tables left out). Unchanged
    for an unrestricted viewer."""
    if memory_clause(session, viewer) is None:
        return memories, history, tables
    shown = [m for m in memories if can_see(session, viewer, m)]
    hidden = {m.memory_id for m in memories} - {m.memory_id for m in shown}

    def names_hidden(value) -> bool:
        if isinstance(value, str):
            return value in hidden
        if isinstance(value, (list, tuple)):
            return any(names_hidden(v) for v in value)
        if isinstance(value, dict):
            return any(names_hidden(v) for v in value.values()) or any(k in hidden for k in value)
        return False

    narrowed = {name: [r for r in rows if not names_hidden(r)]
                for name, rows in tables.items() if name not in GOVERNANCE_TABLES}
    return shown, [h for h in history if h.memory_id not in hidden], narrowed


def visible_memory_ids(engine: Engine, viewer: Actor | None) -> set[str] | None:
    """The ids of the memory ``viewer`` may see, or None when it sees everything (for listings that
    are not queries over Memory: duplicate clusters, conflicts, compaction proposals, quality)."""
    with Session(engine) as session:
        clause = memory_clause(session, viewer)
        if clause is None:
            return None
        return set(session.exec(select(Memory.memory_id).where(clause)).all())


def repositories_within(engine: Engine, within, viewer: Actor | None) -> set[tuple[str, str]]:
    """The (tenant, repository) pairs the store knows -- registered, or named by memory -- that lie
    inside ``within`` (a :class:`memtui.domain.scopes.Scope`, its module ignored; None: anywhere)
    and that ``viewer`` may see (an agent: no ``private`` one; a scoped reviewer: a repository its
    scopes reach). What a transport may name in an error (issue 21 item 8)."""
    from memtui.domain.scopes import Scope, in_scope
    from memtui.store.models import Repository

    with Session(engine) as session:
        pairs = set(session.exec(select(Repository.tenant_id, Repository.repository_id)).all())
        pairs.update(session.exec(select(Memory.tenant_id, Memory.repository_id)
                                  .where(Memory.repository_id.is_not(None)).distinct()).all())
        unscoped_agent = viewer is not None and viewer.type != "human" and viewer.scopes is None
        hidden = private_repositories(session) if unscoped_agent else set()
    bound = Scope(within.tenant, within.repository) if within is not None and within.tenant else None
    out = set()
    for tenant, repo in pairs:
        if not tenant or not repo or repo in hidden:
            continue
        if bound is not None and not in_scope(tenant, repo, None, bound):
            continue
        if viewer is not None and viewer.scopes is not None and not _reaches(viewer.scopes, tenant, repo):
            continue
        out.add((tenant, repo))
    return out


def _reaches(scopes, tenant: str, repository: str) -> bool:
    """Whether any of ``scopes`` reaches into the repository (a module scope inside it counts)."""
    from memtui.domain.scopes import Scope, in_scope

    for text in scopes:
        if text.strip() == "*":
            return True
        try:
            s = parse_scope(text)
        except (ScopeSyntaxError, ValueError):
            continue
        if in_scope(tenant, repository, None, Scope(s.tenant, s.repository)):
            return True
    return False


def all_visible(ids, visible: set[str] | None) -> bool:
    """Whether every id of ``ids`` is visible (``visible`` None: everything is)."""
    return visible is None or all(i in visible for i in ids)
