"""Shared fixtures: real stores (a SQLite file, the real PostgreSQL), real git repositories, a fixed clock.

The PostgreSQL store suite creates a database of its own per test session at 127.0.0.1:5432
(user postgres, trust auth) and drops it afterwards. Outside CI an unreachable server skips
those tests; with ``CI=true`` it fails them.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa

from memtui.domain.invariants import Actor
from memtui.store.engine import open_store

PG_ADMIN_URL = os.environ.get("MEMTUI_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
FIXED_NOW = "2026-11-30T12:00:00Z"
ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"


@pytest.fixture(autouse=True)
def _fixed_clock(monkeypatch, tmp_path_factory):
    """Every test runs at the same instant, so ages, timestamps and snapshots are reproducible; user
    settings (the queue's saved filter) go to a fresh folder, never the real ~/.config."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
    monkeypatch.setenv("MEMTUI_NOW", FIXED_NOW)
    monkeypatch.delenv("MEMTUI_DB", raising=False)
    monkeypatch.delenv("MEMTUI_ACTOR", raising=False)
    monkeypatch.delenv("MEMTUI_ROLE", raising=False)


@pytest.fixture(autouse=True)
def _no_user_keymap(monkeypatch, tmp_path):
    """The developer's own ~/.config/memtui/keymap.yaml never reaches a test."""
    monkeypatch.setenv("MEMTUI_KEYMAP", str(tmp_path / "no-keymap.yaml"))


@pytest.fixture(scope="session")
def pg_database_url():
    """URL of a fresh PostgreSQL database for this test session (dropped at the end)."""
    name = f"memtui_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    except sa.exc.OperationalError as exc:
        admin.dispose()
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL at {PG_ADMIN_URL} is required in CI and unreachable: {exc.orig}")
        pytest.skip(f"PostgreSQL unreachable at {PG_ADMIN_URL}: {exc.orig}")
    url = PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    yield url
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


_TABLES = ("api_token", "audit_event", "secret_finding", "store_setting", "reviewer", "review_claim", "review_decision", "compaction_proposal", "memory_conflict", "not_duplicate_pair",
           "duplicate_cluster", "memory_harm_events", "memory_usage_events", "memory_revalidation", "memory_maintenance_jobs",
           "memory_state_history", "evidence", "memory", "repository", "reviewer", "audit_event",
           "store_setting")


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request, tmp_path):
    """A store URL: a new SQLite file, or the session's PostgreSQL database emptied for this test."""
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    url = request.getfixturevalue("pg_database_url")
    engine = open_store(url)
    with engine.begin() as conn:
        conn.execute(sa.text("TRUNCATE " + ", ".join(_TABLES) + " CASCADE"))
    engine.dispose()
    return url


@pytest.fixture
def engine(store_url):
    """An open, migrated store on SQLite or PostgreSQL (the store suite runs on both)."""
    eng = open_store(store_url)
    yield eng
    eng.dispose()


@pytest.fixture
def sqlite_engine(tmp_path):
    """An open, migrated SQLite store (for tests that are about something other than the database)."""
    eng = open_store(str(tmp_path / "store.db"))
    yield eng
    eng.dispose()


@pytest.fixture
def reviewer() -> Actor:
    """A human reviewer."""
    return Actor(type="human", id="reviewer-1", role="reviewer")


@pytest.fixture
def lead() -> Actor:
    """A human lead (may approve high-impact memory)."""
    return Actor(type="human", id="lead-1", role="lead")


@pytest.fixture(scope="session")
def demo_db_file(tmp_path_factory) -> Path:
    """The demo store (``memtui demo``'s data and repositories) after one maintenance run at
    FIXED_NOW, built once a session. Tests copy it (:func:`demo_copy`), never open it."""
    from datetime import UTC, datetime

    from memtui.maintenance.runner import maintain
    from memtui.sample import set_up_demo

    base = tmp_path_factory.mktemp("demo")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMTUI_NOW", FIXED_NOW)
        eng = open_store(str(base / "demo.db"))
        set_up_demo(eng, base / "work", Actor("human", "loader", "lead"))
        maintain(eng, now=datetime(2026, 11, 30, 12, 0, tzinfo=UTC))
        eng.dispose()
    return base / "demo.db"


@pytest.fixture
def demo_copy(demo_db_file, tmp_path):
    """An engine on a private copy of the demo store (see :func:`demo_db_file`)."""
    import shutil

    shutil.copy(demo_db_file, tmp_path / "demo.db")
    eng = open_store(str(tmp_path / "demo.db"))
    yield eng
    eng.dispose()
