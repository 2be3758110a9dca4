"""The queue is live and oriented (issue 24, item 6 and Build 6): a decision made by another process
shows in a running TUI without a key press; the header names the store, the repository filter and the
sort; queue friction (escape clears a kept search, undo finds its row, a batch at the end keeps a detail)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memtui.app import MemtuiApp
from memtui.domain.invariants import Actor
from memtui.review.service import ReviewService
from memtui.widgets.memory_detail import MemoryDetail
from memtui.widgets.queue_list import QueueList
from tests.gitrepo import import_anchored

DATA = Path(__file__).parent / "data"
ACTOR = Actor(type="human", id="reviewer-7", role="reviewer")
MEMTUI = Path(sys.executable).parent / "memtui"


@pytest.fixture
def store(sqlite_engine, tmp_path):
    import_anchored(sqlite_engine, [DATA / "queue.yaml"], Actor("human", "loader"), tmp_path)
    return sqlite_engine


async def _settle(app, pilot):
    for _ in range(2):
        await pilot.pause()
        await app.workers.wait_for_complete()
    await pilot.pause()


def _ids(app) -> list[str]:
    return [r.memory_id for r in app.screen.query_one("#queue", QueueList).rows]


def _cursor_id(app) -> str:
    return app.screen.query_one("#queue", QueueList).current.memory_id


@pytest.fixture
def any_store(engine, tmp_path):
    """The queue's memories on SQLite and on PostgreSQL."""
    import_anchored(engine, [DATA / "queue.yaml"], Actor("human", "loader"), tmp_path)
    return engine


async def test_a_decision_by_another_process_shows_within_two_seconds(any_store):
    store = any_store
    db = store.url.render_as_string(hide_password=False) if store.url.get_backend_name() != "sqlite" \
        else store.url.database
    app = MemtuiApp(store, ACTOR)
    async with app.run_test(size=(140, 30)) as pilot:
        await _settle(app, pilot)
        ids = _ids(app)
        assert "mem_tests" in ids and "mem_registry" in ids
        queue = app.screen.query_one("#queue", QueueList)
        queue.move_to(ids.index("mem_registry"))  # the cursor's memory stays under the cursor
        await _settle(app, pilot)
        env = dict(os.environ, LOGNAME="reviewer-2", USER="reviewer-2")
        done = subprocess.run([str(MEMTUI), "decide", "mem_tests", "reject", "--db", db, "--actor", "reviewer-2"],
                              capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 0, done.stderr
        assert "mem_tests: candidate -> rejected" in done.stdout
        decided = time.monotonic()
        while "mem_tests" in _ids(app) and time.monotonic() - decided < 5:
            await pilot.pause(0.05)  # no key is pressed
        seen = time.monotonic() - decided
        assert "mem_tests" not in _ids(app)
        assert seen < 2.0, f"the queue showed the other process's decision after {seen:.2f} s"
        assert _ids(app) == [i for i in ids if i != "mem_tests"]
        assert _cursor_id(app) == "mem_registry"
        await _settle(app, pilot)


async def test_own_decisions_do_not_reload_the_queue(store):
    app = MemtuiApp(store, ACTOR)
    async with app.run_test(size=(140, 30)) as pilot:
        await _settle(app, pilot)
        ids = _ids(app)
        queue = app.screen.query_one("#queue", QueueList)
        queue.move_to(ids.index("mem_tests"))
        await _settle(app, pilot)
        await pilot.press("x")
        await _settle(app, pilot)
        await pilot.pause(1.5)  # a poll or two
        await _settle(app, pilot)
        assert ReviewService(store).detail("mem_tests").state == "rejected"
        assert _ids(app) == ids  # the decided row stays in place, marked
        assert queue.cell(ids.index("mem_tests"), "state").startswith("✗")


ORDER = ["mem_cache_ttl", "mem_adr", "mem_registry", "mem_tests"]


async def _keys(app, pilot, *keys):
    await pilot.press(*keys)
    await _settle(app, pilot)


async def test_header_names_store_repository_and_sort(store, tmp_path, monkeypatch):
    monkeypatch.chdir(Path(store.url.database).parent)
    app = MemtuiApp(store, ACTOR)
    async with app.run_test(size=(140, 30)) as pilot:
        await _settle(app, pilot)
        name = Path(store.url.database).name
        assert app.screen.sub_title == f"review queue · {name} · repo all · sort state ▲"
        assert app.screen.query_one("#queue-header").text.plain.startswith("state▲")
        await _keys(app, pilot, "O")  # reversed
        assert app.screen.sub_title.endswith("sort state ▼")
        assert app.screen.query_one("#queue-header").text.plain.startswith("state▼")
        app.screen.set_filter(app.screen._filter.with_(repository_id="order-service", sort="age"))
        await _settle(app, pilot)
        assert app.screen.sub_title == f"review queue · {name} · repo order-service · sort age ▼"
        header = app.screen.query_one("#queue-header").text.plain
        assert header.count("▼") == 1 and header.rstrip().endswith("▼")  # age, the last column


def test_store_label_hides_a_postgres_password():
    import sqlalchemy as sa

    from memtui.review.workstation import store_label

    engine = sa.create_engine("postgresql+psycopg://alice:s3cret@db.example:5432/memories")
    assert "s3cret" not in store_label(engine)
    assert store_label(engine).endswith("alice:***@db.example:5432/memories")


async def test_escape_clears_a_kept_search(store):
    app = MemtuiApp(store, ACTOR)
    async with app.run_test(size=(140, 30)) as pilot:
        await _settle(app, pilot)
        await _keys(app, pilot, "slash", *"registered", "enter")  # enter keeps the search
        assert _ids(app) == ["mem_registry"]
        await _keys(app, pilot, "escape")  # the queue has focus: escape drops the kept search
        assert _ids(app) == ORDER and _cursor_id(app) == "mem_registry"
        assert "/registered" not in app.screen.query_one("#filter-bar").text.plain


async def test_undo_brings_back_a_row_a_reload_removed(store):
    app = MemtuiApp(store, ACTOR)
    async with app.run_test(size=(140, 30)) as pilot:
        await _settle(app, pilot)
        queue = app.screen.query_one("#queue", QueueList)
        queue.move_to(ORDER.index("mem_tests"))
        await _settle(app, pilot)
        await _keys(app, pilot, "x")
        app.screen.reload()  # as after another screen: the rejected row leaves the queue
        await _settle(app, pilot)
        assert "mem_tests" not in _ids(app)
        queue.move_to(0)
        await _settle(app, pilot)
        await _keys(app, pilot, "u")
        assert ReviewService(store).detail("mem_tests").state == "candidate"
        assert _cursor_id(app) == "mem_tests"


async def test_a_batch_at_the_end_of_the_list_leaves_a_detail(store):
    app = MemtuiApp(store, ACTOR)
    async with app.run_test(size=(140, 30)) as pilot:
        await _settle(app, pilot)
        await _keys(app, pilot, "G", "v", "k")  # the last two rows
        await _keys(app, pilot, "x")
        await _keys(app, pilot, "y")
        assert ReviewService(store).detail("mem_tests").state == "rejected"
        detail = app.screen.query_one("#detail", MemoryDetail)
        shown = "\n".join(t.plain for t in detail.lines)
        assert _cursor_id(app) in shown and "Nothing selected" not in shown


async def test_empty_queue_says_how_to_start(sqlite_engine):
    app = MemtuiApp(sqlite_engine, ACTOR)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        shown = " ".join(t.plain for t in app.screen.query_one("#detail", MemoryDetail).lines)
        assert "memtui import FILE" in shown and "memtui demo" in shown


def test_org_wide_memory_shows_the_impact_its_gate_acts_on(sqlite_engine, tmp_path):
    from memtui.importers.native import import_files
    from memtui.widgets.memory_detail import render_detail

    (tmp_path / "org.yaml").write_text("""memories:
  - memoryId: mem_org
    type: repo_convention
    statement: "Every service logs in JSON."
    scope: {tenantId: acme}
    state: candidate
    confidence: 0.7
    createdAt: 2026-11-01T00:00:00Z
    evidence:
      - {type: doc, path: docs/logging.md}
""")
    import_files(sqlite_engine, [tmp_path / "org.yaml"], Actor("human", "loader"))
    detail = ReviewService(sqlite_engine, ACTOR).detail("mem_org")
    text = "\n".join(t.plain for t in render_detail(detail))
    assert "impact normal" not in text
    assert "impact high (org-wide; recorded normal)" in text
