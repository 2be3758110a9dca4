"""Alembic migrations: a fresh store reaches head, the tables match the models, and downgrade/upgrade round-trips."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import SQLModel

import memtui.store.models  # noqa: F401
from memtui.store.engine import _alembic_config, is_model_object, current_revision, head_revision, upgrade


def test_store_is_at_head_and_matches_models(engine):
    assert current_revision(engine) == head_revision()
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts={"include_name": is_model_object}),
                                SQLModel.metadata)
    assert diff == []


def test_upgrade_is_a_no_op_at_head(engine):
    before, after = upgrade(engine)
    assert before == after == head_revision()


def test_downgrade_to_base_and_back(sqlite_engine):
    from alembic import command

    with sqlite_engine.begin() as conn:
        command.downgrade(_alembic_config(conn), "base")
    assert current_revision(sqlite_engine) is None
    upgrade(sqlite_engine)
    assert current_revision(sqlite_engine) == head_revision()


def test_sqlite_store_uses_wal_and_foreign_keys(sqlite_engine):
    with sqlite_engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
