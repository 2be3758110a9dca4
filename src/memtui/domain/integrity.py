"""The hashes of a tamper-evident history (issue 9, item 4; DESIGN.md "Lifecycle"): pure hashing, no I/O.

Each history event of a memory is chained to the previous event of the same memory::

    event_hash = sha256(canonical [prev_hash, the event's own fields])      prev_hash = "" for the first event

and the memory row is tied to the head of its chain::

    content_hash = sha256(canonical [the memory's content fields, event_hash of its last event])

so a changed state shows against the last event's ``to_state``, a changed field of any event breaks
its recomputed hash, a deleted or reordered event breaks the ``prev_hash`` links, and a changed
statement or scope (or a deleted last event) breaks the content hash. Every event is recomputable
from the stored row alone. These per-memory hashes are unkeyed (an export can be checked anywhere).

The store chain (issue 21 item 6) covers what they cannot: the set of memories, their evidence, the
reviewers, delegations and tokens. Each subject's state is a digest (:func:`memory_digest`,
:func:`row_digest`); a transaction that changes subjects appends one row per subject::

    hash = mac(key, ["chain", prev_hash, seq, kind, subject, digest])      digest None: the subject is gone

and a head row holds the latest ``seq`` and ``hash`` under :func:`head_mac`. ``key`` None is plain
sha256 (unkeyed: finds edits made outside memtui, not someone who recomputes on purpose); with a key
it is HMAC-SHA256, which nobody without the key can recompute.

Functions take plain mappings (snake_case column names -> values) so the store, an export file and
a migration can all be checked with the same code.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime
from typing import Any, Mapping

#: Memory columns a forger would change to alter what a memory says or where it applies. They
#: change only together with a history event (an edit, a merge, a narrowed scope, an undo).
CONTENT_FIELDS: tuple[str, ...] = (
    "memory_id", "logical_memory_id", "type", "statement", "tenant_id", "repository_id", "module_path",
    "applies_to", "does_not_apply_to", "impact",
)
#: History columns covered by ``event_hash`` (everything but the two hash columns).
EVENT_FIELDS: tuple[str, ...] = (
    "event_id", "memory_id", "from_state", "to_state", "reason", "comment", "actor_type", "actor_id",
    "actor_role", "job_id", "compensates", "review_state_before", "decision_id", "created_at",
)


def canonical_time(value: datetime | str | None) -> str | None:
    """A time as ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` in UTC (a naive value is taken as UTC; an ISO string is parsed)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _digest(items: list[Any]) -> str:
    text = json.dumps(items, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def event_hash(prev_hash: str | None, event: Mapping[str, Any]) -> str:
    """The hash of one history event chained to ``prev_hash`` (the previous event's hash, "" for the first)."""
    fields = [canonical_time(event.get(f)) if f == "created_at" else event.get(f) for f in EVENT_FIELDS]
    return _digest(["event", prev_hash or "", fields])


def content_hash(memory: Mapping[str, Any], head_hash: str | None) -> str:
    """The hash of a memory's content fields tied to ``head_hash``, the ``event_hash`` of its last event."""
    fields = []
    for f in CONTENT_FIELDS:
        v = memory.get(f)
        fields.append(list(v) if isinstance(v, (list, tuple)) else v)
    return _digest(["memory", fields, head_hash or ""])


def chain_findings(memory_id: str, state: str | None, stored_content_hash: str | None,
                   memory: Mapping[str, Any] | None, events: list[Mapping[str, Any]],
                   *, transitions: bool = True) -> list[str]:
    """What is wrong with one memory's history, one sentence per finding, each starting with the memory id.

    ``events`` are the memory's history rows oldest first; ``memory`` its row (content fields) or None
    to skip the content hash (a redacted export). Checks: some history exists; the state is the last
    event's ``to_state``; every event starts from the state the previous one left and (unless it
    ``compensates`` an earlier event, or is a note) is allowed by the transition table; the
    ``prev_hash`` links and every recomputed ``event_hash``; the content hash against the last event.
    """
    from memtui.domain.states import ALL_STATES, is_allowed

    out: list[str] = []
    if not events:
        return [f"{memory_id}: has no history (every memory is created with an event)"]
    last = events[-1]
    if state != last.get("to_state"):
        out.append(f"{memory_id}: state is {state} but last event {last.get('event_id')} says {last.get('to_state')}")
    prev_hash, prev_state = "", None
    for i, e in enumerate(events):
        eid = e.get("event_id")
        frm, to = e.get("from_state"), e.get("to_state")
        if transitions:
            if i == 0 and frm is not None:
                out.append(f"{memory_id}: first event {eid} starts from {frm}, not from creation "
                           "(earlier history is missing)")
            elif i > 0 and frm != prev_state:
                out.append(f"{memory_id}: event {eid} starts from {frm} but the event before left it {prev_state} "
                           "(history is missing or reordered)")
            if to not in ALL_STATES or (frm is not None and frm not in ALL_STATES):
                out.append(f"{memory_id}: event {eid} names an unknown state ({frm} -> {to})")
            elif frm is not None and frm != to and not e.get("compensates") and not is_allowed(frm, to):
                out.append(f"{memory_id}: event {eid} moves {frm} -> {to}, which the lifecycle forbids")
        if e.get("event_hash") is None:
            out.append(f"{memory_id}: event {eid} has no hash (the chain is broken)")
        elif (e.get("prev_hash") or "") != prev_hash:
            out.append(f"{memory_id}: event {eid} does not follow the event before it (the chain is broken: "
                       "an event was removed, added or changed)")
        elif event_hash(prev_hash, e) != e.get("event_hash"):
            out.append(f"{memory_id}: event {eid} was changed after it was written (its hash does not match)")
        prev_hash, prev_state = e.get("event_hash") or "", to
    if memory is not None:
        if stored_content_hash is None:
            out.append(f"{memory_id}: has no content hash")
        elif content_hash(memory, last.get("event_hash")) != stored_content_hash:
            out.append(f"{memory_id}: content hash does not match its statement, scope and last event "
                       "(changed outside memtui, or its latest history removed)")
    return out


# ---- the store chain (issue 21 item 6) --------------------------------------------------------------

class IntegrityKeyError(Exception):
    """The integrity key cannot be read, or a keyed store is written without (or with another) key."""


#: Evidence columns a memory's digest covers: where the evidence points and what it quoted. Not its
#: revalidation status (``status``, ``current_*``, ``reason_code``, ``status_reason``), which
#: maintenance rewrites without an event.
EVIDENCE_ANCHOR_FIELDS: tuple[str, ...] = (
    "evidence_id", "ordinal", "type", "repository_id", "path", "commit_sha", "line_start", "line_end",
    "symbol", "target", "ref", "span_hash", "excerpt",
)
#: Columns a row digest leaves out, per kind: a token's ``last_used_at`` is a hint written on use.
ROW_DIGEST_SKIP: dict[str, frozenset[str]] = {"token": frozenset({"last_used_at"})}
KEY_CHECK_TEXT = "memtui integrity key check"


def mac(key: bytes | None, items: list[Any]) -> str:
    """HMAC-SHA256 (hex) of the canonical JSON of ``items`` under ``key``; plain sha256 when ``key`` is None."""
    text = json.dumps(items, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")
    if key is None:
        return hashlib.sha256(text).hexdigest()
    return hmac.new(key, text, hashlib.sha256).hexdigest()


def key_check(key: bytes) -> str:
    """A value that tells the store's key from another (an HMAC of a fixed text; reveals nothing of the key)."""
    return hmac.new(key, KEY_CHECK_TEXT.encode(), hashlib.sha256).hexdigest()


def _value(v: Any) -> Any:
    if isinstance(v, datetime):
        return canonical_time(v)
    if isinstance(v, tuple):
        return list(v)
    return v


def evidence_digest(evidence: list[Mapping[str, Any]]) -> str:
    """sha256 over the anchor fields of a memory's evidence rows (any order in: sorted by evidence id).
    A span's missing end is its start (the record format writes ``lines: [s, s]``)."""
    rows = []
    for e in evidence:
        row = [_value(e.get(f)) for f in EVIDENCE_ANCHOR_FIELDS]
        if row[7] is None:
            row[7] = row[6]
        rows.append(row)
    rows.sort(key=lambda r: (r[0] is None, r[0] or 0, r[1] or 0))
    return _digest(["evidence", rows])[:32]


def memory_digest(memory: Mapping[str, Any], evidence: list[Mapping[str, Any]]) -> str:
    """A memory's state in the store chain: ``<sha of state and content hash>:<evidence digest>`` (two
    halves, so a finding can say which part changed). ``memory``: its row (``state``, ``content_hash``)."""
    return _digest(["memory", memory.get("state"), memory.get("content_hash")])[:32] + ":" + evidence_digest(evidence)


def row_digest(kind: str, row: Mapping[str, Any]) -> str:
    """sha256 over every column of a reviewer, delegation or token row that holds a value (so a column a
    later version adds, still empty, changes no digest); :data:`ROW_DIGEST_SKIP` columns excepted."""
    skip = ROW_DIGEST_SKIP.get(kind, frozenset())
    items = sorted((k, _value(v)) for k, v in row.items() if v is not None and k not in skip)
    return _digest([kind, items])


def link_hash(key: bytes | None, prev_hash: str, seq: int, kind: str, subject: str, digest: str | None) -> str:
    """The hash of store-chain row ``seq`` linked to the row before it (``prev_hash``, "" for the first)."""
    return mac(key, ["chain", prev_hash, seq, kind, subject, digest])


def head_mac(key: bytes | None, seq: int, last_hash: str, keyed: bool, check: str | None) -> str:
    """The seal of the chain's head: its last ``seq`` and ``last_hash``, and the store's mode."""
    return mac(key, ["head", seq, last_hash, bool(keyed), check])


def export_mac(key: bytes | None, subjects: list[list]) -> str:
    """The seal of a store export over its ``[kind, subject, digest]`` triples (sorted first)."""
    return mac(key, ["export", sorted(subjects)])
