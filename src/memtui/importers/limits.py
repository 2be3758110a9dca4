"""Size limits of an import (issue 9, item 5): a statement, an evidence excerpt, a file.

Defaults: statement 4 KB, evidence excerpt 64 KB, file 50 MB (bytes of UTF-8). Configurable by
the environment (``MEMTUI_MAX_STATEMENT_BYTES``, ``MEMTUI_MAX_EXCERPT_BYTES``,
``MEMTUI_MAX_FILE_BYTES``) and by ``memtui import --max-statement-bytes/--max-excerpt-bytes/
--max-file-bytes``, which run the import inside :func:`use_limits`. The readers and parsers ask
:func:`current_limits`, so no importer signature carries them.

:func:`record_problems` is the one check of a would-be memory's text before it is written: sizes,
and no control character in its ids and tags (:func:`memtui.text.control_problem`). Pure: no I/O.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Iterable, Iterator, Mapping

from memtui.text import control_problem

__all__ = ["ImportLimits", "current_limits", "use_limits", "record_problems", "too_big"]

_ENV = {"statement_bytes": "MEMTUI_MAX_STATEMENT_BYTES", "excerpt_bytes": "MEMTUI_MAX_EXCERPT_BYTES",
        "file_bytes": "MEMTUI_MAX_FILE_BYTES"}
#: The command-line option naming each limit (used in error messages).
OPTION = {"statement_bytes": "--max-statement-bytes", "excerpt_bytes": "--max-excerpt-bytes",
          "file_bytes": "--max-file-bytes"}


@dataclass(frozen=True)
class ImportLimits:
    """Byte limits of one import (UTF-8 bytes): statement, evidence excerpt, file."""

    statement_bytes: int = 4 * 1024
    excerpt_bytes: int = 64 * 1024
    file_bytes: int = 50 * 1024 * 1024

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: int | None) -> "ImportLimits":
        """The defaults, then the ``MEMTUI_MAX_*_BYTES`` variables, then ``overrides`` that are not None.
        Raises ValueError naming the variable or option for a value that is not a positive integer."""
        env = os.environ if environ is None else environ
        values: dict[str, int] = {}
        for name, var in _ENV.items():
            raw = env.get(var)
            if raw not in (None, ""):
                values[name] = _positive(raw, var)
        for name, value in overrides.items():
            if name not in _ENV:
                raise TypeError(f"unknown limit {name!r}")
            if value is not None:
                values[name] = _positive(value, OPTION[name])
        return replace(cls(), **values)


def _positive(value: object, where: str) -> int:
    try:
        n = int(str(value).strip())
    except ValueError:
        raise ValueError(f"{where} must be a positive number of bytes, not {value!r}") from None
    if n <= 0:
        raise ValueError(f"{where} must be a positive number of bytes, not {value!r}")
    return n


_current: ContextVar[ImportLimits | None] = ContextVar("memtui_import_limits", default=None)


def current_limits() -> ImportLimits:
    """The limits set by :func:`use_limits`, else those of the environment (invalid values: the defaults)."""
    limits = _current.get()
    if limits is not None:
        return limits
    try:
        return ImportLimits.from_env()
    except ValueError:
        return ImportLimits()


@contextmanager
def use_limits(limits: ImportLimits | None) -> Iterator[ImportLimits]:
    """Run an import with ``limits`` (None: :func:`current_limits`)."""
    token = _current.set(limits or current_limits())
    try:
        yield _current.get()
    finally:
        _current.reset(token)


def too_big(what: str, size: int, limit_name: str, limits: ImportLimits | None = None) -> str | None:
    """None when ``size`` bytes fit the limit ``limit_name``; else the sentence saying by how much."""
    limits = limits or current_limits()
    limit = getattr(limits, limit_name)
    if size <= limit:
        return None
    return f"{what} is {size} bytes; the limit is {limit} bytes (raise it with {OPTION[limit_name]} or {_ENV[limit_name]})"


def record_problems(*, statement: str | None, excerpts: Iterable[tuple[str, str | None]] = (),
                    ids: Iterable[tuple[str, str | None]] = (), tags: Iterable[str] = (),
                    statement_field: str = "statement", tags_field: str = "tags",
                    limits: ImportLimits | None = None) -> list[tuple[str, str]]:
    """Every (field, problem) of a would-be memory: its statement and evidence excerpts (``(field,
    text)``) over the size limits, a control character in its ids (``(field, id)``) or tags."""
    limits = limits or current_limits()
    out: list[tuple[str, str]] = []
    if statement is not None:
        p = too_big("the statement", len(statement.encode("utf-8", "surrogatepass")), "statement_bytes", limits)
        if p:
            out.append((statement_field, p))
    for fld, text in excerpts:
        if text is not None:
            p = too_big("the excerpt", len(text.encode("utf-8", "surrogatepass")), "excerpt_bytes", limits)
            if p:
                out.append((fld, p))
    for fld, value in ids:
        if isinstance(value, str):
            p = control_problem("the id", value)
            if p:
                out.append((fld, p))
    for i, t in enumerate(tags):
        if isinstance(t, str):
            p = control_problem("the tag", t)
            if p:
                out.append((f"{tags_field}[{i}]", p))
    return out
