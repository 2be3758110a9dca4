"""Expiry, pruning, quality and eligibility rules (pure), with values worked out by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memtui.domain.expiry import ExpiryFacts, expiry_decision
from memtui.domain.pruning import DEFAULT_POLICY, PolicyError, PruneFacts, parse_policy, plan_item
from memtui.domain.quality import QualityInput, band_of, eligibility, quality

NOW = datetime(2026, 12, 1, tzinfo=UTC)
T0 = datetime(2026, 7, 2, tzinfo=UTC)  # 152 days before NOW


def _exp(**kw):
    base = dict(memory_id="m", type="code_fact", state="active", created_at=T0, last_validated_at=None,
                expires_at=None, expires_after_days=None, review_after_days=None)
    base.update(kw)
    return ExpiryFacts(**base)


def test_evaluation_lesson_expires_after_90_days_by_default():
    d = expiry_decision(_exp(type="evaluation_lesson"), NOW)
    assert (d.action, d.reason, d.due_at) == ("expire", "expires_after_days_elapsed", T0 + timedelta(days=90))


def test_renewal_restarts_the_clock():
    renewed = NOW - timedelta(days=10)
    assert expiry_decision(_exp(type="evaluation_lesson", last_validated_at=renewed), NOW) is None


def test_explicit_expires_at_and_days():
    assert expiry_decision(_exp(expires_at=NOW - timedelta(seconds=1)), NOW).reason == "expires_at_reached"
    assert expiry_decision(_exp(expires_at=NOW + timedelta(days=1)), NOW) is None
    assert expiry_decision(_exp(expires_after_days=152), NOW).action == "expire"  # exactly due
    assert expiry_decision(_exp(expires_after_days=153), NOW) is None


def test_review_after_days_sends_to_review_not_expiry():
    d = expiry_decision(_exp(review_after_days=90), NOW)
    assert (d.action, d.reason) == ("review", "review_after_days_elapsed")
    # only live memories are sent to review by the clock; a candidate is already waiting
    assert expiry_decision(_exp(review_after_days=90, state="candidate"), NOW) is None


def test_task_and_session_memory_are_short_lived():
    assert expiry_decision(_exp(type="session", created_at=NOW - timedelta(days=2)), NOW).action == "expire"
    assert expiry_decision(_exp(type="task", created_at=NOW - timedelta(days=29)), NOW) is None
    assert expiry_decision(_exp(type="task", created_at=NOW - timedelta(days=31)), NOW).action == "expire"


def test_archived_or_expired_memory_is_left_alone():
    for state in ("archived", "expired", "invalidated", "superseded", "blocked"):
        assert expiry_decision(_exp(state=state, expires_after_days=1), NOW) is None


RULES = parse_policy(DEFAULT_POLICY)


def _pf(**kw):
    base = dict(memory_id="m", type="code_fact", state="active", review_state="none", confidence=0.8,
                created_at=NOW - timedelta(days=10), last_used_at=None)
    base.update(kw)
    return PruneFacts(**base)


def test_pruning_archives_by_each_rule():
    assert plan_item(_pf(state="expired"), RULES, NOW).reasons == ("state expired",)
    item = plan_item(_pf(created_at=NOW - timedelta(days=200)), RULES, NOW)
    assert item.action == "archive" and item.reasons == ("unused for 200 days (limit 180)",)
    assert plan_item(_pf(confidence=0.39), RULES, NOW).reasons == ("confidence 0.39 below 0.40",)
    assert plan_item(_pf(), RULES, NOW) is None
    # used recently: not unused
    assert plan_item(_pf(created_at=NOW - timedelta(days=400), last_used_at=NOW - timedelta(days=5)), RULES, NOW) is None


def test_pruning_never_touches_protected_memories():
    adr = plan_item(_pf(type="architecture_decision", confidence=0.1, state="expired"), RULES, NOW)
    assert adr.action == "keep"  # architecture decisions are never pruned, even expired
    approved = plan_item(_pf(review_state="approved", confidence=0.1), RULES, NOW)
    assert approved.action == "keep" and "protected: reviewState approved" in approved.reasons
    expired_approved = plan_item(_pf(review_state="approved", state="expired"), RULES, NOW)
    assert expired_approved.action == "archive"  # "unless expired"
    invalidated = plan_item(_pf(review_state="approved", state="invalidated"), RULES, NOW)
    assert invalidated.action == "archive" and invalidated.reasons == ("state invalidated",)
    adr_invalidated = plan_item(_pf(type="architecture_decision", state="invalidated"), RULES, NOW)
    assert adr_invalidated.action == "keep"
    assert plan_item(_pf(state="archived", confidence=0.1), RULES, NOW) is None


def test_pruning_policy_errors_name_the_rule():
    with pytest.raises(PolicyError, match=r"archiveIf\[0\]: unknown rule 'olderThan'"):
        parse_policy({"pruningPolicy": {"archiveIf": [{"olderThan": 3}]}})
    with pytest.raises(PolicyError, match="confidenceBelow"):
        parse_policy({"pruningPolicy": {"archiveIf": [{"confidenceBelow": 7}]}})


def _q(**kw):
    base = dict(memory_id="m", statement="Validation rules are registered through RuleRegistry.", state="active",
                confidence=0.84, review_state="approved", conflict_state="none", repository_id="order-service",
                module_path="src/validation", evidence=(("file_span", "valid"),))
    base.update(kw)
    return QualityInput(**base)


def test_quality_factors_and_band():
    q = quality(_q())
    # strength 1.0, specificity 0.5+0.15*1 = 0.65, scope 1.0, freshness 1.0, review 1.0, usefulness 0.5, safety 1
    assert q.factors["evidenceStrength"] == 1.0
    assert q.factors["specificity"] == 0.65
    expected = round(0.25 * 1 + 0.10 * 0.65 + 0.10 * 1 + 0.20 * 1 + 0.15 * 1 + 0.10 * 0.5 + 0.10 * 1, 2)
    assert q.overall == expected == 0.92 and q.band == "high"
    stale = quality(_q(evidence=(("file_span", "deleted"),), conflict_state="open"))
    assert stale.factors["freshness"] == 0.0 and stale.factors["conflictPenalty"] == 0.3
    assert stale.overall < 0.6 and stale.band in ("low", "poor")
    assert band_of(0.8) == "high" and band_of(0.79) == "medium" and band_of(0.4) == "low" and band_of(0.39) == "poor"


def test_hedged_statement_is_less_specific():
    assert quality(_q(statement="Retries sometimes happen, behaviour unclear")).factors["specificity"] == 0.2


def test_eligibility_reasons():
    ok = eligibility(_q(), scope_repository="order-service")
    assert ok.eligible and ok.reasons == ("active", "fresh", "not_conflicted", "permission_safe", "scope_match",
                                          "confident", "approved")
    stale = eligibility(_q(evidence=(("file_span", "changed"),)))
    assert not stale.eligible and stale.reasons == ("stale",)
    bad = eligibility(_q(state="needs_review", conflict_state="open", blocked=True, confidence=0.2),
                      scope_repository="billing")
    assert bad.reasons == ("state_needs_review", "conflicted", "blocked", "out_of_scope", "low_confidence")
