"""The store-wide change counter (issue 22 item 2): one number that moves whenever the store changes in
a way recall can see, read with one primary-key lookup.

``current(engine)`` (or ``read(connection)`` inside a transaction) is ``store_change.n``. Migration
0012's database triggers move it in the same transaction as the change, for every writer (any code
path, any process): a row of ``memory``, ``evidence``, ``repository`` or ``store_setting`` inserted,
updated or deleted -- except an update of ``memory`` that sets only ``last_used_at``, which is what
recording a recall writes. Usage and harm events, history, audit and claims do not move it by
themselves (a harm report that challenges a memory does, through the memory's state).

Use: keep what you computed from the store together with the value you read *before* reading the
store; while ``current`` still gives that value nothing you read has changed. The value is opaque:
each change moves it by a random step (it always changes, never in order, and does not come back, so
a store restored from a backup and changed otherwise does not meet a kept value); only equality
means anything. 0 means the store has no counter (its row deleted with the triggers off, or a store
older than migration 0012 opened read-only): treat it as "always changed". A poller (the TUI,
issue 24) calls ``current`` and refreshes when the value differs.
"""

from __future__ import annotations

import weakref

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

_READ = sa.text("SELECT n FROM store_change WHERE id = 1")
#: engine -> whether its store has the counter's table (looked up once per engine)
_HAS_TABLE: "weakref.WeakKeyDictionary[Engine, bool]" = weakref.WeakKeyDictionary()


def read(conn: Connection) -> int:
    """The counter as ``conn``'s transaction sees it; 0 when there is none (no row, or a store older
    than migration 0012 opened read-only)."""
    has = _HAS_TABLE.get(conn.engine)
    if has is None:
        has = _HAS_TABLE[conn.engine] = sa.inspect(conn).has_table("store_change")
    return int(conn.execute(_READ).scalar() or 0) if has else 0


def current(engine: Engine) -> int:
    """The counter now (one indexed read on a connection of its own); 0 when the store has none."""
    with engine.connect() as conn:
        return read(conn)
