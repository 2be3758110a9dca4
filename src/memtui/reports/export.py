"""Export back (issue 5): governed memory as the Markdown an agent reads, and the whole store as JSON.

``export_agents_md`` writes the active memories of a repository scope as an ``AGENTS.md`` section,
grouped by type, each bullet the statement, its evidence paths in backticks and a marker
``<!-- memtui:MEMORY_ID -->`` that lets a later import recognise the line as that memory (so
importing the file again adds nothing). ``parse_agents_md`` reads those bullets back.

``export_json`` writes the whole store (memories in the native record shape of
docs/record-format.md, their evidence rows, the state history, repositories and every other table)
and ``import_json_store`` loads such an export into an empty store with every id preserved, in one
transaction (SQLite <-> PostgreSQL). A blocked memory's text is never exported (safety invariant):
its statement and evidence excerpts are replaced by a redaction marker.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, SQLModel, select

from memtui.clock import iso, new_event_id, utcnow
from memtui.domain.invariants import Actor
from memtui.domain.quality import eligibility
from memtui.domain.quality import quality_input
from memtui.recall import resolve_scope
from memtui.safety.guard import WITHHELD as REDACTED  # one marker for show and export (issue 9)
from memtui.store.models import Evidence, MaintenanceJob, Memory, Repository, StateHistory
from memtui.text import visible

EXPORT_FORMAT = "memtui.store-export.v1"

#: Headings of the Markdown export, in this order; other types follow, sorted, under their own name.
TYPE_TITLES: dict[str, str] = {
    "architecture_decision": "Architecture decisions",
    "repo_convention": "Repository conventions",
    "code_fact": "Code facts",
    "test_convention": "Test conventions",
    "runbook": "Runbooks",
    "evaluation_lesson": "Evaluation lessons",
    "failure_lesson": "Failure lessons",
    "task": "Tasks",
    "session": "Session notes",
}

#: A bullet of the export: ``- STATEMENT (evidence: `a`, `b`) <!-- memtui:ID -->``.
_BULLET = re.compile(r"^\s*[-*] (?P<body>.*) \(evidence: (?P<ev>.*)\) <!-- memtui:(?P<id>[^\s>]+) -->\s*$")
#: A hand-edited bullet that lost its evidence part but kept the marker.
_BARE_BULLET = re.compile(r"^\s*[-*] (?P<body>.*?)\s*<!-- memtui:(?P<id>[^\s>]+) -->\s*$")


class ExportError(Exception):
    """The export or the store import cannot be made; the message says why."""


# ---- AGENTS.md ------------------------------------------------------------------------------

def markdown_statement(statement: str) -> str:
    """A statement as one Markdown line: whitespace runs (newlines too) become one space, terminal
    escape sequences are removed whole and other control characters shown (:func:`memtui.text.visible`,
    issue 9 item 5). ``parse_agents_md`` gives back exactly this text."""
    return visible(" ".join(statement.split()))


def _type_title(t: str) -> str:
    return TYPE_TITLES.get(t) or t.replace("_", " ").capitalize()


def _evidence_labels(evidence: list[Evidence]) -> list[str]:
    """Evidence paths (where revalidation found them now, else as recorded), else symbols, else references."""
    paths = list(dict.fromkeys(e.current_path or e.path for e in evidence if e.current_path or e.path))
    if paths:
        return paths
    symbols = list(dict.fromkeys(e.symbol + (f" CALLS {e.target}" if e.target else "")
                                 for e in evidence if e.symbol))
    if symbols:
        return symbols
    return list(dict.fromkeys(e.ref for e in evidence if e.ref))


def _code(text: str) -> str:
    return "`" + markdown_statement(text).replace("`", "'") + "`"


def export_agents_md(engine: Engine, scope: str, *, eligible_only: bool = True, viewer: Actor | None = None) -> str:
    """The active memories of ``scope`` (``repository:NAME[/module]``) as a Markdown section for an agent.

    One ``###`` heading per memory type; each bullet is the statement, its evidence paths in backticks
    and the marker ``<!-- memtui:ID -->``. With ``eligible_only`` (default) an active memory that
    recall would refuse — in an open conflict, stale evidence, out of the module scope — is left out
    and named in a comment at the end instead. Deterministic: the same store gives the same text.
    Raises :class:`memtui.recall.RecallError` for a bad scope. ``viewer``: only memory that actor
    may see (issue 9).
    """
    from memtui.governance.visibility import restrict

    with Session(engine) as session:
        rscope = resolve_scope(session, scope)
        memories = list(session.exec(restrict(select(Memory).where(
            Memory.repository_id == rscope.repository_id, Memory.state == "active"), session, viewer)
            .order_by(Memory.memory_id)))
        evidence: dict[str, list[Evidence]] = defaultdict(list)
        ids = [m.memory_id for m in memories]
        for i in range(0, len(ids), 500):
            for e in session.exec(select(Evidence).where(Evidence.memory_id.in_(ids[i:i + 500]))
                                  .order_by(Evidence.memory_id, Evidence.ordinal, Evidence.evidence_id)):
                evidence[e.memory_id].append(e)
    groups: dict[str, list[tuple[Memory, list[Evidence]]]] = defaultdict(list)
    left_out: list[str] = []
    for m in memories:
        ev = evidence.get(m.memory_id, [])
        el = eligibility(quality_input(m, ev), scope_repository=rscope.repository_id,
                         scope_module=rscope.module_path, threshold=0.0)
        if "out_of_scope" in el.reasons:
            continue
        if eligible_only and not el.eligible:
            left_out.append(f"{m.memory_id} ({', '.join(el.reasons)})")
            continue
        groups[m.type].append((m, ev))
    with engine.connect() as conn:  # never publish memory whose history does not hold (issue 9)
        _refuse_if_tampered(conn, [m.memory_id for ms in groups.values() for m, _ev in ms])
    order = [t for t in TYPE_TITLES if t in groups] + sorted(t for t in groups if t not in TYPE_TITLES)
    count = sum(len(v) for v in groups.values())
    lines = [f"<!-- memtui export: {rscope.label}; {count} active {'memory' if count == 1 else 'memories'}; "
             "written by `memtui export agents-md`; each marker links a line to its memory -->",
             f"## Project memory: {rscope.repository_id}" + (f" ({rscope.module_path})" if rscope.module_path else "")]
    if not order:
        lines += ["", "_No active memory in this scope._"]
    for t in order:
        lines += ["", f"### {_type_title(t)}", ""]
        for m, ev in groups[t]:
            labels = _evidence_labels(ev)
            where = ", ".join(_code(x) for x in labels) if labels else "none"
            lines.append(f"- {markdown_statement(m.statement)} (evidence: {where}) <!-- memtui:{m.memory_id} -->")
    if left_out:
        lines += ["", f"<!-- memtui export: left out until reviewed: {'; '.join(left_out)} -->"]
    return visible("\n".join(lines) + "\n")  # ids and scope too: no escape sequence is published (issue 9)


def _refuse_if_tampered(conn, memory_ids: list[str]) -> None:
    from memtui.governance.integrity import TamperedStore, refuse_if_tampered
    from memtui.recall import RecallError

    try:
        refuse_if_tampered(conn, memory_ids)
    except TamperedStore as exc:
        raise RecallError(str(exc)) from None


def parse_agents_md(text: str) -> list[tuple[str, str]]:
    """The ``(memory_id, statement)`` of every marked bullet in ``text``, in file order.

    Reads what :func:`export_agents_md` writes (the statement is everything before the last
    `` (evidence: ...)``), and also a marked bullet whose evidence part was removed by hand.
    """
    out: list[tuple[str, str]] = []
    for line in text.splitlines():
        if "<!-- memtui:" not in line:
            continue
        m = _BULLET.match(line) or _BARE_BULLET.match(line)
        if m:
            out.append((m.group("id"), m.group("body")))
    return out


# ---- whole-store JSON -----------------------------------------------------------------------

_SPECIAL_TABLES = ("repository", "memory", "evidence", "memory_state_history", "integrity_chain", "integrity_head")
#: Tables an export never carries: API tokens (their hashes are credentials' fingerprints; issue 21 item 8).
#: Tokens are issued again after ``import-store``.
#: The store-wide change counter (:mod:`memtui.store.changes`) belongs to each store: the target's own moves.
_NOT_EXPORTED = ("api_token", "store_change")
#: Memory columns the native record shape does not carry; exported beside it and restored verbatim.
_MEMORY_EXTRAS = ("proposer_type", "proposer_id", "failure_class", "failure_type", "promotion_status",
                  "requires_human_review", "root_cause_summary", "verification_probe", "source_action_ids",
                  "import_hash", "import_source", "version", "content_hash")
#: Evidence columns the native record shape does not carry (revalidation's findings), restored verbatim.
_EVIDENCE_EXTRAS = ("evidence_id", "ordinal", "current_path", "current_line_start", "current_line_end",
                    "current_commit", "reason_code", "status_reason")


def _json_value(v: Any) -> Any:
    if isinstance(v, datetime):
        return v.isoformat()
    return v


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.capitalize() for p in rest)


def _drop_none(d: dict) -> dict:
    return {k: v for k, v in d.items() if v is not None}


def _native_record(m: Memory, evidence: list[Evidence], redact: bool) -> dict:
    """A memory in the native record shape (docs/record-format.md) that the importer validates."""
    rec: dict[str, Any] = {
        "memoryId": m.memory_id, "logicalMemoryId": m.logical_memory_id, "type": m.type,
        "statement": REDACTED if redact else m.statement,
        "scope": _drop_none({"tenantId": m.tenant_id, "repositoryId": m.repository_id, "modulePath": m.module_path,
                             "appliesTo": list(m.applies_to or []), "doesNotApplyTo": list(m.does_not_apply_to or [])}),
        "evidence": [
            _drop_none({"type": e.type, "path": e.path, "commitSha": e.commit_sha,
                        "lines": [e.line_start, e.line_end if e.line_end is not None else e.line_start]
                        if e.line_start is not None else None,
                        "symbol": e.symbol, "target": e.target, "ref": e.ref, "spanHash": e.span_hash,
                        "excerpt": None if redact else e.excerpt, "status": e.status,
                        "repositoryId": e.repository_id})
            for e in evidence
        ],
        "state": m.state, "confidence": m.confidence, "reviewState": m.review_state,
        "conflictState": m.conflict_state, "impact": m.impact, "origin": m.origin,
        "createdAt": _json_value(m.created_at), "lastValidatedAt": _json_value(m.last_validated_at),
        "lastUsedAt": _json_value(m.last_used_at), "expiresAt": _json_value(m.expires_at),
        "expiresAfterDays": m.expires_after_days, "reviewAfterDays": m.review_after_days,
        "supersededBy": m.superseded_by, "tags": list(m.tags or []),
        "invalidationPolicy": [dict(p) for p in (m.invalidation_policy or [])],
    }
    if m.proposer_type:
        rec["proposedBy"] = _drop_none({"type": m.proposer_type, "id": m.proposer_id})
    return _drop_none(rec)


def _rows(session: Session, table: sa.Table) -> list[dict]:
    pk = [c for c in table.primary_key.columns] or list(table.columns)
    rows = session.execute(sa.select(table).order_by(*pk)).mappings()
    return [{_camel(k): _json_value(v) for k, v in r.items()} for r in rows]


def _other_tables() -> list[sa.Table]:
    return [t for t in SQLModel.metadata.sorted_tables if t.name not in _SPECIAL_TABLES]


def _redacted_history(row: dict) -> dict:
    """A history row with any secret in its reason or comment redacted (issue 9: the history is
    append-only, so text written before the scanner knew a pattern is redacted on the way out)."""
    from memtui.safety.guard import redact_for_display

    row["reason"], row["comment"] = redact_for_display(row["reason"]), redact_for_display(row["comment"])
    return row


def export_json(engine: Engine, viewer: Actor | None = None) -> dict:
    """The whole store as a JSON-ready dict (ids preserved, deterministic order).

    Keys: ``format``, ``schemaRevision``, ``exportedAt``, ``repositories``, ``memories`` (native
    records that :func:`memtui.importers.native.import_files` reads), ``memoryExtras`` (columns the
    native shape lacks, per memory id), ``evidence`` (every evidence row, with revalidation's
    ``current*`` fields), ``history`` (every state-history event) and ``tables`` (every other table:
    usage and harm events, revalidation results, jobs, duplicate clusters, conflicts, compaction
    proposals, decisions; never API tokens). Blocked memory — blocked now or ever — is exported redacted. The history
    carries its chained hashes and ``memoryExtras`` each memory's ``contentHash`` (issue 9), so
    ``import-store`` can verify the file. ``viewer``: only the memory that actor may see
    (:func:`memtui.governance.visibility.narrow_export`).
    """
    from memtui.store.engine import current_revision

    with Session(engine) as session:
        memories = list(session.exec(select(Memory).order_by(Memory.memory_id)))
        evidence: dict[str, list[Evidence]] = defaultdict(list)
        for e in session.exec(select(Evidence).order_by(Evidence.memory_id, Evidence.ordinal, Evidence.evidence_id)):
            evidence[e.memory_id].append(e)
        history = list(session.exec(select(StateHistory).order_by(StateHistory.event_id)))
        ever_blocked = {h.memory_id for h in history if h.to_state == "blocked"}
        redacted = {m.memory_id for m in memories if m.state == "blocked" or m.memory_id in ever_blocked}
        repos = list(session.exec(select(Repository).order_by(Repository.repository_id)))
        tables = {t.name: _rows(session, t) for t in _other_tables() if t.name not in _NOT_EXPORTED}
        from memtui.governance.visibility import narrow_export

        memories, history, tables = narrow_export(session, viewer, memories, history, tables)
        from memtui.governance.integrity import export_seal

        integrity = export_seal(session.connection(), [m.memory_id for m in memories], redacted, tables,
                                everything=viewer is None or viewer.scopes is None)
    out_evidence = []
    for m in memories:
        for e in evidence.get(m.memory_id, []):
            row = {_camel(c.name): _json_value(getattr(e, c.name)) for c in Evidence.__table__.columns}
            if m.memory_id in redacted:
                row["excerpt"] = None
            out_evidence.append(row)
    extras = {}
    for m in memories:
        x = {_camel(k): _json_value(getattr(m, k)) for k in _MEMORY_EXTRAS}
        if m.memory_id in redacted:
            x["rootCauseSummary"] = None
        extras[m.memory_id] = x
    return {
        "format": EXPORT_FORMAT,
        "schemaRevision": current_revision(engine),
        "exportedAt": iso(utcnow()),
        "repositories": [{_camel(c.name): _json_value(getattr(r, c.name)) for c in Repository.__table__.columns}
                         for r in repos],
        "memories": [_native_record(m, evidence.get(m.memory_id, []), m.memory_id in redacted) for m in memories],
        "memoryExtras": extras,
        "evidence": out_evidence,
        "history": [_redacted_history({_camel(c.name): _json_value(getattr(h, c.name))
                                       for c in StateHistory.__table__.columns}) for h in history],
        "redacted": sorted(redacted),
        "integrity": integrity,
        "tables": tables,
    }


def _is_datetime(col: sa.Column) -> bool:
    t = col.type
    return isinstance(t, sa.DateTime) or isinstance(getattr(t, "impl", None), sa.DateTime)


def _to_row(table: sa.Table, data: dict, where: str) -> dict:
    """A JSON row (camelCase keys) as column values; times parsed; unknown keys refused."""
    from memtui.clock import parse_time

    cols = {_camel(c.name): c for c in table.columns}
    unknown = sorted(set(data) - set(cols))
    if unknown:
        raise ExportError(f"{where}: unknown field {unknown[0]!r} for table {table.name}")
    row = {}
    for key, value in data.items():
        col = cols[key]
        if value is not None and _is_datetime(col):
            value = parse_time(value) if isinstance(value, str) else value
        row[col.name] = value
    return row


def _store_is_empty(session: Session) -> bool:
    for t in (Memory.__table__, Repository.__table__, StateHistory.__table__, Evidence.__table__):
        if session.execute(sa.select(sa.func.count()).select_from(t)).scalar_one():
            return False
    return True


def import_json_store(engine: Engine, data: dict, actor: Actor) -> dict[str, int]:
    """Load an :func:`export_json` dict into an EMPTY store, every id preserved, in ONE transaction.

    Memories are validated by the native importer's record validation; their extra columns, the
    evidence rows (ids, revalidation's ``current*`` fields), the history events and every other table
    are restored verbatim. Nothing new is added to any memory's history; the load itself is recorded
    as one ``import_store`` job row by ``actor``. Before anything is written the export is verified as
    ``memtui check`` verifies a store (issue 9): a forged state, statement, scope or history event, or
    missing history, is refused naming the memory. A redacted (blocked) memory arrives without its
    text, so it alone gets one history note saying so. Returns counts per kind. Raises
    :class:`ExportError` (nothing written) for a non-empty store, a file that is not an export, an
    invalid record, or a forged or inconsistent export.
    """
    from memtui.importers.native import RecordError, parse_record
    from memtui.importers.reader import RawRecord

    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise ExportError(f"not a memtui store export (expected format {EXPORT_FORMAT!r})")
    counts: dict[str, int] = {}
    with Session(engine) as session, session.begin():
        if not _store_is_empty(session):
            raise ExportError("the store is not empty; import a store export only into an empty store "
                              "(use `memtui import` to add records to an existing one)")
        repos = [_to_row(Repository.__table__, r, f"repositories[{i}]")
                 for i, r in enumerate(data.get("repositories", []))]
        counts["repositories"] = len(repos)

        extras = data.get("memoryExtras", {})
        ev_rows: dict[str, list[dict]] = defaultdict(list)
        for i, e in enumerate(data.get("evidence", [])):
            row = _to_row(Evidence.__table__, e, f"evidence[{i}]")
            ev_rows[row["memory_id"]].append(row)
        memory_rows, evidence_rows = [], []
        for i, rec in enumerate(data.get("memories", [])):
            try:
                memory, evidence = parse_record(RawRecord("store export", i, None, rec, "memory"))
            except RecordError as exc:
                raise ExportError(str(exc)) from None
            mid = memory.memory_id
            row = {c.name: getattr(memory, c.name) for c in Memory.__table__.columns}
            row.update(_to_row(Memory.__table__, extras.get(mid, {}), f"memoryExtras[{mid}]"))
            row["version"] = row.get("version") or 1
            memory_rows.append(row)
            full = ev_rows.pop(mid, [])
            if len(full) != len(evidence):
                raise ExportError(f"memory {mid}: {len(evidence)} evidence in its record but {len(full)} "
                                  "evidence rows; the export is inconsistent")
            for native, stored in zip(evidence, full):
                erow = {c.name: getattr(native, c.name) for c in Evidence.__table__.columns}
                erow.update({k: stored.get(k) for k in _EVIDENCE_EXTRAS})
                evidence_rows.append(erow)
        if ev_rows:
            raise ExportError(f"evidence rows for unknown memory {sorted(ev_rows)[0]!r}")
        history = [_to_row(StateHistory.__table__, h, f"history[{i}]") for i, h in enumerate(data.get("history", []))]
        redacted = _verify_export(memory_rows, evidence_rows, history, data.get("redacted", []))
        if repos:
            session.execute(sa.insert(Repository.__table__), repos)
        if memory_rows:
            session.execute(sa.insert(Memory.__table__), memory_rows)
        if evidence_rows:
            session.execute(sa.insert(Evidence.__table__), evidence_rows)
        counts["memories"], counts["evidence"] = len(memory_rows), len(evidence_rows)

        if history:
            session.execute(sa.insert(StateHistory.__table__), history)
        counts["history"] = len(history)

        tables = data.get("tables", {})
        known = {t.name: t for t in _other_tables()}
        unknown = sorted(set(tables) - set(known))
        if unknown:
            raise ExportError(f"the export holds table {unknown[0]!r}, which this version of memtui does not have")
        for name, table in known.items():
            rows = [_to_row(table, r, f"tables.{name}[{i}]") for i, r in enumerate(tables.get(name, []))]
            if rows:
                session.execute(sa.insert(table), rows)
            counts[name] = len(rows)
        _advance_sequences(session)
        _verify_seal(session, data.get("integrity"))
        _reseal_redacted(session, redacted, actor)
        now = utcnow()
        session.add(MaintenanceJob(job_id=new_event_id("job"), job_type="import_store", status="completed",
                                   selected_count=counts["memories"], updated_count=counts["memories"],
                                   summary={"actor": f"{actor.type}:{actor.id}", "exportedAt": data.get("exportedAt"),
                                            "schemaRevision": data.get("schemaRevision"), "counts": dict(counts)},
                                   started_at=now, completed_at=now))
    return counts


def _verify_export(memory_rows: list[dict], evidence_rows: list[dict], history: list[dict],
                   redacted: list[str]) -> list[str]:
    """Refuse (ExportError naming the memories) an export whose history does not hold, as `memtui check`
    would find it in a store (issue 9, item 4). Returns the redacted memory ids that will be loaded."""
    from memtui.governance.integrity import export_findings

    evidence: dict[str, list[dict]] = defaultdict(list)
    for e in evidence_rows:
        evidence[e["memory_id"]].append(e)
    findings = export_findings(memory_rows, evidence, history, redacted, REDACTED)
    if findings:
        shown = "\n  ".join(findings[:20]) + (f"\n  and {len(findings) - 20} more" if len(findings) > 20 else "")
        raise ExportError(f"the export is forged or inconsistent; nothing was loaded:\n  {shown}")
    present = {m["memory_id"] for m in memory_rows}
    return sorted(set(redacted) & present)


def _verify_seal(session: Session, section) -> None:
    """Refuse (ExportError) an export whose loaded memories, evidence, reviewers, delegations and tokens
    are not what its integrity seal says (issue 21 item 6); then start the store chain of the target."""
    from memtui.governance.integrity import ROW_KINDS, integrity_key, seal_store, verify_export_seal

    findings = verify_export_seal(session.connection(), section, ("memory", *ROW_KINDS))
    if findings:
        shown = "\n  ".join(findings[:20]) + (f"\n  and {len(findings) - 20} more" if len(findings) > 20 else "")
        raise ExportError(f"the export is forged or inconsistent; nothing was loaded:\n  {shown}")
    seal_store(session.connection(), integrity_key())


def _reseal_redacted(session: Session, redacted: list[str], actor: Actor) -> None:
    """A redacted memory arrives without its text: a history note says so and seals the new content."""
    from memtui.review.lifecycle import record_note

    for mid in redacted:
        record_note(session, session.get(Memory, mid), actor,
                    "loaded from a store export with its text redacted (blocked memory)")


def _advance_sequences(session: Session) -> None:
    """On PostgreSQL, move each serial primary key's sequence past the ids just inserted."""
    if session.get_bind().dialect.name != "postgresql":
        return
    for table in SQLModel.metadata.sorted_tables:
        pk = list(table.primary_key.columns)
        if len(pk) == 1 and isinstance(pk[0].type, sa.Integer) and pk[0].autoincrement in (True, "auto"):
            col = pk[0].name
            session.execute(sa.text(
                f"SELECT setval(pg_get_serial_sequence('{table.name}', '{col}'), "
                f"COALESCE((SELECT MAX({col}) FROM {table.name}), 1), "
                f"(SELECT MAX({col}) FROM {table.name}) IS NOT NULL)"))
