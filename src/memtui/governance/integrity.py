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
  history reasons and comments), when a scanner is given (``memtui.safety.secrets.find_secrets``);
- the store chain (issue 21 item 6): every row links the one before it and recomputes (HMAC with the
  store's key when it is keyed), the head names the last row, and every memory (state, content hash,
  evidence), reviewer, delegation and token in the store is what the chain last sealed for it — so a
  deleted memory, moved evidence, an inserted reviewer or a token with a chosen secret is found.

The store chain's format is here too (:func:`append`, :func:`replay`, :func:`seal_store`, the key from
``MEMTUI_INTEGRITY_KEY`` or ``MEMTUI_INTEGRITY_KEY_FILE``), and a store export's seal
(:func:`export_seal`, :func:`verify_export_seal`); :mod:`memtui.review.chain` appends as memtui writes.

:func:`verify_memories` is the cheap form for one set of memories about to be published
(recall, ``export agents-md``): chain, state and content hash only.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlmodel import Session

from memtui.domain.integrity import (EVIDENCE_ANCHOR_FIELDS, IntegrityKeyError, chain_findings, head_mac, key_check, link_hash, memory_digest, export_mac,
                                     row_digest)
from memtui.domain.invariants import EvidenceFacts, InvariantViolation, MemoryFacts, check_evidence, check_scope
from memtui.store.models import (
    ApiToken,
    Evidence,
    HarmEvent,
    IntegrityChain,
    IntegrityHead,
    Memory,
    ReviewClaim,
    Revalidation,
    Reviewer,
    ReviewerDelegation,
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
    """What :func:`check_store` looked at and found. ``integrity_mode``: ``keyed`` or ``unkeyed`` (the
    store chain's mode); ``integrity_verified``: whether its hashes could be recomputed (False for a
    keyed store checked without its key, which is then never clean)."""

    memories: int
    events: int
    findings: tuple[str, ...]
    secrets_scanned: bool
    integrity_mode: str = "unkeyed"
    integrity_verified: bool = True
    chain_rows: int = 0

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
    The store chain is verified with :func:`integrity_key` (IntegrityKeyError: an unreadable key file).
    Read-only; one read transaction. Returns a :class:`CheckResult` whose findings are sorted by memory."""
    findings: list[str] = []
    n_mem = n_ev = 0
    digests: dict[str, str] = {}
    reported: set[str] = set()
    key = integrity_key()
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":  # one snapshot: writers appending meanwhile are not half seen
            conn.execution_options(isolation_level="REPEATABLE READ")
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
                found = _memory_findings(m, evs, evidence.get(mid, []), secrets.get(mid, []), scanner)
                if found:
                    reported.add(mid)
                findings += found
                digests[mid] = memory_digest(m, evidence.get(mid, []))
            n_mem += len(batch)
            if progress:
                progress(n_mem)
        findings += _orphans(conn)
        chain = store_chain_findings(conn, digests, key, reported)
        findings += chain.findings
    return CheckResult(n_mem, n_ev, tuple(findings), scanner is not None, chain.mode, chain.verified, chain.rows)


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


# ---- the store chain (issue 21 item 6) --------------------------------------------------------------

KEY_ENV = "MEMTUI_INTEGRITY_KEY"
KEY_FILE_ENV = "MEMTUI_INTEGRITY_KEY_FILE"
#: Kinds of subject the store chain seals, besides ``memory``: their table and how a row is named.
ROW_KINDS: dict[str, str] = {"reviewer": "reviewer", "delegation": "reviewer_delegation", "token": "api_token"}
_C = IntegrityChain.__table__
_HD = IntegrityHead.__table__
TAINT = "!"  # a chain digest starting with this records what memtui found changed before it wrote


def integrity_key() -> bytes | None:
    """The store-chain key: ``MEMTUI_INTEGRITY_KEY`` (UTF-8), else the bytes of the file named by
    ``MEMTUI_INTEGRITY_KEY_FILE`` (a trailing newline dropped), else None (unkeyed).
    Raises :class:`IntegrityKeyError` for an unreadable or empty key file."""
    raw = os.environ.get(KEY_ENV)
    if raw:
        return raw.encode("utf-8")
    path = os.environ.get(KEY_FILE_ENV)
    if not path:
        return None
    try:
        data = open(path, "rb").read().rstrip(b"\r\n")
    except OSError as exc:
        raise IntegrityKeyError(f"{KEY_FILE_ENV}={path}: cannot read the integrity key: "
                                f"{exc.strerror or exc}") from exc
    if not data:
        raise IntegrityKeyError(f"{KEY_FILE_ENV}={path}: the integrity key file is empty")
    return data


def subject_of(kind: str, row) -> str:
    """How the chain names a row of ``kind``: the reviewer's name, ``delegate -> principal``, the token id."""
    if kind == "reviewer":
        return row["name"]
    if kind == "delegation":
        return f"{row['delegate']} -> {row['principal']}"
    return row["token_id"]


def _reflect(conn: Connection, name: str) -> sa.Table | None:
    """The table as the database has it (a migration seals with the columns of its own revision)."""
    try:
        return sa.Table(name, sa.MetaData(), autoload_with=conn)
    except sa.exc.NoSuchTableError:
        return None


def row_digests(conn: Connection, kind: str) -> dict[str, str]:
    """Subject -> digest of every row of a :data:`ROW_KINDS` table (they are small: read whole)."""
    table = _reflect(conn, ROW_KINDS[kind])
    if table is None:
        return {}
    return {subject_of(kind, r): row_digest(kind, r) for r in conn.execute(sa.select(table)).mappings()}


_EV_COLS = ("memory_id",) + EVIDENCE_ANCHOR_FIELDS


_IDS = sa.bindparam("ids", expanding=True)
#: A memory's row with its evidence's anchor columns (one row per evidence, one with NULLs for none):
#: built once, so a decision pays for one query, not for composing it.
_MEMORY_WITH_EVIDENCE = (
    sa.select(_M.c.memory_id, _M.c.state, _M.c.content_hash,
              *[_E.c[c].label(f"e_{c}") for c in EVIDENCE_ANCHOR_FIELDS])
    .select_from(_M.outerjoin(_E, _E.c.memory_id == _M.c.memory_id))
    .where(_M.c.memory_id.in_(_IDS)))


def memory_digests(conn: Connection, ids) -> dict[str, str]:
    """Memory id -> :func:`memtui.domain.integrity.memory_digest` for those of ``ids`` in the store
    (one query per 500 memories)."""
    ids = sorted(set(ids))
    out: dict[str, str] = {}
    for i in range(0, len(ids), 500):
        rows: dict[str, tuple] = {}
        ev: dict[str, list] = defaultdict(list)
        for r in conn.execute(_MEMORY_WITH_EVIDENCE, {"ids": ids[i:i + 500]}):
            rows[r[0]] = r
            if r[3] is not None:  # evidence_id: a LEFT JOIN row without evidence has none
                ev[r[0]].append(dict(zip(EVIDENCE_ANCHOR_FIELDS, r[3:])))
        for mid, r in rows.items():
            out[mid] = memory_digest({"state": r[1], "content_hash": r[2]}, ev.get(mid, []))
    return out


def current_digests(conn: Connection, kind: str, subjects) -> dict[str, str]:
    """Subject -> digest now, for those of ``subjects`` of ``kind`` in the store (absent: not there)."""
    if kind == "memory":
        return memory_digests(conn, subjects)
    wanted = set(subjects)
    return {s: d for s, d in row_digests(conn, kind).items() if s in wanted}


_KIND = sa.bindparam("kind")
_LAST = (sa.select(_C.c.subject, sa.func.max(_C.c.seq).label("seq"))
         .where(_C.c.kind == _KIND, _C.c.subject.in_(_IDS),
                sa.or_(_C.c.digest.is_(None), ~_C.c.digest.startswith(TAINT)))
         .group_by(_C.c.subject).subquery())
_LAST_SEALED = sa.select(_C.c.subject, _C.c.digest).join(_LAST, _C.c.seq == _LAST.c.seq)


def last_sealed(conn: Connection, kind: str, subjects) -> dict[str, str | None]:
    """Subject -> the digest the chain last sealed for it (None: sealed as gone); unsealed ones absent.
    Taint rows are skipped."""
    subjects = sorted(set(subjects))
    out: dict[str, str | None] = {}
    for i in range(0, len(subjects), 500):
        for subject, digest in conn.execute(_LAST_SEALED, {"kind": kind, "ids": subjects[i:i + 500]}):
            out[subject] = digest
    return out


_HEAD = sa.select(_HD).where(_HD.c.id == 1)


def _head(conn: Connection, lock: bool = False) -> dict | None:
    q = _HEAD.with_for_update() if lock and conn.dialect.name == "postgresql" else _HEAD
    row = conn.execute(q).mappings().first()
    return dict(row) if row else None


def _insert_ignore(conn: Connection, table: sa.Table, values: dict) -> None:
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    conn.execute(insert(table).values(**values).on_conflict_do_nothing())


def lock_head(conn: Connection) -> None:
    """Take the store chain's lock (PostgreSQL: the head row ``FOR UPDATE``, made when missing; SQLite
    serialises writers itself) until the transaction ends."""
    if conn.dialect.name == "postgresql":
        if _head(conn, lock=True) is None:
            _insert_ignore(conn, _HD, dict(id=1, seq=0, last_hash="", keyed=False, key_check=None,
                                           mac=head_mac(None, 0, "", False, None)))
            _head(conn, lock=True)


def _store_key(head: dict | None, key: bytes | None) -> bytes | None:
    """The key appends to this store use: the configured key for a keyed store (refused when missing or
    not the store's), None for an unkeyed one; a store without a head takes the configured mode."""
    if head is None or (head["seq"] == 0 and not head["keyed"]):
        return key
    if not head["keyed"]:
        return None
    if key is None:
        raise IntegrityKeyError(f"this store's integrity chain is keyed (HMAC): set {KEY_ENV} or {KEY_FILE_ENV} "
                                "to change it; nothing was written")
    if key_check(key) != head["key_check"]:
        raise IntegrityKeyError(f"the integrity key set ({KEY_ENV} / {KEY_FILE_ENV}) is not the key this store "
                                "was sealed with; nothing was written")
    return key


def append(conn: Connection, items: list[tuple[str, str, str | None]], key: bytes | None) -> int:
    """Append ``(kind, subject, digest)`` rows to the store chain in the caller's transaction, under its
    lock, and move the head; returns the last ``seq``. A head whose seal does not match is recorded
    first as a ``head`` taint row, so appending never hides it. Raises :class:`IntegrityKeyError`
    (keyed store, no or another key)."""
    if not items:
        return 0
    lock_head(conn)
    head = _head(conn, lock=True)
    k = _store_key(head, key)
    keyed = k is not None
    kc = key_check(k) if keyed else None
    seq, last = (head["seq"], head["last_hash"]) if head else (0, "")
    # rows removed at the end, the head left: the rows appended now leave a gap that check names; the
    # head moved back as well: its seal no longer matches (keyed: nobody without the key can reseal it)
    if head is not None and head["mac"] != head_mac(k if head["keyed"] else None, head["seq"], head["last_hash"],
                                                     head["keyed"], head["key_check"]):
        items = [("head", "head", f"{TAINT}head seal did not match")] + list(items)
    rows = []
    for kind, subject, digest in items:
        seq += 1
        h = link_hash(k, last, seq, kind, subject, digest)
        rows.append(dict(seq=seq, kind=kind, subject=subject, digest=digest, prev_hash=last, hash=h))
        last = h
    conn.execute(sa.insert(_C), rows)
    values = dict(seq=seq, last_hash=last, keyed=keyed, key_check=kc, mac=head_mac(k, seq, last, keyed, kc))
    if head is None:
        conn.execute(sa.insert(_HD).values(id=1, **values))
    else:
        conn.execute(sa.update(_HD).where(_HD.c.id == 1).values(**values))
    return seq


def _memory_id_batches(conn: Connection) -> Iterator[list[str]]:
    after = None
    while True:
        q = sa.select(_M.c.memory_id).order_by(_M.c.memory_id).limit(BATCH)
        if after is not None:
            q = q.where(_M.c.memory_id > after)
        ids = conn.execute(q).scalars().all()
        if not ids:
            return
        yield ids
        after = ids[-1]


def all_digests(conn: Connection) -> list[tuple[str, str, str]]:
    """Every subject of the store now as ``(kind, subject, digest)`` (memories in batches)."""
    out = []
    for ids in _memory_id_batches(conn):
        out += [("memory", mid, d) for mid, d in sorted(memory_digests(conn, ids).items())]
    for kind in ROW_KINDS:
        out += [(kind, s, d) for s, d in sorted(row_digests(conn, kind).items())]
    return out


def seal_store(conn: Connection, key: bytes | None) -> int:
    """Start the store chain afresh from the store as it is: one row per memory, reviewer, delegation and
    token, keyed with ``key`` (None: unkeyed). For a store from before the chain (migration 0011), a
    store loaded by ``import-store``, and ``memtui seal`` (keying a store, or accepting what check found
    after review). Returns the number of rows."""
    items = all_digests(conn)
    conn.execute(sa.delete(_C))
    conn.execute(sa.delete(_HD))
    kc = key_check(key) if key is not None else None
    conn.execute(sa.insert(_HD).values(id=1, seq=0, last_hash="", keyed=key is not None, key_check=kc,
                                       mac=head_mac(key, 0, "", key is not None, kc)))
    append(conn, items, key)
    return len(items)


@dataclass
class Replay:
    """The store chain read back: ``expected`` (kind, subject) -> (seq, digest) as last sealed,
    ``findings`` about the chain itself, the store's ``mode`` and whether its hashes were ``verified``."""

    expected: dict
    findings: list[str]
    mode: str
    verified: bool
    rows: int


def replay(conn: Connection, key: bytes | None) -> Replay:
    """Read the whole store chain in ``seq`` order: links, recomputed hashes (when the key is at hand),
    taint rows, the head. One pass, batches of 5000 rows."""
    findings: list[str] = []
    head = _head(conn)
    keyed = bool(head and head["keyed"])
    verified = True
    k = None
    if keyed:
        if key is None:
            verified = False
            findings.append(f"store chain: the store is keyed (HMAC) and no key is set ({KEY_ENV} or {KEY_FILE_ENV}): "
                            "its hashes cannot be verified, so the store is not called clean")
        elif key_check(key) != head["key_check"]:
            verified = False
            findings.append(f"store chain: the key set ({KEY_ENV} / {KEY_FILE_ENV}) is not the key this store was "
                            "sealed with: its hashes cannot be verified, so the store is not called clean")
        else:
            k = key
    elif key is not None:
        findings.append(f"store chain: a key is set ({KEY_ENV} / {KEY_FILE_ENV}) but the store is sealed without "
                        "one (unkeyed: anyone who can write the database can recompute it); if that is expected, "
                        "run `memtui seal` with the key to key it")
    expected: dict = {}
    last, prev_seq, n = "", 0, 0
    after = None
    while True:
        q = sa.select(_C.c.seq, _C.c.kind, _C.c.subject, _C.c.digest, _C.c.prev_hash, _C.c.hash).order_by(_C.c.seq)
        if after is not None:
            q = q.where(_C.c.seq > after)
        rows = conn.execute(q.limit(5000)).all()
        if not rows:
            break
        for seq, kind, subject, digest, prev_hash, h in rows:
            n += 1
            if seq != prev_seq + 1:
                findings.append(f"store chain: rows {prev_seq + 1} to {seq - 1} are missing (removed outside memtui)")
            elif prev_hash != last:
                findings.append(f"store chain: row {seq} ({kind} {subject}) does not follow the row before it "
                                "(the chain was changed outside memtui)")
            if verified and link_hash(k, prev_hash, seq, kind, subject, digest) != h:
                findings.append(f"store chain: row {seq} ({kind} {subject}) was changed after it was written "
                                "(its hash does not match)")
            if digest is not None and digest.startswith(TAINT):
                what = "the store chain's head" if kind == "head" else f"{kind} {subject}"
                findings.append(f"{_label(kind, subject)}: memtui found {what} changed outside memtui when it wrote "
                                f"store chain row {seq} ({digest[1:] or 'was not sealed'}); review it, then "
                                "`memtui seal`")
            else:
                expected[(kind, subject)] = (seq, digest)
            last, prev_seq = h, seq
        after = rows[-1][0]
    if head is None:
        if n:
            findings.append(f"store chain: its head is missing (removed outside memtui); the chain has {n} rows")
    else:
        if (head["seq"], head["last_hash"]) != (prev_seq, last):
            findings.append(f"store chain: the head names row {head['seq']} but the chain ends at row {prev_seq} "
                            "(its last rows were removed, or the head moved, outside memtui)")
        if verified and head["mac"] != head_mac(k, head["seq"], head["last_hash"], head["keyed"], head["key_check"]):
            findings.append("store chain: the head was changed outside memtui (its seal does not match)")
    return Replay(expected, findings, "keyed" if keyed else "unkeyed", verified, n)


def _label(kind: str, subject: str) -> str:
    if kind == "memory":
        return subject
    return "store chain" if kind == "head" else f"{kind} {subject}"


_IN_CHAIN = {"added": "is in the store but the store chain never sealed it (added outside memtui)",
             "deleted": "is sealed in the store chain (row {seq}) but is not in the store (deleted outside memtui)",
             "back": "memtui removed it (store chain row {seq}) but it is in the store (put back outside memtui)",
             "changed": "differs from what the store chain sealed (row {seq}): changed outside memtui",
             "content": "its state or content hash differs from what the store chain sealed (row {seq}): changed "
                        "outside memtui, its hashes recomputed",
             "evidence": "its evidence differs from what the store chain sealed (row {seq}): an evidence row's path, "
                         "commit, lines, symbol, reference or excerpt was changed, or a row added or removed, "
                         "outside memtui"}
_IN_EXPORT = {"added": "is in the export but not in its integrity seal (added to the export)",
              "deleted": "is in the export's integrity seal but not in the export (removed from the export)",
              "back": "is in the export but its seal lists it as gone",
              "changed": "differs from the export's integrity seal (changed in the export)",
              "content": "its state or content hash differs from the export's integrity seal (changed in the export)",
              "evidence": "its evidence differs from the export's integrity seal (an evidence row's path, commit, "
                          "lines, symbol, reference or excerpt was changed, or a row added or removed, in the export)"}


def compare(expected: dict, actual: dict[str, dict[str, str]], words: dict[str, str] = _IN_CHAIN,
            reported: set[str] = frozenset()) -> list[str]:
    """Findings where the store (``actual``: kind -> subject -> digest) is not what was sealed
    (``expected``: (kind, subject) -> (seq, digest)), for the kinds ``actual`` holds. ``reported``:
    memories whose state or content the per-memory checks already named (not named twice)."""
    out: list[str] = []
    kinds = tuple(actual)
    sealed: dict[str, dict] = {k: {} for k in kinds}
    for (kind, subject), v in expected.items():
        if kind in sealed and kind in actual:
            sealed[kind][subject] = v
    for kind in kinds:
        have, want = actual.get(kind, {}), sealed[kind]
        for subject in sorted(set(have) | set(want)):
            label = _label(kind, subject)
            now = have.get(subject)
            if subject not in want:
                out.append(f"{label}: {words['added']}")
                continue
            seq, digest = want[subject]
            if now is None and digest is not None:
                out.append(f"{label}: " + words["deleted"].format(seq=seq))
            elif now is not None and digest is None:
                out.append(f"{label}: " + words["back"].format(seq=seq))
            elif now != digest:
                if kind != "memory":
                    out.append(f"{label}: " + words["changed"].format(seq=seq))
                    continue
                (a, _, b), (x, _, y) = now.partition(":"), (digest or "").partition(":")
                if a != x and subject not in reported:
                    out.append(f"{label}: " + words["content"].format(seq=seq))
                if b != y:
                    out.append(f"{label}: " + words["evidence"].format(seq=seq))
    return out


def store_chain_findings(conn: Connection, memory_digests_now: dict[str, str], key: bytes | None,
                         reported: set[str] = frozenset()) -> Replay:
    """:func:`replay` plus :func:`compare` against the store (memories' digests given, the rest read)."""
    r = replay(conn, key)
    actual = {"memory": memory_digests_now}
    for kind in ROW_KINDS:
        actual[kind] = row_digests(conn, kind)
    r.findings += compare(r.expected, actual, reported=reported)
    return r


# ---- a store export's seal (import-store) ------------------------------------------------------------

def export_seal(conn: Connection, memory_ids, redacted, tables: dict[str, list], *, everything: bool = True) -> dict:
    """The ``integrity`` section of a store export: ``[kind, subject, digest]`` of every memory exported
    (a redacted one as it is exported: excerpts withheld) and of every reviewer, delegation and token row
    it carries, sealed with the store's key (``seal``), and the store chain's own findings about the
    store (``sourceFindings``: an export of a tampered store is refused on import). An export narrowed
    to a viewer's scopes (``everything`` False) names only findings about the memories it carries and
    counts the rest."""
    key = integrity_key()
    found = check_store_chain(conn, key)
    k = key if found.mode == "keyed" and found.verified else None
    ids = sorted(set(memory_ids))
    source = found.findings
    if not everything:
        shown = set(ids)
        source = [f for f in found.findings if f.split(":", 1)[0] in shown]
        if len(source) < len(found.findings):
            source.append(f"the store has {len(found.findings) - len(source)} more integrity findings "
                          "outside this export (run `memtui check`)")
    redacted = set(redacted)
    subjects: list[list] = []
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        ev: dict[str, list] = defaultdict(list)
        for r in conn.execute(sa.select(*[_E.c[c] for c in _EV_COLS]).where(_E.c.memory_id.in_(chunk))).mappings():
            r = dict(r)
            if r["memory_id"] in redacted:
                r["excerpt"] = None
            ev[r["memory_id"]].append(r)
        for r in conn.execute(sa.select(_M.c.memory_id, _M.c.state, _M.c.content_hash)
                              .where(_M.c.memory_id.in_(chunk))).mappings():
            subjects.append(["memory", r["memory_id"], memory_digest(r, ev.get(r["memory_id"], []))])
    for kind, name in ROW_KINDS.items():
        carried = tables.get(name)
        if not carried:
            continue
        digests = row_digests(conn, kind)
        for row in carried:  # exported rows have camelCase keys
            subject = subject_of(kind, {"token_id": row.get("tokenId"), **row})
            subjects.append([kind, subject, digests.get(subject)])
    return {"mode": found.mode, "keyCheck": key_check(k) if k else None, "subjects": sorted(subjects),
            "seal": export_mac(k, subjects), "sourceFindings": source}


def check_store_chain(conn: Connection, key: bytes | None) -> Replay:
    """The store chain against the whole store (every memory's digest read): what ``check`` reports of it."""
    digests: dict[str, str] = {}
    for ids in _memory_id_batches(conn):
        digests.update(memory_digests(conn, ids))
    return store_chain_findings(conn, digests, key)


def verify_export_seal(conn: Connection, section: dict | None, kinds: tuple[str, ...]) -> list[str]:
    """Findings that make ``import-store`` refuse an export, for the subjects of ``kinds`` just loaded
    into the (empty) target in the caller's transaction: no or a malformed ``integrity`` section, findings
    the source store had, a seal that does not recompute (with the key set here, which must be the
    source store's when it was keyed), a subject missing, added or different."""
    if not isinstance(section, dict) or not isinstance(section.get("subjects"), list):
        return ["the export has no integrity seal (`memtui export json` of this version writes one); a store "
                "export without it cannot be verified"]
    out = [f"the source store: {f}" for f in section.get("sourceFindings") or [] if isinstance(f, str)]
    subjects = [s for s in section["subjects"] if isinstance(s, list) and len(s) == 3]
    key = integrity_key()
    if section.get("mode") == "keyed":
        if key is None:
            return out + [f"the export is sealed with a key (HMAC): set {KEY_ENV} or {KEY_FILE_ENV} to the "
                          "source store's key to verify it"]
        if key_check(key) != section.get("keyCheck"):
            return out + [f"the export is sealed with another key than the one set ({KEY_ENV} / {KEY_FILE_ENV})"]
        k = key
    else:
        if key is not None:
            return out + [f"the export is sealed without a key, but a key is set here ({KEY_ENV} / {KEY_FILE_ENV}): "
                          "an unkeyed export can be recomputed by anyone; refused"]
        k = None
    if export_mac(k, subjects) != section.get("seal"):
        out.append("the export's integrity seal does not match its subjects (the seal was changed or recomputed)")
    want: dict[str, dict] = defaultdict(dict)
    for kind, subject, digest in subjects:
        want[kind][subject] = (0, digest)
    for kind in kinds:
        have = (memory_digests(conn, [r[0] for r in conn.execute(sa.select(_M.c.memory_id))])
                if kind == "memory" else row_digests(conn, kind))
        expected = {(kind, s): v for s, v in want.get(kind, {}).items()}
        out += compare(expected, {kind: have}, _IN_EXPORT)
    return out


# ---- the store chain (issue 21 item 6) --------------------------------------------------------------
#
# Every session (a listener on the Session class, so reviewer, delegation and token writes are covered
# wherever they happen) collects at each flush the subjects it changes: a memory that gets a history
# event, is created or deleted, or whose evidence rows are added, removed or re-anchored; a reviewer,
# delegation or token row added, changed or removed. The first time a subject is met in a transaction,
# before its change is written, what the store holds is compared with what the chain last sealed; a
# difference (a change made outside memtui) is kept as a taint row, so memtui never seals over it
# silently. At commit, under the chain's lock, one row per subject seals its new state
# (:func:`append`): one extra row per changed memory, never a rehash.

_SEAL = "memtui.chain.seal"      # {(kind, subject)} to seal at commit
_SEEN = "memtui.chain.seen"      # {(kind, subject)} already compared with the chain this transaction
_TAINTS = "memtui.chain.taints"  # [(kind, subject, digest)] found changed before memtui wrote
_ANCHOR = _EV_COLS


def _row_kind(obj) -> tuple[str, str] | None:
    if isinstance(obj, Reviewer):
        return "reviewer", obj.name
    if isinstance(obj, ReviewerDelegation):
        return "delegation", f"{obj.delegate} -> {obj.principal}"
    if isinstance(obj, ApiToken):
        return "token", obj.token_id
    if isinstance(obj, Evidence):
        return "memory", obj.memory_id
    return None


def _anchor_changed(obj) -> bool:
    insp = sa.inspect(obj)
    return any(insp.attrs[f].history.has_changes() for f in _ANCHOR if f in insp.attrs)


def _subjects(session: Session) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for obj in session.new:
        if isinstance(obj, (StateHistory, Memory)):
            out.add(("memory", obj.memory_id))
        elif (k := _row_kind(obj)) is not None:
            out.add(k)
    for obj in session.deleted:
        if isinstance(obj, Memory):
            out.add(("memory", obj.memory_id))
        elif (k := _row_kind(obj)) is not None:
            out.add(k)
    for obj in session.dirty:
        if isinstance(obj, Evidence):
            if _anchor_changed(obj):
                out.add(("memory", obj.memory_id))
                old = sa.inspect(obj).attrs["memory_id"].history.deleted
                out.update(("memory", m) for m in old if m)
        elif not isinstance(obj, (Memory, StateHistory)) and (k := _row_kind(obj)) is not None \
                and session.is_modified(obj):
            out.add(k)
    return out


def note(session: Session, kind: str, subjects) -> None:
    """Register subjects a transaction changes with SQL of its own (bulk inserts, a purge) BEFORE it
    writes them: compared with the chain now, sealed at commit (issue 21 item 6)."""
    _meet(session, {(kind, s) for s in subjects})


_READY: set[str] = set()


def _chain_ready(conn: Connection) -> bool:
    """Whether the store has the chain's tables (a migration before 0011 writes without them)."""
    url = str(conn.engine.url)
    if url not in _READY:
        if not sa.inspect(conn).has_table("integrity_head"):
            return False
        _READY.add(url)
    return True


def _meet(session: Session, subjects: set[tuple[str, str]]) -> None:
    if not subjects or not _chain_ready(session.connection()):
        return
    pending: set = session.info.setdefault(_SEAL, set())
    seen: set = session.info.setdefault(_SEEN, set())
    new = subjects - seen
    pending |= subjects
    if not new:
        return
    seen |= new
    conn = session.connection()
    by_kind: dict[str, list[str]] = {}
    for kind, subject in new:
        by_kind.setdefault(kind, []).append(subject)
    taints = _differences(conn, by_kind)
    if taints and conn.dialect.name == "postgresql":
        lock_head(conn)  # a writer may have committed between the two reads: look again under the lock
        taints = _differences(conn, {k: [s for kk, s, _ in taints if kk == k] for k in by_kind})
    session.info.setdefault(_TAINTS, []).extend(taints)


def _differences(conn: Connection, by_kind: dict[str, list[str]]) -> list[tuple[str, str, str]]:
    """Taint rows for the subjects whose state in the store is not what the chain last sealed."""
    out = []
    for kind, subjects in by_kind.items():
        if not subjects:
            continue
        sealed = last_sealed(conn, kind, subjects)
        now = current_digests(conn, kind, subjects)
        for s in sorted(subjects):
            if s not in sealed and s not in now:
                continue  # new: nothing to compare
            if s not in sealed:
                out.append((kind, s, "!in the store but never sealed"))
            elif sealed[s] != now.get(s):
                out.append((kind, s, "!" + ("gone from the store" if s not in now else f"found {now[s]}")
                            + f", sealed {sealed[s]}"))
    return out


def _store_before_flush(session: Session, _ctx, _instances) -> None:
    _meet(session, _subjects(session))


def _store_before_commit(session: Session) -> None:
    if session.new or session.dirty or session.deleted:
        session.flush()  # the commit's own flush comes after this hook: its subjects are met here
    if not session.info.get(_SEAL) or not _chain_ready(session.connection()):
        return
    pending = session.info.pop(_SEAL, set())
    taints = session.info.pop(_TAINTS, [])
    if not pending and not taints:
        return
    conn = session.connection()
    items = list(taints)
    by_kind: dict[str, list[str]] = {}
    for kind, subject in pending:
        by_kind.setdefault(kind, []).append(subject)
    for kind in sorted(by_kind):
        now = current_digests(conn, kind, by_kind[kind])
        items += [(kind, s, now.get(s)) for s in sorted(by_kind[kind])]
    append(conn, items, integrity_key())


def _store_end(session: Session, transaction) -> None:
    if transaction.parent is None and not transaction.nested:
        for k in (_SEAL, _SEEN, _TAINTS):
            session.info.pop(k, None)


sa.event.listen(Session, "before_flush", _store_before_flush)
sa.event.listen(Session, "before_commit", _store_before_commit)
sa.event.listen(Session, "after_transaction_end", _store_end)
