"""Cancelling maintenance (issue 11, item 8): no job starts after the cancel, each job that ran is
whole, the jobs left are named, and a later run does them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlmodel import Session, select
from textual.widgets import Static

from memtui.app import MemtuiApp
from memtui.domain.invariants import Actor
from memtui.maintenance.runner import JOBS, jobs_not_run, maintain
from memtui.sample import set_up_demo
from memtui.store.models import DuplicateCluster, MaintenanceJob

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture
def demo_engine(sqlite_engine, tmp_path):
    set_up_demo(sqlite_engine, tmp_path / "work", Actor("human", "loader", "lead"))
    return sqlite_engine


def _job_types(engine) -> list[str]:
    with Session(engine) as s:
        return sorted({j.job_type for j in s.exec(select(MaintenanceJob)).all()})


def test_cancel_after_expiry_runs_no_later_job(demo_engine):
    before = set(_job_types(demo_engine))
    said: list[str] = []
    results = maintain(demo_engine, now=NOW, progress=said.append,
                       cancelled=lambda: any(m == "expiring" for m in said))
    assert [r.job_type for r in results] == ["secrets", "revalidate", "expire"]
    assert jobs_not_run(results) == ["dedupe", "conflicts", "compaction"]
    assert set(_job_types(demo_engine)) - before == {"secrets", "revalidate", "expire"}
    with Session(demo_engine) as s:
        assert s.exec(select(DuplicateCluster)).all() == []  # the dedupe job never started
    again = maintain(demo_engine, now=NOW)
    assert jobs_not_run(again) == []
    with Session(demo_engine) as s:
        assert s.exec(select(DuplicateCluster)).all()  # the sample has a near-duplicate cluster


def test_cancel_before_anything_runs_nothing(demo_engine):
    assert maintain(demo_engine, now=NOW, cancelled=lambda: True) == []
    assert jobs_not_run([]) == list(JOBS)


async def test_cancel_key_names_what_did_not_run(demo_engine):
    app = MemtuiApp(demo_engine, Actor("human", "reviewer-7", "reviewer"))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.press("m")
        await pilot.press("c")  # races the worker: whatever it stopped before is named, nothing else
        await app.workers.wait_for_complete()
        await pilot.pause()
        result = str(app.screen.query_one("#maint-result", Static).render())
        step = str(app.screen.query_one("#maint-step", Static).render())
    ran = set(_job_types(demo_engine))
    left = [j for j in JOBS if j not in ran]
    if left:
        assert f"cancelled: {', '.join(left)} did not run" in result
        assert step.startswith("stopped early")
    else:
        assert "cancelled" not in result
