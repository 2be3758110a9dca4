"""Database URL handling, engine creation and migrations (Alembic) for the store.

One URL chooses the store: a path (or ``sqlite:///path``) is a SQLite file in WAL mode with
foreign keys on; ``postgresql://`` / ``postgresql+psycopg://`` is a shared PostgreSQL store.

Read-only stores (issue 21, item 7): a SQLite file that cannot be written (a read-only mount, no
write permission on the file, or a folder where SQLite cannot create its ``-wal``/``-shm`` files), or
any store with ``MEMTUI_READ_ONLY=1``, opens read-only: reading works (``show``, ``check``, ``report``,
``recall``, the TUI), no migration is attempted, and every write is refused with
:class:`StoreReadOnly` ("the store … is read-only …: decisions are refused").
"""

from __future__ import annotations

import ast
import os
import re
import weakref
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memtui.domain.invariants import LifecycleError

DEFAULT_DB = "memtui.db"
MIGRATIONS_DIR = Path(__file__).with_name("migrations")
#: Objects only migrations make, not the models: the full-text index of statements (migration 0007;
#: FTS5's shadow tables on SQLite, a generated column and its GIN index on PostgreSQL).
SEARCH_OBJECTS = frozenset({"memory_fts", "memory_fts_data", "memory_fts_idx", "memory_fts_content",
                            "memory_fts_docsize", "memory_fts_config", "statement_tsv", "ix_memory_statement_tsv"})


def is_model_object(name: str | None, type_: str, parent_names: dict) -> bool:
    """Alembic ``include_name`` hook: False for :data:`SEARCH_OBJECTS`, so comparing the store with
    the models (autogenerate, tests/test_migrations.py) does not report the search index."""
    return name not in SEARCH_OBJECTS


class StoreError(Exception):
    """The store cannot be opened or brought up to date; the message names the URL."""


class StoreReadOnly(StoreError, LifecycleError):
    """A write to a store opened read-only (issue 21 item 7). A LifecycleError too, so every path that
    refuses a decision with its sentence (CLI, TUI, API) refuses this one the same way."""

    def __init__(self, store: str, why: str):
        self.store, self.why = store, why
        super().__init__(f"the store {store} is read-only ({why}): decisions are refused; open it where it "
                         "can be written to change anything")


#: engine -> (the store's name, why it is read-only) (:func:`read_only_reason`)
_READ_ONLY: "weakref.WeakKeyDictionary[Engine, tuple[str, str]]" = weakref.WeakKeyDictionary()
_TRUE = ("1", "true", "yes", "on")


def resolve_url(db: str | None) -> str:
    """Turn ``--db``/``MEMTUI_DB`` (a path or a URL) into an SQLAlchemy URL.

    None uses ``MEMTUI_DB``, else ``memtui.db`` in the current directory. A bare path becomes
    ``sqlite:///<absolute path>``; ``postgresql://`` and ``postgres://`` gain the psycopg driver.
    """
    db = db or os.environ.get("MEMTUI_DB") or DEFAULT_DB
    if "://" not in db:
        return "sqlite:///" + str(Path(db).expanduser().resolve())
    for prefix in ("postgresql://", "postgres://"):
        if db.startswith(prefix):
            return "postgresql+psycopg://" + db[len(prefix):]
    return db


def is_lock_conflict(exc: Exception) -> bool:
    """Whether a database error is SQLite's "database is locked / busy" (another writer won the race)."""
    text = str(getattr(exc, "orig", exc)).lower()
    return "database is locked" in text or "database is busy" in text or "database table is locked" in text


def _sqlite_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=5000")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def _sqlite_read_only_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=5000")
    cur.execute("PRAGMA query_only=ON")
    cur.close()


def read_only_requested() -> bool:
    """Whether ``MEMTUI_READ_ONLY`` asks for every store to be opened read-only."""
    return os.environ.get("MEMTUI_READ_ONLY", "").strip().lower() in _TRUE


def _sqlite_read_only(path: Path) -> tuple[str, bool] | None:
    """Why the existing SQLite file ``path`` can only be read, and whether SQLite must be told it is
    immutable (its folder takes no ``-wal``/``-shm`` file and none is there to read); None when it
    can be written. ``os.access`` answers EROFS (a read-only mount) for root too."""
    if not path.is_file():
        return None
    why = None
    if not os.access(path, os.W_OK):
        why = "on a read-only file system" if _read_only_fs(path) else "the file is not writable"
    folder = path.parent
    folder_ro = not os.access(folder, os.W_OK | os.X_OK)
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    if folder_ro and why is None and not all(os.access(f, os.W_OK) for f in (wal, shm)):
        why = ("on a read-only file system" if _read_only_fs(folder)
               else f"its folder {folder} is not writable, so SQLite cannot create its -wal and -shm files")
    if why is None:
        return None
    # WAL mode reads need the -shm file; without one and no way to create it, only an immutable open
    # works, and it is safe only when no write-ahead log holds committed pages
    immutable = folder_ro and not shm.exists() and not (wal.exists() and wal.stat().st_size > 0)
    return why, immutable


def _read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _refuse_writes(engine: Engine, store: str, why: str) -> None:
    """Turn a write refused by the database (SQLite's SQLITE_READONLY, PostgreSQL's read-only transaction
    25006) into :class:`StoreReadOnly`."""

    @sa.event.listens_for(engine, "handle_error")
    def _read_only(ctx) -> None:
        orig = ctx.original_exception
        if ("readonly database" in str(orig).lower() or getattr(orig, "sqlstate", None) == "25006"
                or getattr(orig, "sqlite_errorname", "").startswith("SQLITE_READONLY")):
            raise StoreReadOnly(store, why) from orig


def read_only_reason(engine: Engine) -> str | None:
    """Why ``engine``'s store was opened read-only (e.g. "on a read-only file system"), or None."""
    found = _READ_ONLY.get(engine)
    return None if found is None else found[1]


def make_engine(db: str | None = None, *, pool_size: int | None = None) -> Engine:
    """Create the engine for ``db`` (see :func:`resolve_url`); SQLite connections get WAL and foreign keys.
    ``pool_size``: PostgreSQL connections kept open (default SQLAlchemy's 5; ``memtui serve`` asks for more).
    A store that can only be read, or any with ``MEMTUI_READ_ONLY=1``, gets a read-only engine
    (:func:`read_only_reason`)."""
    url = resolve_url(db)
    asked = read_only_requested()
    if url.startswith("sqlite"):
        path = url.removeprefix("sqlite:///")
        ro = None
        if path and path != ":memory:" and not path.startswith("file:"):
            parent = Path(path).parent
            if not parent.exists():
                raise StoreError(f"cannot create store {path}: folder {parent} does not exist")
            ro = _sqlite_read_only(Path(path))
            if ro is None and asked and Path(path).is_file():
                ro = ("MEMTUI_READ_ONLY is set", False)
        if ro is None:
            engine = sa.create_engine(url, connect_args={"check_same_thread": False})
            sa.event.listen(engine, "connect", _sqlite_pragmas)
            return engine
        why, immutable = ro
        query = {"mode": "ro", "uri": "true", **({"immutable": "1"} if immutable else {})}
        engine = sa.create_engine(sa.engine.URL.create("sqlite", database="file:" + quote(path), query=query),
                                  connect_args={"check_same_thread": False})
        sa.event.listen(engine, "connect", _sqlite_read_only_pragmas)
        _refuse_writes(engine, path, why)
        _READ_ONLY[engine] = (path, why)
        return engine
    if not url.startswith("postgresql"):
        raise StoreError(f"unsupported store {url.split('://', 1)[0]}://: use a SQLite file path or a "
                         "postgresql:// URL")
    try:
        extra = {"pool_size": pool_size, "max_overflow": pool_size} if pool_size else {}
        if asked:
            extra["connect_args"] = {"options": "-c default_transaction_read_only=on"}
        engine = sa.create_engine(url, pool_pre_ping=True, **extra)
    except (sa.exc.ArgumentError, ImportError) as exc:
        raise StoreError(f"cannot use store URL {url!r}: {exc}") from exc
    if asked:
        store = engine.url.render_as_string(hide_password=True)
        _refuse_writes(engine, store, "MEMTUI_READ_ONLY is set")
        _READ_ONLY[engine] = (store, "MEMTUI_READ_ONLY is set")
    return engine


def _alembic_config(connection):
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str:
    """The newest migration revision id shipped with this version of memtui."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_alembic_config(None)).get_current_head()


_REVISION_LINE = re.compile(r"^(down_revision|revision)\s*(?::[^=]*)?=\s*(.+?)\s*$", re.M)


@lru_cache(maxsize=1)
def shipped_head() -> str | None:
    """:func:`head_revision` read from the migration files' ``revision`` / ``down_revision`` lines,
    without importing alembic (issue 11, item 8: it costs a third of a second at every start); None
    when the files do not form one plain chain (a merge, an unusual line): ask alembic then."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in (MIGRATIONS_DIR / "versions").glob("*.py"):
        found = dict((k, v) for k, v in _REVISION_LINE.findall(path.read_text(encoding="utf-8")))
        rev, down = found.get("revision"), found.get("down_revision")
        if rev is None or down is None:
            return None
        try:
            rev, down = ast.literal_eval(rev), ast.literal_eval(down)
        except (ValueError, SyntaxError):
            return None
        if not isinstance(rev, str) or not (down is None or isinstance(down, str)):
            return None
        revisions.add(rev)
        if down is not None:
            parents.add(down)
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else None


def current_revision(engine: Engine) -> str | None:
    """The revision the store is at, or None for an empty store."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def _at_shipped_head(engine: Engine) -> bool:
    """Whether the store is at :func:`shipped_head` (read with one query; False when unsure)."""
    head = shipped_head()
    if head is None:
        return False
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all()
    except sa.exc.DBAPIError:
        return False  # no version table yet (an empty store), or unreachable: upgrade() says why
    return rows == [head]


def upgrade(engine: Engine) -> tuple[str | None, str]:
    """Bring the store up to the newest revision (``memtui init``); returns (before, after).

    Raises :class:`StoreError` when the database cannot be reached.
    """
    from alembic import command

    try:
        before = current_revision(engine)
        head = head_revision()
        if before != head:
            with engine.begin() as conn:
                command.upgrade(_alembic_config(conn), "head")
    except sa.exc.DBAPIError as exc:  # unreachable server, not a database file, permissions
        raise StoreError(f"cannot open store {engine.url.render_as_string(hide_password=True)}: "
                         f"{str(exc.orig).strip()}") from exc
    return before, head


def open_store(db: str | None = None, *, pool_size: int | None = None) -> Engine:
    """Engine for ``db``, migrated to the newest revision (every command opens the store this way).
    A store already at the newest revision is opened without alembic (:func:`shipped_head`). A
    read-only store (:func:`make_engine`) is never migrated: one that needs it raises StoreError."""
    engine = make_engine(db, pool_size=pool_size)
    if not _at_shipped_head(engine):
        read_only = _READ_ONLY.get(engine)
        if read_only is not None:
            _refuse_migration(engine, *read_only)
        upgrade(engine)
    return engine


def _refuse_migration(engine: Engine, store: str, why: str) -> None:
    """Raise StoreError for a read-only store that is not at the newest revision, saying what it needs."""
    try:
        at = current_revision(engine)
    except sa.exc.DBAPIError as exc:
        raise StoreError(f"cannot open store {store} (read-only: {why}): {str(exc.orig).strip()}") from exc
    head = head_revision()
    if at == head:
        return
    state = "is empty" if at is None else f"is at revision {at}"
    raise StoreError(f"the store {store} is read-only ({why}) and {state}; this memtui needs revision {head}, "
                     "and a read-only store is not migrated: run 'memtui init' on it once where it can be written")
