"""The review queue as a query: filters, full-text search and sort orders, paged by keyset (issue 11, item 1).

:class:`QueueFilter` is a plain value (the TUI's filter bar, saved per user); :func:`find` turns it
into one SQL query a page and :func:`count` into one ``count(*)``. Search uses the store's full-text
index (migration 0007: SQLite FTS5, PostgreSQL ``tsvector``), never a scan of the statements.
Paging is by keyset: every item carries ``key``, the values of its sort columns, and the next page
starts after the last key, so a page costs the same at row 10 and at row 100,000.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, func, select

from memtui.domain.invariants import HIGH_IMPACT_TYPES
from memtui.domain.states import ALL_STATES, QUEUE_STATES
from memtui.governance.visibility import restrict
from memtui.store.models import Evidence, Memory, Revalidation, StateHistory

#: The sort orders: name -> what it means (shown in the filter bar's help).
SORTS: dict[str, str] = {
    "state": "needs_review, challenged, candidate, approved, then id",
    "priority": "high impact first, then revalidation severity (high first), then oldest",
    "age": "oldest first",
    "confidence": "least confident first",
}
QUEUE_RANK: dict[str, int] = {s.value: i for i, s in enumerate(QUEUE_STATES)}
#: the state order of the ``state`` sort: the queue states, then the others (a filter may ask for them)
STATE_RANK: dict[str, int] = {s: i for i, s in enumerate([*QUEUE_RANK, *(s for s in ALL_STATES if s not in QUEUE_RANK)])}
_SEVERITY_RANK = {"high": 3, "medium": 2, "changed": 2, "low": 1}
_WORD = re.compile(r"[^\W_]+")


class FilterError(ValueError):
    """A filter value that cannot be used; the message names the field."""


@dataclass(frozen=True)
class QueueFilter:
    """What the queue shows and in which order. Empty fields filter nothing.

    ``states``: lifecycle states (empty: the queue states); ``memory_type``; ``repository_id``
    (``"*"``: org-wide memory only); ``module_path`` (that path and everything under it);
    ``reason_code`` (a piece of evidence carries it, e.g. ``referenced_symbol_deleted``);
    ``min_confidence``/``max_confidence`` (0..1, inclusive); ``actor`` (a history event by that
    actor id: proposer, importer or reviewer); ``min_age_days``/``max_age_days`` (days since
    creation, inclusive); ``search`` (words, each matched as a word prefix, all required);
    ``sort`` (a key of :data:`SORTS`) and ``descending`` (the sort reversed).
    """

    states: tuple[str, ...] = ()
    memory_type: str | None = None
    repository_id: str | None = None
    module_path: str | None = None
    reason_code: str | None = None
    min_confidence: float | None = None
    max_confidence: float | None = None
    actor: str | None = None
    min_age_days: int | None = None
    max_age_days: int | None = None
    search: str = ""
    sort: str = "state"
    descending: bool = False

    def __post_init__(self) -> None:
        bad = [s for s in self.states if s not in ALL_STATES]
        if bad:
            raise FilterError(f"states: {', '.join(bad)} is not a state ({', '.join(ALL_STATES)})")
        if self.sort not in SORTS:
            raise FilterError(f"sort: {self.sort!r} is not one of {', '.join(SORTS)}")
        for name in ("min_confidence", "max_confidence"):
            v = getattr(self, name)
            if v is not None and not 0.0 <= v <= 1.0:
                raise FilterError(f"{name}: {v} is outside 0..1")
        for name in ("min_age_days", "max_age_days"):
            v = getattr(self, name)
            if v is not None and v < 0:
                raise FilterError(f"{name}: {v} is negative")

    @property
    def terms(self) -> list[str]:
        """The search words, lower-cased, as the index splits them (letters and digits)."""
        return [w.lower() for w in _WORD.findall(self.search)]

    def with_(self, **changes: Any) -> "QueueFilter":
        """A copy with ``changes`` applied (validated again)."""
        return replace(self, **changes)

    def to_dict(self) -> dict:
        """A JSON-ready dict (saved per user by :mod:`memtui.userconfig`)."""
        d = asdict(self)
        d["states"] = list(self.states)
        return d

    @classmethod
    def from_dict(cls, data: dict) -> "QueueFilter":
        """The filter a saved dict describes; unknown keys are ignored. Raises FilterError."""
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in (data or {}).items() if k in known}
        if "states" in kwargs:
            kwargs["states"] = tuple(kwargs["states"] or ())
        try:
            return cls(**kwargs)
        except TypeError as exc:
            raise FilterError(str(exc)) from exc

    def describe(self) -> list[str]:
        """The active filters as short ``name=value`` strings (for the filter bar)."""
        out = []
        if self.search:
            out.append(f"/{self.search}")
        if self.states:
            out.append("state=" + ",".join(self.states))
        for label, v in (("type", self.memory_type), ("repo", self.repository_id), ("module", self.module_path),
                         ("reason", self.reason_code), ("actor", self.actor)):
            if v:
                out.append(f"{label}={v}")
        if self.min_confidence is not None or self.max_confidence is not None:
            out.append(f"conf={_num(self.min_confidence, '0')}..{_num(self.max_confidence, '1')}")
        if self.min_age_days is not None or self.max_age_days is not None:
            out.append(f"age={_num(self.min_age_days, '0')}..{_num(self.max_age_days, '')}")  # days
        return out


def _num(v, default: str) -> str:
    return default if v is None else f"{v:g}"


def parse_filter_text(text: str, base: QueueFilter) -> QueueFilter:
    """Apply ``name=value`` pairs typed in the filter dialog to ``base`` (search and sort kept).

    Names: ``state`` (comma list), ``type``, ``repo``, ``module``, ``reason``, ``actor``,
    ``conf=MIN..MAX``, ``age=MIN..MAX`` (days); an empty text clears every filter. Raises
    FilterError naming the pair that cannot be read."""
    simple = {"type": "memory_type", "repo": "repository_id", "module": "module_path", "reason": "reason_code",
              "actor": "actor"}
    changes: dict[str, Any] = {f.name: f.default for f in fields(QueueFilter)
                               if f.name not in ("search", "sort", "descending")}
    for pair in text.split():
        name, sep, value = pair.partition("=")
        if not sep or not value:
            raise FilterError(f"{pair!r}: write name=value (state, type, repo, module, reason, actor, conf, age)")
        if name == "state":
            changes["states"] = tuple(value.split(","))
        elif name in simple:
            changes[simple[name]] = value
        elif name in ("conf", "age"):
            lo, _, hi = value.partition("..")
            conv = float if name == "conf" else int
            try:
                bounds = (conv(lo) if lo else None, conv(hi) if hi else None)
            except ValueError as exc:
                raise FilterError(f"{pair!r}: {name} takes MIN..MAX numbers") from exc
            keys = ("min_confidence", "max_confidence") if name == "conf" else ("min_age_days", "max_age_days")
            changes.update(zip(keys, bounds))
        else:
            raise FilterError(f"{pair!r}: unknown filter {name!r} (state, type, repo, module, reason, actor, conf, age)")
    return replace(base, **changes)


def filter_text(f: QueueFilter) -> str:
    """The ``name=value`` text of ``f``'s filters (what :func:`parse_filter_text` reads back)."""
    return " ".join(d for d in f.describe() if not d.startswith("/"))


# ---- SQL ------------------------------------------------------------------------------------
def _rank_expr():
    return sa.case(STATE_RANK, value=Memory.state, else_=len(STATE_RANK))


def _high_impact_expr():
    # the SQL form of memtui.domain.invariants.is_high_impact (one rule, two shapes)
    return sa.case((sa.or_(Memory.type.in_(sorted(HIGH_IMPACT_TYPES)), Memory.impact == "high",
                           Memory.repository_id.is_(None)), 1), else_=0)


def _severity_expr():  # over the outer join with memory_revalidation (see find)
    return sa.case(_SEVERITY_RANK, value=Revalidation.severity, else_=0)


def _order(f: QueueFilter) -> list[tuple[Any, bool]]:
    """(expression, ascending) pairs of ``f``'s sort, memory id last (the tie-breaker)."""
    cols = {
        "state": [(_rank_expr(), True)],
        "priority": [(_high_impact_expr(), False), (_severity_expr(), False), (Memory.created_at, True)],
        "age": [(Memory.created_at, True)],
        "confidence": [(Memory.confidence, True)],
    }[f.sort] + [(Memory.memory_id, True)]
    return [(expr, asc != f.descending) for expr, asc in cols]


def _search_clause(session: Session, terms: list[str]):
    if session.get_bind().dialect.name == "sqlite":
        match = " ".join(f'"{t}"*' for t in terms)
        ids = sa.text("SELECT memory_id FROM memory_fts WHERE memory_fts MATCH :fts").bindparams(fts=match)
        return Memory.memory_id.in_(ids.columns(sa.column("memory_id", sa.String)))
    return _tsv_match(terms)


def _tsv_match(terms: list[str]):
    """PostgreSQL: the statement's ``tsvector`` (migration 0007) holds a word starting with each term."""
    query = " & ".join(f"{t}:*" for t in terms)
    return sa.literal_column("memory.statement_tsv").op("@@", return_type=sa.Boolean)(
        sa.func.to_tsquery(sa.literal_column("'simple'"), sa.bindparam("tsq", query)))


def _where(session: Session, f: QueueFilter, now: datetime, *, state_index: bool = True) -> list:
    state = Memory.state if state_index else sa.func.coalesce(Memory.state, "")
    conds: list = [state.in_(list(f.states) if f.states else list(QUEUE_RANK))]
    if f.memory_type:
        conds.append(Memory.type == f.memory_type)
    if f.repository_id == "*":
        conds.append(Memory.repository_id.is_(None))
    elif f.repository_id:  # keys are lower case (issue 21 item 2)
        conds.append(Memory.repository_id == f.repository_id.strip().lower())
    if f.module_path:  # canonical (issue 21 item 2); a path climbing out of the repository matches nothing
        from memtui.domain.scopes import NotCanonical, canonical_module_path
        try:
            path = canonical_module_path(f.module_path) or ""
            conds.append(sa.or_(Memory.module_path == path,
                                Memory.module_path.startswith(path + "/", autoescape=True)))
        except NotCanonical:
            conds.append(sa.false())
    if f.reason_code:
        conds.append(sa.exists().where(Evidence.memory_id == Memory.memory_id, Evidence.reason_code == f.reason_code))
    if f.min_confidence is not None:
        conds.append(Memory.confidence >= f.min_confidence)
    if f.max_confidence is not None:
        conds.append(Memory.confidence <= f.max_confidence)
    if f.actor:
        conds.append(sa.exists().where(StateHistory.memory_id == Memory.memory_id, StateHistory.actor_id == f.actor))
    if f.min_age_days is not None:
        conds.append(Memory.created_at <= now - timedelta(days=f.min_age_days))
    if f.max_age_days is not None:
        conds.append(Memory.created_at > now - timedelta(days=f.max_age_days + 1))
    if f.terms:
        conds.append(_search_clause(session, f.terms))
    return conds


def _after(order: list[tuple[Any, bool]], key: tuple) -> Any:
    """Rows strictly after ``key`` in ``order``: (a > x) or (a = x and b > y) or ..."""
    ors = []
    for i, (expr, asc) in enumerate(order):
        step = [o[0] == v for o, v in zip(order[:i], key[:i])]
        step.append(expr > key[i] if asc else expr < key[i])
        ors.append(sa.and_(*step))
    return sa.or_(*ors)


#: The columns a queue row needs (no ORM objects: a page of 200 is read as plain rows).
COLUMNS = (Memory.memory_id, Memory.state, Memory.type, Memory.statement, Memory.tenant_id, Memory.repository_id,
           Memory.module_path, Memory.applies_to, Memory.does_not_apply_to, Memory.confidence, Memory.created_at,
           Memory.version, Memory.impact, Memory.conflict_state)


@dataclass(frozen=True)
class Row:
    """What :func:`find` reads of one memory (the service turns it into a QueueItemView): ``memory``
    has the attributes of :data:`COLUMNS`."""

    memory: Any
    key: tuple = field(default=())


def find(session: Session, viewer, f: QueueFilter, after: tuple | None, limit: int, now: datetime) -> list[Row]:
    """The next ``limit`` memories matching ``f`` after the keyset ``after`` (None: from the top).

    The ``state`` sort reads one state at a time along the ``(state, memory_id)`` index, so its
    pages cost the same anywhere in 100,000 rows; a search on PostgreSQL reads along the sort's
    index while its matches are dense (:func:`_search_walk`). The other sorts, and a search on
    SQLite (whose matches drive the query), are one ordered query."""
    if f.sort == "state" and not f.terms:
        return _find_by_state(session, viewer, f, after, limit, now)
    if f.terms and f.sort != "priority" and session.get_bind().dialect.name == "postgresql":
        return _search_walk(session, viewer, f, after, limit, now)
    return _find_ordered(session, viewer, f, after, limit, now)


def _find_ordered(session: Session, viewer, f: QueueFilter, after: tuple | None, limit: int,
                  now: datetime) -> list[Row]:
    """:func:`find` as one query ordered by ``f``'s sort (every match is read and sorted)."""
    order = _order(f)
    exprs = [expr.label(f"k{i}") for i, (expr, _) in enumerate(order)]
    # the queue states are most of a store: walking the sort's index (created_at, confidence) beats
    # reading them by state and sorting 100,000 rows for a page of 200, but SQLite (no statistics)
    # picks the state index unless the state test cannot use it
    walk = f.sort in ("age", "confidence") and not f.states and not f.terms
    q = restrict(select(*COLUMNS, *exprs), session, viewer).where(*_where(session, f, now, state_index=not walk))
    if f.sort == "priority":
        q = q.outerjoin(Revalidation, Revalidation.memory_id == Memory.memory_id)
    if after is not None:
        q = q.where(_after(order, tuple(after)))
    q = q.order_by(*[expr.asc() if asc else expr.desc() for expr, asc in order]).limit(limit)
    n = len(COLUMNS)
    return [Row(r, tuple(r[n:])) for r in session.exec(q)]


def _find_by_state(session: Session, viewer, f: QueueFilter, after: tuple | None, limit: int,
                   now: datetime) -> list[Row]:
    out: list[Row] = []
    for rank, q in _state_reads(session, viewer, f, after, lambda _rank: COLUMNS, _where(session, f, now)[1:]):
        if len(out) >= limit:
            break
        out.extend(Row(m, (rank, m.memory_id)) for m in session.exec(q.limit(limit - len(out))))
    return out


def _state_reads(session: Session, viewer, f: QueueFilter, after: tuple | None, columns, conds: list):
    """``(rank, query)`` for each state the ``state`` sort reads, in order, from the keyset ``after``
    on: ``columns(rank)`` of that state's rows matching ``conds``, in id order, after ``after``."""
    start_rank, after_id = after if after else (None, None)
    for state in sorted(f.states or QUEUE_RANK, key=STATE_RANK.__getitem__, reverse=f.descending):
        rank = STATE_RANK[state]
        if start_rank is not None and (rank < start_rank if not f.descending else rank > start_rank):
            continue
        q = restrict(select(*columns(rank)), session, viewer).where(Memory.state == state, *conds)
        if rank == start_rank:
            q = q.where(Memory.memory_id < after_id if f.descending else Memory.memory_id > after_id)
        yield rank, q.order_by(Memory.memory_id.desc() if f.descending else Memory.memory_id)


#: Rows a search on PostgreSQL reads along its sort's index (each state's, for the ``state`` sort),
#: a query a step, before it leaves the rest to the full-text index (:func:`_search_walk`); 5,000 in all.
WALK_STEPS = (500, 1500, 3000)


def _search_walk(session: Session, viewer, f: QueueFilter, after: tuple | None, limit: int,
                 now: datetime) -> list[Row]:
    """A search in the ``state``, ``age`` or ``confidence`` sort on PostgreSQL: :func:`_find_ordered`'s
    rows and keys, read without ordering every match.

    Ordering every match costs a heap visit per match (over a second for a common word at 1,000,000
    memories), and the planner, which multiplies the frequencies of the words, takes words that come
    together ("never call directly") for rare. So the rows are read along the sort's index
    (``(state, memory_id)`` one state at a time, ``(created_at, memory_id)``, ``(confidence,
    memory_id)``) in :data:`WALK_STEPS`, testing each statement's ``tsvector``: where matches are
    dense the page fills within a few hundred rows. A walk that reads all its steps short of the page
    means the matches are sparse: the rest, after the last row walked, is one ordered query driven by
    the GIN index."""
    hit = _tsv_match(f.terms)
    plain = f.with_(search="")
    found: list[tuple[tuple, str]] = []  # (key, memory id) of each match, in order
    last: tuple | None = None  # the key of the last row read by a walk that ran out of steps short of the page
    if f.sort == "state":
        def columns(rank: int) -> tuple:
            return Memory.memory_id, hit, sa.literal(rank), Memory.memory_id

        def on(key: tuple):
            return Memory.memory_id < key[1] if f.descending else Memory.memory_id > key[1]

        for _rank, q in _state_reads(session, viewer, f, after, columns, _where(session, plain, now)[1:]):
            if len(found) >= limit or last is not None:
                break
            last = _walk(session, q, on, found, limit)
    else:
        order = _order(f)
        q = restrict(select(Memory.memory_id, hit, *[expr for expr, _ in order]), session, viewer)
        q = q.where(*_where(session, plain, now))
        if after is not None:
            q = q.where(_after(order, tuple(after)))
        q = q.order_by(*[expr.asc() if asc else expr.desc() for expr, asc in order])
        last = _walk(session, q, lambda key: _after(order, key), found, limit)
    rows = {r.memory_id: r for r in session.exec(select(*COLUMNS).where(
        Memory.memory_id.in_([mid for _key, mid in found])))} if found else {}
    page = [Row(rows[mid], key) for key, mid in found if mid in rows]
    if last is not None:  # sparse: the index drives the rest
        page += _find_ordered(session, viewer, f, last, limit - len(found), now)
    return page


def _walk(session: Session, q, on, found: list[tuple[tuple, str]], limit: int) -> tuple | None:
    """Read ``q`` (memory id, matched, sort key...; ordered) in :data:`WALK_STEPS`, each step after the
    last key read (``on(key)``: the condition of the rows after it), adding the matches' (key, id) to
    ``found`` up to ``limit``. Returns the last key read when every step was read short of the page,
    else None (the page is full, or ``q`` has no more rows)."""
    key = None
    for step in WALK_STEPS:
        rows = session.connection().execute((q if key is None else q.where(on(key))).limit(step)).all()
        found += [(tuple(r[2:]), r[0]) for r in rows if r[1]][:limit - len(found)]
        if len(found) >= limit or len(rows) < step:
            return None
        key = tuple(rows[-1][2:])
    return key


def count(session: Session, viewer, f: QueueFilter, now: datetime) -> int:
    """How many memories match ``f``."""
    q = restrict(select(func.count()).select_from(Memory), session, viewer).where(*_where(session, f, now))
    return session.exec(q).one()
