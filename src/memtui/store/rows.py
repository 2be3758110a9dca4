"""Rows as plain column dicts, for writers that insert many at once (issue 11, item 9: the import).

Building a SQLModel table instance costs far more than the row's own work (every field goes through
pydantic defaults and SQLAlchemy instrumentation), so bulk writers build ``{column: value}`` dicts
with :func:`new_row` and insert them with SQLAlchemy core (``session.execute(insert(table), rows)``).
:class:`RowView` lets the checks written for ORM rows (:func:`memtui.review.lifecycle.facts_of`,
:func:`memtui.safety.guard.screen_memory`) read and change such a dict by attribute.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic_core import PydanticUndefined
from sqlmodel import SQLModel

__all__ = ["RowView", "new_row"]


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
