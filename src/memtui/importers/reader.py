"""Read YAML, JSON and JSON Lines files into raw records that remember their line numbers.

Every error names the file and the line (and column where the parser gives one), so a
person can open the file at the right place. Hostile input (issue 9, item 5) is refused with
such an error, never a traceback: a file over the size limit (:mod:`memtui.importers.limits`),
a duplicate key (YAML and JSON alike), nesting deeper than the parser's recursion limit, YAML
aliases that expand into more than ``MAX_EXPANDED_NODES`` values ("billion laughs"). In a JSON
Lines file a line that is not JSON, not UTF-8, or repeats a key is one bad record
(:attr:`RawRecord.error`): refused naming the line, or skipped with ``--skip-invalid``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

import yaml

from memtui.importers.limits import too_big

#: A YAML document whose aliases expand into more values than this is refused (a "billion laughs" bomb).
MAX_EXPANDED_NODES = 2_000_000


class ImportFileError(Exception):
    """A file cannot be read or parsed at all; ``str()`` names the file and line."""

    def __init__(self, path: Path | str, message: str, line: int | None = None, column: int | None = None):
        self.path, self.message, self.line, self.column = str(path), message, line, column
        where = str(path)
        if line is not None:
            where += f": line {line}" + (f", column {column}" if column is not None else "")
        super().__init__(f"{where}: {message}")

    def __reduce__(self):  # picklable: it crosses from the process that reads a large file
        return ImportFileError, (self.path, self.message, self.line, self.column)


class LineDict(dict):
    """A mapping that remembers the line of itself (``line``) and of each key (``lines``)."""

    line: int | None = None

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.lines: dict[Any, int] = {}


class _LineLoader(yaml.SafeLoader):
    """SafeLoader whose mappings are LineDicts and which refuses duplicate keys; it notes whether the
    document used an alias (``used_alias``), so only such documents pay for the expansion check."""

    used_alias = False

    def compose_node(self, parent, index):  # noqa: D102 (PyYAML hook)
        if self.check_event(yaml.AliasEvent):
            self.used_alias = True
        return super().compose_node(parent, index)


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    d = LineDict()
    d.line = node.start_mark.line + 1
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if key in d:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first on line {d.lines[key]})", key_node.start_mark
            )
        d[key] = loader.construct_object(value_node, deep=True)
        d.lines[key] = line
    return d


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


@dataclass
class RawRecord:
    """One record as read: the file, its 0-based index in the file, its line, the data and
    the kind the file's structure says it is (``memory``, ``candidate`` or None: decide by keys)."""

    path: str
    index: int
    line: int | None
    data: Any
    kind: str | None = None
    error: str | None = None  # the record could not even be parsed (a broken JSON Lines line)


class DuplicateKey(ValueError):
    """A JSON object repeats a key (``key``)."""

    def __init__(self, key: str):
        self.key = key
        super().__init__(f"duplicate key {key!r}")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise DuplicateKey(k)
            seen.add(k)
    return d


def json_strict(text: str) -> Any:
    """``json.loads`` that refuses a repeated key (:class:`DuplicateKey`) instead of keeping the last
    value, as YAML's loader here does. Raises json.JSONDecodeError and RecursionError as json does."""
    return json.loads(text, object_pairs_hook=_no_duplicates)


def load_yaml(text: str) -> Any:
    """Parse YAML (or JSON) with :class:`_LineLoader`: mappings are :class:`LineDict`, a duplicate key
    is a ``yaml.MarkedYAMLError``; an alias bomb is a ``yaml.YAMLError``; deep nesting a RecursionError."""
    loader = _LineLoader(text)
    try:
        doc = loader.get_single_data()
    finally:
        loader.dispose()
    if loader.used_alias:
        _check_expansion(doc)
    return doc


def _check_expansion(doc: Any) -> None:
    """Refuse a document whose shared (aliased) values expand into more than MAX_EXPANDED_NODES values."""
    sizes: dict[int, int] = {}

    def size(node: Any) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if isinstance(node, dict):
            n = 1 + sum(size(k) + size(v) for k, v in node.items())
        elif isinstance(node, list):
            n = 1 + sum(size(v) for v in node)
        else:
            return 1
        if n > MAX_EXPANDED_NODES:
            raise yaml.YAMLError(f"its aliases expand into more than {MAX_EXPANDED_NODES} values")
        sizes[key] = n
        return n

    size(doc)


def _yaml_load(path: Path, text: str) -> Any:
    try:
        return load_yaml(text)
    except RecursionError:
        raise ImportFileError(path, "YAML nested too deeply") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if exc.context and exc.context_mark and exc.problem_mark and exc.context_mark.line != exc.problem_mark.line:
            # the parser noticed the problem later than where it began: name both lines
            problem += (f" ({exc.context} started at line {exc.context_mark.line + 1}, "
                        f"column {exc.context_mark.column + 1})")
        raise ImportFileError(path, f"YAML syntax error: {problem}",
                              mark.line + 1 if mark else None, mark.column + 1 if mark else None) from exc
    except yaml.YAMLError as exc:
        raise ImportFileError(path, f"YAML syntax error: {exc}") from exc


def _records_from_document(path: Path, doc: Any) -> list[RawRecord]:
    """Records of a YAML/JSON document: a list, or a mapping with ``memories:``/``candidates:``,
    or a single wrapped record ``{memory: ...}``/``{candidate: ...}``."""
    p = str(path)
    if doc is None:
        return []
    if isinstance(doc, list):
        return [RawRecord(p, i, getattr(r, "line", None), r) for i, r in enumerate(doc)]
    if isinstance(doc, dict):
        lists = {k: doc[k] for k in ("memories", "candidates") if k in doc}
        if lists:
            extra = [k for k in doc if k not in ("memories", "candidates")]
            if extra:
                line = doc.lines.get(extra[0]) if isinstance(doc, LineDict) else None
                raise ImportFileError(path, f"unknown top-level key {extra[0]!r} "
                                      "(expected 'memories' and/or 'candidates')", line)
            out: list[RawRecord] = []
            for key, kind in (("memories", "memory"), ("candidates", "candidate")):
                items = lists.get(key)
                if items is None:
                    continue
                if not isinstance(items, list):
                    line = doc.lines.get(key) if isinstance(doc, LineDict) else None
                    raise ImportFileError(path, f"'{key}' must be a list of records", line)
                for r in items:
                    out.append(RawRecord(p, len(out), getattr(r, "line", None), r, kind))
            return out
        return [RawRecord(p, 0, getattr(doc, "line", None), doc)]
    raise ImportFileError(path, "expected a list of records or a mapping with 'memories'/'candidates'",
                          getattr(doc, "line", 1))


def read_bytes(path: Path) -> bytes:
    """The bytes of ``path`` within the file size limit; :class:`ImportFileError` naming the file otherwise."""
    try:
        size = path.stat().st_size
        problem = too_big("the file", size, "file_bytes")
        if problem:
            raise ImportFileError(path, problem)
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise ImportFileError(path, "no such file") from exc
    except IsADirectoryError as exc:
        raise ImportFileError(path, "is a directory") from exc
    except OSError as exc:
        raise ImportFileError(path, exc.strerror or str(exc)) from exc


def decode_utf8(path: Path, data: bytes) -> str:
    """``data`` as UTF-8 text; :class:`ImportFileError` naming the file, line and byte otherwise."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ImportFileError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})", line) from exc


def parse_json(path: Path, text: str) -> Any:
    """A JSON document with line numbers (mappings are :class:`LineDict` when PyYAML reads it too).

    Raises :class:`ImportFileError` naming the line (and the key) for a syntax error, a duplicate
    key, or nesting deeper than the parser allows."""
    try:
        doc = json_strict(text)
    except json.JSONDecodeError as exc:
        raise ImportFileError(path, f"JSON syntax error: {exc.msg}", exc.lineno, exc.colno) from exc
    except RecursionError:
        raise ImportFileError(path, "JSON nested too deeply") from None
    except DuplicateKey as exc:
        # the line-keeping loader names the line of the repeated key (and of the first)
        try:
            load_yaml(text)
        except yaml.MarkedYAMLError as yexc:
            if yexc.problem and "duplicate key" in yexc.problem and yexc.problem_mark is not None:
                raise ImportFileError(path, yexc.problem, yexc.problem_mark.line + 1,
                                      yexc.problem_mark.column + 1) from None
        except (yaml.YAMLError, RecursionError):
            pass
        raise ImportFileError(path, f"{exc} (a repeated key would silently lose a value)") from None
    if not isinstance(doc, (dict, list)):
        return doc
    # JSON is YAML: read it again with the line-keeping loader for line numbers in errors
    try:
        return load_yaml(text)
    except (yaml.YAMLError, RecursionError):
        return doc  # valid JSON that PyYAML reads differently (tabs, escapes): no line numbers


def _record_path(path: Path | str) -> tuple[Path, str]:
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".yaml", ".yml", ".json", ".jsonl"):
        raise ImportFileError(path, f"unsupported file type {suffix or '(none)'!r}; use .yaml, .yml, .json or .jsonl")
    return path, suffix


def read_records(path: Path | str) -> list[RawRecord]:
    """Read every record of a ``.yaml``/``.yml``/``.json``/``.jsonl`` file.

    Raises :class:`ImportFileError` (naming file, line and column) for a missing file, a file
    over the size limit, an unknown extension, a syntax error, a duplicate key, or a structure
    that holds no records. A bad line of a JSON Lines file is a record with ``error`` set.
    """
    path, suffix = _record_path(path)
    data = read_bytes(path)
    if suffix == ".jsonl":
        return _jsonl_records(path, data)
    text = decode_utf8(path, data)
    if suffix in (".yaml", ".yml"):
        return _records_from_document(path, _yaml_load(path, text))
    if not text.strip():
        return []
    return _records_from_document(path, parse_json(path, text))


def open_records(path: Path | str) -> Iterator[RawRecord]:
    """The records of ``path`` as :func:`read_records` reads them, but a JSON Lines file is read a line
    at a time as the iterator is consumed (issue 11, item 9: memory does not grow with the file).

    What can be known before reading is checked now: a missing file, an unknown extension or a file
    over the size limit raise :class:`ImportFileError` here; YAML and JSON documents are read and
    parsed here whole. A JSON Lines file that cannot be read further raises ImportFileError while
    iterating."""
    path, suffix = _record_path(path)
    if suffix != ".jsonl":
        return iter(read_records(path))
    try:
        size = path.stat().st_size
    except FileNotFoundError as exc:
        raise ImportFileError(path, "no such file") from exc
    except OSError as exc:
        raise ImportFileError(path, exc.strerror or str(exc)) from exc
    if path.is_dir():
        raise ImportFileError(path, "is a directory")
    problem = too_big("the file", size, "file_bytes")
    if problem:
        raise ImportFileError(path, problem)
    return JsonlStream(path, size)


@dataclass
class JsonlStream:
    """The records of a JSON Lines file, read a line at a time each time it is iterated (``size``: bytes)."""

    path: Path
    size: int

    def __iter__(self) -> Iterator[RawRecord]:
        try:
            with self.path.open("rb") as f:
                lines = ((n, line[:-1] if line.endswith(b"\n") else line) for n, line in enumerate(f, start=1))
                yield from _jsonl_raws(self.path, _jsonl_parsed(lines))
        except OSError as exc:
            raise ImportFileError(self.path, exc.strerror or str(exc)) from exc


def _jsonl_parsed(lines: Iterable[tuple[int, bytes]]) -> Iterator[tuple[int, Any, str | None]]:
    """(line, parsed value or None, error or None) for each nonblank line: a line that is not UTF-8,
    not JSON, nested too deeply, or repeats a key has an error and no value."""
    for n, raw_line in lines:
        try:
            line = raw_line.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield n, None, f"not UTF-8 text ({exc.reason} at column {exc.start + 1})"
            continue
        if not line.strip():
            continue
        try:
            yield n, json_strict(line), None
        except json.JSONDecodeError as exc:
            yield n, None, f"JSON syntax error at column {exc.colno}: {exc.msg}"
        except RecursionError:
            yield n, None, "JSON nested too deeply"
        except DuplicateKey as exc:
            yield n, None, f"{exc} (a repeated key would silently lose a value)"


def jsonl_lines(data: bytes) -> list[tuple[int, Any, str | None]]:
    """(line, parsed value or None, error or None) for each nonblank line of JSON Lines ``data``: a line
    that is not UTF-8, not JSON, nested too deeply, or repeats a key has an error and no value."""
    return list(_jsonl_parsed(enumerate(data.split(b"\n"), start=1)))


def _jsonl_raws(path: Path, lines: Iterable[tuple[int, Any, str | None]]) -> Iterator[RawRecord]:
    """Records of JSON Lines; a broken line is one bad record: --skip-invalid can still import the others."""
    index = 0
    for n, data, error in lines:
        if error is not None:
            yield RawRecord(str(path), index, n, None, error=error)
        else:
            if isinstance(data, dict):
                data = LineDict(data)
                data.line = n
                data.lines = dict.fromkeys(data, n)
            yield RawRecord(str(path), index, n, data)
        index += 1


def _jsonl_records(path: Path, blob: bytes) -> list[RawRecord]:
    return list(_jsonl_raws(path, jsonl_lines(blob)))
