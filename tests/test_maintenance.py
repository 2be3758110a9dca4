"""Maintenance on the sample repository: the seed exercise (seed 000 §26), idempotency, reports, expiry,
policies, usage and pruning — on a real store (SQLite and PostgreSQL) and a real git checkout."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from sqlmodel import Session, select

from memtui.domain.invariants import Actor
from memtui.maintenance.assess import assess
from memtui.maintenance.policy import apply_review_policy, load_review_policy
from memtui.maintenance.prune import apply_pruning_plan, load_pruning_policy, pruning_plan
from memtui.maintenance.runner import maintain
from memtui.maintenance.usage import record_usage
from memtui.reports.maintenance import REPORT_FILES, write_reports
from memtui.review.service import ReviewService
from memtui.sample import set_up_demo
from memtui.store.models import MaintenanceJob, Memory, StateHistory

NOW = datetime(2026, 12, 1, tzinfo=UTC)
ACTOR = Actor("human", "maintainer-1", "lead")


@pytest.fixture
def demo(engine, tmp_path):
    """The sample store and checkout, maintained once at NOW."""
    setup = set_up_demo(engine, tmp_path / "work", ACTOR)
    results = maintain(engine, now=NOW)
    return engine, setup.checkout, results


def _git_show(checkout: Path, spec: str) -> list[str]:
    return subprocess.run(["git", "-C", str(checkout), "show", spec], capture_output=True, text=True,
                          check=True).stdout.splitlines()


def test_seed_exercise_outcomes(demo):
    engine, checkout, results = demo
    svc = ReviewService(engine)
    # changed RuleRegistry source sends the convention to review, with a reason naming it
    conv = svc.detail("mem_rule_registry_convention")
    assert conv.state == "needs_review"
    assert any("RuleRegistry" in r for r in conv.revalidation_reasons)
    # the old RuleEngine memory is invalidated: all its evidence was deleted
    assert svc.detail("mem_old_rule_engine").state == "invalidated"
    last = svc.history("mem_old_rule_engine")[-1]
    assert "all_evidence_deleted" in last.reason
    assert (last.actor_type, last.actor_id) == ("system", "maintenance") and last.job_id
    # OrderValidator untouched: stays active, its evidence now points at the current lines
    entry = svc.detail("mem_order_validator_entrypoint")
    assert entry.state == "active"
    head_lines = _git_show(checkout, "HEAD:src/main/java/com/acme/order/validation/OrderValidator.java")
    old_lines = _git_show(checkout, "memories-validated:src/main/java/com/acme/order/validation/OrderValidator.java")
    ev = entry.evidence[0]
    old_span = old_lines[ev.line_start - 1:ev.line_end]
    start = next(i for i in range(len(head_lines)) if head_lines[i:i + len(old_span)] == old_span) + 1
    assert (ev.current_line_start, ev.current_line_end) == (start, start + len(old_span) - 1)
    assert ev.current_line_start != ev.line_start  # lines shifted, and that is not a change
    assert ev.status == "valid"


def test_stale_memory_is_not_retrieval_eligible_and_active_memory_is_grounded(demo):
    engine, _checkout, _ = demo
    by_id = {a.memory_id: a for a in assess(engine)}
    conv = by_id["mem_rule_registry_convention"].eligibility
    assert not conv.eligible and "stale" in conv.reasons
    assert not by_id["mem_old_rule_engine"].eligibility.eligible
    assert by_id["mem_order_validator_entrypoint"].eligibility.eligible
    svc = ReviewService(engine)
    with Session(engine) as s:
        active = [m.memory_id for m in s.exec(select(Memory).where(Memory.state == "active"))]
    assert active
    for mid in active:
        d = svc.detail(mid)
        assert d.evidence and d.scope.repository_id == "order-service", mid


def test_every_change_has_an_audit_event_with_the_job(demo):
    engine, _checkout, results = demo
    with Session(engine) as s:
        for r in results:
            job = s.get(MaintenanceJob, r.job_id)
            assert job.status == "completed" and job.updated_count == r.updated
            for change in r.changes:
                if "to" not in change:
                    continue
                ev = s.exec(select(StateHistory).where(StateHistory.job_id == r.job_id,
                                                       StateHistory.memory_id == change["memoryId"])).one()
                assert (ev.from_state, ev.to_state, ev.actor_id) == (change["from"], change["to"], "maintenance")


def test_maintenance_is_idempotent_and_reports_are_byte_identical(demo, tmp_path):
    engine, _checkout, first = demo
    assert sum(r.updated for r in first) > 0
    out1, out2 = tmp_path / "r1", tmp_path / "r2"
    write_reports(engine, out1, NOW)
    second = maintain(engine, now=NOW)
    assert [r.job_type for r in second] == ["secrets", "revalidate", "expire", "dedupe", "conflicts", "compaction"]
    assert [r.updated for r in second] == [0, 0, 0, 0, 0, 0]
    write_reports(engine, out2, NOW)
    for name in REPORT_FILES:
        assert (out1 / name).read_bytes() == (out2 / name).read_bytes(), name


def test_reports_hold_the_exercise(demo, tmp_path):
    engine, _checkout, _ = demo
    write_reports(engine, tmp_path, NOW)
    reval = {r["memoryId"]: r for r in yaml.safe_load((tmp_path / "memory-revalidation-report.yaml").read_text())["revalidations"]}
    assert reval["mem_rule_registry_convention"]["status"] == "needs_review"
    assert reval["mem_rule_registry_convention"]["recommendedAction"] == "human_review"
    assert reval["mem_old_rule_engine"]["status"] == "invalidated"
    assert reval["mem_old_rule_engine"]["reasonCodes"][0] == "all_evidence_deleted"
    assert reval["mem_order_validator_entrypoint"]["status"] == "valid"
    queue = yaml.safe_load((tmp_path / "memory-review-queue.yaml").read_text())["reviewQueue"]
    in_queue = {q["memoryId"] for q in queue}
    with Session(engine) as s:
        needs = {m.memory_id for m in s.exec(select(Memory).where(Memory.state == "needs_review"))}
    assert needs and needs <= in_queue
    health = yaml.safe_load((tmp_path / "memory-health-report.yaml").read_text())["memoryHealth"]
    order = next(h for h in health if h["repositoryId"] == "order-service")
    assert order["needsReview"] == len(needs)
    for key in ("active", "candidatesPending", "needsReview", "conflicted", "expired", "actionRequired"):
        assert key in order
    plan = yaml.safe_load((tmp_path / "memory-pruning-plan.yaml").read_text())["pruningPlan"]
    assert set(plan) == {"archive", "keep"}
    assert "memoryConflicts" in yaml.safe_load((tmp_path / "memory-conflicts.yaml").read_text())


def test_dry_run_writes_nothing(engine, tmp_path):
    set_up_demo(engine, tmp_path / "work", ACTOR)
    svc = ReviewService(engine)
    before = {h.repository_id: h.by_state for h in svc.health()}
    with Session(engine) as s:
        events = len(s.exec(select(StateHistory)).all())
    results = maintain(engine, now=NOW, dry_run=True)
    assert sum(r.updated for r in results) > 0  # it found work to do
    assert {h.repository_id: h.by_state for h in svc.health()} == before
    with Session(engine) as s:
        assert len(s.exec(select(StateHistory)).all()) == events
        assert {j.status for j in s.exec(select(MaintenanceJob))} == {"dry_run"}


def test_evaluation_lesson_expires_after_90_days(demo):
    engine, _checkout, results = demo
    # created and validated 2026-07-02; 90 days later is 2026-09-30, before NOW
    d = ReviewService(engine).detail("mem_eval_validation_docs_registry_test")
    assert d.state == "expired"
    assert ReviewService(engine).history("mem_eval_validation_docs_registry_test")[-1].reason == "expires_after_days_elapsed"


def test_policy_sends_affected_memory_to_review(demo, tmp_path):
    engine, _checkout, _ = demo
    f = tmp_path / "policy.yaml"
    f.write_text("policy:\n  name: no-unreviewed-ai-memory\n  description: Unreviewed AI-generated memory is no "
                 "longer allowed\n  sendToReviewIf:\n    - {origin: agent, reviewState: [none, pending]}\n")
    policy = load_review_policy(f)
    with Session(engine) as s:
        expected = sorted(m.memory_id for m in s.exec(select(Memory).where(
            Memory.state.in_(["active", "approved", "challenged"]), Memory.origin == "agent",
            Memory.review_state.in_(["none", "pending"]))))
    result = apply_review_policy(engine, policy)
    assert sorted(c["memoryId"] for c in result.changes) == expected
    for mid in expected:
        last = ReviewService(engine).history(mid)[-1]
        assert last.to_state == "needs_review" and "no-unreviewed-ai-memory" in last.reason
    assert apply_review_policy(engine, policy).updated == 0  # idempotent


def test_harm_event_challenges_the_memory(demo):
    engine, _checkout, _ = demo
    out = record_usage(engine, "mem_order_validator_entrypoint", "harm", ACTOR, issue="Generated doc was wrong")
    assert out.new_state == "challenged"
    assert ReviewService(engine).detail("mem_order_validator_entrypoint").state == "challenged"
    positive = record_usage(engine, "mem_junit5_tests", "positive", ACTOR)
    assert positive.new_state is None


def test_pruning_plan_archives_and_never_touches_protected(demo):
    engine, _checkout, _ = demo
    rules = load_pruning_policy(None)
    plan = pruning_plan(engine, rules, NOW)
    archive = {i.memory_id for i in plan.archive}
    # expired by the clock, and a rejected low-confidence memory (0.30 < 0.40)
    assert {"mem_eval_validation_docs_registry_test", "mem_validator_caches_results"} <= archive
    # the low-confidence candidate still waits for a reviewer in the queue: never pruned from under them
    assert "mem_retry_behavior_unknown" not in archive
    assert "mem_adr_012_rule_registry" not in archive
    svc = ReviewService(engine)
    for item in plan.archive:
        d = svc.detail(item.memory_id)
        assert d.type != "architecture_decision"
        # approval protects memory still in use; expired, invalidated or superseded memory is history
        assert d.review_state != "approved" or d.state in ("expired", "invalidated", "superseded")
    result = apply_pruning_plan(engine, plan, ACTOR)
    assert result.updated == len(plan.archive)
    for item in plan.archive:
        assert svc.detail(item.memory_id).state == "archived"
    for item in plan.keep:
        assert svc.detail(item.memory_id).state != "archived"
    # archived, not deleted: the history is all still there
    events = svc.history("mem_validator_caches_results")
    assert events[0].from_state is None and events[-1].to_state == "archived"


def test_a_missing_checkout_is_skipped_and_the_rest_maintained(engine, tmp_path):
    from memtui.maintenance.repositories import register_repository

    set_up_demo(engine, tmp_path / "work", ACTOR)
    gone = tmp_path / "gone"
    gone.mkdir()
    register_repository(engine, "billing", gone)
    gone.rmdir()
    results = maintain(engine, now=NOW)
    skipped = [r for r in results if r.summary.get("skipped")]
    assert [r.repository_id for r in skipped] == ["billing"] and "does not exist" in skipped[0].summary["skipped"]
    assert {r.job_type for r in results} == {"secrets", "revalidate", "expire", "dedupe", "conflicts", "compaction"}
    assert ReviewService(engine).detail("mem_old_rule_engine").state == "invalidated"


def test_prune_apply_skips_what_the_actor_may_not_archive(demo, tmp_path):
    engine, _checkout, _ = demo
    f = tmp_path / "p.yaml"
    f.write_text("pruningPolicy:\n  archiveIf: [{unusedDays: 1}]\n  neverPruneIf: []\n")
    plan = pruning_plan(engine, load_pruning_policy(f), NOW)
    assert "mem_adr_012_rule_registry" in {i.memory_id for i in plan.archive}
    reviewer = Actor("human", "reviewer-2", "reviewer")
    result = apply_pruning_plan(engine, plan, reviewer)
    refused = [c["memoryId"] for c in result.changes if "refused" in c]
    assert refused == ["mem_adr_012_rule_registry"]  # architecture decisions need a lead
    assert ReviewService(engine).detail("mem_adr_012_rule_registry").state == "active"
    assert result.updated == len(plan.archive) - 1
