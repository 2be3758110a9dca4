"""Decisions on duplicates, conflicts and compaction (issue 4): each changes the store as specified,
in one transaction with history events, and each is undoable by compensating events."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import Session, select

from memtui.clock import utcnow
from memtui.domain.invariants import Actor
from tests.gitrepo import import_anchored
from memtui.review.resolve import ResolveError, ResolveService
from memtui.review.service import ReviewService
from memtui.store.models import (CompactionProposal, DuplicateCluster, Evidence, MemoryConflict,
                                 NotDuplicatePair, StateHistory)

REV = Actor("human", "reviewer-1", "reviewer")
LEAD = Actor("human", "lead-1", "lead")
SHA = "b258aeaf198d7210e9314b696e6b2160b398a127"

RECORDS = """
memories:
  - memoryId: mem_a
    type: repo_convention
    statement: "Rules are registered through RuleRegistry."
    scope: {tenantId: acme, repositoryId: os, modulePath: src/validation}
    state: active
    reviewState: approved
    confidence: 0.6
    tags: [rules]
    evidence:
      - {type: file_span, path: src/validation/RuleRegistry.java, commitSha: "%(sha)s", lines: [10, 20], status: valid}
  - memoryId: mem_b
    type: repo_convention
    statement: "Validation uses RuleRegistry as the registry for rules."
    scope: {tenantId: acme, repositoryId: os, modulePath: src/validation}
    state: candidate
    confidence: 0.8
    tags: [validation]
    evidence:
      - {type: file_span, path: src/validation/RuleRegistry.java, commitSha: "%(sha)s", lines: [10, 20], status: valid}
      - {type: symbol, path: src/validation/RuleRegistry.java, commitSha: "%(sha)s", lines: [12, 18], symbol: RuleRegistry.resolve, status: valid}
  - memoryId: mem_c
    type: repo_convention
    statement: "Validation rules are configured directly in OrderValidator."
    scope: {tenantId: acme, repositoryId: os, modulePath: src/validation}
    state: active
    reviewState: approved
    evidence:
      - {type: file_span, path: src/validation/OrderValidator.java, commitSha: "%(sha)s", lines: [5, 9], status: valid}
  - memoryId: mem_d
    type: code_fact
    statement: "OrderValidator calls RuleRegistry."
    scope: {tenantId: acme, repositoryId: os, modulePath: src/validation}
    state: active
    reviewState: approved
    evidence:
      - {type: call_edge, path: src/validation/OrderValidator.java, commitSha: "%(sha)s", lines: [7, 7], symbol: OrderValidator.validate, target: RuleRegistry.resolve, status: valid}
  - memoryId: mem_e
    type: code_fact
    statement: "RuleRegistry stores validation rules."
    scope: {tenantId: acme, repositoryId: os, modulePath: src/validation}
    state: active
    reviewState: approved
    evidence:
      - {type: file_span, path: src/validation/RuleRegistry.java, commitSha: "%(sha)s", lines: [3, 8], status: valid}
""" % {"sha": SHA}


@pytest.fixture
def store(engine, tmp_path):
    f = tmp_path / "r.yaml"
    f.write_text(RECORDS)
    import_anchored(engine, [f], LEAD, tmp_path)  # issue 21 item 3: the evidence in a checkout
    now = utcnow()
    with Session(engine) as s, s.begin():
        s.add(DuplicateCluster(cluster_id="dup-1", repository_id="os", scope_key="acme/os:src/validation",
                               type="repo_convention", members=["mem_a", "mem_b"], canonical_id="mem_a",
                               best_score=88.0, scores={"mem_a|mem_b": 88.0}, method="fuzzy", explanation="x",
                               created_at=now))
        s.add(MemoryConflict(conflict_id="memconf_1", severity="medium", tenant_id="acme", repository_id="os",
                             module_path="src/validation", memory_a="mem_a", memory_b="mem_c", status="open",
                             reason="different object: OrderValidator vs RuleRegistry", created_at=now))
        s.add(CompactionProposal(proposal_id="memcomp_1", tenant_id="acme", repository_id="os",
                                 module_path="src/validation", members=["mem_d", "mem_e"],
                                 proposed_statement="RuleRegistry: OrderValidator calls RuleRegistry; and RuleRegistry stores validation rules.",
                                 proposed_type="code_fact", shared=["RuleRegistry"], created_at=now))
    from memtui.review.lifecycle import record_note  # noqa: F401  (conflict flags set as detection would)
    with Session(engine) as s, s.begin():
        from memtui.store.models import Memory
        for mid in ("mem_a", "mem_c"):
            m = s.get(Memory, mid)
            m.conflict_state = "open"
            s.add(m)
    return engine


def _events(engine, mid):
    return ReviewService(engine).history(mid)


def _evidence(engine, mid):
    with Session(engine) as s:
        return list(s.exec(select(Evidence).where(Evidence.memory_id == mid).order_by(Evidence.ordinal)))


def test_merge_keeps_union_and_supersedes_the_others(store):
    r = ResolveService(store).merge("dup-1", REV)
    svc = ReviewService(store)
    a, b = svc.detail("mem_a"), svc.detail("mem_b")
    assert (b.state, b.superseded_by) == ("superseded", "mem_a")
    assert a.state == "active" and a.confidence == 0.8 and set(a.tags) == {"rules", "validation"}
    # mem_a had 1 evidence; mem_b's identical span is not copied twice, its symbol is
    assert [(e.type, e.symbol) for e in a.evidence] == [("file_span", None), ("symbol", "RuleRegistry.resolve")]
    assert r.changes == {"mem_b": ("candidate", "superseded")}
    last_b = _events(store, "mem_b")[-1]
    assert (last_b.to_state, last_b.actor_id) == ("superseded", "reviewer-1") and "mem_a" in last_b.reason
    with Session(store) as s:
        assert s.get(DuplicateCluster, "dup-1").status == "merged"
        assert len(s.exec(select(StateHistory).where(StateHistory.decision_id == r.decision_id)).all()) == 2


def test_merge_with_another_canonical_and_edited_text_then_undo(store):
    r = ResolveService(store).merge("dup-1", REV, canonical_id="mem_b", canonical_text="Rules go through RuleRegistry.")
    svc = ReviewService(store)
    # mem_a is active and approved; a reviewer may supersede it (not high impact)
    assert svc.detail("mem_b").statement == "Rules go through RuleRegistry."
    assert svc.detail("mem_a").state == "superseded"
    before_events = len(_events(store, "mem_a"))
    # mem_a was in an open conflict: superseded, it cannot conflict, so the merge closed it (and noted it)
    with Session(store) as s:
        assert s.get(MemoryConflict, "memconf_1").resolution == "member_retired"
    merged_events_on_a = [e for e in _events(store, "mem_a") if e.event_id > "" and e.reason and
                          (e.to_state == "superseded" or "memconf_1 closed" in e.reason)]
    assert len(merged_events_on_a) == 2
    u = ResolveService(store).undo(r.decision_id, REV)
    assert svc.detail("mem_a").state == "active" and svc.detail("mem_a").superseded_by is None
    assert svc.detail("mem_b").statement == "Validation uses RuleRegistry as the registry for rules."
    assert len(_evidence(store, "mem_b")) == 2  # the copied evidence is gone, its own stays
    ev = _events(store, "mem_a")
    # one compensating event for each of the merge's two events on mem_a; the state one is active again
    assert len(ev) == before_events + 2 and all(e.compensates for e in ev[-2:])
    assert svc.detail("mem_a").conflict_state == "open"
    with Session(store) as s:
        assert s.get(DuplicateCluster, "dup-1").status == "open"
        assert s.get(MemoryConflict, "memconf_1").status == "open"
    with pytest.raises(ResolveError, match="already undone"):
        ResolveService(store).undo(r.decision_id, REV)
    assert u.kind == "undo"


def test_not_duplicates_is_remembered(store):
    ResolveService(store).not_duplicates("dup-1", REV)
    with Session(store) as s:
        assert s.get(NotDuplicatePair, ("mem_a", "mem_b")) is not None
        assert s.get(DuplicateCluster, "dup-1").status == "dismissed"
    with pytest.raises(ResolveError, match="dismissed"):
        ResolveService(store).merge("dup-1", REV)


@pytest.mark.parametrize("action,expected", [
    ("keep_a", {"mem_a": "active", "mem_c": "invalidated"}),
    ("keep_b", {"mem_a": "invalidated", "mem_c": "active"}),
    ("neither", {"mem_a": "invalidated", "mem_c": "invalidated"}),
    ("not_a_conflict", {"mem_a": "active", "mem_c": "active"}),
])
def test_conflict_resolutions(store, action, expected):
    r = ResolveService(store).resolve_conflict("memconf_1", action, REV)
    svc = ReviewService(store)
    assert {m: svc.detail(m).state for m in expected} == expected
    with Session(store) as s:
        c = s.get(MemoryConflict, "memconf_1")
        assert (c.status, c.resolution) == ("not_a_conflict" if action == "not_a_conflict" else "resolved", action)
    assert svc.detail("mem_a").conflict_state != "open" and svc.detail("mem_c").conflict_state != "open"
    # undo restores states and reopens the conflict
    ResolveService(store).undo(r.decision_id, REV)
    assert {m: svc.detail(m).state for m in expected} == {"mem_a": "active", "mem_c": "active"}
    assert svc.detail("mem_a").conflict_state == "open"
    with Session(store) as s:
        assert s.get(MemoryConflict, "memconf_1").status == "open"


def test_conflict_keep_a_with_supersede(store):
    ResolveService(store).resolve_conflict("memconf_1", "keep_a", REV, supersede=True)
    c = ReviewService(store).detail("mem_c")
    assert (c.state, c.superseded_by) == ("superseded", "mem_a")


def test_conflict_narrow_scopes(store):
    ResolveService(store).resolve_conflict("memconf_1", "narrow", REV,
                                           scopes={"mem_c": {"modulePath": "src/validation/legacy"}})
    svc = ReviewService(store)
    assert svc.detail("mem_c").scope.module_path == "src/validation/legacy"
    assert svc.detail("mem_c").state == "active" and svc.detail("mem_a").state == "active"
    with pytest.raises(ResolveError, match="not open"):
        ResolveService(store).resolve_conflict("memconf_1", "keep_a", REV)


def test_accept_compaction_creates_memory_with_all_evidence(store):
    r = ResolveService(store).accept_compaction("memcomp_1", REV)
    svc = ReviewService(store)
    new = svc.detail(r.new_memory_id)
    assert new.state == "active" and new.statement.startswith("RuleRegistry: OrderValidator calls")
    assert sorted((e.type, e.path) for e in new.evidence) == [
        ("call_edge", "src/validation/OrderValidator.java"), ("file_span", "src/validation/RuleRegistry.java")]
    for mid in ("mem_d", "mem_e"):
        d = svc.detail(mid)
        assert (d.state, d.superseded_by) == ("superseded", r.new_memory_id)
    ResolveService(store).undo(r.decision_id, REV)
    assert svc.detail(r.new_memory_id).state == "archived"  # created by the decision: archived, not deleted
    assert svc.detail("mem_d").state == "active" and svc.detail("mem_d").superseded_by is None


def test_edit_then_accept_and_reject(store):
    r = ResolveService(store).accept_compaction("memcomp_1", REV, statement="RuleRegistry holds the rules; OrderValidator calls it.",
                                                keep=["mem_d"])
    svc = ReviewService(store)
    assert svc.detail(r.new_memory_id).statement == "RuleRegistry holds the rules; OrderValidator calls it."
    assert svc.detail("mem_d").state == "active"  # kept beside the compaction
    assert svc.detail("mem_e").state == "superseded"
    with pytest.raises(ResolveError, match="accepted"):
        ResolveService(store).reject_compaction("memcomp_1", REV)


def test_broadening_compaction_needs_a_lead(store):
    with Session(store) as s, s.begin():
        p = s.get(CompactionProposal, "memcomp_1")
        p.broadens_scope = True
        s.add(p)
    with pytest.raises(ResolveError, match="lead"):
        ResolveService(store).accept_compaction("memcomp_1", REV)
    assert ResolveService(store).accept_compaction("memcomp_1", LEAD).new_memory_id


def test_undo_by_someone_else_is_refused(store):
    r = ResolveService(store).merge("dup-1", REV)
    with pytest.raises(ResolveError, match="only they or a lead"):
        ResolveService(store).undo(r.decision_id, Actor("human", "someone", "reviewer"))
    ResolveService(store).undo(r.decision_id, LEAD)


def test_a_failed_decision_writes_nothing(store):
    # a compaction member in an open conflict: refused, nothing half-written
    with Session(store) as s, s.begin():
        from memtui.store.models import Memory
        m = s.get(Memory, "mem_e")
        m.conflict_state = "open"
        s.add(m)
    count = len(_events(store, "mem_d"))
    with pytest.raises(ResolveError, match="open conflict"):
        ResolveService(store).accept_compaction("memcomp_1", REV)
    assert len(_events(store, "mem_d")) == count
    with Session(store) as s:
        assert s.get(CompactionProposal, "memcomp_1").status == "open"


def test_narrow_must_stay_inside_the_old_scope(store):
    svc = ResolveService(store)
    for bad in ("src/validation", "src", "src/pricing", ""):
        with pytest.raises(ResolveError):
            svc.resolve_conflict("memconf_1", "narrow", REV, scopes={"mem_c": {"modulePath": bad}})
    with Session(store) as s:
        assert s.get(MemoryConflict, "memconf_1").status == "open"


def test_undo_after_a_later_note_only_decision(store):
    """Resolving C1 (invalidates mem_c), then dismissing C2 on mem_c as not a conflict, leaves C1 undoable."""
    with Session(store) as s, s.begin():
        s.add(MemoryConflict(conflict_id="memconf_2", severity="medium", tenant_id="acme", repository_id="os",
                             module_path="src/validation", memory_a="mem_b", memory_b="mem_d", status="open",
                             reason="x", created_at=utcnow()))
    first = ResolveService(store).resolve_conflict("memconf_1", "keep_a", REV)
    ResolveService(store).resolve_conflict("memconf_2", "not_a_conflict", REV)
    ResolveService(store).undo(first.decision_id, REV)
    assert ReviewService(store).detail("mem_c").state == "active"


def test_keep_must_name_members_and_unreviewed_members_never_make_active_memory(store):
    with pytest.raises(ResolveError, match="not a member"):
        ResolveService(store).accept_compaction("memcomp_1", REV, keep=["mem_zzz"])
    with Session(store) as s, s.begin():
        p = s.get(CompactionProposal, "memcomp_1")
        p.members = ["mem_b", "mem_d", "mem_e"]  # mem_b is an unreviewed candidate
        s.add(p)
    r = ResolveService(store).accept_compaction("memcomp_1", REV)
    assert ReviewService(store).detail(r.new_memory_id).state == "candidate"


def test_rejecting_a_conflict_member_closes_its_conflicts(store):
    ReviewService(store).decide("mem_c", "reject", REV)
    with Session(store) as s:
        c = s.get(MemoryConflict, "memconf_1")
        assert (c.status, c.resolution) == ("resolved", "member_retired")
    assert ReviewService(store).detail("mem_a").conflict_state == "resolved"
