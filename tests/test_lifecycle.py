"""The lifecycle on a real store (SQLite and PostgreSQL): transition, decisions, undo, history."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlmodel import Session, func, select

from memtui.domain.invariants import Actor, InvariantViolation, TransitionRefused
from tests.gitrepo import import_anchored
from memtui.review.lifecycle import MemoryNotFound, create_memory, transition
from memtui.review.service import DecisionError, ReviewService
from memtui.store.models import Evidence, Memory, StateHistory

SYSTEM = Actor(type="system", id="job-7")
IMPORTER = Actor(type="system", id="import-job")

STORE_YAML = """\
memories:
  - memoryId: mem_conv
    type: repo_convention
    statement: "Validation rules are registered through RuleRegistry."
    scope: {tenantId: acme, repositoryId: order-service, modulePath: src/validation}
    evidence:
      - type: file_span
        path: src/validation/RuleRegistry.java
        commitSha: 0123456789abcdef0123456789abcdef01234567
        lines: [10, 28]
        status: valid
    state: candidate
    reviewState: pending
  - memoryId: mem_live
    type: code_fact
    statement: "OrderValidator.validate is the entry point for order validation."
    scope: {tenantId: acme, repositoryId: order-service}
    evidence:
      - type: symbol
        symbol: OrderValidator.validate
        path: src/validation/OrderValidator.java
        commitSha: 0123456789abcdef0123456789abcdef01234567
        status: valid
    state: active
    reviewState: approved
  - memoryId: mem_adr
    type: architecture_decision
    statement: "Orders are validated before pricing, never after."
    scope: {tenantId: acme, repositoryId: order-service}
    evidence:
      - type: adr
        ref: ADR-012
    state: candidate
    reviewState: pending
candidates:
  - candidate_id: cand_env
    failure_class: environment_blocker
    failure_type: missing_docker
    proposed_memory: "Integration tests need a running Docker daemon."
    scope: {applies_to: [integration_tests], does_not_apply_to: [unit_tests]}
    evidence_refs: ["judge:ci-log", "artifact:ci-output"]
    promotion_status: candidate
    requires_human_review: true
    repository_id: order-service
    tenant_id: acme
"""


@pytest.fixture
def store(engine, tmp_path: Path):
    """The engine with four memories imported from a YAML file (one creation event each)."""
    path = tmp_path / "store.yaml"
    path.write_text(STORE_YAML, encoding="utf-8")
    report, _ = import_anchored(engine, [path], IMPORTER, tmp_path)  # issue 21 item 3: evidence in a checkout
    assert sorted(report.imported) == ["cand_env", "mem_adr", "mem_conv", "mem_live"]
    return engine


def as_utc(dt: datetime) -> datetime:
    """A stored timestamp as aware UTC (naive ones are UTC by the store's convention)."""
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def memory_row(engine, memory_id: str) -> Memory:
    with Session(engine) as s:
        m = s.get(Memory, memory_id)
        assert m is not None
        s.expunge(m)
        return m


def events(engine, memory_id: str | None = None) -> list[StateHistory]:
    with Session(engine) as s:
        q = select(StateHistory).order_by(StateHistory.event_id)
        if memory_id is not None:
            q = q.where(StateHistory.memory_id == memory_id)
        rows = list(s.exec(q))
        for r in rows:
            s.expunge(r)
        return rows


def history_count(engine) -> int:
    with Session(engine) as s:
        return s.exec(select(func.count()).select_from(StateHistory)).one()


# ---- transition() -----------------------------------------------------------------------------

def test_import_writes_one_creation_event_per_memory(store):
    evs = events(store)
    assert len(evs) == 4
    assert {e.memory_id for e in evs} == {"cand_env", "mem_adr", "mem_conv", "mem_live"}
    for e in evs:
        assert e.from_state is None
        assert e.actor_type == "system" and e.actor_id == "import-job" and e.actor_role is None
    assert {e.memory_id: e.to_state for e in evs}["mem_live"] == "active"
    assert memory_row(store, "mem_conv").version == 1


def test_transition_writes_exactly_one_event(store, reviewer):
    with Session(store) as s, s.begin():
        ev = transition(s, "mem_conv", "needs_review", reviewer, reason="span looks stale", comment="check line 12")
        event_id = ev.event_id
    m = memory_row(store, "mem_conv")
    assert m.state == "needs_review"
    assert m.version == 2
    evs = events(store, "mem_conv")
    assert len(evs) == 2
    assert history_count(store) == 5
    last = evs[-1]
    assert last.event_id == event_id
    assert (last.from_state, last.to_state) == ("candidate", "needs_review")
    assert last.reason == "span looks stale"
    assert last.comment == "check line 12"
    assert (last.actor_type, last.actor_id, last.actor_role) == ("human", "reviewer-1", "reviewer")
    assert last.review_state_before == "pending"
    assert last.compensates is None
    assert as_utc(last.created_at) == datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_exception_after_transition_rolls_back_state_and_event(store, reviewer):
    class Boom(RuntimeError):
        pass

    with pytest.raises(Boom):
        with Session(store) as s, s.begin():
            transition(s, "mem_conv", "rejected", reviewer, reason="wrong")
            raise Boom("after the transition, before the commit")
    m = memory_row(store, "mem_conv")
    assert m.state == "candidate"
    assert m.review_state == "pending"
    assert m.version == 1
    assert len(events(store, "mem_conv")) == 1
    assert history_count(store) == 4


def test_refused_transition_writes_nothing(store, reviewer):
    with pytest.raises(TransitionRefused):
        with Session(store) as s, s.begin():
            transition(s, "mem_live", "candidate", reviewer, reason="not allowed")
    assert memory_row(store, "mem_live").state == "active"
    assert history_count(store) == 4
    with pytest.raises(MemoryNotFound):
        with Session(store) as s, s.begin():
            transition(s, "mem_missing", "active", reviewer, reason="x")
    assert history_count(store) == 4


def test_create_memory_in_a_session(engine, reviewer):
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    with Session(engine) as s, s.begin():
        m = Memory(memory_id="mem_new", logical_memory_id="mem_new", type="code_fact",
                   statement="RuleRegistry is a singleton.", repository_id="order-service", state="candidate",
                   created_at=now)
        ev = [Evidence(memory_id="mem_new", ordinal=0, type="symbol", symbol="RuleRegistry")]
        create_memory(s, m, ev, reviewer, reason="typed in by hand")
    evs = events(engine, "mem_new")
    assert len(evs) == 1
    assert (evs[0].from_state, evs[0].to_state, evs[0].reason) == (None, "candidate", "typed in by hand")
    d = ReviewService(engine).detail("mem_new")
    assert d.state == "candidate" and d.version == 1
    assert [(e.type, e.symbol) for e in d.evidence] == [("symbol", "RuleRegistry")]


def test_create_memory_live_without_evidence_is_refused(engine, reviewer):
    with pytest.raises(InvariantViolation) as info:
        with Session(engine) as s, s.begin():
            m = Memory(memory_id="mem_bare", logical_memory_id="mem_bare", type="code_fact", statement="x",
                       repository_id="order-service", state="active", created_at=datetime(2026, 11, 30, tzinfo=UTC))
            create_memory(s, m, [], reviewer, reason="x")
    assert info.value.invariant == "evidence"
    with Session(engine) as s:
        assert s.get(Memory, "mem_bare") is None
    assert history_count(engine) == 0


# ---- ReviewService.decide ---------------------------------------------------------------------

@pytest.mark.parametrize(("decision", "state", "review_state"), [
    ("approve", "active", "approved"),
    ("reject", "rejected", "rejected"),
    ("needs-review", "needs_review", "pending"),
    ("archive", "archived", "none"),
])
def test_decide_changes_state_review_state_and_writes_event(store, reviewer, decision, state, review_state):
    out = ReviewService(store).decide("mem_conv", decision, reviewer, comment="seen the span")
    assert (out.memory_id, out.from_state, out.to_state) == ("mem_conv", "candidate", state)
    d = ReviewService(store).detail("mem_conv")
    assert d.state == state
    assert d.review_state == review_state
    assert d.version == 2
    evs = events(store, "mem_conv")
    assert len(evs) == 2
    last = evs[-1]
    assert last.event_id == out.event_id
    assert (last.from_state, last.to_state) == ("candidate", state)
    assert last.actor_id == "reviewer-1" and last.actor_type == "human" and last.actor_role == "reviewer"
    assert last.reason == f"reviewer decision: {decision}"
    assert last.comment == "seen the span"
    assert history_count(store) == 5


def test_reject_of_an_active_memory_invalidates_it(store, reviewer):
    out = ReviewService(store).decide("mem_live", "reject", reviewer)
    assert out.to_state == "invalidated"
    d = ReviewService(store).detail("mem_live")
    assert (d.state, d.review_state) == ("invalidated", "rejected")


def test_approve_sets_last_validated_at(store, reviewer):
    assert memory_row(store, "mem_conv").last_validated_at is None
    ReviewService(store).decide("mem_conv", "approve", reviewer)
    got = memory_row(store, "mem_conv").last_validated_at
    assert as_utc(got) == datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_decide_same_state_twice_is_refused(store, reviewer):
    svc = ReviewService(store)
    svc.decide("mem_conv", "needs-review", reviewer)
    with pytest.raises(DecisionError) as info:
        svc.decide("mem_conv", "needs-review", reviewer)
    assert "already needs_review" in str(info.value)
    assert len(events(store, "mem_conv")) == 2


def test_decide_on_unknown_memory(store, reviewer):
    with pytest.raises(MemoryNotFound):
        ReviewService(store).decide("mem_nope", "approve", reviewer)
    assert history_count(store) == 4


def test_high_impact_needs_a_lead(store, reviewer, lead):
    svc = ReviewService(store)
    with pytest.raises(InvariantViolation) as info:
        svc.decide("mem_adr", "approve", reviewer)
    assert info.value.invariant == "review"
    assert "review invariant" in str(info.value)
    m = memory_row(store, "mem_adr")
    assert (m.state, m.review_state, m.version) == ("candidate", "pending", 1)
    assert len(events(store, "mem_adr")) == 1

    out = svc.decide("mem_adr", "approve", lead)
    assert out.to_state == "active"
    m = memory_row(store, "mem_adr")
    assert (m.state, m.review_state, m.version) == ("active", "approved", 2)
    last = events(store, "mem_adr")[-1]
    assert (last.actor_id, last.actor_role) == ("lead-1", "lead")


def test_environment_blocker_needs_a_human(store, reviewer):
    with pytest.raises(InvariantViolation) as info:
        with Session(store) as s, s.begin():
            transition(s, "cand_env", "active", SYSTEM, reason="replay passed", job_id="job-7")
    assert info.value.invariant == "promotion"
    assert "promotion invariant" in str(info.value)
    m = memory_row(store, "cand_env")
    assert (m.state, m.version) == ("candidate", 1)
    assert len(events(store, "cand_env")) == 1

    out = ReviewService(store).decide("cand_env", "approve", reviewer)
    assert (out.from_state, out.to_state) == ("candidate", "active")
    d = ReviewService(store).detail("cand_env")
    assert (d.state, d.review_state, d.failure_class) == ("active", "approved", "environment_blocker")
    assert len(d.evidence) == 2


# ---- undo ----------------------------------------------------------------------------------------

def test_undo_writes_compensating_event(store, reviewer):
    svc = ReviewService(store)
    out = svc.decide("mem_conv", "approve", reviewer)
    before_ids = [e.event_id for e in events(store)]
    assert svc.last_undoable_event("mem_conv") == out.event_id

    back = svc.undo(out.event_id, reviewer, comment="misclick")
    assert back.compensates == out.event_id
    assert (back.from_state, back.to_state) == ("active", "candidate")
    d = svc.detail("mem_conv")
    assert (d.state, d.review_state) == ("candidate", "pending")
    assert d.version == 3

    evs = events(store, "mem_conv")
    assert len(evs) == 3
    undo_ev = evs[-1]
    assert undo_ev.event_id == back.event_id
    assert undo_ev.compensates == out.event_id
    assert (undo_ev.from_state, undo_ev.to_state) == ("active", "candidate")
    assert undo_ev.actor_id == "reviewer-1"
    assert undo_ev.comment == "misclick"
    # nothing deleted: every earlier event is still there, plus the compensating one
    after_ids = [e.event_id for e in events(store)]
    assert set(before_ids) < set(after_ids)
    assert len(after_ids) == len(before_ids) + 1
    assert svc.last_undoable_event("mem_conv") is None

    with pytest.raises(DecisionError) as info:
        svc.undo(out.event_id, reviewer)
    assert "already undone" in str(info.value)
    assert history_count(store) == len(after_ids)
    assert svc.detail("mem_conv").state == "candidate"


def test_undo_of_reject_restores_state_and_review_state(store, reviewer):
    svc = ReviewService(store)
    out = svc.decide("mem_live", "reject", reviewer)
    assert svc.detail("mem_live").review_state == "rejected"
    svc.undo(out.event_id, reviewer)
    d = svc.detail("mem_live")
    assert (d.state, d.review_state) == ("active", "approved")


def test_undo_of_a_creation_or_a_superseded_decision_is_refused(store, reviewer):
    svc = ReviewService(store)
    creation = events(store, "mem_conv")[0].event_id
    with pytest.raises(DecisionError):
        svc.undo(creation, reviewer)
    first = svc.decide("mem_conv", "needs-review", reviewer)
    svc.decide("mem_conv", "approve", reviewer)
    with pytest.raises(DecisionError) as info:
        svc.undo(first.event_id, reviewer)  # the memory has moved on since
    assert "has changed since" in str(info.value)
    assert svc.detail("mem_conv").state == "active"
    assert history_count(store) == 6


# ---- versions and concurrency -----------------------------------------------------------------

def test_stale_expected_version_is_refused(store, reviewer):
    svc = ReviewService(store)
    seen = svc.detail("mem_conv").version
    assert seen == 1
    svc.decide("mem_conv", "needs-review", reviewer, expected_version=seen)
    with pytest.raises(DecisionError) as info:
        svc.decide("mem_conv", "approve", reviewer, expected_version=seen)
    assert "version 1" in str(info.value) and "now 2" in str(info.value)
    d = svc.detail("mem_conv")
    assert (d.state, d.version) == ("needs_review", 2)
    assert len(events(store, "mem_conv")) == 2
    svc.decide("mem_conv", "approve", reviewer, expected_version=2)
    assert svc.detail("mem_conv").version == 3


def test_version_increases_by_one_per_decision(store, reviewer):
    svc = ReviewService(store)
    steps = ["needs-review", "approve", "needs-review", "reject", "archive"]
    states = ["needs_review", "active", "needs_review", "invalidated", "archived"]
    for n, (decision, state) in enumerate(zip(steps, states), start=2):
        svc.decide("mem_conv", decision, reviewer)
        d = svc.detail("mem_conv")
        assert (d.state, d.version) == (state, n)
        assert svc.queue_item("mem_conv").version == n
    assert len(events(store, "mem_conv")) == 1 + len(steps)


def test_history_is_never_deleted(store, reviewer, lead):
    svc = ReviewService(store)
    seen: set[str] = {e.event_id for e in events(store)}

    def check_grew_by(n: int) -> None:
        nonlocal seen
        now = {e.event_id for e in events(store)}
        assert seen <= now
        assert len(now) == len(seen) + n
        seen = now

    a = svc.decide("mem_conv", "approve", reviewer)
    check_grew_by(1)
    with pytest.raises(InvariantViolation):
        svc.decide("mem_adr", "approve", reviewer)
    check_grew_by(0)
    svc.undo(a.event_id, reviewer)
    check_grew_by(1)
    with pytest.raises(DecisionError):
        svc.undo(a.event_id, reviewer)
    check_grew_by(0)
    svc.decide("mem_adr", "approve", lead)
    check_grew_by(1)
    svc.decide("mem_live", "archive", reviewer)
    check_grew_by(1)
    with pytest.raises(TransitionRefused):
        svc.decide("mem_live", "approve", reviewer)  # archived -> active is not in the table
    check_grew_by(0)
    assert [e.from_state for e in svc.history("mem_live")] == [None, "active"]
    assert history_count(store) == 8


def test_undo_of_an_older_decision_is_refused_after_a_round_trip(store, reviewer):
    """The memory "moved on" after the first approval even though it is active again: undoing that old
    approval would silently throw away the later decisions (and restore a stale review_state)."""
    svc = ReviewService(store)
    first = svc.decide("mem_conv", "approve", reviewer)          # candidate -> active
    svc.decide("mem_conv", "needs-review", reviewer)             # active -> needs_review
    latest = svc.decide("mem_conv", "approve", reviewer)         # needs_review -> active
    with pytest.raises(DecisionError):
        svc.undo(first.event_id, reviewer)
    d = svc.detail("mem_conv")
    assert (d.state, d.review_state, d.version) == ("active", "approved", 4)
    assert len(events(store, "mem_conv")) == 4
    # the latest decision is still the one to undo, and it goes back to needs_review
    assert svc.last_undoable_event("mem_conv") == latest.event_id
    back = svc.undo(latest.event_id, reviewer)
    assert (back.from_state, back.to_state) == ("active", "needs_review")
    assert svc.detail("mem_conv").review_state == "pending"


def test_the_reason_a_memory_waits_survives_an_undo(store, reviewer, tmp_path):
    """Issue 11, item 3: after "sent to review -> approved -> undone" the memory waits for the reason it
    was sent to review with, not "undo of evt_…" (detail view and the review-queue report alike)."""
    from memtui.reports.maintenance import review_queue_report
    from memtui.review.lifecycle import record_note

    why = "revalidation: span changed in src/validation/RuleRegistry.java"
    with Session(store) as s, s.begin():
        transition(s, "mem_conv", "needs_review", SYSTEM, reason=why, review_state="pending")
    svc = ReviewService(store)
    assert svc.detail("mem_conv").waiting_reason == why
    with Session(store) as s, s.begin():  # a note changes no state: it is not why the memory waits
        record_note(s, s.get(Memory, "mem_conv"), reviewer, "statement edited: 'a' -> 'b'")
    assert svc.detail("mem_conv").waiting_reason == why
    out = svc.decide("mem_conv", "approve", reviewer)
    assert svc.detail("mem_conv").waiting_reason == "reviewer decision: approve"
    back = svc.undo(out.event_id, reviewer)
    assert back.to_state == "needs_review"
    assert events(store, "mem_conv")[-1].reason.startswith(f"undo of {out.event_id}")  # the history says what happened
    assert svc.detail("mem_conv").waiting_reason == why
    queue = {q["memoryId"]: q for q in review_queue_report(store, datetime(2026, 11, 30, tzinfo=UTC))["reviewQueue"]}
    assert queue["mem_conv"]["reasons"] == [why]
    # a second round: sent back by the reviewer, undone again -> still the revalidation reason
    again = svc.decide("mem_conv", "reject", reviewer)
    svc.undo(again.event_id, reviewer)
    assert svc.detail("mem_conv").waiting_reason == why
    assert svc.detail("mem_conv").waits_for == why
    from typer.testing import CliRunner

    from memtui.cli import app as cli_app

    shown = CliRunner().invoke(cli_app, ["show", "mem_conv", "--db", str(store.url)], catch_exceptions=False)
    assert f"  waits for:  {why}" in shown.stdout
    svc.decide("mem_conv", "approve", reviewer)
    assert svc.detail("mem_conv").waits_for is None  # active: it waits for nothing
