"""Decision reports (issue 11, item 7): every reviewer decision with its memory, the statement at
the time, from/to state, actor, role, time, comment and an evidence summary, as Markdown (a weekly
review summary), CSV, JSON or YAML.

:func:`collect_decisions` reads the store in ONE read transaction (a snapshot: ``BEGIN`` on
SQLite, ``REPEATABLE READ`` on PostgreSQL) and returns plain :class:`DecisionRecord` values; the
``render_*`` functions are pure and never touch the store.

**What a decision is.** A *human* event of ``memory_state_history`` that is one of:

* ``decide`` — ``reason`` starts ``reviewer decision:`` (approve, reject, needs-review, archive,
  block, ...; ``memtui decide``, the queue keys);
* ``edit`` — ``reason`` starts ``statement edited`` (``memtui edit``, accepted edits);
* ``undo`` — ``compensates`` is set (a single-memory undo);
* a multi-memory decision — ``decision_id`` is set: the :class:`~memtui.store.models.ReviewDecision`
  row gives kind (merge, not_duplicates, conflict, compaction, undo of one of these), action and
  subject (cluster, conflict or proposal id; for an undo the undone decision); its events give
  the members.

Imports (creation and re-import events), maintenance jobs (``job_id`` set, also a human applying
a pruning plan), harm reports and the side notes a decision leaves on other memories (a conflict
closed because its other member was retired) are not decisions and are left out.

**Statement at the time.** Statement edits are recorded as history notes
(``statement edited: 'OLD' -> 'NEW'``) and a merge with edited text keeps the canonical's old
text in its decision payload, so the statement a reviewer saw is *reconstructed*: start from the
current statement and walk the memory's events newest first, stepping back over each edit and
each merge that changed the text. Where a step back cannot be known (an edit note of another
shape; a merge's edited text that a later undo removed) the statement is ``None`` ("not
recorded"), never a guess. A memory that is or ever was ``blocked``, or has a stored secret
finding, shows :data:`memtui.reports.export.REDACTED` and never text from its history (design
invariant 5, the same rule as ``export json``). Comments are shown as stored (issue 9 refuses a
comment holding a secret).

**Evidence at the time.** The store keeps no history of evidence status, so the summary is what
it can honestly tell: the evidence pieces the memory has, without those a *later* merge copied
onto it, their recorded paths (else symbol or reference), and their statuses as revalidation
last set them — ``statusesCheckedAt`` is that check's time (None: never revalidated), so a reader
sees whether the statuses post-date the decision.

Untrusted text (statements, comments, names) is made safe for each format: Markdown and CSV go
through :func:`memtui.text.visible_line` (control characters shown as ``\\xNN``), Markdown also
escapes ``\\ < > [ ]`` (no HTML, comments or links from a statement), CSV prefixes ``'`` to a
cell starting with ``= + - @`` (CSV injection); JSON and YAML escape control characters.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import os
import re
import tokenize
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Iterator

import yaml
from sqlalchemy.engine import Engine
from sqlmodel import Session, or_, select

from memtui.clock import iso
from memtui.store.models import Evidence, Memory, ReviewDecision, Revalidation, SecretFinding, StateHistory
from memtui.text import visible_line

FORMATS = ("md", "csv", "json", "yaml")
DECIDE_PREFIX = "reviewer decision:"
EDIT_PREFIX = "statement edited"
_EDIT_HEAD = re.compile(r"^statement edited(?: \([^)]*\))?: ")
_CHUNK = 500
_MD_STATEMENT = 100  # characters of a statement on a Markdown line


# ---- records -------------------------------------------------------------------------------

@dataclass(frozen=True)
class EvidenceSummary:
    """The evidence of a memory at a decision: piece count, count per status, paths (or symbols or
    references) in recorded order, and when revalidation last set the statuses (None: never)."""

    count: int
    by_status: dict[str, int]
    paths: tuple[str, ...]
    statuses_checked_at: datetime | None = None


@dataclass(frozen=True)
class MemoryChange:
    """One memory in a decision: the statement the reviewer saw (None: not recorded), the new
    statement when the decision changed it, its state before and after (``from_state`` None: the
    decision created it; equal states: the memory was touched but kept its state)."""

    memory_id: str
    repository_id: str | None
    statement: str | None
    new_statement: str | None
    from_state: str | None
    to_state: str
    evidence: EvidenceSummary


@dataclass(frozen=True)
class DecisionRecord:
    """One reviewer decision. ``decision_id`` is the history event id (decide, edit, undo) or the
    review decision id (multi-memory); ``subject`` the cluster / conflict / proposal id, or for an
    undo the event or decision it undid; ``undone_by`` what undid it later, if anything."""

    decision_id: str
    kind: str
    action: str
    subject: str | None
    actor: str
    role: str | None
    time: datetime
    comment: str | None
    memories: tuple[MemoryChange, ...]
    undone_by: str | None = None

    @property
    def outcome(self) -> str:
        """The label a report groups by: the verb of a decide (``approve``), else the kind and
        action (``edit``, ``undo``, ``merge``, ``conflict keep-a``, ``compaction accept``)."""
        if self.kind == "decide":
            return self.action
        kind = self.kind.replace("_", "-")
        action = self.action.replace("_", "-")
        return kind if action == kind else f"{kind} {action}"


@dataclass(frozen=True)
class DecisionFilters:
    """What a report selects: decisions at or after ``since``, by ``actor``, touching a memory of ``repository``."""

    since: datetime | None = None
    actor: str | None = None
    repository: str | None = None
    # who reads the report: a decision is listed only when every memory it touched is inside the
    # viewer's scopes (issue 9 item 2, governance/visibility.py); None reads everything
    viewer: Any = field(default=None, compare=False)

    def as_dict(self) -> dict[str, str | None]:
        return {"since": iso(self.since), "actor": self.actor, "repository": self.repository}


# ---- the store query -----------------------------------------------------------------------

def _chunks(ids: Iterable[str]) -> Iterator[list[str]]:
    ids = sorted(set(ids))
    for i in range(0, len(ids), _CHUNK):
        yield ids[i:i + _CHUNK]


def _read_snapshot(session: Session) -> None:
    """Make the session's transaction one consistent snapshot for every read that follows."""
    if session.get_bind().dialect.name == "postgresql":
        session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
        return
    raw = session.connection().connection.driver_connection
    if raw is not None and not raw.in_transaction:
        raw.execute("BEGIN")  # pysqlite begins only before writes; a deferred BEGIN pins the WAL snapshot


def edit_texts(reason: str) -> tuple[str, str] | None:
    """``(old, new)`` statements of a ``statement edited: 'OLD' -> 'NEW'`` history note (the shape
    :meth:`memtui.review.service.ReviewService.edit_statement` writes), or None for another shape."""
    head = _EDIT_HEAD.match(reason)
    if head is None:
        return None
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(reason[head.end():]).readline)
                  if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER)]
        if (len(tokens) != 3 or tokens[0].type != tokenize.STRING or tokens[1].string != "->"
                or tokens[2].type != tokenize.STRING):
            return None
        old, new = ast.literal_eval(tokens[0].string), ast.literal_eval(tokens[2].string)
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    if not isinstance(old, str) or not isinstance(new, str):
        return None
    return old, new


def _label(e: Evidence) -> str:
    return e.path or e.symbol or e.ref or e.type


@dataclass
class _Texts:
    """The statement before and after each event of one memory (None: not recorded)."""

    before: dict[str, str | None] = field(default_factory=dict)
    after: dict[str, str | None] = field(default_factory=dict)


def _reconstruct(current: str, events: list[StateHistory], decisions: dict[str, ReviewDecision],
                 merge_edited: dict[str, bool]) -> _Texts:
    """The statement before and after each of ``events`` (one memory's, any order): walk newest
    first from ``current``, stepping back over edits and text-changing merges; then oldest first,
    carrying a known text over what a step back could not know (an edit note says what it wrote)."""
    out = _Texts()
    changes: set[str] = set()  # events that changed the text
    text: str | None = current
    ordered = sorted(events, key=lambda ev: ev.event_id)
    for e in reversed(ordered):
        out.after[e.event_id] = text
        d = decisions.get(e.decision_id) if e.decision_id else None
        if e.reason.startswith(EDIT_PREFIX):
            changes.add(e.event_id)
            texts = edit_texts(e.reason)
            if texts:
                out.after[e.event_id] = texts[1]  # the note itself says what the edit wrote
            text = texts[0] if texts else None
        elif d is not None and d.kind == "merge" and e.compensates is None and e.from_state == e.to_state \
                and (d.payload or {}).get("canonical") == e.memory_id:
            if merge_edited.get(d.decision_id):
                changes.add(e.event_id)
                text = (d.payload or {}).get("statement")
        elif d is not None and d.kind == "undo" and e.compensates is not None and e.from_state == e.to_state:
            undone = decisions.get(d.subject_id)
            if undone is not None and undone.kind == "merge" and merge_edited.get(undone.decision_id) \
                    and (undone.payload or {}).get("canonical") == e.memory_id:
                changes.add(e.event_id)
                text = None  # the merged text this undo took away is not recorded here
        out.before[e.event_id] = text
    known: str | None = None
    for e in ordered:
        if out.before[e.event_id] is None:
            out.before[e.event_id] = known
        if out.after[e.event_id] is None and e.event_id not in changes:
            out.after[e.event_id] = out.before[e.event_id]
        known = out.after[e.event_id]
    return out


def collect_decisions(engine: Engine, *, since: datetime | None = None, actor: str | None = None,
                      repository: str | None = None) -> list[DecisionRecord]:
    """Every reviewer decision (see the module docstring), oldest first, at or after ``since``, by
    ``actor``, touching a memory of ``repository`` (each filter optional). One read transaction."""
    with Session(engine, expire_on_commit=False) as session, session.begin():
        _read_snapshot(session)
        q = select(StateHistory).where(
            StateHistory.actor_type == "human", StateHistory.job_id.is_(None),
            or_(StateHistory.decision_id.is_not(None), StateHistory.compensates.is_not(None),
                StateHistory.reason.startswith(DECIDE_PREFIX), StateHistory.reason.startswith(EDIT_PREFIX)))
        if since is not None:
            q = q.where(StateHistory.created_at >= since)
        if actor is not None:
            q = q.where(StateHistory.actor_id == actor)
        events = list(session.exec(q.order_by(StateHistory.event_id)))
        mids = {e.memory_id for e in events}

        memories: dict[str, Memory] = {}
        texty: dict[str, list[StateHistory]] = defaultdict(list)  # events that may change a statement
        evidence: dict[str, list[Evidence]] = defaultdict(list)
        checked: dict[str, datetime] = {}
        redacted: set[str] = set()
        undone_single: dict[str, str] = {}
        for chunk in _chunks(mids):
            memories.update({m.memory_id: m for m in session.exec(select(Memory).where(Memory.memory_id.in_(chunk)))})
            for e in session.exec(select(StateHistory).where(
                    StateHistory.memory_id.in_(chunk),
                    or_(StateHistory.decision_id.is_not(None), StateHistory.reason.startswith(EDIT_PREFIX)))):
                texty[e.memory_id].append(e)
            for ev in session.exec(select(Evidence).where(Evidence.memory_id.in_(chunk))
                                   .order_by(Evidence.memory_id, Evidence.ordinal, Evidence.evidence_id)):
                evidence[ev.memory_id].append(ev)
            for r in session.exec(select(Revalidation).where(Revalidation.memory_id.in_(chunk))):
                checked[r.memory_id] = r.checked_at
            redacted.update(session.exec(select(StateHistory.memory_id).where(
                StateHistory.memory_id.in_(chunk), StateHistory.to_state == "blocked")).all())
            redacted.update(session.exec(select(SecretFinding.memory_id).where(
                SecretFinding.memory_id.in_(chunk))).all())
        redacted.update(mid for mid, m in memories.items() if m.state == "blocked")
        singles = [e.event_id for e in events if e.decision_id is None]
        for chunk in _chunks(singles):
            for eid, comp in session.exec(select(StateHistory.event_id, StateHistory.compensates)
                                          .where(StateHistory.compensates.in_(chunk))):
                undone_single[comp] = eid

        decision_ids = {e.decision_id for es in texty.values() for e in es if e.decision_id}
        decisions: dict[str, ReviewDecision] = {}
        for chunk in _chunks(decision_ids):
            decisions.update({d.decision_id: d for d in session.exec(
                select(ReviewDecision).where(ReviewDecision.decision_id.in_(chunk)))})
        undone_subjects = {d.subject_id for d in decisions.values() if d.kind == "undo"}
        for chunk in _chunks(undone_subjects - set(decisions)):
            decisions.update({d.decision_id: d for d in session.exec(
                select(ReviewDecision).where(ReviewDecision.decision_id.in_(chunk)))})

    # ---- everything below works on plain values: the transaction is over --------------------
    merge_edited = {e.decision_id: e.reason.endswith("with edited text")
                    for es in texty.values() for e in es
                    if e.decision_id in decisions and decisions[e.decision_id].kind == "merge"
                    and e.compensates is None and e.from_state == e.to_state
                    and (decisions[e.decision_id].payload or {}).get("canonical") == e.memory_id}
    # evidence rows a merge copied onto its canonical: (merge note event id, row ids) per memory
    merged_in: dict[str, list[tuple[str, set[int]]]] = defaultdict(list)
    for mid, es in texty.items():
        for e in es:
            d = decisions.get(e.decision_id) if e.decision_id else None
            if d is not None and d.kind == "merge" and e.compensates is None \
                    and (d.payload or {}).get("canonical") == mid and e.from_state == e.to_state:
                merged_in[mid].append((e.event_id, set((d.payload or {}).get("addedEvidence") or [])))
    texts: dict[str, _Texts] = {}
    for mid in mids:
        m = memories.get(mid)
        if m is None or mid in redacted:
            continue
        by_id = {e.event_id: e for e in texty.get(mid, [])}
        by_id.update({e.event_id: e for e in events if e.memory_id == mid})
        texts[mid] = _reconstruct(m.statement, list(by_id.values()), decisions, merge_edited)

    def evidence_at(mid: str, event_id: str) -> EvidenceSummary:
        later = set().union(*[ids for merge_event, ids in merged_in.get(mid, []) if merge_event >= event_id])
        rows = [e for e in evidence.get(mid, []) if e.evidence_id not in later]
        return EvidenceSummary(len(rows), dict(sorted(Counter(e.status for e in rows).items())),
                               tuple(dict.fromkeys(_label(e) for e in rows)), checked.get(mid))

    def change(mid: str, evs: list[StateHistory]) -> MemoryChange:
        first, last = evs[0], evs[-1]
        m = memories.get(mid)
        if m is None or mid in redacted:
            from memtui.reports.export import REDACTED

            statement, new = REDACTED, None
        else:
            t = texts[mid]
            statement = t.after[first.event_id] if first.from_state is None else t.before[first.event_id]
            new = t.after[last.event_id]
            if new == statement:
                new = None
        return MemoryChange(mid, m.repository_id if m else None, statement, new, first.from_state,
                            last.to_state, evidence_at(mid, first.event_id))

    groups: dict[str, list[StateHistory]] = {}
    for e in events:
        groups.setdefault(e.decision_id or e.event_id, []).append(e)
    records: list[DecisionRecord] = []
    for key, evs in groups.items():
        first = evs[0]
        by_memory: dict[str, list[StateHistory]] = {}
        for e in evs:
            by_memory.setdefault(e.memory_id, []).append(e)
        members = tuple(change(mid, es) for mid, es in by_memory.items())
        if repository is not None and not any(c.repository_id == repository for c in members):
            continue
        comment = next((e.comment for e in evs if e.comment), None)
        if first.decision_id is not None:
            d = decisions.get(first.decision_id)
            comment = comment or ((d.payload or {}).get("comment") if d else None)
            kind, action = (d.kind, d.action) if d else ("decision", "unknown")
            subject, undone_by = (d.subject_id, d.undone_by) if d else (None, None)
        elif first.compensates is not None:
            kind, action, subject, undone_by = "undo", "undo", first.compensates, undone_single.get(key)
        elif first.reason.startswith(EDIT_PREFIX):
            kind, action, subject, undone_by = "edit", "edit", None, undone_single.get(key)
        else:
            verb = first.reason[len(DECIDE_PREFIX):].split(";", 1)[0].strip()
            kind, action, subject, undone_by = "decide", verb, None, undone_single.get(key)
        records.append(DecisionRecord(key, kind, action, subject, first.actor_id, first.actor_role,
                                      first.created_at, comment, members, undone_by))
    return records


# ---- rendering (pure) ------------------------------------------------------------------------

def decision_dicts(records: list[DecisionRecord]) -> list[dict[str, Any]]:
    """The records as JSON-ready dicts with the design's camelCase keys (what json/yaml hold under ``decisions``)."""
    return [{
        "decisionId": r.decision_id, "kind": r.kind, "action": r.action, "outcome": r.outcome,
        "subject": r.subject, "actor": r.actor, "role": r.role, "time": iso(r.time), "comment": r.comment,
        "undoneBy": r.undone_by,
        "memories": [{
            "memoryId": c.memory_id, "repositoryId": c.repository_id, "statement": c.statement,
            "newStatement": c.new_statement, "fromState": c.from_state, "toState": c.to_state,
            "evidence": {"count": c.evidence.count, "byStatus": dict(c.evidence.by_status),
                         "paths": list(c.evidence.paths),
                         "statusesCheckedAt": iso(c.evidence.statuses_checked_at)},
        } for c in r.memories],
    } for r in records]


def _by_reviewer(records: list[DecisionRecord]) -> dict[str, dict[str, int]]:
    out: dict[str, Counter] = defaultdict(Counter)
    for r in records:
        out[r.actor][r.outcome] += 1
    return {a: dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))) for a, c in sorted(out.items())}


def report_dict(records: list[DecisionRecord], filters: DecisionFilters | None = None) -> dict[str, Any]:
    """``{"decisionReport": {filters, count, per reviewer per outcome}, "decisions": [...]}``."""
    filters = filters or DecisionFilters()
    return {"decisionReport": {**filters.as_dict(), "decisions": len(records),
                               "byReviewer": _by_reviewer(records)},
            "decisions": decision_dicts(records)}


_C1 = re.compile(r"[\x7f-\x9f]")


def render_json(records: list[DecisionRecord], filters: DecisionFilters | None = None) -> str:
    """The report as JSON; control characters escaped (json escapes C0, this also DEL and C1)."""
    text = json.dumps(report_dict(records, filters), indent=2, ensure_ascii=False)
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


class _YamlDumper(yaml.SafeDumper):
    pass


_YAML_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def _yaml_str(dumper: yaml.SafeDumper, data: str):
    # double quotes make the emitter escape every control character (plain style would keep NEL etc.)
    style = '"' if _YAML_UNSAFE.search(data) else ("|" if "\n" in data else None)
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_YamlDumper.add_representer(str, _yaml_str)


def render_yaml(records: list[DecisionRecord], filters: DecisionFilters | None = None) -> str:
    """The report as YAML (same structure as JSON); control characters escaped."""
    return yaml.dump(report_dict(records, filters), Dumper=_YamlDumper, sort_keys=False, allow_unicode=True,
                     width=100, default_flow_style=False)


CSV_COLUMNS = ("decision_id", "time", "actor", "role", "kind", "action", "outcome", "subject", "memory_id",
               "repository_id", "from_state", "to_state", "statement", "new_statement", "comment",
               "evidence_count", "evidence_by_status", "evidence_paths", "statuses_checked_at", "undone_by")


def csv_cell(value: object) -> str:
    """One CSV cell: None -> empty, control characters shown, and a leading ``= + - @`` neutralised
    with ``'`` so a spreadsheet never reads the cell as a formula (CSV injection)."""
    if value is None:
        return ""
    text = visible_line(str(value))
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def render_csv(records: list[DecisionRecord], filters: DecisionFilters | None = None) -> str:
    """The report as CSV: a header row (:data:`CSV_COLUMNS`), then one row per memory of each decision."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in records:
        for c in r.memories:
            e = c.evidence
            row = (r.decision_id, iso(r.time), r.actor, r.role, r.kind, r.action, r.outcome, r.subject,
                   c.memory_id, c.repository_id, c.from_state, c.to_state, c.statement, c.new_statement,
                   r.comment, e.count, ";".join(f"{k}={v}" for k, v in e.by_status.items()),
                   ";".join(e.paths), iso(e.statuses_checked_at), r.undone_by)
            w.writerow([csv_cell(v) for v in row])
    return buf.getvalue()


_MD_ESCAPE = re.compile(r"([\\<>\[\]])")


def md_text(text: str | None, limit: int | None = None) -> str:
    """Untrusted text as inline Markdown: whitespace runs become one space, cut to ``limit``
    characters with an ellipsis, ``\\ < > [ ]`` backslash-escaped (no HTML, comments, links or
    images) and control characters shown as ``\\xNN`` (:func:`memtui.text.visible_line`)."""
    text = " ".join((text or "").split())
    if limit is not None and len(text) > limit:
        text = text[:limit - 1].rstrip() + "…"
    # escape first: the ``\\xNN`` that visible_line writes is then a literal backslash (not an escape) in Markdown
    return visible_line(_MD_ESCAPE.sub(r"\\\1", text))


def _md_states(c: MemoryChange) -> str:
    if c.from_state is None:
        return f"new → {c.to_state}"
    if c.from_state == c.to_state:
        return c.to_state
    return f"{c.from_state} → {c.to_state}"


def _md_evidence(e: EvidenceSummary) -> str:
    if not e.count:
        return "no evidence"
    return f"evidence {e.count} (" + ", ".join(f"{k} {v}" for k, v in e.by_status.items()) + ")"


def _md_statement(c: MemoryChange) -> str:
    said = f'"{md_text(c.statement, _MD_STATEMENT)}"' if c.statement is not None else "(statement not recorded)"
    if c.new_statement is not None:
        said += f' → "{md_text(c.new_statement, _MD_STATEMENT)}"'
    return said


def _md_member(c: MemoryChange) -> str:
    return f"`{md_text(c.memory_id)}` {md_text(_md_states(c))} · {_md_statement(c)} · {_md_evidence(c.evidence)}"


def _md_decision(r: DecisionRecord) -> list[str]:
    tail = ""
    if r.comment:
        tail += f" · comment: {md_text(r.comment)}"
    if r.undone_by:
        tail += f" · undone later ({md_text(r.undone_by)})"
    when = iso(r.time)
    if r.kind in ("decide", "edit", "undo") and len(r.memories) == 1:
        undid = f" · undid `{md_text(r.subject)}`" if r.kind == "undo" and r.subject else ""
        return [f"- {_md_member(r.memories[0])} · {when}{undid}{tail}"]
    what = {"merge": "merge of cluster", "not_duplicates": "not duplicates: cluster",
            "conflict": f"conflict {md_text(r.action.replace('_', '-'))}:",
            "compaction": f"compaction {md_text(r.action)}:", "undo": "undo of"}.get(r.kind, md_text(r.kind))
    subject = f" `{md_text(r.subject)}`" if r.subject else ""
    lines = [f"- {what}{subject} · {when} · {len(r.memories)} memories{tail}"]
    lines += [f"  - {_md_member(c)}" for c in r.memories]
    return lines


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def render_markdown(records: list[DecisionRecord], filters: DecisionFilters | None = None) -> str:
    """The report as a weekly review summary: totals, a summary per reviewer, then one section per
    reviewer and within it one per outcome (most frequent first), each decision one line (memory
    id, from → to, short statement, evidence, time, comment); multi-memory decisions list their members."""
    filters = filters or DecisionFilters()
    lines = ["# Decision report", ""]
    chosen = [f"{k} {md_text(v)}" for k, v in filters.as_dict().items() if v]
    if chosen:
        lines += ["Filters: " + "; ".join(chosen) + ".", ""]
    if not records:
        return "\n".join(lines + ["No decisions.", ""])
    by_reviewer = _by_reviewer(records)
    first, last = min(r.time for r in records), max(r.time for r in records)
    span = iso(first) if first == last else f"{iso(first)} to {iso(last)}"
    lines += [f"{_plural(len(records), 'decision')} by {_plural(len(by_reviewer), 'reviewer')}, {span}.", "",
              "## Summary", ""]
    roles: dict[str, list[str]] = defaultdict(list)
    for r in records:
        if r.role and r.role not in roles[r.actor]:
            roles[r.actor].append(r.role)
    for actor, outcomes in by_reviewer.items():
        who = md_text(actor) + (f" ({md_text(', '.join(roles[actor]))})" if roles[actor] else "")
        lines.append(f"- **{who}**: {sum(outcomes.values())} — "
                     + ", ".join(f"{md_text(o)} {n}" for o, n in outcomes.items()))
    for actor, outcomes in by_reviewer.items():
        who = md_text(actor) + (f" ({md_text(', '.join(roles[actor]))})" if roles[actor] else "")
        lines += ["", f"## {who} — {_plural(sum(outcomes.values()), 'decision')}"]
        mine = [r for r in records if r.actor == actor]
        for outcome, n in outcomes.items():
            lines += ["", f"### {md_text(outcome)} — {n}", ""]
            for r in mine:
                if r.outcome == outcome:
                    lines += _md_decision(r)
    lines += ["", "Evidence: the pieces each memory had at the decision; statuses as revalidation last set them.", ""]
    return "\n".join(lines)


_RENDERERS = {"md": render_markdown, "csv": render_csv, "json": render_json, "yaml": render_yaml}


def render(fmt: str, records: list[DecisionRecord], filters: DecisionFilters | None = None) -> str:
    """The report in ``fmt`` (one of :data:`FORMATS`). Raises ValueError naming the format."""
    try:
        renderer = _RENDERERS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}") from None
    return renderer(records, filters)


def decision_report(engine: Engine, fmt: str = "md", filters: DecisionFilters | None = None) -> tuple[str, int]:
    """Collect and render: ``(text, number of decisions)``. Raises ValueError for an unknown format."""
    if fmt not in _RENDERERS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    filters = filters or DecisionFilters()
    records = collect_decisions(engine, since=filters.since, actor=filters.actor, repository=filters.repository)
    if filters.viewer is not None:
        from memtui.governance.visibility import all_visible, visible_memory_ids

        visible = visible_memory_ids(engine, filters.viewer)
        records = [r for r in records if all_visible((m.memory_id for m in r.memories), visible)]
    return render(fmt, records, filters), len(records)


def write_decision_report(engine: Engine, path: Path | str, fmt: str = "md",
                          filters: DecisionFilters | None = None) -> int:
    """Write the report to ``path`` whole or not at all (a temporary file renamed into place);
    returns the number of decisions. Raises OSError when the file cannot be written."""
    text, n = decision_report(engine, fmt, filters)
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return n


__all__ = ["CSV_COLUMNS", "FORMATS", "DecisionFilters", "DecisionRecord", "EvidenceSummary", "MemoryChange",
           "collect_decisions", "csv_cell", "decision_dicts", "decision_report", "edit_texts", "md_text",
           "render", "render_csv", "render_json", "render_markdown", "render_yaml", "report_dict",
           "write_decision_report"]
