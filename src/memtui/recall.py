"""Recall: a small, eligible context pack of memory for one task (issue 5; seed 000 §15, seed 003 "small recall").

``recall(engine, task, scope)`` ranks the memories of a repository scope by TF-IDF relevance to the
task text, keeps only those retrieval eligibility allows (:func:`memtui.domain.quality.eligibility`:
active, fresh, not conflicted, not blocked, in scope, confident) and returns the top few with their
scope, applies-to / does-not-apply-to, how they were verified and their evidence. Every relevant
memory that was left out is listed with the reason, and summarised one line per reason ("1 stale
memory about RuleEngine was excluded", seed 000 §15.3); the JSON form lists the first
:data:`EXCLUDED_LISTED` of them and counts all (issue 12). Recording the pack writes one usage event
per included memory, in one transaction.

Same store, same task, same scope and the same clock give the same pack.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
import threading
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Iterable, NamedTuple

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, func, select

from memtui.clock import iso, new_event_id, utcnow
from memtui.domain.invariants import Actor
from memtui.domain.quality import _IDENTIFIER, eligibility, quality, quality_input
from memtui.safety.guard import redact_for_display
from memtui.review.views import EvidenceView
from memtui.similarity.text import stem
from memtui.store import changes
from memtui.store.models import Evidence, HarmEvent, Memory, Repository, Revalidation, UsageEvent
from memtui.text import visible

if TYPE_CHECKING:
    from memtui.domain.scopes import Scope

SCOPE_PREFIX = "repository:"
#: Cosine similarity (TF-IDF) from which a memory counts as relevant to the task.
MIN_RELEVANCE = 0.05
#: The primary reason a relevant memory was left out, most important first (one summary line each).
REASON_ORDER: tuple[str, ...] = (
    "blocked", "conflicted", "stale", "out_of_scope", "state_needs_review", "state_challenged",
    "state_candidate", "state_approved", "state_invalidated", "state_superseded", "state_expired",
    "state_deprecated", "state_rejected", "state_archived", "state_blocked", "low_confidence", "over_limit",
)
_ADJECTIVE = {
    "blocked": "blocked", "conflicted": "conflicted", "stale": "stale", "out_of_scope": "out-of-scope",
    "low_confidence": "low-confidence", "state_needs_review": "under-review", "state_candidate": "unreviewed candidate",
    "state_approved": "approved but not yet active",
}
_CHUNK = 500
#: How many excluded memories the JSON pack lists one by one (in summary order: reason, then relevance);
#: ``excludedTotal`` and the summary lines count all of them.
EXCLUDED_LISTED = 50


class RecallError(ValueError):
    """The recall cannot be made (a malformed scope, an unknown repository); the message says why."""


@dataclass(frozen=True)
class RecallScope:
    """A repository, optionally narrowed to a module path."""

    repository_id: str
    module_path: str | None = None

    @property
    def label(self) -> str:
        """``repository:NAME[/module]`` as the user writes it."""
        return SCOPE_PREFIX + self.repository_id + (f"/{self.module_path}" if self.module_path else "")


@dataclass(frozen=True)
class RecalledMemory:
    """One memory of the pack: what it says, where it applies, how it was verified, its evidence."""

    memory_id: str
    type: str
    statement: str
    tenant_id: str
    repository_id: str | None
    module_path: str | None
    applies_to: tuple[str, ...]
    does_not_apply_to: tuple[str, ...]
    tags: tuple[str, ...]
    review_state: str
    last_validated_at: datetime | None
    evidence_status: tuple[tuple[str, int], ...]  # (status, count), most frequent first
    revalidation_status: str | None
    revalidated_at: datetime | None
    evidence: tuple[EvidenceView, ...]
    relevance: float
    quality: float
    reasons: tuple[str, ...]  # the eligibility reasons (active, fresh, scope_match ...)

    @property
    def verification(self) -> str:
        """One line: review state, last validation, evidence status, last revalidation."""
        parts = [f"review {self.review_state}"]
        parts.append(f"last validated {_day(self.last_validated_at)}" if self.last_validated_at
                     else "never validated by a person")
        if self.evidence_status:
            parts.append("evidence " + ", ".join(f"{n} {s}" for s, n in self.evidence_status))
        else:
            parts.append("no evidence")
        if self.revalidation_status:
            parts.append(f"revalidated against the code {_day(self.revalidated_at)} ({self.revalidation_status})")
        return "; ".join(parts)


class ExcludedMemory(NamedTuple):
    """A relevant memory left out of the pack: the main reason, all reasons, what it is about (a
    named tuple: a pack lists thousands)."""

    memory_id: str
    type: str
    state: str
    reason: str
    reasons: tuple[str, ...]
    relevance: float
    subject: str | None  # a code name the memory is about (None for a blocked memory)


@dataclass(frozen=True)
class RecallPack:
    """A context pack: the memories, the relevant ones left out and one summary line per reason."""

    context_pack_id: str
    task: str
    scope: RecallScope
    limit: int
    created_at: datetime
    memories: tuple[RecalledMemory, ...]
    excluded: Sequence[ExcludedMemory]  # in summary order (reason, relevance, id); made as they are read
    summary: tuple[str, ...]
    usage_ids: tuple[str, ...] = ()


# ---- scope ----------------------------------------------------------------------------------

def parse_scope(text: str, known_repositories: Iterable[str] = ()) -> RecallScope:
    """Parse ``repository:NAME`` or ``repository:NAME/module/path``.

    A repository id may itself hold ``/``: the longest known repository id that the text starts
    with wins; otherwise the name ends at the first ``/``. The scope is canonical (issue 21 item 2,
    :mod:`memtui.domain.scopes`: the key in lower case, the module path resolved). Raises
    :class:`RecallError` (also for a module path whose ``..`` climbs above the repository root).
    """
    from memtui.domain.scopes import NotCanonical, canonical_key, canonical_module_path

    text = (text or "").strip()
    if not text.startswith(SCOPE_PREFIX):
        raise RecallError(f"scope {text!r}: expected repository:NAME or repository:NAME/module/path")
    rest = text[len(SCOPE_PREFIX):].strip().replace("\\", "/").strip("/")
    if not rest:
        raise RecallError(f"scope {text!r}: the repository name is missing")
    known = {k.lower() for k in known_repositories}
    low = rest.lower()
    prefixes = sorted((k for k in known if low == k or low.startswith(k + "/")), key=len, reverse=True)
    end = len(prefixes[0]) if prefixes else len(rest.split("/", 1)[0])
    try:
        return RecallScope(canonical_key(rest[:end], "scope repository"),
                           canonical_module_path(rest[end:], "scope module"))
    except NotCanonical as exc:
        raise RecallError(f"scope {text!r}: {exc}") from None


def known_repositories(session: Session) -> set[str]:
    """Repository ids the store knows: registered ones and those memories name."""
    ids = set(session.exec(select(Repository.repository_id)).all())
    ids.update(r for r in session.exec(select(Memory.repository_id).distinct()).all() if r)
    return ids


def resolve_scope(session: Session, text: str) -> RecallScope:
    """:func:`parse_scope` against the store; an unknown repository is a :class:`RecallError`."""
    known = known_repositories(session)
    scope = parse_scope(text, known)
    if scope.repository_id not in known:
        raise RecallError(f"unknown repository {scope.repository_id!r} (known: {', '.join(sorted(known)) or 'none'})")
    return scope


def _resolve_known(facts: "_Facts", text: str) -> RecallScope:
    """:func:`resolve_scope` against the store's known repositories in ``facts``."""
    known = set(facts.tenants)
    scope = parse_scope(text, known)
    if scope.repository_id not in known:
        raise RecallError(f"unknown repository {scope.repository_id!r} (known: {', '.join(sorted(known)) or 'none'})")
    return scope


def check_known_scope(session: Session, scope: "Scope") -> None:
    """Refuse (:class:`RecallError`) a tenant/repository scope naming a repository the store does not
    know, or a tenant that is not the repository's."""
    if scope.tenant is None or scope.repository is None:
        return
    known = known_repositories(session)
    if scope.repository not in known:
        raise RecallError(f"unknown repository {scope.repository!r} (known: {', '.join(sorted(known)) or 'none'})")
    tenants = repository_tenants(session, scope.repository)
    if tenants and scope.tenant not in tenants:
        raise RecallError(f"repository {scope.repository!r} belongs to tenant {', '.join(sorted(tenants))}, "
                          f"not {scope.tenant!r}")


def sole_repository(engine: Engine, within: "Scope | None" = None) -> "Scope | None":
    """The one repository the store knows inside ``within`` (a tenant scope, or None: anywhere), as a
    :class:`memtui.domain.scopes.Scope` with its tenant; None when there are none or several."""
    from memtui.domain.scopes import Scope

    with Session(engine) as session:
        found = []
        for repo in sorted(known_repositories(session)):
            for tenant in sorted(repository_tenants(session, repo)) or ["default"]:
                if within is None or within.tenant in (None, tenant):
                    found.append(Scope(tenant, repo))
        return found[0] if len(found) == 1 else None


def resolve_any_scope(engine: Engine, text: str) -> "Scope":
    """A scope as recall writes it (``repository:NAME[/module]``) or as reviewer scopes are written
    (``tenant[/repository[/module]]``, ``*``), checked against the store, as a
    :class:`memtui.domain.scopes.Scope` (the repository's tenant filled in). Raises
    :class:`RecallError` for a malformed scope, an unknown repository, a tenant that is not the
    repository's, or a repository of several tenants written without its tenant."""
    from memtui.domain.scopes import Scope, ScopeSyntaxError
    from memtui.domain.scopes import parse_scope as parse_tenant_scope

    text = (text or "").strip()
    with Session(engine) as session:
        if text.startswith(SCOPE_PREFIX):
            r = resolve_scope(session, text)
            tenants = sorted(repository_tenants(session, r.repository_id)) or ["default"]
            if len(tenants) > 1:
                raise RecallError(f"scope {text!r}: repository {r.repository_id!r} belongs to several tenants "
                                  f"({', '.join(tenants)}); write tenant/repository[/module]")
            return Scope(tenants[0], r.repository_id, r.module_path)
        try:
            scope = parse_tenant_scope(text)
        except ScopeSyntaxError as exc:
            raise RecallError(f"{exc}; or write repository:NAME[/module]") from None
        check_known_scope(session, scope)
        return scope


# ---- text relevance -------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z0-9_]+")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def _stem(w: str) -> str:
    """The shared Snowball stemmer (:func:`memtui.similarity.text.stem`), numbers and short words kept."""
    if len(w) <= 3 or w.isdigit():
        return w
    return stem(w)


def terms(text: str, stop: frozenset[str] | None = None) -> list[str]:
    """The index terms of ``text``: lower-cased words, code identifiers split into their parts
    (``RuleRegistry`` gives ``ruleregistry``, ``rule``, ``registry``), stop words dropped, stemmed."""
    stop = stop if stop is not None else _stop_words()
    out: list[str] = []
    for raw in _WORD.findall(text):
        parts = [p for chunk in raw.split("_") if chunk for p in _CAMEL_PART.findall(chunk)]
        if len(parts) > 1:
            out.append(_stem(raw.replace("_", "").lower()))
        for p in parts:
            w = p.lower()
            if len(w) < 2 or w in stop:
                continue
            out.append(_stem(w))
    return out


@functools.lru_cache(maxsize=200_000)
def _document_terms(text: str) -> tuple[str, ...]:
    """:func:`terms` of a document with the default stop words, remembered: the same statements are
    indexed again at every recall (a server answers many)."""
    return tuple(terms(text))


@functools.lru_cache(maxsize=200_000)
def _document_identifiers(text: str) -> frozenset[str]:
    """:func:`identifiers` of a document, remembered (a superset of its statement's)."""
    return frozenset(identifiers(text))


@dataclass(frozen=True)
class _TextIndex:
    """TF-IDF of a recall pool's documents (in the pool's order: by memory id)."""

    documents: tuple[str, ...]
    vectorizer: object | None  # None: no terms in any document
    matrix: object | None

    @classmethod
    def fit(cls, documents: tuple[str, ...]) -> "_TextIndex":
        from sklearn.feature_extraction.text import TfidfVectorizer

        if not documents:
            return cls(documents, None, None)
        vectorizer = TfidfVectorizer(analyzer=_document_terms, sublinear_tf=True, norm="l2")
        try:
            matrix = vectorizer.fit_transform(documents)
        except ValueError:  # no terms at all in the documents
            return cls(documents, None, None)
        return cls(documents, vectorizer, matrix.tocsr())

    def scores(self, task: str):
        """Cosine similarity of ``task`` to each document (a numpy array, unrounded). The task's vector
        is the vectorizer's ``transform`` (counts of known terms, ``1 + log``, times idf, l2-normalised
        in column order) without its input checks, which cost more than the product."""
        import numpy as np
        import scipy.sparse as sp

        if self.vectorizer is None:
            return np.zeros(len(self.documents))
        vocabulary = self.vectorizer.vocabulary_
        counts = Counter(vocabulary[t] for t in _document_terms(task) if t in vocabulary)
        if not counts:
            return np.zeros(len(self.documents))
        columns = np.array(sorted(counts), dtype=np.int32)
        data = np.array([counts[c] for c in columns.tolist()], dtype=np.float64)
        np.log(data, data)
        data += 1.0
        data *= self.vectorizer.idf_[columns]
        norm = 0.0
        for x in data.tolist():
            norm += x * x
        if norm > 0.0:
            data /= np.sqrt(norm)
        query = sp.csr_matrix((data, columns, np.array([0, len(columns)], dtype=np.int32)),
                              shape=(1, len(vocabulary)))
        return (self.matrix @ query.T).toarray().ravel()

    def relevances(self, task: str) -> list[float]:
        """Cosine similarity of ``task`` to each document (rounded to 4 places, stable)."""
        return [round(float(s), 4) for s in self.scores(task)]


@dataclass
class _Pool:
    """What recall reads of one pool of memories (:func:`_pool`), as of one value of the store's change
    counter (:mod:`memtui.store.changes`): the light rows (:data:`_LIGHT_MEMORY`) and light evidence
    rows of every member, in memory-id order (Python's, so ties break as in the straightforward
    computation); their TF-IDF index; which members name each code identifier (``naming``: in the
    document or the evidence, what makes a member relevant; ``naming_own``: in the statement or the
    evidence, what makes the task's identifier its subject); and, filled as recalls ask, each
    member's weighing in a scope (:class:`_Scoped`). Kept per process (:func:`_pool_data`) while the
    counter stays."""

    counter: int
    ids: tuple[str, ...]
    rows: list
    evidence: dict
    index: _TextIndex
    naming: dict  # lower-cased identifier -> positions of members whose document or evidence names it
    naming_own: dict  # lower-cased identifier -> positions of members whose statement or evidence names it
    scopes: dict = dataclasses.field(default_factory=dict)

    @classmethod
    def load(cls, session: Session, pool, counter: int, kept: "_Pool | None") -> "_Pool":
        """Read the pool (two queries); refit the text index only when a document or the membership
        changed since ``kept``."""
        conn = session.connection()
        rows = conn.execute(sa.select(*_LIGHT_MEMORY, sa.cast(Memory.applies_to, sa.Text).label("applies_to"))
                            .where(pool)).all()
        rows.sort(key=lambda r: r.memory_id)
        ids = tuple(r.memory_id for r in rows)
        evidence: dict[str, list] = defaultdict(list)
        members = sa.select(Memory.memory_id).where(pool)
        for e in conn.execute(sa.select(*_LIGHT_EVIDENCE).where(Evidence.memory_id.in_(members))
                              .order_by(Evidence.memory_id, Evidence.ordinal, Evidence.evidence_id)):
            evidence[e.memory_id].append(e)
        evidence = {m: tuple(ev) for m, ev in evidence.items()}
        documents = tuple(_row_document(r) for r in rows)
        index = kept.index if kept is not None and kept.index.documents == documents else _TextIndex.fit(documents)
        naming: dict[str, list[int]] = defaultdict(list)
        naming_own: dict[str, list[int]] = defaultdict(list)
        for i, (row, doc) in enumerate(zip(rows, documents)):
            ev = _evidence_identifiers(evidence.get(row.memory_id, ()))
            for name in _document_identifiers(doc) | ev:
                naming[name].append(i)
            for name in _document_identifiers(row.statement) | ev:
                naming_own[name].append(i)
        return cls(counter, ids, rows, evidence, index, dict(naming), dict(naming_own))

    def scoped(self, scope_repository: str, scope_module: str | None) -> "_Scoped":
        """The members' weighings in a scope, filled as recalls ask."""
        with _POOLS_LOCK:
            found = self.scopes.get((scope_repository, scope_module))
            if found is None:
                found = self.scopes[(scope_repository, scope_module)] = _Scoped(self, scope_repository, scope_module)
            return found


class _Scoped:
    """The members of a :class:`_Pool` weighed in one scope (:func:`_weigh`), by position: ``place``
    (numpy) is -2 while not weighed, -1 for an eligible member, else the place of its primary reason
    in :data:`REASON_ORDER` (``len(REASON_ORDER)`` for a reason not listed there); ``weighed`` holds
    ``(primary reason, reasons, identifiers, subject)``; ``subject_code`` numbers the subjects."""

    def __init__(self, pool: _Pool, scope_repository: str, scope_module: str | None):
        import numpy as np

        self.pool, self.repository, self.module = pool, scope_repository, scope_module
        self.place = np.full(len(pool.ids), -2, dtype=np.int16)
        self.subject_code = np.full(len(pool.ids), -1, dtype=np.int32)
        self.weighed: list = [None] * len(pool.ids)
        self.subjects: list[str] = []
        self._codes: dict[str, int] = {}
        self.lock = threading.RLock()

    def code(self, subject: str | None) -> int:
        """The number of a subject (-1: none, as for an empty one, which no summary names)."""
        if not subject:
            return -1
        found = self._codes.get(subject)
        if found is None:
            with self.lock:
                found = self._codes.get(subject)
                if found is None:
                    found = self._codes[subject] = len(self.subjects)
                    self.subjects.append(subject)
        return found

    def ensure(self, positions) -> None:
        """Weigh the members at ``positions`` (a numpy array) that are not weighed yet."""
        todo = positions[self.place[positions] == -2]
        if not len(todo):
            return
        with self.lock:
            rows, evidence = self.pool.rows, self.pool.evidence
            for i in todo.tolist():
                if self.place[i] != -2:
                    continue
                m = rows[i]
                el, mine, subject = _weigh(m, evidence.get(m.memory_id, ()), self.repository, self.module)
                reason = _primary_reason(el.reasons)
                self.weighed[i] = (reason, el.reasons, mine, subject)
                self.subject_code[i] = self.code(subject)
                self.place[i] = -1 if el.eligible else (
                    REASON_ORDER.index(reason) if reason in REASON_ORDER else len(REASON_ORDER))

    def ensure_all(self) -> None:
        import numpy as np

        self.ensure(np.arange(len(self.pool.ids)))


_POOLS: dict[tuple, _Pool] = {}
_POOLS_LOCK = threading.Lock()
_POOL_BUILDING: dict[tuple, threading.Lock] = {}
_POOLS_MAX = 16  #: pools kept per process (a pool of 10,000 memories holds some 30 MB)


def _pool_data(session: Session, key: tuple, pool, counter: int) -> _Pool:
    """The :class:`_Pool` of the memories ``pool`` (a WHERE clause on Memory) selects, kept under
    ``key`` while the store's change counter is ``counter`` (read in this transaction before any of
    its other reads). A pool being read by another thread (the warm-up) is waited for, not read twice.
    ``counter`` 0 (a store without the counter): read afresh, kept for nobody."""
    with _POOLS_LOCK:
        kept = _POOLS.get(key)
        building = _POOL_BUILDING.setdefault(key, threading.Lock())
    if counter and kept is not None and kept.counter == counter:
        return kept
    with building:
        with _POOLS_LOCK:
            kept = _POOLS.get(key)
        if counter and kept is not None and kept.counter == counter:
            return kept
        data = _Pool.load(session, pool, counter, kept)
        if counter:
            with _POOLS_LOCK:
                _POOLS.pop(key, None)  # the newest last: the one read longest ago goes first
                if len(_POOLS) >= _POOLS_MAX:
                    _POOLS.pop(next(iter(_POOLS)))
                _POOLS[key] = data
                if len(_POOL_BUILDING) > 4 * _POOLS_MAX:
                    for k in [k for k, lock in _POOL_BUILDING.items() if k not in _POOLS and not lock.locked()]:
                        del _POOL_BUILDING[k]
        return data


def warm(engine: Engine, within: "Scope | None" = None, viewer: Actor | None = None, most: int = 8) -> int:
    """Read into this process's caches the pools a recall by ``viewer`` will ask for: the store's
    repositories (inside ``within``, a :class:`memtui.domain.scopes.Scope` or None: all; at most
    ``most``, the largest first), each with every memory weighed in the repository's scope (or
    ``within``'s module) and the text index fitted. A server runs it in the background at start
    (issue 22 item 2); a recall that needs a pool being read waits for it. Returns the number of pools read."""
    with Session(engine) as session, session.begin():
        counter = changes.read(session.connection())
        if not counter:
            return 0
        facts = _store_facts(session, counter)
        repos = [r for r, tenants in facts.tenants.items()
                 if within is None or ((within.tenant is None or within.tenant in tenants)
                                       and within.repository in (None, r))]
        sizes = dict(session.exec(select(Memory.repository_id, func.count()).group_by(Memory.repository_id)).all())
        repos.sort(key=lambda r: (-sizes.get(r, 0), r))
        for repo in repos[:most]:
            module = within.module if within is not None and within.repository == repo else None
            rscope = RecallScope(repo, module)
            pool, key = _pool(session, rscope, viewer, facts)
            data = _pool_data(session, key, pool, counter)
            data.scoped(repo, module).ensure_all()
            data.index.scores("warm up")  # the query path's imports
        return min(len(repos), most)


def warm_quietly(engine: Engine, within: "Scope | None", viewer: Actor | None, who: str) -> None:
    """:func:`warm` as a server's background thread runs it: an error is one line on stderr naming
    ``who`` (a warm-up is only ever a head start; the recalls read what they need themselves)."""
    try:
        warm(engine, within, viewer)
    except Exception as exc:  # noqa: BLE001
        import sys

        print(f"{who}: warm-up skipped: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)


def clear_caches() -> None:
    """Forget every pool and store fact kept in this process (the next recall reads the store)."""
    with _POOLS_LOCK:
        _POOLS.clear()
        _FACTS.clear()
        _SCOPES.clear()


def identifiers(text: str) -> set[str]:
    """Code identifiers in ``text`` (CamelCase, dotted, snake_case) and their identifier parts, lower-cased."""
    out: set[str] = set()
    for ident in _IDENTIFIER.findall(text or ""):
        out.add(ident.lower())
        for part in re.split(r"[./]", ident):
            if part and _IDENTIFIER.fullmatch(part):
                out.add(part.lower())
    return out


def _evidence_names(evidence: list[Evidence]) -> list[str]:
    """Code names the evidence points at: symbols and call targets, then file names and stems that
    look like code identifiers (``RuleEngine``, ``rules.properties``), in order."""
    names: list[str] = []
    for e in evidence:
        for s in (e.symbol, e.target):
            if s:
                names.append(s)
                names.extend(p for p in s.split(".") if p)
    for e in evidence:
        for p in (e.path, e.current_path):
            if p:
                base = p.rsplit("/", 1)[-1]
                stem = base.split(".", 1)[0]
                names.extend(n for n in (stem, base) if n and _IDENTIFIER.fullmatch(n))
    return names


def _subject(m: Memory, evidence: list[Evidence], shared: list[str]) -> str | None:
    """What a left-out memory is about, for its summary line: an identifier the task shares with it,
    else a code name of its statement that its evidence also names, else its first evidence symbol or
    file, else its first tag. Never taken from a blocked memory's text."""
    if m.state == "blocked":
        return None
    if shared:
        return shared[0]
    names = _evidence_names(evidence)
    lowered = {n.lower() for n in names}
    for ident in _IDENTIFIER.findall(m.statement):
        if ident.lower() in lowered:
            return ident
    if names:
        return names[0]
    tags = json.loads(m.tags) if isinstance(m.tags, str) else m.tags  # a light row holds the JSON text
    return (tags or [None])[0]


# ---- loading --------------------------------------------------------------------------------

def _chunks(ids: list[str]) -> Iterable[list[str]]:
    for i in range(0, len(ids), _CHUNK):
        yield ids[i:i + _CHUNK]


def repository_tenants(session: Session, repository_id: str) -> set[str]:
    """The tenant(s) of a repository: its registration and the memories that name it."""
    tenants = set(session.exec(select(Repository.tenant_id).where(
        Repository.repository_id == repository_id)).all())
    tenants.update(session.exec(select(Memory.tenant_id).where(
        Memory.repository_id == repository_id).distinct()).all())
    return tenants


def _pool(session: Session, scope: RecallScope, viewer: Actor | None, facts: "_Facts | None" = None):
    """The WHERE clause of a recall pool: memories of the scope's repository and org-wide memories of
    its tenant(s), that ``viewer`` may see; and the key its :class:`_Pool` is kept under (the store's
    URL and the clause's SQL: a viewer who sees other memories has a pool of its own). ``facts``: the
    store's repositories and visibility clauses as of the change counter (:func:`_store_facts`)."""
    from memtui.governance.visibility import memory_clause  # only memory the actor may see (issue 9)

    viewing = (viewer.type, None if viewer.scopes is None else tuple(viewer.scopes)) if viewer else None
    if facts is not None and (scope.repository_id, viewing) in facts.pools:
        return facts.pools[(scope.repository_id, viewing)]
    tenants = facts.tenants.get(scope.repository_id, ()) if facts else repository_tenants(session, scope.repository_id)
    cond = Memory.repository_id == scope.repository_id
    if tenants:
        cond = sa.or_(cond, sa.and_(Memory.repository_id.is_(None), Memory.tenant_id.in_(sorted(tenants))))
    visible = memory_clause(session, viewer)
    if visible is not None:
        cond = sa.and_(cond, visible)
    where_sql = str(cond.compile(compile_kwargs={"literal_binds": True}))
    out = cond, (str(session.get_bind().url), where_sql)
    if facts is not None:
        with _POOLS_LOCK:
            facts.pools[(scope.repository_id, viewing)] = out
    return out


@dataclass
class _Facts:
    """The store's repositories (id -> tenants: its registration's and its memories') and the pool
    clause of each repository for each kind of viewer (type and scopes: all that
    :func:`memtui.governance.visibility.memory_clause` reads of a viewer), as of one value of the
    change counter."""

    counter: int
    tenants: dict
    pools: dict = dataclasses.field(default_factory=dict)  # (repository, (type, scopes)) -> _pool's answer


_FACTS: dict[str, _Facts] = {}


def _store_facts(session: Session, counter: int) -> _Facts:
    """:class:`_Facts` of the store, kept per store while ``counter`` (read first in this transaction)
    stays; read afresh (two queries) when it moved or is 0."""
    url = str(session.get_bind().url)
    with _POOLS_LOCK:
        kept = _FACTS.get(url)
    if counter and kept is not None and kept.counter == counter:
        return kept
    tenants: dict[str, set[str]] = defaultdict(set)
    for repo, tenant in session.exec(select(Repository.repository_id, Repository.tenant_id)).all():
        tenants[repo].add(tenant)
    for repo, tenant in session.exec(select(Memory.repository_id, Memory.tenant_id).distinct()).all():
        if repo:
            tenants[repo].add(tenant)
    facts = _Facts(counter, {r: frozenset(t) for r, t in tenants.items()})
    if counter:
        with _POOLS_LOCK:
            _FACTS[url] = facts
    return facts


def _load_pool(session: Session, ids: list[str]):
    """The memories ``ids`` (plain rows, by id) with evidence, usage and harm counts and the latest
    revalidation (a handful of queries per 500)."""
    # plain rows (attribute access by column name), not ORM objects: many memories and their evidence
    # load several times faster, and nothing here writes through them
    conn = session.connection()
    memories = []
    evidence: dict[str, list[Evidence]] = defaultdict(list)
    usage: dict[str, Counter] = defaultdict(Counter)
    harm: Counter = Counter()
    reval: dict[str, Revalidation] = {}
    for chunk in _chunks(ids):
        memories.extend(conn.execute(sa.select(Memory.__table__).where(Memory.memory_id.in_(chunk))))
        for e in conn.execute(sa.select(Evidence.__table__).where(Evidence.memory_id.in_(chunk))
                              .order_by(Evidence.memory_id, Evidence.ordinal, Evidence.evidence_id)):
            evidence[e.memory_id].append(e)
        for mid, outcome, n in session.exec(select(UsageEvent.memory_id, UsageEvent.outcome, func.count())
                                            .where(UsageEvent.memory_id.in_(chunk))
                                            .group_by(UsageEvent.memory_id, UsageEvent.outcome)):
            usage[mid][outcome] = n
        for mid, n in session.exec(select(HarmEvent.memory_id, func.count()).where(HarmEvent.memory_id.in_(chunk))
                                   .group_by(HarmEvent.memory_id)):
            harm[mid] = n
        for r in session.exec(select(Revalidation).where(Revalidation.memory_id.in_(chunk))):
            reval[r.memory_id] = r
    memories.sort(key=lambda m: m.memory_id)
    return memories, evidence, usage, harm, reval


_LIGHT_MEMORY = (Memory.memory_id, Memory.type, Memory.state, Memory.conflict_state, Memory.confidence,
                 Memory.review_state, Memory.repository_id, Memory.module_path, Memory.statement,
                 sa.cast(Memory.tags, sa.Text).label("tags"))  # JSON text (hashable), decoded only when needed
_LIGHT_EVIDENCE = (Evidence.memory_id, Evidence.type, Evidence.status, Evidence.symbol, Evidence.target,
                   Evidence.path, Evidence.current_path)


def _evidence_identifiers(evidence: list) -> frozenset[str]:
    """The lower-cased :func:`_evidence_names` of evidence rows, remembered by the names' fields."""
    return _names_lowered(tuple((e.symbol, e.target, e.path, e.current_path) for e in evidence))


@functools.lru_cache(maxsize=200_000)
def _names_lowered(fields: tuple) -> frozenset[str]:
    from types import SimpleNamespace

    rows = [SimpleNamespace(symbol=s, target=t, path=p, current_path=c) for s, t, p, c in fields]
    return frozenset(n.lower() for n in _evidence_names(rows))


def _document(m: Memory) -> str:
    """The text a memory is found by: statement, module path, tags, applies-to (not does-not-apply-to)."""
    return " ".join([m.statement, m.module_path or "", " ".join(m.tags or ()), " ".join(m.applies_to or ())])


def _row_document(r) -> str:
    """:func:`_document` of a light row, whose tags and applies-to are JSON text."""
    tags = json.loads(r.tags) if isinstance(r.tags, str) else r.tags
    applies = json.loads(r.applies_to) if isinstance(r.applies_to, str) else r.applies_to
    return " ".join([r.statement, r.module_path or "", " ".join(tags or ()), " ".join(applies or ())])


def _evidence_view(e: Evidence) -> EvidenceView:
    return EvidenceView(e.type, e.path, e.commit_sha, e.line_start, e.line_end, e.symbol, e.target, e.ref,
                        e.span_hash, e.status, e.repository_id, e.current_path, e.current_line_start,
                        e.current_line_end, e.current_commit, e.reason_code, e.status_reason)


def _primary_reason(reasons: tuple[str, ...]) -> str:
    for r in REASON_ORDER:
        if r in reasons:
            return r
    return reasons[0] if reasons else "excluded"


# ---- recall ---------------------------------------------------------------------------------

def recall(engine: Engine, task: str, scope: str, limit: int = 5, actor: Actor | None = None,
           record: bool = True, *, min_relevance: float = MIN_RELEVANCE) -> RecallPack:
    """The context pack for ``task`` in ``scope`` (``repository:NAME`` or ``repository:NAME/module/path``).

    Candidates are the memories of that repository and the org-wide memories of its tenant. A memory
    is *relevant* when its TF-IDF cosine to the task is at least ``min_relevance`` or it shares a code
    identifier with the task. Relevant memories that are eligible (:func:`eligibility` with the scope)
    are ranked by relevance, then quality, then id; the first ``limit`` form the pack. Every other
    relevant memory is listed in ``excluded`` with its eligibility reasons (``over_limit`` for an
    eligible one that did not fit). With ``record`` each included memory gets a usage event
    (``context_pack``, ``neutral``, the pack's id, the sha256 of the task — never its text) and its
    ``last_used_at``, all in one transaction. A secret in ``task`` is redacted first (issue 21 item 4).
    Raises :class:`RecallError` for a malformed scope, an unknown repository or a limit below 1.
    """
    if limit < 1:
        raise RecallError(f"limit must be at least 1, not {limit}")
    from memtui.store.engine import read_only_reason

    record = record and read_only_reason(engine) is None  # a read-only store recalls, records nothing (issue 21 item 7)
    task = task or ""
    # issue 21 item 4: the request log keeps a hash of the task, never its text, and a secret in the
    # task is redacted before it is ranked or answered with
    task_sha256 = hashlib.sha256(task.encode("utf-8", "surrogatepass")).hexdigest()
    task = redact_for_display(task) or ""
    now = utcnow()
    # expire_on_commit=False: the rows are only read after the commit; expiring 10,000 of them costs ~1 s
    with Session(engine, expire_on_commit=False) as session, session.begin():
        # the change counter first: what is kept for it is never newer than what this transaction reads
        counter = changes.read(session.connection())
        facts = _store_facts(session, counter)
        rscope = _resolve_known(facts, scope)
        pool, key = _pool(session, rscope, actor, facts)
        data = _pool_data(session, key, pool, counter)
        task_ids = identifiers(task)
        included, excluded, summary, conflicted = _rank(session, data, task, task_ids, rscope, limit, min_relevance)
        _refuse_if_tampered(session, [i.memory_id for i in included])

        pack_id = "pack_" + hashlib.sha256(json.dumps(
            [rscope.label, task, limit, [i.memory_id for i in included], now.isoformat()],
            ensure_ascii=False).encode()).hexdigest()[:20]
        usage_ids: list[str] = []
        if record and included:
            for rank, item in enumerate(included, start=1):
                uid = new_event_id("use")
                usage_ids.append(uid)
                session.add(UsageEvent(
                    usage_id=uid, memory_id=item.memory_id, context_pack_id=pack_id, usage_type="context_pack",
                    outcome="neutral", created_at=now,
                    detail={"rank": rank, "relevance": item.relevance, "scope": rscope.label, "taskSha256": task_sha256,
                            **({"actor": f"{actor.type}:{actor.id}"} if actor else {})}))
            session.flush()
            # last_used_at without a version bump: a recall must not make a reviewer's open decision stale
            session.execute(sa.update(Memory.__table__)
                            .where(Memory.__table__.c.memory_id.in_([i.memory_id for i in included]))
                            .values(last_used_at=now))
        pending = _pending_newer(session, conflicted)
        return RecallPack(pack_id, task, rscope, limit, now, tuple(included), excluded, summary + pending,
                          tuple(usage_ids))


def _rank(session: Session, data: _Pool, task: str, task_ids: set[str], rscope: RecallScope, limit: int,
          min_relevance: float) -> tuple[list[RecalledMemory], "_Exclusions", tuple[str, ...], list[ExcludedMemory]]:
    """The included memories (ranked: relevance, quality, id), the excluded ones (in the pack's order:
    reason, then relevance descending, then id), the summary lines and the conflicted exclusions, for
    the relevant members of
    the pool: those at least ``min_relevance`` relevant to the task (TF-IDF cosine, rounded to 4
    places) or sharing a code identifier with it (in the statement or the evidence; the member's
    document or evidence must name it).

    Eligibility needs only a memory's own columns and its evidence statuses, so every relevant member
    is weighed from the pool's light rows, once per scope (:class:`_Scoped`), and the sorting and
    summing are done on arrays. Quality, usage, harm, revalidation and the evidence views are loaded,
    from the store, only for the eligible memories that can reach the pack: those at least as
    relevant as the ``limit``-th eligible one (ties in relevance are broken by quality), each weighed
    again on those rows. The result equals weighing every relevant memory in full
    (tests/test_recall.py checks it on random stores)."""
    import numpy as np

    scoped = data.scoped(rscope.repository_id, rscope.module_path)
    scores = data.index.scores(task)
    # rounding moves a score by at most 5e-5: every member whose rounded score may reach the threshold
    near = np.flatnonzero(scores >= min_relevance - 1e-4)
    rounded = _round4(scores[near])
    keep = rounded >= min_relevance
    positions, rel = near[keep], rounded[keep]
    overrides: dict[int, int] = {}  # position -> subject code: the task's identifier it shares
    if task_ids:
        named = {i for t in task_ids for i in data.naming.get(t, ())}
        own = {i for t in task_ids for i in data.naming_own.get(t, ())}  # shares an identifier with the task
        relevant = set(positions.tolist())
        extra = np.array(sorted((own & named) - relevant), dtype=np.int64)  # relevant by that alone
        if len(extra):
            positions = np.concatenate([positions, extra])
            rel = np.concatenate([rel, _round4(scores[extra])])
        own &= relevant | named
        if own:
            scoped.ensure(np.array(sorted(own), dtype=np.int64))
            task_original = {ident.lower(): ident for ident in _IDENTIFIER.findall(task)}
            for i in own:
                if data.rows[i].state != "blocked":
                    first = min(task_ids & scoped.weighed[i][2])
                    overrides[i] = scoped.code(task_original.get(first, first))
    scoped.ensure(positions)
    place = scoped.place[positions]
    eligible = place == -1
    e_pos, e_rel = positions[eligible], rel[eligible]
    e_order = np.lexsort((e_pos, -e_rel))
    e_pos, e_rel = e_pos[e_order], e_rel[e_order]
    contenders = e_pos[e_rel >= e_rel[min(limit, len(e_rel)) - 1]] if len(e_rel) else e_pos
    relevance = {data.ids[i]: r for i, r in zip(contenders.tolist(), e_rel[:len(contenders)].tolist())}
    full, full_evidence, usage, harm, reval = _load_pool(session, list(relevance))
    ranked: list[tuple[float, float, str, RecalledMemory]] = []
    for m in full:
        item, _el = _assess(m, full_evidence.get(m.memory_id, []), usage, harm, reval, rscope,
                            relevance[m.memory_id])
        if item is not None:  # None only when the memory changed between the two reads
            ranked.append((-item.relevance, -item.quality, item.memory_id, item))
    ranked.sort(key=lambda t: (t[0], t[1], t[2]))
    included = [t[3] for t in ranked[:limit]]
    where = dict(zip((data.ids[i] for i in contenders.tolist()), contenders.tolist()))
    chosen = np.array([where[i.memory_id] for i in included], dtype=np.int64)
    over = ~np.isin(e_pos, chosen)
    x_pos = np.concatenate([positions[~eligible], e_pos[over]])
    x_rel = np.concatenate([rel[~eligible], e_rel[over]])
    x_place = np.concatenate([place[~eligible], np.full(int(over.sum()), _OVER_LIMIT, dtype=np.int16)])
    order = np.lexsort((x_pos, -x_rel, x_place))
    x_pos, x_rel, x_place = x_pos[order], x_rel[order], x_place[order]
    exclusions = _Exclusions(scoped, x_pos.tolist(), x_rel.tolist(), (x_place == _OVER_LIMIT).tolist(), overrides)
    conflicted = [exclusions[k] for k in np.flatnonzero(x_place == _CONFLICTED).tolist()]
    return included, exclusions, _array_summary(scoped, x_pos, x_place, overrides, exclusions, limit), conflicted


def _round4(values):
    """``round(x, 4)`` of each value (a numpy array), as Python rounds: numpy's rounding (scale, round half
    to even, unscale) gives the same double except where the scaled value lies within a hair of a
    half, which are rounded again one by one."""
    import numpy as np

    out = np.round(values, 4)
    scaled = values * 1e4
    for k in np.flatnonzero(np.abs(scaled - np.floor(scaled) - 0.5) < 1e-6).tolist():
        out[k] = round(float(values[k]), 4)
    return out


def _array_summary(scoped: "_Scoped", positions, places, overrides: dict, exclusions: "_Exclusions",
                   limit: int) -> tuple[str, ...]:
    """:func:`summarize` of exclusions in the pack's order, from their positions and places."""
    import numpy as np

    if not len(positions):
        return ()
    codes = scoped.subject_code[positions]
    if overrides:
        for k, i in enumerate(positions.tolist()):
            if i in overrides:
                codes[k] = overrides[i]
    unlisted = len(REASON_ORDER)
    if (places == unlisted).any():  # a reason REASON_ORDER does not name: worked out one by one
        return _summary(exclusions, limit)
    lines = []
    bounds = np.flatnonzero(np.diff(places)) + 1
    for start, stop in zip([0, *bounds.tolist()], [*bounds.tolist(), len(places)]):
        reason = REASON_ORDER[int(places[start])]
        group = codes[start:stop]
        group = group[group >= 0]
        _values, first = np.unique(group, return_index=True)
        subjects = [scoped.subjects[c] for c in group[np.sort(first)][:3].tolist()]
        lines.append(_summary_line(reason, stop - start, subjects, len(first), limit))
    return tuple(lines)


class _Exclusions(Sequence):
    """The exclusions of a pack in its order, each made when first asked for (a recall over 10,000
    memories leaves thousands out; the JSON form lists 50). Equal to any sequence of the same
    :class:`ExcludedMemory` items."""

    def __init__(self, scoped: "_Scoped", positions: list[int], relevance: list[float], over: list[bool],
                 overrides: dict[int, int]):
        self._scoped, self._positions, self._relevance, self._over = scoped, positions, relevance, over
        self._overrides, self._items = overrides, None

    def __len__(self) -> int:
        return len(self._positions)

    def _make(self, k: int) -> ExcludedMemory:
        i = self._positions[k]
        m = self._scoped.pool.rows[i]
        reason, reasons, _mine, subject = self._scoped.weighed[i]
        if i in self._overrides:
            subject = self._scoped.subjects[self._overrides[i]]
        if self._over[k]:
            return ExcludedMemory(m.memory_id, m.type, "active", "over_limit", ("over_limit",), self._relevance[k],
                                  subject)
        return ExcludedMemory(m.memory_id, m.type, m.state, reason, reasons, self._relevance[k], subject)

    def _all(self) -> tuple[ExcludedMemory, ...]:
        if self._items is None:
            self._items = tuple(self._make(k) for k in range(len(self._positions)))
        return self._items

    def __getitem__(self, k):
        if isinstance(k, slice):
            return tuple(self._make(j) for j in range(*k.indices(len(self))))
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError(k)
        return self._make(k)

    def __iter__(self):
        return iter(self._all())

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and not isinstance(other, str) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return f"<{len(self)} excluded memories>"


_OVER_LIMIT = REASON_ORDER.index("over_limit")
_CONFLICTED = REASON_ORDER.index("conflicted")


@functools.lru_cache(maxsize=100_000)
def _weigh(m, evidence: tuple, scope_repository: str, scope_module: str | None):
    """``(eligibility, identifiers, subject)`` of a light memory row and its light evidence rows in a
    scope: what recall needs of a relevant memory apart from the task (the subject when the task shares
    no identifier with it). A pure function of the rows' values, so remembered by them: a server
    weighs the same unchanged memories at every recall, and a changed row is a different key."""
    el = eligibility(quality_input(m, evidence), scope_repository=scope_repository, scope_module=scope_module)
    mine = _document_identifiers(m.statement) | _evidence_identifiers(evidence)
    return el, mine, _subject(m, evidence, [])


def _pending_newer(session: Session, conflicted: list[ExcludedMemory]) -> tuple[str, ...]:
    """For conflicts between dated facts among the excluded (issue 10, item 5): one line each saying a
    newer fact is pending review, naming ids and the subject only (the texts stay out of the pack)."""
    if not conflicted:
        return ()
    from memtui.review.resolve import newer_side
    from memtui.store.models import MemoryConflict

    by_id = {x.memory_id: x for x in conflicted}
    ids = list(by_id)
    rows = session.exec(select(MemoryConflict).where(
        MemoryConflict.status == "open",
        MemoryConflict.memory_a.in_(ids) | MemoryConflict.memory_b.in_(ids)).order_by(MemoryConflict.conflict_id))
    lines = []
    for c in rows:
        side = newer_side(session, c.memory_a, c.memory_b)
        if side is None or not (side[0] in by_id or side[1] in by_id):
            continue
        x = by_id.get(side[1]) or by_id.get(side[0])
        about = f" about {x.subject}" if x.subject else ""
        lines.append(f"a newer fact{about} is pending review: {side[0]} would supersede {side[1]} "
                     f"(conflict {c.conflict_id}); neither is recalled until a reviewer decides")
    return tuple(lines[:5])


def _assess(m: Memory, ev: list[Evidence], usage, harm, reval, rscope: RecallScope | None, rel: float):
    """``(RecalledMemory, eligibility)`` for an eligible memory, ``(None, eligibility)`` otherwise
    (``rscope`` None: the memory's own repository, no scope check)."""
    q = quality_input(m, ev, usage.get(m.memory_id), harm.get(m.memory_id, 0))
    el = eligibility(q, scope_repository=rscope.repository_id if rscope else None,
                     scope_module=rscope.module_path if rscope else None)
    if not el.eligible:
        return None, el
    status_counts = Counter(e.status for e in ev)
    r = reval.get(m.memory_id)
    return RecalledMemory(
        memory_id=m.memory_id, type=m.type, statement=m.statement, tenant_id=m.tenant_id,
        repository_id=m.repository_id, module_path=m.module_path,
        applies_to=tuple(m.applies_to or ()), does_not_apply_to=tuple(m.does_not_apply_to or ()),
        tags=tuple(m.tags or ()), review_state=m.review_state, last_validated_at=m.last_validated_at,
        evidence_status=tuple(sorted(status_counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        revalidation_status=r.status if r else None, revalidated_at=r.checked_at if r else None,
        evidence=tuple(_evidence_view(e) for e in ev), relevance=rel, quality=quality(q).overall,
        reasons=el.reasons,
    ), el


def recall_memory(engine: Engine, memory_id: str, scope: str | RecallScope | None, actor: Actor | None = None
                  ) -> RecalledMemory | None:
    """The memory ``memory_id`` as a recall in ``scope`` could return it to ``actor``, or None:
    not in the scope's pool (another repository, not visible to the actor, no such id) or not
    eligible (blocked, conflicted, stale, not active, out of scope, low confidence). ``scope``
    None: the memory's own repository (for an org-wide memory, no scope check). Relevance is 0
    (there is no task). Writes nothing. Raises :class:`RecallError` for a malformed scope, an
    unknown repository or a memory whose history does not hold (issue 9)."""
    from memtui.governance.visibility import memory_clause

    with Session(engine) as session:
        rscope = scope if isinstance(scope, RecallScope) or scope is None else resolve_scope(session, scope)
        if rscope is not None:
            cond, _key = _pool(session, rscope, actor)
        else:
            cond = memory_clause(session, actor)
        query = sa.select(Memory.memory_id).where(Memory.memory_id == memory_id)
        if cond is not None:
            query = query.where(cond)
        ids = list(session.connection().execute(query).scalars())
        memories, evidence, usage, harm, reval = _load_pool(session, ids)
        if not memories:
            return None
        m = memories[0]
        item, _ = _assess(m, evidence.get(m.memory_id, []), usage, harm, reval, rscope, 0.0)
        if item is not None:
            _refuse_if_tampered(session, [item.memory_id])
        return item


def _refuse_if_tampered(session: Session, memory_ids: list[str]) -> None:
    """Never publish memory whose history does not hold (issue 9, item 4): RecallError naming them."""
    from memtui.governance.integrity import TamperedStore, refuse_if_tampered

    try:
        refuse_if_tampered(session.connection(), memory_ids)
    except TamperedStore as exc:
        raise RecallError(str(exc)) from None


# ---- summary and output ---------------------------------------------------------------------

def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def summarize(excluded: Iterable[ExcludedMemory], limit: int | None = None) -> tuple[str, ...]:
    """One line per main reason, e.g. ``1 stale memory about RuleEngine was excluded``."""
    return _summary(sorted(excluded, key=lambda x: (-x.relevance, x.memory_id)), limit)


def _summary(ordered: Iterable[ExcludedMemory], limit: int | None) -> tuple[str, ...]:
    """:func:`summarize` of exclusions that are in (-relevance, memory id) order within each reason."""
    groups: dict[str, list[ExcludedMemory]] = defaultdict(list)
    for x in ordered:
        groups[x.reason].append(x)
    order = [r for r in REASON_ORDER if r in groups] + sorted(r for r in groups if r not in REASON_ORDER)
    lines = []
    for reason in order:
        items = groups[reason]
        n = len(items)
        subjects: list[str] = []
        seen: set[str] = set()
        for x in items:
            if x.subject and x.subject not in seen:
                seen.add(x.subject)
                subjects.append(x.subject)
        lines.append(_summary_line(reason, n, subjects[:3], len(subjects), limit))
    return tuple(lines)


def _summary_line(reason: str, n: int, subjects: list[str], distinct: int, limit: int | None) -> str:
    """The summary line of ``n`` exclusions for ``reason``, naming the first ``subjects`` of ``distinct``."""
    about = ""
    if subjects and reason != "blocked":
        about = " about " + ", ".join(subjects) + (f" and {distinct - 3} more" if distinct > 3 else "")
    noun = _plural(n, "memory", "memories")
    verb = _plural(n, "was", "were")
    if reason == "over_limit":
        return (f"{n} more eligible {noun}{about} {verb} left out (limit {limit})" if limit
                else f"{n} more eligible {noun}{about} {verb} left out (limit)")
    adjective = _ADJECTIVE.get(reason) or (reason[len("state_"):] if reason.startswith("state_") else reason)
    return f"{n} {adjective} {noun}{about} {verb} excluded"


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def _day(dt: datetime | None) -> str:
    return iso(dt)[:10] if dt else "-"


def _scope_text(m: RecalledMemory) -> str:
    where = m.repository_id or f"{m.tenant_id} (org-wide)"
    return where + (f", {m.module_path}" if m.module_path else "")


def recalled_lines(m: RecalledMemory) -> list[str]:
    """One memory of a pack as Markdown lines: the statement, its scope, applies-to / does-not-apply-to,
    verification, evidence and id (untrusted text: the caller passes the result through :func:`visible`)."""
    lines: list[str] = []
    lines.append(f"- {_one_line(m.statement)}")
    lines.append(f"  - Scope: {_scope_text(m)}")
    if m.applies_to:
        lines.append(f"  - Applies to: {', '.join(m.applies_to)}")
    if m.does_not_apply_to:
        lines.append(f"  - Does not apply to: {', '.join(m.does_not_apply_to)}")
    lines.append(f"  - Verification: {m.verification}")
    locations = [e.current_location or e.location for e in m.evidence]
    if locations:
        lines.append("  - Evidence: " + ", ".join(f"`{_one_line(loc).replace('`', chr(39))}`" for loc in locations))
    lines.append(f"  - Memory: {m.memory_id}")
    return lines


def format_pack_markdown(pack: RecallPack) -> str:
    """The pack as the small recall an agent reads (seed 003): "Relevant project memory", one bullet per
    memory with its scope, applies-to / does-not-apply-to, verification and evidence, then the exclusions."""
    lines = ["Relevant project memory"]
    if not pack.memories:
        lines.append("- (no eligible memory is relevant to this task)")
    for m in pack.memories:
        lines.extend(recalled_lines(m))
    if pack.summary:
        lines.append("")
        lines.append("Left out")
        lines.extend(f"- {s}." for s in pack.summary)
    return visible("\n".join(lines) + "\n")  # untrusted text: no escape sequence reaches the agent (issue 9)


def _evidence_json(e: EvidenceView) -> dict:
    return {
        "type": e.type, "location": e.location, "path": e.path, "commitSha": e.commit_sha,
        "lines": [e.line_start, e.line_end] if e.line_start is not None else None,
        "symbol": e.symbol, "target": e.target, "ref": e.ref, "status": e.status,
        "current": ({"path": e.current_path, "lines": [e.current_line_start, e.current_line_end],
                     "commitSha": e.current_commit} if e.current_path else None),
    }


def recalled_to_json(m: RecalledMemory) -> dict:
    """One memory of a pack as a JSON-ready dict with camelCase keys."""
    return {
        "memoryId": m.memory_id, "type": m.type, "statement": m.statement,
        "scope": {"tenantId": m.tenant_id, "repositoryId": m.repository_id, "modulePath": m.module_path},
        "appliesTo": list(m.applies_to), "doesNotApplyTo": list(m.does_not_apply_to), "tags": list(m.tags),
        "relevance": m.relevance, "quality": m.quality,
        "retrievalEligibility": {"eligible": True, "reasons": list(m.reasons)},
        "verification": {
            "reviewState": m.review_state, "lastValidatedAt": iso(m.last_validated_at),
            "evidenceStatus": dict(m.evidence_status),
            "revalidation": ({"status": m.revalidation_status, "checkedAt": iso(m.revalidated_at)}
                             if m.revalidation_status else None),
            "summary": m.verification,
        },
        "evidence": [_evidence_json(e) for e in m.evidence],
    }


def pack_to_json(pack: RecallPack) -> dict:
    """The pack as a JSON-ready dict with camelCase keys; ``excluded`` lists the first
    :data:`EXCLUDED_LISTED` exclusions, ``excludedTotal`` and ``excludedSummary`` count all of them."""
    return {
        "contextPackId": pack.context_pack_id,
        "task": pack.task,
        "scope": {"repositoryId": pack.scope.repository_id, "modulePath": pack.scope.module_path,
                  "label": pack.scope.label},
        "createdAt": iso(pack.created_at),
        "limit": pack.limit,
        "memories": [recalled_to_json(m) for m in pack.memories],
        "excluded": [
            {"memoryId": x.memory_id, "type": x.type, "state": x.state, "reason": x.reason,
             "reasons": list(x.reasons), "relevance": x.relevance, "subject": x.subject}
            for x in pack.excluded[:EXCLUDED_LISTED]
        ],
        "excludedTotal": len(pack.excluded),
        "excludedSummary": list(pack.summary),
        "usageEventsRecorded": len(pack.usage_ids),
    }


_SCOPES: dict[tuple, tuple[int, "Scope"]] = {}
_SCOPES_MAX = 1024


def resolve_visible_scope(engine: Engine, text: str, viewer: Actor | None, within=None):
    """:func:`_resolve_visible_scope`, remembered per store, text, viewer (type and scopes: what
    visibility reads of it) and ``within`` while the store's change counter stays (a refusal is
    worked out again each time)."""
    counter = changes.current(engine)
    key = (str(engine.url), text, (viewer.type, None if viewer.scopes is None else tuple(viewer.scopes))
           if viewer else None, within)
    if counter:
        with _POOLS_LOCK:
            kept = _SCOPES.get(key)
        if kept is not None and kept[0] == counter:
            return kept[1]
    scope = _resolve_visible_scope(engine, text, viewer, within)
    if counter:
        with _POOLS_LOCK:
            if len(_SCOPES) >= _SCOPES_MAX:
                _SCOPES.clear()
            _SCOPES[key] = (counter, scope)
    return scope


def _resolve_visible_scope(engine: Engine, text: str, viewer: Actor | None, within=None):
    """:func:`resolve_any_scope` for ``viewer`` inside ``within`` (a
    :class:`memtui.domain.scopes.Scope` or None), whose refusals name nothing the viewer may not see
    (issue 21 item 8): a repository that does not exist, lies outside ``within`` or the viewer's
    scopes, or is private to an agent is the same "unknown repository", listing only
    :func:`repositories_within`; a wrong tenant of a nameable repository names only its nameable
    tenants. Returns the Scope; raises :class:`RecallError` (malformed or refused)."""
    from memtui.domain.scopes import ScopeSyntaxError
    from memtui.domain.scopes import parse_scope as parse_tenant_scope
    from memtui.governance.visibility import repositories_within

    nameable = repositories_within(engine, within, viewer)
    names = {r for _t, r in nameable}
    text = (text or "").strip()
    try:  # the syntax first, without the store
        typed = (parse_scope(text, names).repository_id if text.startswith(SCOPE_PREFIX)
                 else parse_tenant_scope(text).repository)
    except RecallError:
        raise
    except (ScopeSyntaxError, ValueError) as exc:
        raise RecallError(f"{exc}; or write repository:NAME[/module]") from None
    unknown = RecallError(f"unknown repository {typed!r} (known here: {', '.join(sorted(names)) or 'none'})")
    if typed is not None and typed not in names:
        raise unknown
    try:
        scope = resolve_any_scope(engine, text)
    except RecallError:
        tenants = sorted(t for t, r in nameable if r == typed)
        raise RecallError(f"repository {typed!r} belongs to tenant {', '.join(tenants)}; write "
                          "tenant/repository[/module]") from None
    if scope.repository is not None and (scope.tenant, scope.repository) not in nameable:
        raise unknown
    return scope
