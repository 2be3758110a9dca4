"""Read YAML, JSON and JSON Lines files into raw records that remember their line numbers.

Every error names the file and the line (and column where the parser gives one), so a
person can open the file at the right place.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


class ImportFileError(Exception):
    """A file cannot be read or parsed at all; ``str()`` names the file and line."""

    def __init__(self, path: Path | str, message: str, line: int | None = None, column: int | None = None):
        self.path, self.line, self.column = str(path), line, column
        where = str(path)
        if line is not None:
            where += f": line {line}" + (f", column {column}" if column is not None else "")
        super().__init__(f"{where}: {message}")


class LineDict(dict):
    """A mapping that remembers the line of itself (``line``) and of each key (``lines``)."""

    line: int | None = None

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.lines: dict[Any, int] = {}


class _LineLoader(yaml.SafeLoader):
    """SafeLoader whose mappings are LineDicts and which refuses duplicate keys."""


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


def _yaml_load(path: Path, text: str) -> Any:
    try:
        return yaml.load(text, Loader=_LineLoader)  # noqa: S506 (a SafeLoader subclass)
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


def read_records(path: Path | str) -> list[RawRecord]:
    """Read every record of a ``.yaml``/``.yml``/``.json``/``.jsonl`` file.

    Raises :class:`ImportFileError` (naming file, line and column) for a missing file, an
    unknown extension, a syntax error, or a structure that holds no records.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ImportFileError(path, "no such file") from exc
    except UnicodeDecodeError as exc:
        raise ImportFileError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise ImportFileError(path, exc.strerror or str(exc)) from exc
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        return _records_from_document(path, _yaml_load(path, text))
    if suffix == ".json":
        if not text.strip():
            return []
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            raise ImportFileError(path, f"JSON syntax error: {exc.msg}", exc.lineno, exc.colno) from exc
        # JSON is YAML: read it again with the line-keeping loader for line numbers in errors
        try:
            doc = yaml.load(text, Loader=_LineLoader)  # noqa: S506
        except yaml.YAMLError:
            doc = json.loads(text)
        return _records_from_document(path, doc)
    if suffix == ".jsonl":
        out: list[RawRecord] = []
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                # one broken line is one bad record: --skip-invalid can still import the others
                out.append(RawRecord(str(path), len(out), n, None,
                                     error=f"JSON syntax error at column {exc.colno}: {exc.msg}"))
                continue
            if isinstance(data, dict):
                data = LineDict(data)
                data.line = n
                data.lines = {k: n for k in data}
            out.append(RawRecord(str(path), len(out), n, data))
        return out
    raise ImportFileError(path, f"unsupported file type {suffix or '(none)'!r}; use .yaml, .yml, .json or .jsonl")
