"""Shared fixtures: real stores (a SQLite file, the real PostgreSQL), real git repositories, a fixed clock.

The PostgreSQL store suite creates a database of its own per test session at 127.0.0.1:5432
(user postgres, trust auth) and drops it afterwards. Outside CI an unreachable server skips
those tests; with ``CI=true`` it fails them.

The suite runs in pytest-xdist workers (``-n 3 --dist loadgroup`` in pyproject.toml; ``-n 0``
runs it in one process). Each worker is a session of its own: its own PostgreSQL database, temporary
folders and session fixtures. The modules in :data:`ONE_WORKER_MODULES` run whole on one worker.
"""

from __future__ import annotations

import gc
import os
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa

from memtui.domain.invariants import Actor
from memtui.store.engine import open_store

PG_ADMIN_URL = os.environ.get("MEMTUI_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
FIXED_NOW = "2026-11-30T12:00:00Z"
PG_SKIP = "PostgreSQL unreachable"  #: how a skipped PostgreSQL test's reason begins
ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"


# The cyclic garbage collector: the suite makes millions of short-lived objects (Textual apps under
# Pilot, rows, SQLAlchemy results) beside the ~600,000 long-lived ones its imports leave. At Python's
# default first threshold (700 allocations) that meant a full collection of all of them every few
# tests, a fifth of the time of a test process; at 7000 the same garbage is collected (the number of
# live objects stays the same) for less than half the time. Only this process: the app in its own
# processes (the CLI, `memtui serve`, `memtui mcp`) keeps Python's defaults.
gc.set_threshold(7000, 10, 10)

# The CLI's warm command server (memtui.cli.warm) stays out of the suite's own CLI processes: each test
# sees a cold process, as CI's first run does; tests/test_warm.py runs the warm path in folders of its own.
os.environ["MEMTUI_WARM"] = "0"


#: Modules whose module-scoped fixtures are expensive (a demo store served by `memtui serve` or
#: `memtui mcp`, a 3000-memory store, the labelled pairs through maintenance): each runs on one worker
#: (an xdist_group of its own), so the fixture is built once, not once per worker.
ONE_WORKER_MODULES = frozenset({"test_api.py", "test_mcp.py", "test_crash_safety.py", "test_pair_quality.py",
                                "test_sample_data.py", "test_health_model.py", "test_import_fuzz.py",
                                "test_judge.py", "test_revalidate_git.py", "test_symbol_index.py",
                                "test_trust_transports.py"})


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name in ONE_WORKER_MODULES:
            item.add_marker(pytest.mark.xdist_group(item.path.stem))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Outside CI, a machine without PostgreSQL runs everything else: say once, at the end, how many
    PostgreSQL tests were skipped and how to run them (issue 22, item 7)."""
    skipped = [r for r in terminalreporter.stats.get("skipped", [])
               if isinstance(r.longrepr, tuple) and PG_SKIP in str(r.longrepr[-1])]
    if skipped:
        terminalreporter.write_line(
            f"{len(skipped)} PostgreSQL tests skipped: no server at {PG_ADMIN_URL}. To run them, start "
            "PostgreSQL on 127.0.0.1:5432 (database test, user postgres, trust auth) or point "
            "MEMTUI_TEST_PG at one (postgresql+psycopg://USER@HOST:PORT/DB), then run make test again.",
            yellow=True, bold=True)


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
    """URL of a fresh PostgreSQL database for this test session (dropped at the end). Each pytest-xdist
    worker is a session of its own, so each has its own database.

    The database commits without waiting for the disk (``synchronous_commit = off``): a crash of the
    server could lose the last commits of this throw-away database, nothing else changes (transactions,
    locks and isolation are the same), and the store tests stop waiting for an fsync at every commit."""
    name = f"memtui_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 5})
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
            conn.execute(sa.text(f'ALTER DATABASE "{name}" SET synchronous_commit = off'))
    except sa.exc.OperationalError as exc:
        admin.dispose()
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL at {PG_ADMIN_URL} is required in CI and unreachable: {exc.orig}")
        pytest.skip(f"{PG_SKIP} at {PG_ADMIN_URL}: {exc.orig}")
    url = PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    yield url
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def empty_pg_store(url: str) -> None:
    """Bring the PostgreSQL store at ``url`` to head and delete every row of every table but Alembic's.

    DELETE, not TRUNCATE: a TRUNCATE of the twenty tables makes new files for each table and index and
    costs about 0.3 s a test, the DELETEs a millisecond. Foreign-key triggers are off for this one
    transaction (``session_replication_role``, which needs a superuser, as ``postgres`` is), so the
    order of the tables does not matter; every table is emptied, so nothing is left dangling. The
    tables are read from the database, so a table a new migration adds is emptied too."""
    engine = open_store(url)
    try:
        with engine.begin() as conn:
            tables = conn.execute(sa.text(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
                "AND tablename <> 'alembic_version' ORDER BY tablename")).scalars().all()
            if conn.execute(sa.text("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")).scalar():
                conn.execute(sa.text("SET LOCAL session_replication_role = replica"))
                for table in tables:
                    conn.exec_driver_sql(f'DELETE FROM "{table}"')
            else:
                conn.exec_driver_sql("TRUNCATE " + ", ".join(f'"{t}"' for t in tables) + " CASCADE")
    finally:
        engine.dispose()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory) -> Path:
    """A new SQLite store migrated to head once a session (by :func:`open_store`, the real migrations),
    with its write-ahead log folded in. Tests get copies (:func:`new_sqlite_store`), never this file:
    a copy is the same bytes as a store migrated in the test, without a migration run per test."""
    import sqlite3

    path = tmp_path_factory.mktemp("template") / "store.db"
    open_store(str(path)).dispose()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0
    return path


@pytest.fixture
def new_sqlite_store(sqlite_template, tmp_path) -> Path:
    """``tmp_path/store.db``: a new, migrated SQLite store of this test's own (a copy of the template)."""
    import shutil

    path = tmp_path / "store.db"
    shutil.copyfile(sqlite_template, path)
    return path


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request, tmp_path):
    """A store URL: a new SQLite file (migrated), or the session's PostgreSQL database emptied for this test."""
    if request.param == "sqlite":
        return str(request.getfixturevalue("new_sqlite_store"))
    url = request.getfixturevalue("pg_database_url")
    empty_pg_store(url)
    return url


@pytest.fixture
def engine(store_url):
    """An open, migrated store on SQLite or PostgreSQL (the store suite runs on both)."""
    eng = open_store(store_url)
    yield eng
    eng.dispose()


@pytest.fixture
def sqlite_engine(new_sqlite_store):
    """An open, migrated SQLite store (for tests that are about something other than the database)."""
    eng = open_store(str(new_sqlite_store))
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
