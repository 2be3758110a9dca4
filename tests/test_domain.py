"""Pure domain rules: the transition table, the invariants and the decision table (no database)."""

from __future__ import annotations

import pytest

from memtui.domain.decisions import Decision, review_state_after, target_state
from memtui.domain.invariants import (
    Actor,
    EvidenceFacts,
    InvariantViolation,
    MemoryFacts,
    TransitionRefused,
    check_conflict,
    check_evidence,
    check_lineage,
    check_promotion,
    check_review,
    check_scope,
    check_transition,
)
from memtui.domain.states import ALL_STATES, TRANSITIONS, State, is_allowed

REVIEWER = Actor(type="human", id="reviewer-1", role="reviewer")
LEAD = Actor(type="human", id="lead-1", role="lead")
AGENT = Actor(type="agent", id="wf-1")
SYSTEM = Actor(type="system", id="job-1")

FILE_SPAN = EvidenceFacts(type="file_span", status="valid")
REPLAY = EvidenceFacts(type="replay", status="valid")


def facts(**kw) -> MemoryFacts:
    """A repository-scoped, normal-impact candidate with one valid file span, unless overridden."""
    base = dict(memory_id="mem_x", type="repo_convention", state="candidate", repository_id="order-service",
                evidence=(FILE_SPAN,))
    base.update(kw)
    return MemoryFacts(**base)


# ---- the states and the transition table ----------------------------------------------------

def test_twelve_states_each_with_a_row_in_the_table():
    expected = {"candidate", "approved", "active", "needs_review", "challenged", "invalidated", "rejected",
                "superseded", "expired", "deprecated", "archived", "blocked"}
    assert set(ALL_STATES) == expected
    assert len(ALL_STATES) == 12
    assert {s.value for s in TRANSITIONS} == expected


ALLOWED = [(f.value, t.value) for f, tos in TRANSITIONS.items() for t in sorted(tos)]


@pytest.mark.parametrize(("from_state", "to_state"), ALLOWED)
def test_every_listed_transition_is_allowed(from_state, to_state):
    assert is_allowed(from_state, to_state) is True


FORBIDDEN = [
    ("archived", "active"),
    ("blocked", "active"),
    ("superseded", "active"),
    ("rejected", "active"),
    ("invalidated", "active"),
    ("expired", "approved"),
    ("blocked", "needs_review"),      # blocked is only ever archived (safety)
    ("blocked", "candidate"),
    ("archived", "approved"),         # archived: only an audited restore to review
    ("archived", "candidate"),
    ("superseded", "candidate"),
    ("rejected", "approved"),
    ("invalidated", "approved"),
    ("deprecated", "active"),
    ("candidate", "candidate"),       # no self-loops
    ("active", "active"),
]


@pytest.mark.parametrize(("from_state", "to_state"), FORBIDDEN)
def test_forbidden_transitions_are_refused(from_state, to_state):
    assert is_allowed(from_state, to_state) is False


@pytest.mark.parametrize(("from_state", "to_state"), FORBIDDEN)
def test_check_transition_raises_transition_refused(from_state, to_state):
    m = facts(state=from_state)
    with pytest.raises(TransitionRefused) as info:
        check_transition(m, to_state, LEAD)
    err = info.value
    assert (err.memory_id, err.from_state, err.to_state) == ("mem_x", from_state, to_state)
    assert f"{from_state} -> {to_state}" in str(err)
    assert "mem_x" in str(err)


def test_blocked_leads_only_to_archived_and_archived_only_to_review_or_blocked():
    assert [s for s in ALL_STATES if is_allowed("blocked", s)] == ["archived"]
    assert [s for s in ALL_STATES if is_allowed("archived", s)] == ["needs_review", "blocked"]


def test_every_state_but_blocked_can_be_blocked():
    # safety: a secret found later (even in archived text) blocks the memory; blocked -> archived only
    for s in ALL_STATES:
        assert is_allowed(s, "blocked") is (s != "blocked"), s


def test_creation_allows_any_initial_state():
    for s in ALL_STATES:
        assert is_allowed(None, s) is True


def test_unknown_state_name_is_a_value_error():
    with pytest.raises(ValueError):
        is_allowed("candidate", "bogus")
    with pytest.raises(ValueError):
        is_allowed("bogus", "active")


def test_allowed_non_live_transition_passes_without_invariant_checks():
    # candidate -> rejected is allowed and not a live gate: even a memory with no evidence may be rejected
    assert check_transition(facts(evidence=()), "rejected", AGENT) is None


# ---- the invariants ---------------------------------------------------------------------------

def assert_violation(excinfo, name: str, memory_id: str = "mem_x"):
    err = excinfo.value
    assert isinstance(err, InvariantViolation)
    assert err.invariant == name
    assert err.memory_id == memory_id
    assert f"{name} invariant" in str(err)
    assert memory_id in str(err)


# evidence (1)
def test_evidence_invariant_refuses_live_memory_without_evidence():
    with pytest.raises(InvariantViolation) as info:
        check_evidence(facts(evidence=()))
    assert_violation(info, "evidence")


def test_evidence_invariant_refuses_evidence_that_is_gone():
    gone = (EvidenceFacts(type="file_span", status="deleted"), EvidenceFacts(type="symbol", status="unverifiable"))
    with pytest.raises(InvariantViolation) as info:
        check_evidence(facts(evidence=gone))
    assert_violation(info, "evidence")


def test_evidence_invariant_passes_with_evidence_or_human_source():
    assert check_evidence(facts()) is None
    assert check_evidence(facts(evidence=(EvidenceFacts(type="human"),))) is None
    # changed evidence still exists (revalidation may send it to review, but it is evidence)
    assert check_evidence(facts(evidence=(EvidenceFacts(type="file_span", status="changed"),))) is None


def test_evidence_invariant_through_check_transition():
    with pytest.raises(InvariantViolation) as info:
        check_transition(facts(evidence=()), "active", REVIEWER)
    assert_violation(info, "evidence")
    assert check_transition(facts(), "active", REVIEWER) is None


# scope (2)
def test_scope_invariant_refuses_repository_memory_with_evidence_from_elsewhere():
    other = (EvidenceFacts(type="file_span", status="valid", repository_id="billing-service"),)
    with pytest.raises(InvariantViolation) as info:
        check_scope(facts(evidence=other))
    assert_violation(info, "scope")
    assert "order-service" in str(info.value)


def test_scope_invariant_refuses_org_wide_memory_with_repository_evidence():
    repo_ev = (EvidenceFacts(type="file_span", status="valid", repository_id="order-service"),)
    with pytest.raises(InvariantViolation) as info:
        check_scope(facts(repository_id=None, evidence=repo_ev))
    assert_violation(info, "scope")
    # a file span with no repository is still code, not org-wide doc/ADR/human evidence
    with pytest.raises(InvariantViolation) as info:
        check_scope(facts(repository_id=None, evidence=(FILE_SPAN,)))
    assert_violation(info, "scope")


def test_scope_invariant_passes():
    same = (EvidenceFacts(type="file_span", status="valid", repository_id="order-service"),)
    assert check_scope(facts(evidence=same)) is None
    assert check_scope(facts()) is None  # evidence without repository = the memory's own
    org = (EvidenceFacts(type="adr", status="valid"),)
    assert check_scope(facts(repository_id=None, evidence=org)) is None


def test_scope_invariant_through_check_transition():
    other = (EvidenceFacts(type="file_span", status="valid", repository_id="billing-service"),)
    with pytest.raises(InvariantViolation) as info:
        check_transition(facts(evidence=other), "active", LEAD)
    assert_violation(info, "scope")


# conflict (4)
def test_conflict_invariant_refuses_open_conflict():
    with pytest.raises(InvariantViolation) as info:
        check_conflict(facts(conflict_state="open"))
    assert_violation(info, "conflict")
    with pytest.raises(InvariantViolation) as info:
        check_transition(facts(conflict_state="open"), "active", LEAD)
    assert_violation(info, "conflict")


def test_conflict_invariant_passes_when_none_or_resolved():
    assert check_conflict(facts(conflict_state="none")) is None
    assert check_conflict(facts(conflict_state="resolved")) is None
    assert check_transition(facts(conflict_state="resolved"), "active", REVIEWER) is None


def test_conflict_invariant_checked_on_approved_to_active():
    with pytest.raises(InvariantViolation) as info:
        check_transition(facts(state="approved", conflict_state="open"), "active", LEAD)
    assert_violation(info, "conflict")


# review (6)
@pytest.mark.parametrize("kw", [
    {"type": "architecture_decision"},
    {"impact": "high"},
    {"repository_id": None, "evidence": (EvidenceFacts(type="adr"),)},  # org-wide scope
])
def test_review_invariant_refuses_high_impact_without_lead(kw):
    m = facts(**kw)
    with pytest.raises(InvariantViolation) as info:
        check_review(m, REVIEWER)
    assert_violation(info, "review")
    assert "reviewer-1" in str(info.value)
    with pytest.raises(InvariantViolation) as info:
        check_transition(m, "active", REVIEWER)
    assert_violation(info, "review")
    with pytest.raises(InvariantViolation) as info:
        check_transition(m, "approved", REVIEWER)
    assert_violation(info, "review")
    # a machine is never a lead
    with pytest.raises(InvariantViolation) as info:
        check_review(m, Actor(type="system", id="job-1", role="lead"))
    assert_violation(info, "review")


def test_review_invariant_passes_for_lead_or_normal_impact():
    assert check_review(facts(type="architecture_decision"), LEAD) is None
    assert check_review(facts(), REVIEWER) is None
    assert check_transition(facts(type="architecture_decision"), "active", LEAD) is None


# lineage (7)
def test_lineage_invariant_refuses_generated_docs_without_original_evidence():
    m = facts(origin="docs_generated", evidence=(EvidenceFacts(type="doc", status="valid"),))
    with pytest.raises(InvariantViolation) as info:
        check_lineage(m)
    assert_violation(info, "lineage")
    with pytest.raises(InvariantViolation) as info:
        check_transition(m, "active", REVIEWER)
    assert_violation(info, "lineage")


def test_lineage_invariant_ignores_original_evidence_that_is_gone():
    m = facts(origin="docs_generated",
              evidence=(EvidenceFacts(type="doc", status="valid"), EvidenceFacts(type="file_span", status="deleted")))
    with pytest.raises(InvariantViolation) as info:
        check_lineage(m)
    assert_violation(info, "lineage")


def test_lineage_invariant_passes():
    m = facts(origin="docs_generated", evidence=(EvidenceFacts(type="doc", status="valid"), FILE_SPAN))
    assert check_lineage(m) is None
    assert check_lineage(facts(origin="agent", evidence=(EvidenceFacts(type="doc"),))) is None
    assert check_transition(m, "active", REVIEWER) is None


# promotion (8)
def test_promotion_invariant_refuses_environment_blocker_even_with_replay():
    m = facts(failure_class="environment_blocker", origin="imported", evidence=(REPLAY,))
    with pytest.raises(InvariantViolation) as info:
        check_promotion(m, SYSTEM)
    assert_violation(info, "promotion")
    with pytest.raises(InvariantViolation) as info:
        check_transition(m, "active", SYSTEM)
    assert_violation(info, "promotion")


def test_promotion_invariant_refuses_imported_only_candidate_for_machines():
    m = facts(origin="imported", evidence=(EvidenceFacts(type="ref"),))
    with pytest.raises(InvariantViolation) as info:
        check_promotion(m, AGENT)
    assert_violation(info, "promotion")


def test_promotion_invariant_refuses_auto_promotion_without_replay():
    with pytest.raises(InvariantViolation) as info:
        check_promotion(facts(), SYSTEM)
    assert_violation(info, "promotion")
    with pytest.raises(InvariantViolation) as info:
        check_transition(facts(), "approved", AGENT)
    assert_violation(info, "promotion")


def test_promotion_invariant_passes_for_human_or_replay():
    blocker = facts(failure_class="environment_blocker", origin="imported")
    assert check_promotion(blocker, REVIEWER) is None
    assert check_transition(blocker, "active", REVIEWER) is None
    assert check_promotion(facts(evidence=(FILE_SPAN, REPLAY)), SYSTEM) is None
    assert check_promotion(facts(origin="imported", evidence=(REPLAY,)), AGENT) is None
    assert check_transition(facts(evidence=(FILE_SPAN, REPLAY)), "active", SYSTEM) is None


def test_undo_skips_the_table_but_not_the_invariants():
    # archived -> active is not in the table, but an undo of "archive" steps back to it
    assert check_transition(facts(state="archived"), "active", REVIEWER, undo=True) is None
    with pytest.raises(TransitionRefused):
        check_transition(facts(state="archived"), "active", REVIEWER)
    with pytest.raises(InvariantViolation) as info:
        check_transition(facts(state="archived", type="architecture_decision"), "active", REVIEWER, undo=True)
    assert_violation(info, "review")


# ---- decisions --------------------------------------------------------------------------------

@pytest.mark.parametrize(("decision", "current", "expected"), [
    ("approve", "candidate", "active"),
    ("approve", "needs_review", "active"),
    ("approve", "approved", "active"),
    ("approve", "challenged", "active"),
    ("reject", "candidate", "rejected"),
    ("reject", "approved", "rejected"),
    ("reject", "active", "invalidated"),
    ("reject", "needs_review", "invalidated"),
    ("reject", "challenged", "invalidated"),
    ("needs-review", "candidate", "needs_review"),
    ("needs-review", "active", "needs_review"),
    ("archive", "candidate", "archived"),
    ("archive", "active", "archived"),
    ("archive", "rejected", "archived"),
])
def test_target_state_table(decision, current, expected):
    to = target_state(Decision(decision), current)
    assert isinstance(to, State)
    assert to.value == expected
    # every decision the table gives from these states is an allowed transition
    assert is_allowed(current, expected)


def test_review_state_after_each_decision():
    assert review_state_after(Decision.APPROVE) == "approved"
    assert review_state_after(Decision.REJECT) == "rejected"
    assert review_state_after(Decision.NEEDS_REVIEW) == "pending"
    assert review_state_after(Decision.ARCHIVE) == "none"
    assert review_state_after(Decision.BLOCK) == "none"
    assert target_state(Decision.BLOCK, "active") == "blocked"  # issue 9: block by hand


def test_decision_names_are_the_cli_words():
    assert [d.value for d in Decision] == ["approve", "reject", "needs-review", "archive", "block"]
    with pytest.raises(ValueError):
        Decision("needs_review")


def test_globs_one_home():
    """domain.globs: the one glob matcher of the importer and of revalidation."""
    from memtui.domain.globs import glob_match

    files = ["pkg/a/__snapshots__/x.snap", "pkg/b.snap", "testing/t1.test", "testing/sys/t2.test",
             "src/api/r.py", "src/web/w.py", "src/cli/c.py"]
    assert glob_match("pkg/**/*.snap", files) == ["pkg/a/__snapshots__/x.snap", "pkg/b.snap"]
    assert glob_match("*.test", files) == ["testing/sys/t2.test", "testing/t1.test"]
    assert glob_match("./testing/*.test", files) == ["testing/t1.test"]
    assert glob_match("src/{api,web}/*.py", files) == ["src/api/r.py", "src/web/w.py"]
    assert glob_match("src/[!a]*/*.py", files) == ["src/cli/c.py", "src/web/w.py"]
    assert glob_match("src/", files) == ["src/api/r.py", "src/cli/c.py", "src/web/w.py"]
