"""``memtui import`` for the design's record shapes: validated and written in batches inside one transaction.

Records are streamed (a JSON Lines file a line at a time, :func:`memtui.importers.reader.open_records`)
and written 1,000 at a time with one insert per table (:class:`RecordWriter`, issue 11 item 9), so
memory stays flat at 100,000 records. By default one bad record means nothing is imported (the one
transaction is rolled back); ``skip_invalid`` imports the valid
records and returns the rejects. A record already imported with the same content is left
alone, so importing the same file twice adds nothing the second time; a different record with an
id already in the store is refused. Two records of one import with the same id are refused
naming both places (issue 9, item 5), as are a statement or excerpt over the size limits
(:mod:`memtui.importers.limits`) and a control character in an id or tag.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from queue import Empty
from typing import Any, Callable, Iterable, Iterator

from pydantic import ValidationError
from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from memtui.clock import utcnow
from memtui.domain.invariants import Actor, LifecycleError
from memtui.importers.limits import ImportLimits, current_limits, record_problems, use_limits
from memtui.importers.reader import ImportFileError, JsonlStream, LineDict, RawRecord, open_records
from memtui.importers.schema import AwtlCandidateIn, CandidateIn, EvidenceIn, MemoryIn, record_kind
from memtui.store.models import Evidence, Memory
from memtui.store.rows import RowView, new_row
from memtui.text import visible_line


class RecordError(Exception):
    """A record that was refused: its file, 0-based index (None: the whole file, e.g. a Markdown file
    that is a symlink out of the repository), line, id, the field and what is wrong."""

    def __init__(self, path: str, index: int | None, line: int | None, record_id: str | None,
                 field: str | None, message: str):
        self.path, self.index, self.line = path, index, line
        self.record_id, self.field, self.message = record_id, field, message
        super().__init__(str(self))

    def __str__(self) -> str:
        from memtui.safety.guard import redact_for_display

        where = self.path + (f": line {self.line}" if self.line is not None else "")
        what = (f": record {self.index + 1}" if self.index is not None else "") + (
            f" ({visible_line(self.record_id)})" if self.record_id else "")
        fld = f": field '{self.field}'" if self.field else ""
        return redact_for_display(f"{where}{what}{fld}: {self.message}")  # an id may hold a secret (issue 21)

    def __reduce__(self):  # picklable: it crosses from the process that reads a large file
        return RecordError, (self.path, self.index, self.line, self.record_id, self.field, self.message)


class ImportRefused(Exception):
    """The import wrote nothing: ``errors`` lists every refused record (or the unreadable file)."""

    def __init__(self, errors: list[RecordError | ImportFileError]):
        self.errors = errors
        files = sum(isinstance(e, ImportFileError) for e in errors)
        records = len(errors) - files
        parts = ([f"{files} file(s) could not be read"] if files else []) + (
            [f"{records} record(s) refused"] if records else [])
        head = "; ".join(parts) + "; nothing was imported" if parts else "nothing imported"
        super().__init__(head + "".join(f"\n  {e}" for e in errors))


@dataclass
class ImportReport:
    """What an import did: ids added, ids already present unchanged, and refused records."""

    imported: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    rejected: list[RecordError] = field(default_factory=list)
    #: issue 9: (memory id, secret types) imported blocked; (memory id, field, kind) personal data redacted
    blocked: list[tuple[str, list[str]]] = field(default_factory=list)
    redacted: list[tuple[str, str, str]] = field(default_factory=list)
    #: issue 21 item 3: (memory id, why) of records that arrived approved/active without evidence that
    #: resolves against the repository, imported as candidates (:mod:`memtui.importers.evidence_check`)
    demoted: list[tuple[str, str]] = field(default_factory=list)


def _field_line(data: Any, loc: tuple[Any, ...], default: int | None) -> int | None:
    """Line of the field at ``loc`` inside ``data`` (deepest known line on the way)."""
    line, node = default, data
    for key in loc:
        if isinstance(node, LineDict):
            line = node.lines.get(key, line)
            node = node.get(key)
        elif isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
            node = node[key]
            line = getattr(node, "line", line)
        else:
            break
    return line


def _loc_text(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not str(part).startswith(("function-", "tagged-union")):
            out += ("." if out else "") + str(part)
    return out


def _canonical_hash(data: Any) -> str:
    blob = json.dumps(data, sort_keys=True, default=str, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(blob.encode()).hexdigest()[:32]


def _record_id(data: Any) -> str | None:
    if isinstance(data, dict):
        for key in ("memoryId", "candidateId", "candidate_id"):
            if isinstance(data.get(key), str):
                return data[key]
    return None


def _evidence_rows(memory_id: str, items: list[EvidenceIn]) -> list[dict]:
    return [new_row(
        Evidence, memory_id=memory_id, ordinal=i, type=e.type.value, repository_id=e.repositoryId, path=e.path,
        commit_sha=e.commitSha.lower() if e.commitSha else None,
        line_start=e.lines[0] if e.lines else None, line_end=e.lines[1] if e.lines else None,
        symbol=e.symbol, target=e.target, ref=e.ref, span_hash=e.spanHash, excerpt=e.excerpt,
        status=e.status.value,
    ) for i, e in enumerate(items)]


def _to_rows(kind: str, data: Any, source: str) -> tuple[dict, list[dict]]:
    """Validate ``data`` as ``kind`` and build the column dicts of its rows; raises pydantic ValidationError."""
    if kind == "memory":
        r = MemoryIn.model_validate(data)
        proposer = r.proposedBy
        m = new_row(
            Memory, memory_id=r.memoryId, logical_memory_id=r.logicalMemoryId or r.memoryId, type=r.type,
            statement=r.statement, tenant_id=r.scope.tenantId, repository_id=r.scope.repositoryId,
            module_path=r.scope.modulePath, applies_to=r.scope.appliesTo,
            does_not_apply_to=r.scope.doesNotApplyTo, state=r.state.value, confidence=r.confidence,
            review_state=r.reviewState.value, conflict_state=r.conflictState.value, impact=r.impact,
            origin=r.origin, proposer_type=proposer.type if proposer else None,
            proposer_id=(proposer.id or proposer.workflowRunId) if proposer else None,
            tags=r.tags, invalidation_policy=[dict(p) for p in r.invalidationPolicy],
            created_at=r.createdAt or utcnow(), last_validated_at=r.lastValidatedAt, last_used_at=r.lastUsedAt,
            expires_at=r.expiresAt, expires_after_days=r.expiresAfterDays,
            review_after_days=r.reviewAfterDays, superseded_by=r.supersededBy, import_source=source,
        )
        return m, _evidence_rows(m["memory_id"], r.evidence)
    if kind == "candidate":
        c = CandidateIn.model_validate(data)
        proposer = c.proposedBy
        m = new_row(
            Memory, memory_id=c.candidateId, logical_memory_id=c.candidateId, type=c.proposedType,
            statement=c.statement, tenant_id=c.proposedScope.tenantId,
            repository_id=c.proposedScope.repositoryId, module_path=c.proposedScope.modulePath,
            applies_to=c.proposedScope.appliesTo, does_not_apply_to=c.proposedScope.doesNotApplyTo,
            state="candidate", confidence=c.confidence, review_state="pending", origin="agent",
            proposer_type=proposer.type if proposer else None,
            proposer_id=(proposer.id or proposer.workflowRunId) if proposer else None,
            promotion_status=c.validation.status, tags=c.tags,
            invalidation_policy=[dict(p) for p in c.invalidationPolicy], created_at=c.createdAt or utcnow(),
            expires_after_days=c.expiresAfterDays, review_after_days=c.reviewAfterDays, import_source=source,
        )
        return m, _evidence_rows(m["memory_id"], c.evidence)
    a = AwtlCandidateIn.model_validate(data)
    m = new_row(
        Memory, memory_id=a.candidate_id, logical_memory_id=a.candidate_id, type=a.type, statement=a.proposed_memory,
        tenant_id=a.tenant_id, repository_id=a.repository_id, module_path=a.module_path,
        applies_to=a.scope.applies_to, does_not_apply_to=a.scope.does_not_apply_to, state="candidate",
        confidence=a.confidence, review_state="pending", origin="imported", proposer_type="awtl",
        proposer_id=(a.source_action_ids[0] if a.source_action_ids else None),
        failure_class=a.failure_class.value, failure_type=a.failure_type,
        promotion_status=a.promotion_status, requires_human_review=a.requires_human_review,
        root_cause_summary=a.root_cause_summary, verification_probe=a.verification_probe_candidate,
        source_action_ids=a.source_action_ids, created_at=a.created_at or utcnow(), import_source=source,
    )
    ev = [EvidenceIn(type="ref", ref=ref) for ref in a.evidence_refs]
    return m, _evidence_rows(m["memory_id"], ev)


def parse_record(raw: RawRecord) -> tuple[Memory, list[Evidence]]:
    """Validate one raw record into (memory row, evidence rows); raises :class:`RecordError` naming the field."""
    memory, evidence = parse_record_rows(raw)
    return Memory(**memory), [Evidence(**e) for e in evidence]


def parse_record_rows(raw: RawRecord) -> tuple[dict, list[dict]]:
    """:func:`parse_record` as column dicts (:func:`memtui.store.rows.new_row`): what the import writes."""
    rid = _record_id(raw.data)
    if raw.error is not None:
        raise _as_error(raw, None, raw.error)
    if not isinstance(raw.data, dict):
        raise _as_error(raw, None, f"expected a mapping (a record), got {type(raw.data).__name__}")
    data = raw.data
    for wrapper in ("memory", "candidate"):
        if set(data) == {wrapper} and isinstance(data[wrapper], dict):
            raw = RawRecord(raw.path, raw.index, getattr(data[wrapper], "line", raw.line), data[wrapper], wrapper)
            data = raw.data
            rid = _record_id(data)
    kind = record_kind(data, raw.kind)
    try:
        memory, evidence = _to_rows(kind, data, raw.path)
    except ValidationError as exc:
        errors = exc.errors()
        first = errors[0]
        loc = tuple(first.get("loc", ()))
        message = _message(first)
        for other in errors[1:]:  # every problem of the record, not just the first
            oloc = tuple(other.get("loc", ()))
            message += (f"; also field '{_loc_text(oloc)}' (line {_field_line(data, oloc, raw.line)}): "
                        f"{_message(other)}")
        raise RecordError(raw.path, raw.index, _field_line(data, loc, raw.line), rid,
                          _loc_text(loc) or None, message) from None
    problems = _canonical_scope(kind, memory, evidence) + _text_problems(
        kind, RowView(memory), [RowView(e) for e in evidence])
    if problems:
        (fld, message), rest = problems[0], problems[1:]
        message += "".join(f"; also field '{f}': {m}" for f, m in rest)
        top = fld.split("[")[0].split(".")[0]
        raise RecordError(raw.path, raw.index, _field_line(data, (top,), raw.line), rid, fld, message)
    try:
        memory["import_hash"] = _canonical_hash({"kind": kind, "record": data})
    except (RecursionError, ValueError) as exc:  # nested too deeply to hash
        raise _as_error(raw, None, f"record cannot be read: {exc}") from None
    return memory, evidence


_FIELDS = {  # the record's own field names, per shape, for errors
    "memory": {"statement": "statement", "tags": "tags", "logical": "logicalMemoryId",
               "superseded": "supersededBy", "proposer": "proposedBy.id"},
    "candidate": {"statement": "statement", "tags": "tags", "logical": "candidateId",
                  "superseded": "supersededBy", "proposer": "proposedBy.id"},
    "awtl": {"statement": "proposed_memory", "tags": "tags", "logical": "candidate_id",
             "superseded": "supersededBy", "proposer": "source_action_ids[0]"},
}


_SCOPE_FIELDS = {  # column -> the record's own field, per shape (issue 21, item 2)
    "memory": {"tenant_id": "scope.tenantId", "repository_id": "scope.repositoryId",
               "module_path": "scope.modulePath"},
    "candidate": {"tenant_id": "proposedScope.tenantId", "repository_id": "proposedScope.repositoryId",
                  "module_path": "proposedScope.modulePath"},
    "awtl": {"tenant_id": "tenant_id", "repository_id": "repository_id", "module_path": "module_path"},
}


def _canonical_scope(kind: str, memory: dict, evidence: list[dict]) -> list[tuple[str, str]]:
    """Put the record's tenant, repository, module path and evidence repositories in canonical form
    in place (:mod:`memtui.domain.scopes`, issue 21 item 2); (field, why) of each that cannot be."""
    problems: list[tuple[str, str]] = []
    names = _SCOPE_FIELDS[kind]
    targets = [(memory, col, names[col], col == "module_path") for col in ("tenant_id", "repository_id", "module_path")]
    targets += [(e, "repository_id", f"evidence[{i}].repositoryId", False) for i, e in enumerate(evidence)]
    for row, col, fld, module in targets:
        value = row.get(col)
        if value is None:
            continue
        canonical, detail = _canonical(value, module)
        if detail is None:
            row[col] = canonical
        else:
            problems.append((fld, detail))
    return problems


@lru_cache(maxsize=4096)
def _canonical(value: Any, module: bool) -> tuple[str | None, str | None]:
    """(canonical form, None) of a scope key (``module``: a module path), or (None, why not): the same
    few tenants, repositories and modules come in every record, so each is checked once."""
    from memtui.domain.scopes import NotCanonical, canonical_key, canonical_module_path

    try:
        return (canonical_module_path if module else canonical_key)(value, ""), None
    except NotCanonical as exc:
        return None, exc.detail


def _text_problems(kind: str, memory: RowView, evidence: list[RowView]) -> list[tuple[str, str]]:
    """Size limits and control characters in ids and tags (issue 9, item 5), named by the record's fields."""
    names = _FIELDS[kind]
    return record_problems(
        statement=memory.statement, statement_field=names["statement"],
        excerpts=[(f"evidence[{i}].excerpt", e.excerpt) for i, e in enumerate(evidence)],
        ids=[(names["logical"], memory.logical_memory_id), (names["superseded"], memory.superseded_by),
             (names["proposer"], memory.proposer_id)],
        tags=memory.tags or [], tags_field=names["tags"])


def _id_field(data: Any) -> str:
    if isinstance(data, dict):
        for key in ("memoryId", "candidateId", "candidate_id"):
            if key in data:
                return key
        for wrapper in ("memory", "candidate"):
            if isinstance(data.get(wrapper), dict):
                return _id_field(data[wrapper])
    return "memoryId"


def _place(path: str, line: int | None, index: int) -> str:
    """Where a record is: ``file: line N (record K)``."""
    return path + (f": line {line}" if line is not None else "") + f" (record {index + 1})"


def _message(err: dict) -> str:
    """One pydantic error as a sentence for the user (with the offending value where it helps)."""
    msg = err.get("msg", "invalid")
    if err.get("type") == "missing":
        return "required field is missing"
    if err.get("type") == "extra_forbidden":
        return "unknown field (check the spelling; see docs/record-format.md)"
    if "input" in err and not isinstance(err["input"], (dict, list)):
        msg += f" (got {visible_line(repr(err['input']))})"
    return msg


def _as_error(raw: RawRecord, fld: str | None, message: str) -> "RecordError":
    line = raw.data.lines.get(fld, raw.line) if isinstance(raw.data, LineDict) and fld else raw.line
    return RecordError(raw.path, raw.index, line, _record_id(raw.data), fld, message)


def import_files(engine: Engine, paths: list[Path | str], actor: Actor, *, skip_invalid: bool = False,
                 progress: Callable[[int, int], None] | None = None,
                 repo_dir: Path | str | None = None) -> ImportReport:
    """Import every record of ``paths`` in ONE transaction, streamed (:class:`RecordWriter`).

    ``repo_dir``: the checkout evidence is checked against (default: each repository's registered
    checkout; issue 21 item 3, :mod:`memtui.importers.evidence_check`). Returns an :class:`ImportReport`. Raises :class:`ImportRefused` (nothing written) when a
    file cannot be read, or when any record is invalid and ``skip_invalid`` is False.
    ``progress(done, total)`` is called per batch written. Each new memory gets a creation event
    with ``actor``.
    """
    sources: list[Iterable[RawRecord]] = []
    file_errors: list[ImportFileError] = []
    for p in paths:
        try:
            sources.append(open_records(p))
        except ImportFileError as exc:
            file_errors.append(exc)
    if file_errors:
        raise ImportRefused(file_errors)
    report = ImportReport()
    with Session(engine) as session, session.begin():
        writer = RecordWriter(session, actor, report, skip_invalid=skip_invalid, progress=progress,
                              repo_dir=repo_dir)
        writer.write_all(sources)
        if report.rejected and not skip_invalid:
            session.rollback()
            raise ImportRefused(report.rejected)
    return report


#: A JSON Lines file at least this large is read, validated and screened by a second process while this
#: one writes (issue 11, item 9): the two halves of the work take about as long, so on two free cores
#: the import takes about half as long. Smaller files stay in one process, and so does everything when
#: forking is not safe or not possible (:func:`_may_fork`).
PARALLEL_BYTES = 4_000_000

#: Records validated and written per batch (issue 11, item 9); read when a :class:`RecordWriter` is made.
BATCH = 1000


@dataclass
class Prepared:
    """One record validated and screened (:func:`prepare`), what the writer needs of it: where it is,
    its id field and that field's line (for a duplicate), its rows (redacted) and what screening found."""

    path: str
    index: int
    line: int | None
    id_field: str
    id_line: int | None
    memory: dict
    evidence: list[dict]
    screen: Any


def prepare(raw: RawRecord, personal: bool = True) -> Prepared | RecordError:
    """:func:`parse_record_rows` and :func:`memtui.safety.guard.screen_memory` of one record (pure: no
    store), or the :class:`RecordError` refusing it."""
    from memtui.safety.guard import SecretRefused, screen_memory

    try:
        memory, evidence = parse_record_rows(raw)
    except RecordError as err:
        return err
    try:
        screen = screen_memory(RowView(memory), [RowView(e) for e in evidence], personal=personal)
    except SecretRefused as exc:  # an id, scope key or evidence repository holding a secret (issue 21 item 4)
        return RecordError(raw.path, raw.index, raw.line, _record_id(raw.data), exc.field, str(exc))
    id_field = _id_field(raw.data)
    return Prepared(raw.path, raw.index, raw.line, id_field, _field_line(raw.data, (id_field,), raw.line),
                    memory, evidence, screen)


def _may_fork() -> bool:
    """Whether a reader child may be forked: two CPUs or more, ``fork`` available, and no other thread in
    this process (a TUI or server worker thread could hold a lock the child would inherit held)."""
    return ((os.cpu_count() or 1) >= 2 and "fork" in multiprocessing.get_all_start_methods()
            and threading.active_count() == 1)


def _prepare_all(records: Iterable[RawRecord], personal: bool, limits: ImportLimits, out, batch: int) -> None:
    """Child process: :func:`prepare` every record of ``records`` and put them on ``out`` in lists of
    ``batch``; then ``None`` (done) or the :class:`ImportFileError` that stopped the reading."""
    try:
        with use_limits(limits):
            chunk: list = []
            for raw in records:
                chunk.append(prepare(raw, personal))
                if len(chunk) >= batch:
                    out.put(chunk)
                    chunk = []
            out.put(chunk)
        out.put(None)
    except ImportFileError as exc:
        out.put(exc)


def _prepared_in_child(records: JsonlStream, personal: bool, batch: int) -> Iterator[Prepared | RecordError]:
    """:func:`prepare` of every record of ``records``, computed in a forked child process a few batches
    ahead of the caller (at most 4 batches wait: memory stays flat). Raises ImportFileError as reading does."""
    from memtui.processes import worker_process

    queue = multiprocessing.get_context("fork").Queue(maxsize=4)
    # ends with this process, even killed (issue 21 item 7)
    child = worker_process(_prepare_all, (records, personal, current_limits(), queue, batch), "memtui-import-reader")
    child.start()
    try:
        while True:
            try:
                item = queue.get(timeout=1.0)
            except Empty:
                if not child.is_alive():
                    raise ImportFileError(records.path, f"the process reading it stopped (exit {child.exitcode})")
                continue
            if item is None:
                return
            if isinstance(item, ImportFileError):
                raise item
            yield from item
    finally:
        if child.is_alive():
            child.terminate()
        child.join()


class RecordWriter:
    """Validates and writes native records in batches of ``batch`` (:data:`BATCH`) inside the caller's transaction
    (issue 11, item 9): memory stays flat however many records come, and one bad record anywhere
    still means nothing is written, since the caller rolls the one transaction back.

    Per record (:meth:`add`, given :func:`prepare`'s outcome): a second record with an id already seen
    in this import is refused naming both places (file, line, record). Per batch: one query for the
    ids already in the store (same ``import_hash``: ``report.unchanged``; other content: refused),
    the creation checks and sealed first event (:func:`memtui.review.lifecycle.admit_row`), then one
    insert per table (:func:`memtui.review.lifecycle.insert_created`) and the secret findings of blocked
    ones. Once a record is refused without ``skip_invalid`` the rest is still checked (every error is
    reported) but no longer written. A JSON Lines file of :data:`PARALLEL_BYTES` or more is prepared in
    a second process (:func:`_prepared_in_child`), with the same outcome record by record. Before the
    creation checks, each batch's evidence is checked against the repository (``repo_dir``, else the
    registered checkouts; :class:`memtui.importers.evidence_check.ImportEvidence`, issue 21 item 3):
    the file's evidence status is replaced by what the check found, and a record arriving live whose
    evidence does not resolve is written as a candidate, listed in ``report.demoted``.
    ``progress(done, total)``: records handled, records known so far.
    """

    def __init__(self, session: Session, actor: Actor, report: ImportReport, *, personal: bool = True,
                 skip_invalid: bool = False, batch: int | None = None,
                 progress: Callable[[int, int], None] | None = None, repo_dir: Path | str | None = None):
        from memtui.importers.evidence_check import ImportEvidence

        self.session, self.actor, self.report = session, actor, report
        self.evidence_check = ImportEvidence(session, repo_dir)
        self.personal, self.skip_invalid, self.progress = personal, skip_invalid, progress
        self.batch = batch or BATCH
        self._seen: dict[str, tuple[str, int | None, int]] = {}  # id -> (file, line, index) of its record
        self._pending: list[Prepared] = []
        self.done = 0

    def write_all(self, sources: list[Iterable[RawRecord]]) -> None:
        """:meth:`add` every record of every source, then :meth:`flush`. A source that fails while
        being read (:class:`ImportFileError`) raises :class:`ImportRefused` naming it."""
        with _sqlite_cache(self.session):
            for records in sources:
                try:
                    if isinstance(records, JsonlStream) and records.size >= PARALLEL_BYTES and _may_fork():
                        prepared: Iterable[Prepared | RecordError] = _prepared_in_child(
                            records, self.personal, self.batch)
                    else:
                        prepared = (prepare(raw, self.personal) for raw in records)
                    for item in prepared:
                        self.add(item)
                except ImportFileError as exc:
                    raise ImportRefused([exc]) from None
            self.flush()

    def add(self, item: Prepared | RecordError) -> None:
        """Take one :func:`prepare` outcome: refuse it, or queue it for the next :meth:`flush`."""
        if isinstance(item, RecordError):
            self.report.rejected.append(item)
            self.done += 1
            return
        mid = item.memory["memory_id"]
        first = self._seen.get(mid)
        if first is not None:
            self.report.rejected.append(RecordError(
                item.path, item.index, item.id_line, mid, item.id_field,
                f"duplicate id: {_place(*first)} has the same id; each record needs its own id"))
            self.done += 1
            return
        self._seen[mid] = (item.path, item.line, item.index)
        self._pending.append(item)
        if len(self._pending) >= self.batch:
            self.flush()

    def flush(self) -> None:
        """Check and write the records added since the last flush."""
        from memtui.review.lifecycle import admit_row, insert_created
        from memtui.safety.guard import blocked_note, screened_import

        pending, self._pending = self._pending, []
        if not pending:
            return
        existing = existing_hashes(self.session, [p.memory["memory_id"] for p in pending])
        report, write = self.report, not (self.report.rejected and not self.skip_invalid)
        memories: list[dict] = []
        evidence_rows: list[dict] = []
        events: list[dict] = []
        screened = []
        demoted = self.evidence_check.check([(p.memory, p.evidence) for p in pending
                                             if p.memory["memory_id"] not in existing])
        names: dict[str, str] = {}
        for p in pending:
            mid = p.memory["memory_id"]
            if mid in existing:
                if existing[mid] == p.memory["import_hash"]:
                    report.unchanged.append(mid)
                else:
                    report.rejected.append(RecordError(
                        p.path, p.index, p.line, mid, "memoryId",
                        "already in the store with different content; give the new version its own "
                        "memoryId (same logicalMemoryId) so the old one can be superseded"))
                continue
            why = f"; {demoted[mid]}" if mid in demoted else ""
            try:
                event = admit_row(self.session, p.memory, p.evidence, self.actor,
                                  f"imported from {names.get(p.path) or names.setdefault(p.path, Path(p.path).name)} "
                                  f"record {p.index + 1}" + why
                                  + blocked_note(p.screen))
            except LifecycleError as exc:
                report.rejected.append(RecordError(p.path, p.index, p.line, mid, "state", str(exc)))
                continue
            memories.append(p.memory)
            evidence_rows += p.evidence
            events.append(event)
            screened.append((mid, p.screen))
        write = write and not (report.rejected and not self.skip_invalid)
        if write:
            insert_created(self.session, memories, evidence_rows, events)
            for mid, screen in screened:
                screened_import(self.session, mid, screen, self.actor, report)
                report.imported.append(mid)
                if mid in demoted:
                    report.demoted.append((mid, demoted[mid]))
            self.session.flush()  # the secret findings, so the session holds nothing between batches
        self.done += len(pending)
        if self.progress:
            self.progress(self.done, self.done + len(self._pending))


@contextmanager
def _sqlite_cache(session: Session, kib: int = 65536):
    """A SQLite page cache of ``kib`` KiB for this connection while the block runs (default 2 MiB: a
    large import's index pages would be spilled and re-read), restored after; nothing on PostgreSQL."""
    if session.get_bind().dialect.name != "sqlite":
        yield
        return
    before = session.execute(text("PRAGMA cache_size")).scalar()
    session.execute(text(f"PRAGMA cache_size=-{int(kib)}"))
    try:
        yield
    finally:
        session.execute(text(f"PRAGMA cache_size={int(before)}"))


def existing_hashes(session: Session, ids: list[str]) -> dict[str, str | None]:
    """memory id -> ``import_hash`` of those of ``ids`` already in the store (500 ids a query)."""
    found: dict[str, str | None] = {}
    for i in range(0, len(ids), 500):
        for mid, h in session.exec(select(Memory.memory_id, Memory.import_hash)
                                   .where(Memory.memory_id.in_(ids[i:i + 500]))):
            found[mid] = h
    return found
