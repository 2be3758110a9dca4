"""Recall's pools kept per value of the store-wide change counter (issue 22 item 2).

A server keeps each recall pool (light rows, text index, weighings) while
:func:`memtui.store.changes.current` stays; a write by any process that can change what recall
answers moves it, in the same transaction. These tests change the store from *another process*
(the ``memtui`` command) between two recalls of this one and check the second recall sees the
change; that a kept pool never answers for a viewer who may see less; and what moves the counter
and what does not.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from memtui.domain.invariants import Actor
from memtui.recall import clear_caches, recall, resolve_visible_scope, warm
from memtui.store import changes
from memtui.store.models import Memory
from tests.test_recall import _load, _mem

MEMTUI = str(Path(sys.executable).parent / "memtui")
SCOPE = "repository:order-service"
TASK = "add a validation rule to RuleRegistry"
AGENT = Actor(type="agent", id="agent-7")


def _memtui(*args: str) -> subprocess.CompletedProcess:
    """``memtui ARGS`` as another process (cold: no warm server shares anything with this one)."""
    env = dict(os.environ, MEMTUI_WARM="0", LOGNAME="loader", USER="loader")
    out = subprocess.run([MEMTUI, *args], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr + out.stdout
    return out


@pytest.fixture
def store(engine, tmp_path):
    """Two repositories; three memories about validation rules in order-service, one in billing."""
    _load(engine, tmp_path, [
        _mem("mem_registry", "Validation rules are registered through RuleRegistry.", module="src/validation",
             path="src/validation/RuleRegistry.java"),
        _mem("mem_validator", "OrderValidator.validate runs every validation rule.", module="src/validation",
             path="src/validation/OrderValidator.java"),
        _mem("mem_ids", "Validation rule ids are dotted, e.g. order.total.max.", module="src/validation",
             path="src/validation/RuleIds.java"),
        _mem("mem_unrelated", "The build needs Java 17 and Maven 3.9.", path="pom.xml"),
        _mem("mem_billing", "Billing validation rules live in the billing RuleRegistry.", repo="billing-service",
             path="src/RuleRegistry.java"),
    ])
    clear_caches()
    yield engine
    clear_caches()


def _included(pack) -> list[str]:
    return [m.memory_id for m in pack.memories]


def _statements(engine):
    """A list that collects the SQL each statement on ``engine`` sends, and a function to stop."""
    seen: list[str] = []

    def spy(_conn, _cursor, statement, *_args):
        seen.append(statement)

    sa.event.listen(engine, "before_cursor_execute", spy)
    return seen, lambda: sa.event.remove(engine, "before_cursor_execute", spy)


def test_a_decision_in_another_process_moves_the_counter_and_the_next_recall_sees_it(store, store_url):
    first = recall(store, TASK, SCOPE, actor=AGENT)
    assert "mem_registry" in _included(first)
    counter = changes.current(store)
    assert counter != 0
    # recording the pack (usage events, last_used_at) changes nothing recall reads: the counter stays
    assert changes.current(store) == counter
    seen, stop = _statements(store)
    try:
        kept = recall(store, TASK, SCOPE, actor=AGENT, record=False)
    finally:
        stop()
    assert _included(kept) == _included(first)
    # warm: nothing reads the pool again (no statement without a list of ids reads the memory table)
    pool_reads = [s for s in seen if re.search(r"FROM memory(\s|$)", s) and "memory.memory_id IN" not in s]
    assert pool_reads == [], pool_reads

    _memtui("decide", "mem_registry", "block", "--db", store_url, "--actor", "loader", "--comment", "leaked")
    assert changes.current(store) != counter
    after = recall(store, TASK, SCOPE, actor=AGENT)
    assert "mem_registry" not in _included(after)
    blocked = {x.memory_id: x for x in after.excluded}["mem_registry"]
    assert (blocked.state, blocked.reason, blocked.subject) == ("blocked", "blocked", None)


def test_an_edit_of_evidence_by_another_writer_is_seen(store):
    """Revalidation rewrites evidence statuses without touching the memory row: the counter moves
    all the same (a trigger on evidence), and the memory leaves recall as stale."""
    assert "mem_validator" in _included(recall(store, TASK, SCOPE, record=False))
    counter = changes.current(store)
    with store.begin() as conn:  # as the revalidation job writes it: one bulk update of evidence
        conn.execute(sa.text("UPDATE evidence SET status = 'deleted' WHERE memory_id = 'mem_validator'"))
    assert changes.current(store) != counter
    after = recall(store, TASK, SCOPE, record=False)
    assert "mem_validator" not in _included(after)
    assert {x.memory_id: x.reason for x in after.excluded}["mem_validator"] == "stale"


def test_a_kept_pool_never_answers_for_a_viewer_who_sees_less(store, store_url):
    whole = recall(store, TASK, SCOPE, actor=AGENT, record=False)  # kept for agents
    assert "mem_registry" in _included(whole)
    outsider = Actor(type="human", id="rita", role="reviewer", scopes=("acme/billing-service",))
    narrow = recall(store, TASK, SCOPE, actor=outsider, record=False)
    assert narrow.memories == () and len(narrow.excluded) == 0  # none of order-service is hers to see
    again = recall(store, TASK, SCOPE, actor=AGENT, record=False)
    assert _included(again) == _included(whole)
    # order-service made private by another process: agents no longer recall it, at once
    _memtui("scope", "set-visibility", "order-service", "private", "--db", store_url, "--actor", "loader")
    hidden = recall(store, TASK, SCOPE, actor=AGENT, record=False)
    assert hidden.memories == () and len(hidden.excluded) == 0
    human = recall(store, TASK, SCOPE, actor=Actor(type="human", id="loader", role="lead"), record=False)
    assert "mem_registry" in _included(human)  # an unrestricted person still does


def test_a_kept_scope_answer_moves_with_the_store(store, store_url):
    scope = resolve_visible_scope(store, SCOPE, AGENT)
    assert scope.repository == "order-service"
    assert resolve_visible_scope(store, SCOPE, AGENT) == scope  # kept
    _memtui("scope", "set-visibility", "order-service", "private", "--db", store_url, "--actor", "loader")
    from memtui.recall import RecallError

    with pytest.raises(RecallError, match="unknown repository 'order-service'"):
        resolve_visible_scope(store, SCOPE, AGENT)


def test_what_moves_the_counter(store):
    def moved(sql: str, **params) -> bool:
        before = changes.current(store)
        with store.begin() as conn:
            conn.execute(sa.text(sql), params)
        return changes.current(store) != before

    assert moved("UPDATE memory SET confidence = 0.7 WHERE memory_id = 'mem_ids'")
    assert moved("UPDATE memory SET statement = statement || '.' WHERE memory_id = 'mem_ids'")
    assert moved("UPDATE evidence SET status = 'changed' WHERE memory_id = 'mem_ids'")
    assert moved("INSERT INTO store_setting (key, value) VALUES ('visibility:billing-service', 'public')")
    assert moved("DELETE FROM store_setting WHERE key = 'visibility:billing-service'")
    assert not moved("UPDATE memory SET last_used_at = created_at WHERE memory_id = 'mem_ids'")
    assert not moved("UPDATE audit_event SET actor_id = actor_id WHERE 1 = 0")
    before = changes.current(store)
    recall(store, TASK, SCOPE, actor=AGENT)  # records usage events and last_used_at
    assert changes.current(store) == before


def test_a_store_without_the_counter_row_is_always_read_afresh(store):
    """The row deleted and a memory changed with the triggers off (as the suite empties a PostgreSQL
    store): 0, nothing is kept, the change is seen; the next write inserts the row again."""
    kept = recall(store, TASK, SCOPE, record=False)
    with store.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SET LOCAL session_replication_role = replica"))  # triggers off
        else:
            conn.execute(sa.text("DROP TRIGGER store_change_memory_upd"))  # SQLite cannot switch them off
        conn.execute(sa.text("DELETE FROM store_change"))
        conn.execute(sa.text("UPDATE memory SET state = 'rejected' WHERE memory_id = 'mem_registry'"))
    assert changes.current(store) == 0
    fresh = recall(store, TASK, SCOPE, record=False)
    assert "mem_registry" in _included(kept) and "mem_registry" not in _included(fresh)
    with store.begin() as conn:
        conn.execute(sa.text("UPDATE evidence SET status = 'valid' WHERE memory_id = 'mem_ids'"))
    assert changes.current(store) != 0


def test_the_counter_trigger_names_every_memory_column_but_last_used_at():
    """Migration 0012 lists the columns whose update moves the counter; a column added later needs a
    trigger of its own migration (this fails until it has one)."""
    import importlib.util

    from memtui.store.engine import MIGRATIONS_DIR

    spec = importlib.util.spec_from_file_location("m0012", MIGRATIONS_DIR / "versions" / "0012_store_change.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    columns = {c.name for c in Memory.__table__.columns}
    assert set(module.MEMORY_COLUMNS) == columns - {"last_used_at"}


def test_warm_reads_the_pools_a_recall_then_finds(store):
    assert warm(store, None, AGENT) == 2  # order-service and billing-service
    seen, stop = _statements(store)
    try:
        pack = recall(store, TASK, SCOPE, actor=AGENT, record=False)
    finally:
        stop()
    assert "mem_registry" in _included(pack)
    assert not any("FROM evidence" in s and "IN (SELECT" in s for s in seen)  # the pool was not read again


def test_a_restored_store_changed_otherwise_does_not_meet_a_kept_value(sqlite_engine, tmp_path):
    """Two copies of one store (a backup restored) changed in different ways: different values, so
    nothing kept for one answers for the other; and each change moves the value."""
    import shutil

    from memtui.store.engine import open_store

    path = Path(sqlite_engine.url.database)
    with sqlite_engine.begin() as conn:
        conn.execute(sa.text("PRAGMA wal_checkpoint(TRUNCATE)"))
    backup = tmp_path / "backup.db"
    shutil.copyfile(path, backup)
    start = changes.current(sqlite_engine)
    seen = {start}
    for value in ("a", "b", "c"):
        with sqlite_engine.begin() as conn:
            conn.execute(sa.text("INSERT INTO store_setting (key, value) VALUES (:k, 'x')"), {"k": f"one:{value}"})
        seen.add(changes.current(sqlite_engine))
    restored = open_store(str(backup))
    try:
        assert changes.current(restored) == start
        with restored.begin() as conn:
            conn.execute(sa.text("INSERT INTO store_setting (key, value) VALUES ('other', 'y')"))
        assert changes.current(restored) not in seen
    finally:
        restored.dispose()
    assert len(seen) == 4
