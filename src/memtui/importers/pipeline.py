"""``memtui import`` (the import pipeline) for the memory formats agents actually write (issue 5, "Import" items 1-4).

Formats: ``native`` (docs/record-format.md, :mod:`memtui.importers.native`), ``markdown``
(CLAUDE.md, AGENTS.md, Cursor/Claude/Cline rules, memory banks, a Claude auto-memory folder:
:mod:`memtui.importers.markdown`), ``mcp`` (the MCP memory server's knowledge graph:
:mod:`memtui.importers.mcp`), ``mem0`` (``get_all`` exports: :mod:`memtui.importers.mem0`) and
``letta`` (agent files: :mod:`memtui.importers.letta`).

Public API: :func:`detect_format` and :func:`import_paths`.

Every foreign record becomes a memory row with ``origin`` ``imported`` (so the promotion
invariant never lets it be promoted automatically), ``state`` ``candidate``, ``review_state``
``pending``, evidence rows, and its provenance: ``import_source`` is ``"<format>:<source>#L<line>"``
(``source`` is the path relative to the repository root when the file is inside it; otherwise,
for Markdown, ``<folder given>/<path inside it>`` such as ``memory/MEMORY.md``, and for the other
formats the absolute path) and the tags ``import:<format>``, ``source:<source>``, ``line:<line>``.

Ids and idempotency
-------------------
* ``memory_id`` = ``imp-<format>-<24 hex>``: a SHA-256 of the format, tenant, repository, the
  record's *anchor* and its content (statement, type, scope, content tags, expiry, review flag).
  The anchor is what identifies the record inside its source: for Markdown the
  repository-relative path plus the normalised text (and an occurrence number for repeated
  lines), for MCP the entity plus the normalised observation, for Mem0 the Mem0 id, for Letta
  the agent and block label (plus the normalised bullet). Line numbers are not part of it, so
  a line that only moved keeps its id.
* ``import_hash`` = SHA-256 of the content plus the identity of the evidence (type, path,
  symbol, ref, anchored at a commit or not; not line numbers, not the commit).
* Same id and same hash: ``unchanged`` (nothing written). Importing the same files twice adds
  nothing. Same id, other hash (the evidence changed, e.g. the file was committed since, or a
  named path appeared): a still-``candidate`` memory gets its evidence replaced with a history
  note (``refreshed``); a reviewed one is left alone.
* A record whose text (or scope) changed gets a new id, because the id hashes the content.
  Choice: **supersede, never edit in place.** The previous candidates of the same source are
  aligned with the new records (``difflib`` over the ids in line order, per group: the whole file
  for Markdown, where only a removed run of lines pairs with the run that replaced it; the entity
  for MCP, the Mem0 id, the Letta block, where whatever left pairs with whatever arrived, in
  order). A previous memory paired with a
  new record is moved ``candidate -> superseded`` (``superseded_by`` = the new id, reason naming
  the file and line) and the new candidate inherits its ``logical_memory_id``; a previous
  candidate whose record disappeared from the source is moved ``candidate -> invalidated``
  (``withdrawn``). Only memories still in state ``candidate`` are touched: anything a reviewer
  or maintenance already moved is left alone (reported in ``left_alone``), the new candidate is
  created beside it. A file that had invalid records (with ``skip_invalid``) is never used to
  supersede or withdraw, so a broken line cannot retire a good memory. Superseding keeps every
  version's exact text and evidence in the store and the audit trail, and a fresh store importing
  the final file gets the same memory ids as the store that followed every edit (except after a
  revert: a record whose memory a re-import retired and which comes back gets the revision id
  ``<id>-r2``, ``-r3``, ... with the same logical id).

Everything is written in ONE transaction with a creation event per memory
(:func:`memtui.review.lifecycle.create_memory`). Errors name the file and line
(:class:`memtui.importers.native.RecordError`); by default one invalid record means nothing is
written (:class:`memtui.importers.native.ImportRefused`); ``skip_invalid`` imports the rest and
returns the rejects, as the native importer does.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from sqlalchemy import delete, or_
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from memtui.clock import utcnow
from memtui.domain.invariants import Actor, InvariantViolation, LifecycleError
from memtui.domain.scopes import NotCanonical, canonical_key, canonical_module_path
from memtui.importers.limits import too_big
from memtui.importers.native import ImportRefused, ImportReport, RecordError, RecordWriter
from memtui.importers.reader import ImportFileError, RawRecord, open_records, read_bytes
from memtui.importers.records import (GROUP_TAG, ImportContext, Item, Parsed, _group_of, record_error,
                                      screen_items, tag)
from memtui.review.lifecycle import create_memory, record_note, transition
from memtui.store.models import Evidence, Memory

__all__ = ["FORMATS", "FormatImportReport", "detect_format", "import_paths"]

FORMATS: tuple[str, ...] = ("native", "markdown", "mcp", "mem0", "letta", "awtl")
#: ``awtl`` (promotion-gate candidates, ``awtl.memory_candidate.v2``) is one of the native record
#: shapes (docs/record-format.md): the native reader takes it.
_ALIASES = {"awtl": "native"}
#: States of a previous import that re-import no longer aligns against (already retired).
_RETIRED = frozenset({"superseded", "invalidated", "rejected", "archived", "expired", "deprecated", "blocked"})
_GROUP_TAG = GROUP_TAG
_INSTRUCTION_NAMES = frozenset({"claude.md", "claude.local.md", "agents.md", "agents.override.md", "agent.md",
                                "gemini.md", "memory.md", ".clinerules", ".cursorrules", ".windsurfrules",
                                "copilot-instructions.md"})


@dataclass
class FormatImportReport(ImportReport):
    """:class:`ImportReport` plus what a re-import did to earlier imports of the same sources.

    ``superseded``: (old id, new id) pairs; ``withdrawn``: candidates whose record disappeared
    (now ``invalidated``); ``corrected``: (earlier id, later id) within one memory file;
    ``refreshed``: candidates whose evidence was replaced; ``left_alone``: reviewed memories whose
    source changed (a new candidate was created beside them); ``formats``: file -> format;
    ``warnings``: things the user should know that are not errors; ``skipped``: lines read but not
    imported, as (source, line, why).
    """

    superseded: list[tuple[str, str]] = field(default_factory=list)
    withdrawn: list[str] = field(default_factory=list)
    corrected: list[tuple[str, str]] = field(default_factory=list)
    refreshed: list[str] = field(default_factory=list)
    left_alone: list[str] = field(default_factory=list)
    formats: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    skipped: list[tuple[str, int, str]] = field(default_factory=list)


def _sha(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def _canon(data: Any) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def _compute_ids(it: Item) -> None:
    content = {
        "statement": re.sub(r"\s+", " ", it.statement).strip(), "type": it.type, "tenant": it.tenant_id,
        "repository": it.repository_id, "module": it.module_path, "appliesTo": sorted(it.applies_to),
        "doesNotApplyTo": sorted(it.does_not_apply_to), "tags": sorted(set(it.tags)),
        "expiresAt": it.expires_at.isoformat() if it.expires_at else None, "review": it.requires_human_review,
    }
    blob = _canon(content)
    it.memory_id = f"imp-{it.fmt}-" + _sha(it.fmt, it.tenant_id, it.repository_id or "", it.anchor, blob)[:24]
    if it.logical_key is not None:
        it.logical_id = f"imp-{it.fmt}-" + _sha("logical", it.fmt, it.tenant_id, it.repository_id or "",
                                                 it.logical_key)[:24]
    else:
        it.logical_id = it.memory_id
    ident = sorted({(e.get("type"), e.get("path"), e.get("symbol"), e.get("target"), e.get("ref"),
                     bool(e.get("commit_sha"))) for e in it.evidence}, key=lambda t: tuple(str(x) for x in t))
    it.import_hash = "sha256:" + _sha(blob, _canon(ident))[:32]


def _provenance_tags(it: Item) -> list[str]:
    tags = list(dict.fromkeys(it.tags + it.state_tags))
    for t in (f"import:{it.fmt}", tag("source", it.source)) + ((f"line:{it.line}",) if it.line else ()):
        if t not in tags:
            tags.append(t)
    return tags


def _evidence_rows(memory_id: str, specs: list[dict[str, Any]]) -> list[Evidence]:
    return [Evidence(memory_id=memory_id, ordinal=i, **spec) for i, spec in enumerate(specs)]


# -- detection -------------------------------------------------------------------------------------

def _sniff_doc(doc: Any) -> str | None:
    if isinstance(doc, dict):
        if isinstance(doc.get("results"), list):
            return "mem0"
        if any(k in doc for k in ("agents", "core_memory", "memory_blocks")) or (
                isinstance(doc.get("memory"), dict) and "blocks" in doc["memory"]) or (
                isinstance(doc.get("blocks"), list) and "entities" not in doc):
            return "letta"
        if isinstance(doc.get("entities"), list) or isinstance(doc.get("relations"), list):
            return "mcp"
        if doc.get("type") in ("entity", "relation"):
            return "mcp"
        if any(k in doc for k in ("memories", "candidates", "memoryId", "candidateId", "candidate_id", "schema",
                                  "memory", "candidate")):
            if "memory" in doc and isinstance(doc.get("memory"), str) and "memoryId" not in doc:
                return "mem0"
            return "native"
        return None
    if isinstance(doc, list):
        first = next((d for d in doc if isinstance(d, dict)), None)
        if first is None:
            return "native" if not doc else None
        if first.get("type") in ("entity", "relation"):
            return "mcp"
        if isinstance(first.get("memory"), str) and not any(k in first for k in ("memoryId", "candidateId")):
            return "mem0"
        return "native"
    return None


def _sniff_lines(lines: Iterable[str]) -> str | None:
    seen = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            continue
        kind = _sniff_doc(data)
        if kind in ("mcp", "mem0"):
            return kind
        seen += 1
        if seen >= 20:
            break
    return "native" if seen else None


def _sniff_jsonl_head(p: Path) -> str | None:
    """:func:`_sniff_lines` reading only the head of a JSON Lines file (issue 11, item 9: a 100 MB file
    is not read whole to be told apart); None when the file may be one JSON document (its first
    nonblank line is not JSON on its own, or it is the only one): the caller then reads it whole."""
    problem = too_big("the file", p.stat().st_size, "file_bytes")
    if problem:
        raise ImportFileError(p, problem)
    with p.open("rb") as f:
        nonblank = (line for raw in f if (line := raw.decode("utf-8", "replace")).strip())
        head = list(itertools.islice(nonblank, 2))
        if len(head) < 2:
            return None
        try:
            json.loads(head[0])
        except (json.JSONDecodeError, RecursionError):
            return None
        return _sniff_lines(itertools.chain(head, nonblank))


def detect_format(path: Path | str) -> str:
    """The format of ``path``: ``native``, ``markdown``, ``mcp``, ``mem0`` or ``letta``.

    By name first (``*.af`` Letta; YAML native; CLAUDE.md, CLAUDE.local.md, AGENTS.md,
    ``.claude/rules/*.md``, ``.cursor/rules/*.mdc``, ``.clinerules``, ``memory-bank/*.md``,
    MEMORY.md, any ``.md``/``.mdc``/``.txt``, or a folder: Markdown), then by content for JSON
    and JSON Lines: lines of ``{"type": "entity"|"relation"}`` (also in a ``.json`` file) are MCP;
    ``{"results": [...]}`` or a list of items with a ``memory`` text are Mem0; a document with
    ``agents``/``blocks``/``core_memory`` (also inside a JSON-encoded string) is Letta; the rest
    is native. Raises :class:`ImportFileError` for a missing or unreadable file.
    """
    p = Path(path)
    if p.is_dir():
        return "markdown"
    if not p.exists():
        raise ImportFileError(p, "no such file")
    name, suffix = p.name.casefold(), p.suffix.casefold()
    if suffix == ".af":
        return "letta"
    if suffix in (".yaml", ".yml"):
        return "native"
    if suffix == ".jsonl" and (kind := _sniff_jsonl_head(p)) is not None:
        return kind
    if suffix in (".json", ".jsonl"):
        text = read_bytes(p).decode("utf-8", "replace")  # sniffing only: the reader names bad bytes
        if not text.strip():
            return "native"
        try:
            doc = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            return _sniff_lines(text.splitlines()) or "native"
        for _ in range(3):
            if not isinstance(doc, str):
                break
            try:
                doc = json.loads(doc)
            except (json.JSONDecodeError, RecursionError):
                break
        return _sniff_doc(doc) or "native"
    if name in _INSTRUCTION_NAMES or suffix in (".md", ".mdc", ".markdown", ".txt") or suffix == "":
        return "markdown"
    raise ImportFileError(p, f"cannot tell the format of a {suffix!r} file; pass --format "
                          f"({'|'.join(FORMATS)})")


# -- the repository --------------------------------------------------------------------------------

def _git_toplevel(start: Path) -> Path | None:
    from memtui.sources.gitdiff import GitError, GitRepo

    try:
        return GitRepo(start).toplevel()
    except GitError:
        return None


def _context(paths: list[Path], repo_dir: Path | str | None, repository_id: str | None,
             need_repo: bool) -> ImportContext:
    """The repository of the import: ``repo_dir`` (its git top level), else, for Markdown, the
    checkout holding the first file. HEAD is read once; a folder without commits has none."""
    from memtui.sources.gitdiff import GitError, GitRepo

    root: Path | None = None
    if repo_dir is not None:
        rd = Path(repo_dir).expanduser()
        if not rd.is_dir():
            raise ImportFileError(rd, "--repo is not a folder")
        root = _git_toplevel(rd)
        if root is None:  # evidence needs a commit to be checked against (issue 9, item 5)
            raise ImportFileError(rd, "--repo is not a git checkout")
    elif need_repo:
        for p in paths:
            start = p if p.is_dir() else p.parent
            if start.exists():
                root = _git_toplevel(start)
                if root is not None:
                    break
    head = None
    if root is not None:
        try:
            head = GitRepo(root).head()
        except GitError:
            head = None
        if head is None and repo_dir is not None:
            raise ImportFileError(root, "--repo has no commit yet: commit, then import")
    rid = repository_id or (root.name if root is not None else None)
    try:  # issue 21, item 2: one spelling of the repository key
        rid = canonical_key(rid, "--repository-id" if repository_id else "repository (the checkout's name)")
    except NotCanonical as exc:
        raise ImportRefused([RecordError(str(repo_dir or paths[0]), None, None, None, exc.field, exc.detail)]) from None
    return ImportContext(root, head, rid)


def _canonical_items(parsed: Parsed) -> None:
    """Put each item's tenant, repository and module path in canonical form (issue 21, item 2); an
    item whose scope cannot be is moved to ``parsed.errors`` naming the field (its source is then
    incomplete, so a re-import retires nothing because of it)."""
    keep: list[Item] = []
    for it in parsed.items:
        try:
            it.tenant_id = canonical_key(it.tenant_id, "tenant")
            it.repository_id = canonical_key(it.repository_id, "repository")
            it.module_path = canonical_module_path(it.module_path, "modulePath")
        except NotCanonical as exc:
            parsed.errors.append(record_error(it.path, it.index, it.line, None, exc.field, exc.detail))
            parsed.sources[(it.fmt, it.source)] = False
            continue
        keep.append(it)
    parsed.items = keep


# -- import ----------------------------------------------------------------------------------------

def _parse(fmt: str, files: list[Path], ctx: ImportContext) -> Parsed:
    if fmt == "markdown":
        from memtui.importers.markdown import parse_markdown

        return parse_markdown(files, ctx)
    if fmt == "mcp":
        from memtui.importers.mcp import parse_mcp

        return parse_mcp(files, ctx)
    if fmt == "mem0":
        from memtui.importers.mem0 import parse_mem0

        return parse_mem0(files, ctx)
    if fmt == "letta":
        from memtui.importers.letta import parse_letta

        return parse_letta(files, ctx)
    raise ValueError(f"unknown format {fmt!r}")


def import_paths(engine: Engine, paths: list[Path | str], actor: Actor, *, fmt: str = "auto",
                 repo_dir: Path | str | None = None, repository_id: str | None = None,
                 skip_invalid: bool = False, keep_personal_data: bool = False,
                 progress: Callable[[int, int], None] | None = None) -> FormatImportReport:
    """Import ``paths`` (files, or folders of Markdown instruction files) in ONE transaction.

    ``fmt``: ``auto`` (:func:`detect_format` per path) or one of :data:`FORMATS` for all.
    ``repo_dir``: the git checkout Markdown evidence is anchored in (default: the checkout
    holding the files, for Markdown); ``repository_id``: the repository scope (default: the
    checkout's folder name; without a checkout, Markdown/MCP/Mem0/Letta records are tenant-wide
    unless given). Returns a :class:`FormatImportReport`. Raises :class:`ImportRefused`
    (nothing written) when a file cannot be read, or a record is invalid and ``skip_invalid`` is
    False. ``progress(done, total)`` is called per record written. Secrets in a record are
    redacted and the memory arrives ``blocked``; personal data is redacted unless
    ``keep_personal_data`` (issue 9; :mod:`memtui.safety.guard`), both listed in the report.
    """
    if fmt != "auto" and fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected auto or one of {', '.join(FORMATS)}")
    fmt = _ALIASES.get(fmt, fmt)
    files = [Path(p) for p in paths]
    report = FormatImportReport()
    file_errors: list[ImportFileError] = []
    by_format: dict[str, list[Path]] = {}
    for p in files:
        try:
            kind = fmt if fmt != "auto" else detect_format(p)
        except ImportFileError as exc:
            file_errors.append(exc)
            continue
        if not p.exists():
            file_errors.append(ImportFileError(p, "no such file"))
            continue
        by_format.setdefault(kind, []).append(p)
    if file_errors:
        raise ImportRefused(list(file_errors))

    ctx = _context(files, repo_dir, repository_id, need_repo="markdown" in by_format)
    parsed = Parsed()
    anchored: list[Item] = []  # items with references already stale at import (revalidated at once below)
    natives: list[Iterable[RawRecord]] = []  # streamed into the store inside the transaction
    for kind in sorted(by_format):
        group = by_format[kind]
        if kind == "native":
            for p in group:
                try:
                    natives.append(open_records(p))
                except ImportFileError as exc:
                    file_errors.append(exc)
                    continue
                report.formats[str(p)] = "native"
            continue
        try:
            got = _parse(kind, group, ctx)
            if kind == "markdown":  # references already stale at import: anchored where lint anchors them
                from memtui.importers.history_anchor import anchor_in_history

                anchored += anchor_in_history(got, group, ctx)
            parsed.extend(got)
        except ImportFileError as exc:
            file_errors.append(exc)
    screen_items(parsed)  # size limits, control characters in ids and tags (issue 9, item 5)
    _canonical_items(parsed)  # one spelling of every scope (issue 21, item 2)
    if file_errors:
        raise ImportRefused(list(file_errors))
    report.formats.update(parsed.files)
    report.warnings += parsed.warnings
    report.skipped += parsed.skipped
    report.rejected += parsed.errors

    items: list[Item] = []
    seen: dict[str, Item] = {}
    for it in parsed.items:
        _compute_ids(it)
        if it.memory_id in seen:
            first = seen[it.memory_id]
            if (first.fmt, first.source) != (it.fmt, it.source):
                report.warnings.append(f"{it.path}: line {it.line}: same record as {first.path} line {first.line}; "
                                       "imported once")
            continue
        seen[it.memory_id] = it
        items.append(it)
    by_file: dict[tuple[str, str], list[Item]] = {}
    for it in items:
        by_file.setdefault((it.fmt, it.source), []).append(it)

    with Session(engine) as session, session.begin():
        items = _drop_exported_lines(session, items, by_file, report)
        _write(session, items, by_file, parsed.sources, natives, actor, report, progress,
               personal=not keep_personal_data, skip_invalid=skip_invalid, repo_root=ctx.repo_root)
        if report.rejected and not skip_invalid:
            session.rollback()
            raise ImportRefused(report.rejected)
    if anchored and ctx.repo_root is not None and ctx.repository_id:
        # flagged at once, as maintenance would flag them (issue 23, item 1): the revalidation job on them
        from memtui.maintenance.revalidation_job import run_revalidation

        run_revalidation(engine, ctx.repository_id, ctx.repo_root, utcnow(),
                         memory_ids=sorted({it.memory_id for it in anchored if it.memory_id}))
    return report


_EXPORT_MARKER = re.compile(r"<!--\s*memtui:(\S+?)\s*-->")


def _drop_exported_lines(session: Session, items: list[Item], by_file: dict[tuple[str, str], list[Item]],
                         report: FormatImportReport) -> list[Item]:
    """Lines ``memtui export agents-md`` wrote carry ``<!-- memtui:ID -->``: when that memory is in the
    store, the line is that memory, not a new candidate (importing an export adds nothing)."""
    marked = {id(it): m.group(1) for it in items if (m := _EXPORT_MARKER.search(it.statement))}
    if not marked:
        return items
    present = set(_existing(session, sorted(set(marked.values()))))
    keep = []
    for it in items:
        mid = marked.get(id(it))
        if mid is not None and mid in present:
            report.unchanged.append(mid)
            continue
        keep.append(it)
    kept = {id(it) for it in keep}
    for key, its in by_file.items():
        by_file[key] = [it for it in its if id(it) in kept]
    return keep


def _existing(session: Session, ids: list[str]) -> dict[str, tuple[str, str | None]]:
    found: dict[str, tuple[str, str | None]] = {}
    for i in range(0, len(ids), 500):
        for mid, state, h in session.exec(select(Memory.memory_id, Memory.state, Memory.import_hash)
                                          .where(Memory.memory_id.in_(ids[i:i + 500]))):
            found[mid] = (state, h)
    return found


def _line_of_source(import_source: str | None) -> int:
    m = re.search(r"#L(\d+)$", import_source or "")
    return int(m.group(1)) if m else 0


def _previous(session: Session, fmt: str, source: str) -> list[Memory]:
    """Memories an earlier import of ``source`` created that are not retired, in line order."""
    prefix = f"{fmt}:{source}"
    rows = session.exec(select(Memory).where(
        Memory.origin == "imported",
        or_(Memory.import_source == prefix, Memory.import_source.startswith(prefix + "#L", autoescape=True)))).all()
    rows = [m for m in rows if m.state not in _RETIRED]
    return sorted(rows, key=lambda m: (_line_of_source(m.import_source), m.memory_id))


#: Review states that record a human decision: such a memory is never replaced by a revision.
_DECIDED = frozenset({"approved", "rejected", "changes_requested"})


def _next_revisions(session: Session, items: list[Item]) -> None:
    """A record whose memory an earlier re-import retired (superseded or withdrawn, no human decision)
    and which is back in its source (a reverted edit, a restored line) gets the next free revision id
    ``<id>-r2``, ``-r3``, ...: the retired memory stays as it was, the record is a candidate again, and
    the same import run twice still adds nothing (the revision is then alive and unchanged)."""
    todo = [it for it in items if it.corrected_by is None]
    rows: dict[str, tuple[str, str]] = {}
    for i in range(0, len(todo), 500):
        ids = [it.memory_id for it in todo[i:i + 500]]
        for mid, state, review in session.exec(select(Memory.memory_id, Memory.state, Memory.review_state)
                                               .where(Memory.memory_id.in_(ids))):
            rows[mid] = (state, review)

    def retired(mid: str) -> bool:
        if mid not in rows:
            row = session.exec(select(Memory.state, Memory.review_state).where(Memory.memory_id == mid)).first()
            if row is None:
                return False
            rows[mid] = (row[0], row[1])
        state, review = rows[mid]
        return state in ("superseded", "invalidated") and review not in _DECIDED

    for it in todo:
        base, n = it.memory_id, 1
        while retired(it.memory_id):
            n += 1
            it.memory_id = f"{base}-r{n}"


def _write(session: Session, items: list[Item], by_file: dict[tuple[str, str], list[Item]],
           sources: dict[tuple[str, str], bool], natives: list[Iterable[RawRecord]],
           actor: Actor, report: FormatImportReport, progress: Callable[[int, int], None] | None,
           personal: bool = True, skip_invalid: bool = False, repo_root: Path | None = None) -> None:
    from memtui.safety.guard import SecretRefused, blocked_note, screen_memory, screened_import

    now = utcnow()
    _next_revisions(session, items)
    existing = _existing(session, [it.memory_id for it in items])
    new_ids = {it.memory_id for it in items}

    # 1. align each source's previous memories with its records (before anything is written)
    replaces: dict[str, Memory] = {}  # new id -> the previous memory it supersedes
    withdrawn: list[Memory] = []
    for key in sorted(set(sources) | set(by_file)):
        fmt, source = key
        its = by_file.get(key, [])
        if not sources.get(key, True):
            continue  # the source had invalid records: never used to supersede or withdraw
        previous = _previous(session, fmt, source)
        if not previous:
            continue
        prefix = _GROUP_TAG.get(fmt)
        groups: dict[str, tuple[list[Memory], list[Item]]] = {}
        for m in previous:
            groups.setdefault(_group_of(prefix, m.tags or []), ([], []))[0].append(m)
        for it in its:
            groups.setdefault(it.group, ([], []))[1].append(it)
        for olds, news in groups.values():
            a = [m.memory_id for m in olds]
            b = [it.memory_id for it in news]
            pairs: list[tuple[Memory, Item]] = []
            left_old: list[Memory] = []
            left_new: list[Item] = []
            for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
                if op == "equal":
                    continue
                gone = [m for m in olds[i1:i2] if m.memory_id not in new_ids]
                fresh = [it for it in news[j1:j2] if it.memory_id not in existing and it.corrected_by is None]
                pairs += list(zip(gone, fresh))
                left_old += gone[len(fresh):]
                left_new += fresh[len(gone):]
            if prefix is not None:
                # an entity, a Mem0 id, a Letta block: a small group whose records have no order of their
                # own, so what left and what arrived within it are versions of each other
                pairs += list(zip(left_old, left_new))
                left_old = left_old[len(left_new):]
            for m, it in pairs:
                replaces[it.memory_id] = m
                if it.logical_key is None:
                    it.logical_id = m.logical_memory_id
            withdrawn += left_old

    # 2. native records, streamed in batches (a repeated id is refused naming both places)
    writer = RecordWriter(session, actor, report, personal=personal, skip_invalid=skip_invalid,
                          progress=progress and (lambda done, known: progress(done, known + len(items))),
                          repo_dir=repo_root)
    writer.write_all(natives)
    done = writer.done
    total = done + len(items)

    # 3. the foreign records: create, refresh, or leave alone
    index_ids = {(it.fmt, it.source, it.index): it.memory_id for it in items}
    for it in items:
        done += 1
        mid = it.memory_id
        corrected_by = index_ids.get((it.fmt, it.source, it.corrected_by)) if it.corrected_by is not None else None
        where = f"{it.source}" + (f" line {it.line}" if it.line else f" record {it.index + 1}")
        if mid in existing:
            state, h = existing[mid]
            if h == it.import_hash:
                report.unchanged.append(mid)
            elif state == "candidate":
                _refresh(session, it, actor, where, personal)
                report.refreshed.append(mid)
            else:
                report.left_alone.append(mid)
            if corrected_by and state == "candidate":
                row = session.get(Memory, mid)
                row.superseded_by = corrected_by
                _source_change(session, row, "superseded", actor,
                           reason=f"import: {where} is corrected by a later line ({corrected_by})"
                           + (f": {it.correction_reason}" if it.correction_reason else ""))
                report.corrected.append((mid, corrected_by))
            continue
        state = "superseded" if corrected_by else "candidate"
        memory = Memory(
            memory_id=mid, logical_memory_id=it.logical_id or mid, type=it.type, statement=it.statement,
            tenant_id=it.tenant_id, repository_id=it.repository_id, module_path=it.module_path,
            applies_to=list(it.applies_to), does_not_apply_to=list(it.does_not_apply_to), state=state,
            confidence=it.confidence, review_state="pending" if state == "candidate" else "none",
            conflict_state="none", impact="normal", origin="imported",
            proposer_type=it.proposer_type or it.fmt, proposer_id=it.proposer_id,
            promotion_status="candidate", requires_human_review=it.requires_human_review,
            tags=_provenance_tags(it), created_at=it.created_at or now, expires_at=it.expires_at,
            superseded_by=corrected_by, import_hash=it.import_hash, import_source=it.import_source,
        )
        previous = replaces.get(mid)
        reason = f"imported from {where} ({it.fmt})"
        if previous is not None:
            reason += f"; replaces {previous.memory_id} (its source changed)"
        if corrected_by:
            reason += f"; superseded on import: a later line corrects it ({corrected_by})" + (
                f": {it.correction_reason}" if it.correction_reason else "")
        rows = _evidence_rows(mid, it.evidence)
        try:
            screen = screen_memory(memory, rows, personal=personal)
        except SecretRefused as exc:  # an id or scope key holding a secret (issue 21 item 4)
            report.rejected.append(record_error(it.path, it.index, it.line, mid, exc.field, str(exc)))
            continue
        try:
            create_memory(session, memory, rows, actor, reason=reason + blocked_note(screen))
            for note in it.notes:
                record_note(session, memory, actor, note)
        except LifecycleError as exc:
            report.rejected.append(record_error(it.path, it.index, it.line, mid, None, str(exc)))
            continue
        screened_import(session, mid, screen, actor, report)
        report.imported.append(mid)
        if corrected_by:
            report.corrected.append((mid, corrected_by))
        if previous is not None:
            if previous.state == "candidate":
                previous.superseded_by = mid
                _source_change(session, previous, "superseded", actor,
                           reason=f"re-import: {where} changed; superseded by {mid}")
                report.superseded.append((previous.memory_id, mid))
            else:
                report.left_alone.append(previous.memory_id)
        if progress:
            progress(done, total)

    # 4. candidates whose record is gone from a source read completely
    for m in withdrawn:
        if m.state == "candidate":
            source = (m.import_source or "").split("#L")[0]
            _source_change(session, m, "invalidated", actor,
                           reason=f"re-import: no longer in {source.split(':', 1)[-1]} (source_removed)")
            report.withdrawn.append(m.memory_id)
        else:
            report.left_alone.append(m.memory_id)


def _source_change(session: Session, memory: Memory, to_state: str, actor: Actor, *, reason: str) -> None:
    """Supersede or withdraw a still-``candidate`` memory because its own source changed or dropped it.

    The importer's judgement is not asked: the file that proposed the candidate now says otherwise.
    Where the outcome table refuses the importer (a high-impact candidate, a non-lead; issue 21 item 1)
    the change is made as the ``system`` actor ``import-source:<importer>``, which may dismiss a
    candidate by source, never admit one; the importer's scope is still checked first (the refusal
    comes after it). The successor is itself a pending candidate a lead decides on."""
    try:
        transition(session, memory, to_state, actor, reason=reason)
    except InvariantViolation as exc:
        if exc.invariant != "review" or actor.type != "human":
            raise
        transition(session, memory, to_state, Actor(type="system", id=f"import-source:{actor.id}"),
                   reason=f"{reason} (the source changed; {actor.id!r} may not dismiss high-impact memory)")


def _refresh(session: Session, it: Item, actor: Actor, where: str, personal: bool = True) -> None:
    """Replace the evidence of a still-candidate memory whose record is unchanged but whose
    evidence is not (e.g. the file was committed since, or a path it names appeared)."""
    from memtui.review.lifecycle import block_for_secret
    from memtui.safety.guard import screen_evidence

    row = session.get(Memory, it.memory_id)
    from memtui.governance.integrity import note

    note(session, "memory", [it.memory_id])  # compared with the store chain before the delete (issue 21)
    session.execute(delete(Evidence).where(Evidence.memory_id == it.memory_id))
    rows = _evidence_rows(it.memory_id, it.evidence)
    screen = screen_evidence(rows, personal=personal)  # issue 9: excerpts are redacted here too
    session.add_all(rows)
    row.import_hash = it.import_hash
    row.import_source = it.import_source
    row.tags = _provenance_tags(it)
    session.add(row)
    record_note(session, row, actor, f"re-import: evidence refreshed from {where}")
    if screen.blocked:
        block_for_secret(session, row, screen.secrets, actor, how="import")
