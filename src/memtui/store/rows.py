"""Rows as plain column dicts, for writers that insert many at once (issue 11, item 9: the import).

Building a SQLModel table instance costs far more than the row's own work (every field goes through
pydantic defaults and SQLAlchemy instrumentation), so bulk writers build ``{column: value}`` dicts
with :func:`new_row` and insert them with SQLAlchemy core (``session.execute(insert(table), rows)``).
:class:`RowView` lets the checks written for ORM rows (:func:`memtui.review.lifecycle.facts_of`,
:func:`memtui.safety.guard.screen_memory`) read and change such a dict by attribute.
"""

from __future__ import annotations

from functools import lru_cache
from operator import itemgetter
from typing import Any

import sqlalchemy as sa
from pydantic_core import PydanticUndefined
from sqlmodel import SQLModel

__all__ = ["RowView", "new_row", "insert_many"]


class RowView:
    """Attribute access to a column dict: ``view.statement`` reads, ``view.statement = x`` writes ``row["statement"]``."""

    __slots__ = ("row",)

    def __init__(self, row: dict[str, Any]):
        object.__setattr__(self, "row", row)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.row[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self.row[name] = value


@lru_cache(maxsize=None)
def _defaults(model: type[SQLModel]) -> tuple[dict[str, Any], tuple[tuple[str, Any], ...], tuple[str, ...]]:
    """(column -> plain default, (column, default factory) pairs, autoincrement key columns) of ``model``."""
    plain: dict[str, Any] = {}
    factories: list[tuple[str, Any]] = []
    columns = {c.name for c in model.__table__.columns}
    for name, info in model.model_fields.items():
        if name not in columns:
            continue
        if info.default_factory is not None:
            factories.append((name, info.default_factory))
        elif info.default is not PydanticUndefined:
            plain[name] = info.default
    serial = tuple(c.name for c in model.__table__.primary_key.columns
                   if c.autoincrement is True or (c.autoincrement == "auto" and c.type.python_type is int))
    return plain, tuple(factories), serial


def new_row(model: type[SQLModel], **values: Any) -> dict[str, Any]:
    """The column dict of a new ``model`` row: its defaults (list defaults fresh per row), then ``values``.
    An autoincrement key left at its default ``None`` is dropped, so the database assigns it."""
    plain, factories, serial = _defaults(model)
    row = dict(plain)
    for name, factory in factories:
        row[name] = factory()
    row.update(values)
    for name in serial:
        if row.get(name, None) is None:
            row.pop(name, None)
    return row


def insert_many(connection: sa.Connection, table: sa.Table, rows: list[dict[str, Any]]) -> None:
    """Insert ``rows`` (column dicts with the same keys) into ``table``.

    On SQLite: multi-row ``INSERT ... VALUES (...), (...)`` statements of :data:`_STATEMENT_ROWS` rows
    (the rest in halving sizes), the statement compiled once per size and each value passed
    through its column type's bind processor, as SQLAlchemy would. One statement per row (the driver's
    executemany) made FTS5 flush its pending terms after every row (the statement savepoint), which cost
    four times the rest of the insert. Rows with differing keys, and PostgreSQL (whose batched
    "insertmanyvalues" SQLAlchemy already does), go through ``connection.execute(insert(table), rows)``."""
    if not rows:
        return
    keys = frozenset(rows[0])
    if connection.dialect.name != "sqlite" or any(len(r) != len(keys) or r.keys() != keys for r in rows):
        connection.execute(sa.insert(table), rows)
        return
    head, values, order, processors = _sqlite_insert(connection.dialect, table, keys)
    get = itemgetter(*order) if len(order) > 1 else (lambda r, k=order[0]: (r[k],))
    flat: list[Any] = []
    for r in rows:
        vals = get(r)
        if processors:
            vals = list(vals)
            for i, fn in processors:
                vals[i] = fn(vals[i])
        flat.extend(vals)
    width = len(order)
    per = _STATEMENT_ROWS
    while per > 1 and per * width > _variable_limit(connection):
        per //= 2
    start = 0
    while start < len(rows):
        n = per
        while n > len(rows) - start:
            n //= 2  # the rest in halving sizes: a few statement texts, so the driver's cache holds them all
        connection.exec_driver_sql(head + ",".join([values] * n), tuple(flat[start * width:(start + n) * width]))
        start += n


#: Rows per INSERT statement on SQLite (halved until the statement's ``?`` fit the variable limit).
_STATEMENT_ROWS = 256


def _variable_limit(connection: sa.Connection) -> int:
    """How many ``?`` one SQLite statement may hold (999 where the driver cannot say)."""
    try:
        import sqlite3

        return connection.connection.dbapi_connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
    except (AttributeError, TypeError):
        return 999


_COMPILED: dict[tuple, tuple[str, str, tuple[str, ...], tuple]] = {}


def _sqlite_insert(dialect, table: sa.Table, keys: frozenset[str]) -> tuple[str, str, tuple[str, ...], tuple]:
    """The INSERT of ``keys`` into ``table`` for ``dialect`` split at VALUES (``"INSERT ... VALUES "``,
    ``"(?, ...)"``), the columns in parameter order and (position, bind processor) of those that have
    one; compiled once per table and key set."""
    cache_key = (dialect.name, table.name, keys)
    if cache_key not in _COMPILED:
        compiled = sa.insert(table).compile(dialect=dialect, column_keys=sorted(keys))
        order = tuple(compiled.positiontup)
        sql = str(compiled)
        at = sql.rindex(" VALUES ")
        processors = tuple((i, fn) for i, k in enumerate(order)
                           if (fn := table.c[k].type.dialect_impl(dialect).bind_processor(dialect)) is not None)
        _COMPILED[cache_key] = (sql[:at + 8], sql[at + 8:].strip(), order, processors)
    return _COMPILED[cache_key]
