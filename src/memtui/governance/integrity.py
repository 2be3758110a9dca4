"""``memtui check``: is the store what its history says it is? (issue 9, item 4; DESIGN.md "Lifecycle").

:func:`check_store` reads the whole store in batches of memories (fast enough for 100,000 memories;
bench/README.md) and returns one finding per problem, each a sentence naming the memory:

- the memory's state is its last event's ``to_state``; every event starts where the one before it
  left off and is allowed by the transition table (an undo that ``compensates`` an earlier event
  excepted); the hash chain recomputes; the content hash matches the last event; no memory without
  history (:func:`memtui.domain.integrity.chain_findings`);
- every active memory has evidence and scope (invariants 1 and 2, :mod:`memtui.domain.invariants`);
- no memory with a secret finding is anything but blocked or archived, and none is retrieval-eligible;
- foreign keys hold: evidence, history, revalidation, usage, harm and claim rows name a memory that exists;
- no secret in the clear in any memory that is not blocked (statement, root cause, evidence excerpts,
  history reasons and comments), when a scanner is given (``memtui.safety.secrets.find_secrets``).

:func:`verify_memories` is the cheap form for one set of memories about to be published
(recall, ``export agents-md``): chain, state and content hash only.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from memtui.domain.integrity import chain_findings
from memtui.domain.invariants import EvidenceFacts, InvariantViolation, MemoryFacts, check_evidence, check_scope
from memtui.store.models import (
    Evidence,
    HarmEvent,
    Memory,
    ReviewClaim,
    Revalidation,
    SecretFinding,
    StateHistory,
    UsageEvent,
)

BATCH = 2000
#: A secret scanner: text -> hits (empty when clean); a hit's ``secret_type`` (or ``type``) names it.
Scanner = Callable[[str], list]

_M = Memory.__table__
_H = StateHistory.__table__
_E = Evidence.__table__


class TamperedStore(Exception):
    """Memories about to be published fail the integrity check; ``findings`` names each."""

    def __init__(self, findings: list[str]):
        self.findings = findings
        shown = "; ".join(findings[:5]) + (f"; and {len(findings) - 5} more" if len(findings) > 5 else "")
        super().__init__(f"refusing to publish from a tampered store: {shown} (run `memtui check`)")


@dataclass(frozen=True)
class CheckResult:
    """What :func:`check_store` looked at and found."""

    memories: int
    events: int
    findings: tuple[str, ...]
    secrets_scanned: bool

    @property
    def clean(self) -> bool:
        return not self.findings


def default_scanner() -> Scanner | None:
    """The store's secret scanner, or None while it is not installed (``memtui.safety.secrets``)."""
    try:
        from memtui.safety.secrets import find_secrets
    except ImportError:
        return None
    return find_secrets


def _rows_by_memory(conn: Connection, table: sa.Table, ids: list[str], order: list) -> dict[str, list]:
    out: dict[str, list] = defaultdict(list)
    for r in conn.execute(sa.select(table).where(table.c.memory_id.in_(ids)).order_by(*order)).mappings():
        out[r["memory_id"]].append(dict(r))
    return out


def _memory_batches(conn: Connection, where=None) -> Iterator[list]:
    after = None
    while True:
        q = sa.select(_M)
        if where is not None:
            q = q.where(where)
        if after is not None:
            q = q.where(_M.c.memory_id > after)
        rows = [dict(r) for r in conn.execute(q.order_by(_M.c.memory_id).limit(BATCH)).mappings()]
        if not rows:
            return
        yield rows
        after = rows[-1]["memory_id"]


def _facts(m, evidence: list) -> MemoryFacts:
    return MemoryFacts(memory_id=m["memory_id"], type=m["type"], state=m["state"],
                       repository_id=m["repository_id"], impact=m["impact"], origin=m["origin"],
                       conflict_state=m["conflict_state"],
                       evidence=tuple(EvidenceFacts(e["type"], e["status"], e["repository_id"]) for e in evidence))


def _hit_type(hit) -> str:
    return str(getattr(hit, "secret_type", None) or getattr(hit, "type", None) or "secret")


def _secret_findings(mid: str, m, evidence: list, events: list, scan: Scanner) -> list[str]:
    out = []
    texts = [("statement", m["statement"]), ("root cause", m["root_cause_summary"])]
    texts += [(f"evidence excerpt {e['evidence_id']}", e["excerpt"]) for e in evidence]
    texts += [(f"event {e['event_id']} {f}", e[f]) for e in events for f in ("reason", "comment")]
    for where, text in texts:
        if text:
            hits = scan(text)
            if hits:
                out.append(f"{mid}: {where} holds a secret in the clear ({_hit_type(hits[0])})")
    return out


def _memory_findings(m, events: list, evidence: list, secret_types: list[str], scan: Scanner | None) -> list[str]:
    from memtui.domain.quality import eligibility
    from memtui.domain.quality import quality_input

    mid = m["memory_id"]
    out = chain_findings(mid, m["state"], m["content_hash"], m, events)
    if m["state"] == "active":
        facts = _facts(m, evidence)
        for check in (check_evidence, check_scope):
            try:
                check(facts)
            except InvariantViolation as exc:
                out.append(f"{mid}: is active but breaks the {exc.invariant} invariant")
    blocked = m["state"] == "blocked" or bool(secret_types)
    if secret_types and m["state"] not in ("blocked", "archived"):
        out.append(f"{mid}: has a secret finding ({secret_types[0]}) but is {m['state']}, not blocked")
    if blocked:
        q = quality_input(_Attr(m), [_Attr(e) for e in evidence])
        if eligibility(q).eligible:
            out.append(f"{mid}: is blocked but retrieval-eligible")
    if scan is not None and m["state"] != "blocked":
        out += _secret_findings(mid, m, evidence, events, scan)
    return out


class _Attr:
    """Attribute access over a row mapping (the helpers shared with recall read attributes)."""

    __slots__ = ("_m",)

    def __init__(self, m):
        self._m = m

    def __getattr__(self, name):
        return self._m[name]


def _orphans(conn: Connection) -> list[str]:
    out = []
    for model, what in ((Evidence, "evidence row"), (StateHistory, "history event"),
                        (Revalidation, "revalidation result"), (UsageEvent, "usage event"),
                        (HarmEvent, "harm event"), (ReviewClaim, "review claim")):
        t = model.__table__
        pk = list(t.primary_key.columns)[0]
        q = (sa.select(t.c.memory_id, pk).where(~sa.exists().where(_M.c.memory_id == t.c.memory_id))
             .order_by(t.c.memory_id, pk).limit(1000))
        for mid, key in conn.execute(q):
            out.append(f"{mid}: {what} {key} names a memory that is not in the store")
    return out


def check_store(engine: Engine, *, scanner: Scanner | None = None,
                progress: Callable[[int], None] | None = None) -> CheckResult:
    """Check the whole store (see the module docstring). ``scanner`` scans text for secrets (None: skipped).
    Read-only; one read transaction. Returns a :class:`CheckResult` whose findings are sorted by memory."""
    findings: list[str] = []
    n_mem = n_ev = 0
    with engine.connect() as conn:
        for batch in _memory_batches(conn):
            ids = [m["memory_id"] for m in batch]
            events = _rows_by_memory(conn, _H, ids, [_H.c.memory_id, _H.c.event_id])
            evidence = _rows_by_memory(conn, _E, ids, [_E.c.memory_id, _E.c.ordinal, _E.c.evidence_id])
            secrets: dict[str, list[str]] = defaultdict(list)
            sf = SecretFinding.__table__
            for mid, t in conn.execute(sa.select(sf.c.memory_id, sf.c.secret_type).where(sf.c.memory_id.in_(ids))):
                secrets[mid].append(t)
            for m in batch:
                mid = m["memory_id"]
                evs = events.get(mid, [])
                n_ev += len(evs)
                findings += _memory_findings(m, evs, evidence.get(mid, []), secrets.get(mid, []), scanner)
            n_mem += len(batch)
            if progress:
                progress(n_mem)
        findings += _orphans(conn)
    return CheckResult(n_mem, n_ev, tuple(findings), scanner is not None)


def verify_memories(connection: Connection, memory_ids: Iterable[str]) -> list[str]:
    """The chain, state and content-hash findings of these memories only (for a publish: a recall
    pack, an AGENTS.md export). Two indexed queries per 500 memories."""
    ids = sorted(set(memory_ids))
    out: list[str] = []
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        rows = {r["memory_id"]: r for r in connection.execute(sa.select(_M).where(_M.c.memory_id.in_(chunk))).mappings()}
        events = _rows_by_memory(connection, _H, chunk, [_H.c.memory_id, _H.c.event_id])
        for mid in chunk:
            m = rows.get(mid)
            if m is None:
                out.append(f"{mid}: is not in the store")
                continue
            out += chain_findings(mid, m["state"], m["content_hash"], m, events.get(mid, []))
    return out


def refuse_if_tampered(connection: Connection, memory_ids: Iterable[str]) -> None:
    """Raise :class:`TamperedStore` naming every memory of ``memory_ids`` that fails :func:`verify_memories`."""
    findings = verify_memories(connection, memory_ids)
    if findings:
        raise TamperedStore(findings)


def export_findings(memories: list[dict], evidence: dict[str, list[dict]], history: list[dict],
                    redacted: Iterable[str] = (), redaction: str | None = None) -> list[str]:
    """The findings :func:`check_store` would report for a store export, before it is loaded.

    ``memories``, ``evidence`` (per memory id) and ``history`` are rows as the store would hold them
    (snake_case columns). A memory the export lists as ``redacted`` (blocked: its text withheld) must
    carry exactly the ``redaction`` marker and a ``blocked`` event; its content hash cannot be
    recomputed (its text is gone) and is not checked; everything else about it is. Text of memory
    that is not blocked is scanned for secrets.
    """
    redacted = set(redacted)
    scan = default_scanner()  # a secret in the clear is refused like any other finding (issue 9)
    events: dict[str, list[dict]] = defaultdict(list)
    for h in sorted(history, key=lambda h: (h["memory_id"], h["event_id"])):
        events[h["memory_id"]].append(h)
    out: list[str] = []
    known = {m["memory_id"] for m in memories}
    for mid in sorted(set(events) - known):
        out.append(f"{mid}: history event {events[mid][0]['event_id']} names a memory that is not in the export")
    for m in sorted(memories, key=lambda m: m["memory_id"]):
        mid = m["memory_id"]
        evs = events.get(mid, [])
        if mid in redacted:
            if m["statement"] != redaction or not any(e["to_state"] == "blocked" for e in evs):
                out.append(f"{mid}: listed as redacted but its statement is not the redaction marker "
                           "or it was never blocked")
            out += chain_findings(mid, m["state"], m.get("content_hash"), None, evs)
            continue
        out += _memory_findings(m, evs, evidence.get(mid, []), [], scan)
    return out
