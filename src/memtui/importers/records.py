"""Record types shared by the format parsers and the import pipeline (no database access).

:class:`Item` (one foreign record as a would-be memory), :class:`Parsed` (what a parser returns),
:class:`ImportContext` (the checkout and scope of an import) and the helpers the parsers share:
:func:`norm_text`, :func:`parse_time`, :func:`type_for_label`, :func:`type_for_text`, :func:`tag`,
:func:`record_error`, :func:`read_text`, :func:`load_json_lines`, :func:`line_of`.
:mod:`memtui.importers.pipeline` writes them to the store; :mod:`memtui.importers.formats`
re-exports both.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Iterable

from memtui.importers.native import RecordError
from memtui.importers.reader import (DuplicateKey, ImportFileError, LineDict, decode_utf8, json_strict,
                                     load_yaml, parse_json, read_bytes)

__all__ = ["Item", "Parsed", "ImportContext", "norm_text", "parse_time", "type_for_label", "type_for_text", "tag",
           "record_error", "read_text", "load_json_lines", "line_of", "GROUP_TAG", "screen_items"]

#: Per format, the tag prefix naming the group inside which re-imported records are aligned.
GROUP_TAG = {"mcp": "entity:", "mem0": "mem0:", "letta": "block:"}
_GROUP_TAG = GROUP_TAG
#: JSON files larger than this are read without line numbers (the line-keeping loader is pure Python).
_LINE_LOADER_MAX = 4_000_000


# -- shared pieces of the format parsers ---------------------------------------------------------

@dataclass
class Item:
    """One foreign record turned into a would-be memory (before ids are computed).

    ``path``: the file as given (for errors); ``source``: the provenance path (relative to the
    repository root when inside it); ``index``: 0-based ordinal in the file; ``anchor``: what
    identifies the record inside its source (see the module doc); ``evidence``: keyword
    dictionaries for :class:`~memtui.store.models.Evidence` (without ``memory_id``/``ordinal``);
    ``tags``: content tags (provenance tags are added on write); ``state_tags``: tags about the
    source's state (``uncommitted``), stored but not part of the identity; ``notes``: history notes
    written after the creation event; ``corrected_by``: index (among the same file's items) of a later
    record that corrects this one (the earlier is then imported ``superseded``);
    ``logical_key``: stable across versions (the Mem0 id, a Letta block) or None (the new
    candidate inherits the logical id of the one it supersedes, else its own id).
    """

    fmt: str
    path: str
    source: str
    index: int
    line: int | None
    anchor: str
    statement: str
    type: str
    repository_id: str | None = None
    tenant_id: str = "default"
    module_path: str | None = None
    applies_to: list[str] = field(default_factory=list)
    does_not_apply_to: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    evidence: list[dict[str, Any]] = field(default_factory=list)
    logical_key: str | None = None
    created_at: datetime | None = None
    expires_at: datetime | None = None
    requires_human_review: bool = False
    confidence: float = 0.5
    proposer_type: str | None = None
    proposer_id: str | None = None
    notes: list[str] = field(default_factory=list)
    state_tags: list[str] = field(default_factory=list)  # tags about the source's state, not its content
    corrected_by: int | None = None
    correction_reason: str | None = None
    # computed by import_paths
    memory_id: str = ""
    logical_id: str = ""
    import_hash: str = ""

    @property
    def group(self) -> str:
        prefix = _GROUP_TAG.get(self.fmt)
        return _group_of(prefix, self.tags)

    @property
    def import_source(self) -> str:
        return f"{self.fmt}:{self.source}" + (f"#L{self.line}" if self.line else "")


@dataclass
class Parsed:
    """What a format parser returns: the records, the refused ones, notes for the user, and the
    sources it read (``complete``: every record of it was valid, so re-import may retire the
    memories of records that disappeared from it), and the lines it read but did not import (with
    why)."""

    items: list[Item] = field(default_factory=list)
    errors: list[RecordError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    sources: dict[tuple[str, str], bool] = field(default_factory=dict)  # (fmt, source) -> complete
    files: dict[str, str] = field(default_factory=dict)  # file read -> format
    #: lines read but not imported: (source, line, why), e.g. "heading", "blank", "code block"
    skipped: list[tuple[str, int, str]] = field(default_factory=list)

    def extend(self, other: "Parsed") -> None:
        self.items += other.items
        self.skipped += other.skipped
        self.errors += other.errors
        self.warnings += other.warnings
        for key, ok in other.sources.items():
            self.sources[key] = self.sources.get(key, True) and ok
        self.files.update(other.files)


@dataclass
class ImportContext:
    """Where an import happens: the git checkout (root, HEAD) when there is one, and the scope."""

    repo_root: Path | None
    head: str | None
    repository_id: str | None
    tenant_id: str = "default"

    def rel(self, path: Path) -> str | None:
        """``path`` relative to the repository root (POSIX), or None when outside it."""
        if self.repo_root is None:
            return None
        try:
            return path.resolve().relative_to(self.repo_root).as_posix()
        except ValueError:
            return None


def norm_text(text: str) -> str:
    """The text as compared for identity: whitespace collapsed, case folded, final period dropped."""
    t = re.sub(r"\s+", " ", text or "").strip().casefold()
    return t[:-1].rstrip() if t.endswith(".") else t


def parse_time(value: Any) -> datetime | None:
    """An aware UTC datetime from ISO-8601 text (``Z``, offsets, a bare date), epoch seconds or
    milliseconds, or None for None/"". Raises ValueError for anything else."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, date):
        dt = datetime(value.year, value.month, value.day)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = value / 1000 if value > 1e11 else value
        return datetime.fromtimestamp(seconds, UTC)
    elif isinstance(value, str):
        text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
        if " " in text and "T" not in text:
            text = text.replace(" ", "T", 1)
        try:
            dt = datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"not an ISO-8601 time: {value!r}") from None
    else:
        raise ValueError(f"not a time: {value!r}")
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


_TYPE_WORDS: tuple[tuple[str, str], ...] = (
    (r"\btest", "test_convention"),
    (r"architect|design decision|\badrs?\b|\bdecisions?\b|system ?patterns", "architecture_decision"),
    (r"lesson|gotcha|pitfall|learn|mistake|caveat|known issue|troubl|debug", "evaluation_lesson"),
    (r"\bbuild|command|setup|set up|install|\brun\b|running|deploy|release|workflow|\bci\b|runbook|"
     r"operat|environment|\bdev\b|develop", "runbook"),
    (r"style|convention|guideline|\brules?\b|naming|format|lint|standard|best practice|do'?s|don'?ts?|"
     r"feedback|instruction", "repo_convention"),
    (r"active ?context|progress|\btasks?\b|todo|current|next step|status|in progress", "task"),
    (r"preference|\buser\b|\bhuman\b|\bprofile\b", "user_preference"),
    (r"persona", "agent_persona"),
    (r"structure|overview|layout|project|stack|tech|context|about|domain|glossary|facts?\b|brief|"
     r"reference|module|service|component|api\b|codebase|repo", "code_fact"),
)


def type_for_label(label: str | None) -> str | None:
    """A memory type for a heading, block label, entity type or category, or None when nothing fits."""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", label or "").casefold().replace("_", " ").replace("-", " ")
    for pattern, kind in _TYPE_WORDS:
        if re.search(pattern, text):
            return kind
    return None


_IMPERATIVE = re.compile(r"^(?:always|never|do not|don't|dont|must|should|use|prefer|avoid|run|keep|make sure|"
                         r"ensure|add|write|put|call|check|place|follow|only|no |please)\b|\b(?:must|should|"
                         r"never|always|do not|don't)\b", re.I)


_PREFERENCE = re.compile(r"^(?:prefers|likes|dislikes|wants|enjoys|hates|is allergic|works best)\b", re.I)


def type_for_text(text: str) -> str:
    """``user_preference`` for "Prefers ..."/"Likes ...", ``repo_convention`` for an instruction
    (imperative, must/should/never), else ``code_fact``."""
    t = text.strip().lstrip("*_`")
    if _PREFERENCE.search(t):
        return "user_preference"
    return "repo_convention" if _IMPERATIVE.search(t) else "code_fact"


def tag(key: str, value: Any) -> str:
    """A ``key:value`` tag, the value on one line and at most 120 characters."""
    v = re.sub(r"\s+", " ", str(value)).strip()
    return f"{key}:{v[:117] + '...' if len(v) > 120 else v}"


def record_error(path: str, index: int, line: int | None, record_id: str | None, fld: str | None,
                 message: str) -> RecordError:
    """A :class:`RecordError` (file, record, line, field, message), as the native importer reports them."""
    return RecordError(str(path), index, line, record_id, fld, message)


def read_text(path: Path) -> str:
    """The UTF-8 text of ``path`` (within the file size limit, :mod:`memtui.importers.limits`);
    :class:`ImportFileError` naming the file (and the line of a byte that is not UTF-8) otherwise."""
    # no newline translation: spans and hashes are of the bytes
    return decode_utf8(path, read_bytes(path))


def load_json_lines(path: Path, text: str) -> Any:
    """Parse a JSON document keeping line numbers (mappings are :class:`LineDict`) when affordable.

    A document whose whole content is a JSON-encoded string is decoded again (up to 3 times;
    lines are then unknown). Raises :class:`ImportFileError` with line and column on a syntax error.
    """
    try:
        doc = json_strict(text)
    except (json.JSONDecodeError, RecursionError, DuplicateKey):
        return parse_json(path, text)  # raises the error naming the line (and the key)
    if isinstance(doc, str):
        for _ in range(3):
            try:
                doc = json_strict(doc)
            except (json.JSONDecodeError, DuplicateKey) as exc:
                raise ImportFileError(path, f"JSON-encoded string holds invalid JSON: {exc}", 1) from exc
            except RecursionError:
                raise ImportFileError(path, "JSON-encoded string nested too deeply", 1) from None
            if not isinstance(doc, str):
                break
        return doc
    if len(text) <= _LINE_LOADER_MAX and isinstance(doc, (dict, list)):
        import yaml

        try:
            return load_yaml(text)
        except (yaml.YAMLError, RecursionError):
            return doc  # valid JSON that PyYAML reads differently (tabs, escapes): no line numbers
    return doc


def line_of(node: Any, key: str | None = None, default: int | None = None) -> int | None:
    """The line of a :class:`LineDict` (or of one of its keys), else ``default``."""
    if isinstance(node, LineDict):
        if key is not None and key in node.lines:
            return node.lines[key]
        return node.line or default
    return default


def _group_of(prefix: str | None, tags: Iterable[str]) -> str:
    if not prefix:
        return ""
    return next((t for t in tags if t.startswith(prefix)), "")


def screen_items(parsed: Parsed) -> None:
    """Move every item over the size limits or with a control character in a tag or id
    (:func:`memtui.importers.limits.record_problems`, issue 9 item 5) from ``parsed.items`` to
    ``parsed.errors``, naming the file, line, record and field; its source is then incomplete, so a
    re-import never retires memories because of it."""
    from memtui.importers.limits import record_problems

    keep: list[Item] = []
    for it in parsed.items:
        problems = record_problems(
            statement=it.statement,
            excerpts=[(f"evidence[{i}].excerpt", e.get("excerpt")) for i, e in enumerate(it.evidence)],
            ids=[("proposer", it.proposer_id)], tags=list(it.tags) + list(it.state_tags))
        if not problems:
            keep.append(it)
            continue
        (fld, message), rest = problems[0], problems[1:]
        message += "".join(f"; also field '{f}': {m}" for f, m in rest)
        parsed.errors.append(record_error(it.path, it.index, it.line, None, fld, message))
        parsed.sources[(it.fmt, it.source)] = False
    parsed.items = keep
