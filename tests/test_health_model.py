"""One health model (issue 11, item 6): ``memtui health --json``, ``memory-health-report.yaml`` and the TUI
health screen (under Pilot) list the same actions for one store, and the §19.2 sections are there."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
import yaml
from sqlmodel import Session, select
from typer.testing import CliRunner

from memtui.app import MemtuiApp
from memtui.cli import app as cli_app
from memtui.domain.invariants import Actor
from memtui.maintenance.runner import maintain
from memtui.maintenance.usage import record_usage
from memtui.reports.maintenance import write_reports
from memtui.review.health import BACKLOG_MAX_DAYS, HIGH_USE_MIN, build_health
from memtui.sample import set_up_demo
from memtui.store.engine import open_store
from memtui.review.service import ReviewService
from memtui.store.models import Evidence, HarmEvent, StateHistory

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)  # = MEMTUI_NOW of conftest's fixed clock
AGENT = Actor("agent", "coder-1")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """The demo store after maintenance, plus: harm reported on an active memory (challenged), an older harm
    event on another active one nobody looked at since, five uses of a memory waiting for review, and two
    policy violations: an active memory whose evidence is all gone, and an org-wide memory whose approval
    reads as a reviewer's (an edited database)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("MEMTUI_NOW", "2026-11-30T12:00:00Z")
    tmp = tmp_path_factory.mktemp("health")
    path = tmp / "demo.db"
    engine = open_store(str(path))
    set_up_demo(engine, tmp / "work", Actor("human", "loader", "lead"))
    maintain(engine, now=NOW)
    record_usage(engine, "mem_build_command", "harm", AGENT, issue="ran the wrong build")
    for _ in range(HIGH_USE_MIN):
        record_usage(engine, "mem_rule_registry_convention", "positive", AGENT)
    approved = ReviewService(engine).decide("mem_org_imperative_commits", "approve", Actor("human", "lee", "lead"))
    with Session(engine) as s, s.begin():
        # an edited database: the org-wide (high-impact) approval now reads as a reviewer's
        s.get(StateHistory, approved.event_id).actor_role = "reviewer"
        s.add(HarmEvent(harm_id="harm_old", memory_id="mem_discount_rounding", issue="rounded the wrong way",
                        action="reported", created_at=datetime(2026, 11, 1, tzinfo=UTC)))
        for e in s.exec(select(Evidence).where(Evidence.memory_id == "mem_rule_ids_dotted")):
            e.status = "deleted"
            s.add(e)
    yield engine, path, tmp
    engine.dispose()
    mp.undo()


def _cli_actions(path) -> list[tuple[str | None, str]]:
    res = CliRunner().invoke(cli_app, ["health", "--json", "--db", str(path)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return [(h["repositoryId"], a) for h in json.loads(res.stdout)["memoryHealth"] for a in h["actionRequired"]]


def _report_actions(engine, out) -> list[tuple[str | None, str]]:
    write_reports(engine, out, NOW)
    data = yaml.safe_load((out / "memory-health-report.yaml").read_text(encoding="utf-8"))
    return [(h["repositoryId"], a) for h in data["memoryHealth"] for a in h["actionRequired"]]


async def _tui_actions(engine) -> tuple[list[tuple[str | None, str]], str]:
    from textual.widgets import Static

    app = MemtuiApp(engine, Actor("human", "reviewer-7"))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.press("h")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        shown = screen.query_one("#actions", Static).content.plain
        return list(screen.action_lines), shown


async def test_cli_report_and_tui_list_the_same_actions(store):
    engine, path, tmp = store
    cli = _cli_actions(path)
    report = _report_actions(engine, tmp / "reports")
    tui, shown = await _tui_actions(engine)
    assert cli == report == tui
    for repo, action in tui:  # and the screen shows each, in that order
        assert f"• {repo or '(org-wide)'}: {action}" in shown
    assert shown.index(tui[0][1]) < shown.index(tui[-1][1])
    order = [a for r, a in cli if r == "order-service"]
    # the §19.2 additions, each worked out from what the fixture did
    assert order[0] == "fix 1 policy violation: mem_rule_ids_dotted"
    assert order[1] == "look at 1 challenged memory (harm or contradiction reported)"
    assert order[2] == "re-review 1 memory still in use after harm was reported: mem_discount_rounding"
    assert order[3] == "review 1 high-use memory first (stale, conflicted or waiting): mem_rule_registry_convention"
    # the oldest queue item: mem_pricing_independent, a candidate since 2026-06-15T13:02 -> 167 whole days
    assert (NOW - datetime(2026, 6, 15, 13, 2, tzinfo=UTC)).days == 167 > BACKLOG_MAX_DAYS
    assert order[-1].startswith("work the review backlog: mem_pricing_independent has waited 167 days")
    assert [a for r, a in cli if r is None] == ["fix 1 policy violation: mem_org_imperative_commits"]


def test_the_sections_of_the_model(store):
    engine, path, _ = store
    model = {r.repository_id: r for r in build_health(engine, None, NOW).repositories}
    order = model["order-service"]
    assert order.high_use == (("mem_rule_registry_convention", HIGH_USE_MIN),)
    harmful = {m: (n, st) for m, n, _last, st in order.harmful}
    assert harmful == {"mem_build_command": (1, "challenged"), "mem_discount_rounding": (1, "active")}
    assert [m for m, _v in order.violations] == ["mem_rule_ids_dotted"]
    assert "evidence invariant" in order.violations[0][1]
    assert order.by_state["challenged"] == 1
    from memtui.maintenance.assess import assess  # the quality bands of `memtui quality`, computed its own way

    assert order.high_value == tuple(sorted(a.memory_id for a in assess(engine) if a.state == "active"
                                            and a.repository_id == "order-service" and a.quality.band == "high"))
    assert order.high_value
    assert model[None].violations == (("mem_org_imperative_commits", "is high impact but was made active by "
                                       "human:lee (reviewer), not a lead (review invariant)"),)
    assert (order.backlog.oldest_memory_id, order.backlog.oldest_days) == ("mem_pricing_independent", 167)
    assert order.backlog.waiting == sum(order.by_state[s] for s in ("candidate", "approved", "needs_review",
                                                                    "challenged"))
    res = CliRunner().invoke(cli_app, ["health", "--db", str(path)], catch_exceptions=False)
    assert "  high use: mem_rule_registry_convention (5 uses)" in res.stdout
    assert "  policy violation: mem_rule_ids_dotted is active but breaks the evidence invariant" in res.stdout
