"""The health model's reads of active memory, their evidence and the approvals of high-impact memory
are one query each (issue 22, item 8: a query per 500 ids made ~1,500 round trips at 1,000,000
memories); what they find is the same on SQLite and PostgreSQL, for a whole-store viewer and for one
who sees a single repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import Session, select

from memtui.domain.invariants import Actor
from memtui.maintenance.assess import assess
from memtui.maintenance.usage import record_usage
from memtui.review.health import build_health
from memtui.review.service import ReviewService
from memtui.store.models import Evidence, StateHistory
from tests.gitrepo import import_anchored

DATA = Path(__file__).parent / "data"
LOADER = Actor("human", "loader", "lead")
BILLING = """memories:
  - memoryId: mem_billing_rounding
    type: code_fact
    statement: "Invoices round half to even in InvoiceTotals."
    scope: {tenantId: acme, repositoryId: billing-service, modulePath: src/billing}
    state: active
    reviewState: approved
    confidence: 0.9
    createdAt: 2026-08-01T00:00:00Z
    evidence:
      - {type: file_span, path: src/billing/InvoiceTotals.java, commitSha: "3333333333333333333333333333333333333333", lines: [1, 20], status: valid}
      - {type: symbol, path: src/billing/InvoiceTotals.java, symbol: InvoiceTotals.round, commitSha: "3333333333333333333333333333333333333333", status: valid}
"""


@pytest.fixture
def engine_with_store(engine, tmp_path):
    (tmp_path / "billing.yaml").write_text(BILLING)
    import_anchored(engine, [DATA / "queue.yaml", tmp_path / "billing.yaml"], LOADER, tmp_path)
    for _ in range(3):  # useful: with valid evidence, a module and approval its band is high
        record_usage(engine, "mem_billing_rounding", "positive", Actor("agent", "coder-1"))
    approved = ReviewService(engine).decide("mem_adr", "approve", Actor("human", "lee", "lead"))
    with Session(engine) as s, s.begin():
        s.get(StateHistory, approved.event_id).actor_role = "reviewer"  # an edited database
        for e in s.exec(select(Evidence).where(Evidence.memory_id == "mem_active_one")):
            e.status = "deleted"
            s.add(e)
    return engine


def test_violations_and_bands_from_the_joined_reads(engine_with_store):
    engine = engine_with_store
    model = {r.repository_id: r for r in build_health(engine).repositories}
    order = model["order-service"]
    ids = sorted(m for m, _v in order.violations)
    assert ids == ["mem_active_one", "mem_adr"]
    assert ("mem_adr", "is high impact but was made active by human:lee (reviewer), not a lead "
                       "(review invariant)") in order.violations
    assert "evidence invariant" in dict(order.violations)["mem_active_one"]
    assert model["billing-service"].violations == ()
    assessed = assess(engine)  # the quality bands of `memtui quality`, computed its own way
    for repo, r in model.items():
        assert r.high_value == tuple(sorted(a.memory_id for a in assessed if a.state == "active"
                                            and a.repository_id == repo and a.quality.band == "high"))
    assert model["billing-service"].high_value == ("mem_billing_rounding",)


def test_a_viewer_of_one_repository_sees_its_part_alone(engine_with_store):
    engine = engine_with_store
    whole = {r.repository_id: r for r in build_health(engine).repositories}
    narrow = build_health(engine, Actor("human", "rita", "reviewer", scopes=("acme/billing-service",)))
    assert [r.repository_id for r in narrow.repositories] == ["billing-service"]
    assert narrow.repositories[0].by_state == whole["billing-service"].by_state
    assert narrow.repositories[0].high_value == whole["billing-service"].high_value
    assert narrow.repositories[0].violations == ()
