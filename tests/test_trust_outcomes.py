"""Issue 21, Build item 1 (rules by outcome) and item 5's last sentence (claims are enforced).

The lead gate judged by where a memory ends up and where its current review began, on every path:
the pure table over every edge of the lifecycle, then decide (approve, reject, needs-review, archive)
through the service over every pair of start state and decision, directly and after a hold, for an
architecture decision, an org-wide memory and a normal one; batch, undo, merge, conflict resolution
(invalidate, supersede, neither), compaction, prune, and the real CLI and HTTP API once each. Then
claims: a claimed memory is decided by its claimer until the claim expires, or by a lead who breaks
it (audited). Real stores (SQLite file and PostgreSQL), a real ``memtui serve`` process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from sqlmodel import Session, func, select
from typer.testing import CliRunner

from memtui.clock import utcnow
from memtui.cli import app as memtui_app
from memtui.domain.decisions import DecisionError
from memtui.domain.invariants import Actor, InvariantViolation, LifecycleError, MemoryFacts, check_transition
from memtui.domain.states import TRANSITIONS
from memtui.governance.audit import audit_events
from memtui.maintenance.prune import apply_pruning_plan, pruning_plan
from memtui.domain.pruning import parse_policy
from memtui.review.lifecycle import create_memory
from memtui.review.resolve import ResolveService
from memtui.review.service import ReviewService
from memtui.store.engine import open_store
from memtui.store.models import (CompactionProposal, DuplicateCluster, Evidence, Memory, MemoryConflict,
                                 ReviewClaim, StateHistory)

from .conftest import FIXED_NOW

ANN = Actor("human", "ann", "reviewer")
BOB = Actor("human", "bob", "reviewer")
MAX = Actor("human", "max", "maintainer")
LEE = Actor("human", "lee", "lead")
JOB = Actor("system", "job-1")
BOT = Actor("agent", "bot")
REPO = "order-service"

#: kind -> (type, repository): an architecture decision and an org-wide memory are high impact.
KINDS = {"adr": ("architecture_decision", REPO), "org": ("repo_convention", None), "normal": ("code_fact", REPO)}


def put(engine, mid: str, state: str, kind: str = "adr") -> None:
    """A memory created in ``state`` by the lead (one creation event), with a human source as evidence."""
    mtype, repo = KINDS[kind]
    live = state in ("approved", "active")
    with Session(engine) as s, s.begin():
        m = Memory(memory_id=mid, logical_memory_id=mid, type=mtype, statement=f"The statement of {mid}.",
                   tenant_id="acme", repository_id=repo, state=state, confidence=0.9, origin="human",
                   review_state="approved" if live else "pending", created_at=utcnow())
        create_memory(s, m, [Evidence(memory_id=mid, ordinal=0, type="human", ref="lee", status="valid")],
                      LEE, reason="set up by the test")


def state_of(engine, mid: str) -> str:
    with Session(engine) as s:
        return s.get(Memory, mid).state


def n_events(engine, mid: str) -> int:
    with Session(engine) as s:
        return s.exec(select(func.count()).select_from(StateHistory).where(StateHistory.memory_id == mid)).one()


# ---- the table, pure: every edge of the lifecycle -------------------------------------------------

#: Edges (from -> to) a reviewer may not take on high-impact memory when its review began where it is
#: (worked out from the issue: into use, out of use, or a candidate judged wrong, needs a lead).
REFUSED_DIRECT = {
    "candidate": {"approved", "active", "rejected", "invalidated", "superseded", "archived"},
    "approved": {"rejected", "invalidated", "superseded", "archived", "expired", "blocked"},
    "active": {"invalidated", "superseded", "expired", "deprecated", "archived", "blocked"},
    "expired": {"active"},
}
#: From a review state, by where the review began: in use -> any outcome but a hold needs a lead (a block
#: takes it out of use too); a candidate -> any outcome but a hold or a block; out of use (archived) -> only
#: putting it (back) in use does.
REFUSED_IN_REVIEW = {
    "candidate": {"approved", "active", "invalidated", "rejected", "superseded", "expired", "deprecated", "archived"},
    "active": {"approved", "active", "invalidated", "rejected", "superseded", "expired", "deprecated", "archived",
               "blocked"},
    "archived": {"approved", "active"},
}
EDGES = [(f, t) for f, tos in TRANSITIONS.items() for t in sorted(tos)]


def _facts(state: str, kind: str = "adr") -> MemoryFacts:
    from memtui.domain.invariants import EvidenceFacts

    mtype, repo = KINDS[kind]
    return MemoryFacts("m", mtype, state, repo, evidence=(EvidenceFacts("human", "valid"),))


def _refused(facts: MemoryFacts, to: str, actor: Actor, start) -> bool:
    try:
        check_transition(facts, to, actor, review_start=start)
    except InvariantViolation as exc:
        assert exc.invariant in ("review", "promotion"), str(exc)
        return exc.invariant == "review"
    return False


@pytest.mark.parametrize("from_state,to_state", EDGES, ids=[f"{f}>{t}" for f, t in EDGES])
def test_every_edge_by_outcome_for_reviewer_lead_job_and_agent(from_state, to_state):
    starts = ["candidate", "active", "archived"] if from_state in ("needs_review", "challenged") else [from_state]
    for start in starts:
        table = REFUSED_IN_REVIEW if start != from_state else REFUSED_DIRECT
        refused = to_state in table.get(start, set())
        for kind in KINDS:
            high = kind != "normal"
            facts = _facts(from_state, kind)
            for actor in (ANN, MAX):
                assert _refused(facts, to_state, actor, start) == (high and refused), (kind, actor.role, start)
            assert not _refused(facts, to_state, LEE, start)
            # a job acts by evidence and policy: it may take memory out of use, never put high-impact memory in use
            into_use = to_state in ("approved", "active") and (from_state not in ("approved", "active"))
            assert _refused(facts, to_state, JOB, start) == (high and into_use), (kind, "job", start)
            # an agent may hold (challenge) or block; what needs a lead, it may not do
            assert _refused(facts, to_state, BOT, start) == (high and refused), (kind, "agent", start)


def test_the_refusal_names_the_rule_and_the_path():
    with pytest.raises(InvariantViolation) as info:
        check_transition(_facts("needs_review"), "invalidated", ANN, review_start="active")
    assert str(info.value) == (
        "m: review invariant: taking high-impact memory out of use needs a lead (high-impact: architecture "
        "decision, impact high or org-wide scope; active -> needs_review -> invalidated); human 'ann' has role "
        "'reviewer'")
    with pytest.raises(InvariantViolation, match="rejecting or retiring a high-impact candidate needs a lead "
                       r"\(.*; candidate -> rejected\)"):
        check_transition(_facts("candidate", "org"), "rejected", ANN)


# ---- decide through the service: every start state x decision, directly and after a hold ------------

STARTS = ["candidate", "approved", "active", "expired", "deprecated", "invalidated", "archived"]
DECISIONS = ["approve", "reject", "archive", "needs-review"]
#: What a reviewer's decision on high-impact memory does, by start state (decisions in DECISIONS order):
#: ok (allowed), lead (refused by the review invariant; a lead may), no (the lifecycle refuses anyone).
DIRECT = {
    "candidate": ("lead", "lead", "lead", "ok"),
    "approved": ("ok", "lead", "lead", "ok"),
    "active": ("no", "lead", "lead", "ok"),
    "expired": ("lead", "no", "ok", "ok"),
    "deprecated": ("no", "no", "ok", "ok"),
    "invalidated": ("no", "no", "ok", "ok"),
    "archived": ("no", "no", "no", "ok"),
}
#: The same after the reviewer first sent it to review (a hold anyone may cause).
AFTER_HOLD = {
    "candidate": ("lead", "lead", "lead", "no"),
    "approved": ("lead", "lead", "lead", "no"),
    "active": ("lead", "lead", "lead", "no"),
    "expired": ("lead", "ok", "ok", "no"),
    "deprecated": ("lead", "ok", "ok", "no"),
    "invalidated": ("lead", "ok", "ok", "no"),
    "archived": ("lead", "ok", "ok", "no"),
}


def _target(decision: str, current: str) -> str:
    return {"approve": "active", "archive": "archived", "needs-review": "needs_review",
            "reject": "rejected" if current in ("candidate", "approved") else "invalidated"}[decision]


# The rule table is Python over the service; the stores differ only in how the rows are written, which the
# other tests here (batch, undo, merge, CLI, ...) cover on both: the 28 pairs run on SQLite (suite time).
@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("decision", DECISIONS)
@pytest.mark.parametrize("start", STARTS)
def test_decide_by_outcome_over_every_start_and_decision(engine, start, decision):
    svc = ReviewService(engine)
    for kind in KINDS:
        for via, table in (("direct", DIRECT), ("hold", AFTER_HOLD)):
            mid = f"m_{kind}_{via}"
            put(engine, mid, start, kind)
            if via == "hold":
                assert svc.decide(mid, "needs-review", ANN).to_state == "needs_review"
            current = state_of(engine, mid)
            expect = table[start][DECISIONS.index(decision)]
            if kind == "normal" and expect == "lead":
                expect = "ok"
            where = f"{kind} {via} from {start}: {decision}"
            before = n_events(engine, mid)
            if expect == "no":
                for actor in (ANN, LEE):
                    with pytest.raises(LifecycleError):
                        svc.decide(mid, decision, actor)
                assert (state_of(engine, mid), n_events(engine, mid)) == (current, before), where
                continue
            if expect == "lead":
                with pytest.raises(InvariantViolation) as info:
                    svc.decide(mid, decision, ANN)
                assert info.value.invariant == "review" and "needs a lead" in str(info.value), where
                assert (state_of(engine, mid), n_events(engine, mid)) == (current, before), where
                actor = LEE
            else:
                actor = ANN
            out = svc.decide(mid, decision, actor)
            assert (out.from_state, out.to_state) == (current, _target(decision, current)), where
            assert state_of(engine, mid) == _target(decision, current)


def test_two_steps_to_retire_an_active_adr_name_the_path(engine):
    put(engine, "m_adr", "active")
    svc = ReviewService(engine)
    svc.decide("m_adr", "needs-review", ANN)
    with pytest.raises(InvariantViolation) as info:
        svc.decide("m_adr", "reject", ANN)
    assert "taking high-impact memory out of use needs a lead" in str(info.value)
    assert "active -> needs_review -> invalidated" in str(info.value)
    with pytest.raises(InvariantViolation, match="active -> needs_review -> archived"):
        svc.decide("m_adr", "archive", ANN)
    # a challenge (an agent's harm report) is a hold too: what follows is judged from active
    put(engine, "m_adr2", "active")
    svc.decide("m_adr2", "needs-review", ANN)
    svc.undo(svc.last_undoable_event("m_adr2"), ANN)  # the reviewer takes the own hold back: in use again
    assert state_of(engine, "m_adr2") == "active"
    with Session(engine) as s, s.begin():
        from memtui.review.lifecycle import transition

        transition(s, "m_adr2", "challenged", BOT, reason="harm reported")
    with pytest.raises(InvariantViolation, match="active -> challenged -> invalidated"):
        svc.decide("m_adr2", "reject", ANN)
    assert svc.decide("m_adr2", "reject", LEE).to_state == "invalidated"


def test_batch_is_judged_by_outcome_all_or_nothing(engine):
    put(engine, "m_norm", "active", "normal")
    put(engine, "m_adr", "active")
    svc = ReviewService(engine)
    svc.decide_many(["m_norm", "m_adr"], "needs-review", ANN)
    with pytest.raises(InvariantViolation, match="m_adr: review invariant: taking high-impact memory out of use"):
        svc.decide_many(["m_norm", "m_adr"], "reject", ANN)
    assert (state_of(engine, "m_norm"), state_of(engine, "m_adr")) == ("needs_review", "needs_review")
    assert [o.to_state for o in svc.decide_many(["m_norm", "m_adr"], "reject", LEE)] == ["invalidated", "invalidated"]


def test_undo_is_judged_by_outcome(engine):
    svc = ReviewService(engine)
    # ann approved an ADR while she was a lead; now a reviewer, she cannot take it out of use by undo
    put(engine, "m_adr", "candidate")
    approved = svc.decide("m_adr", "approve", Actor("human", "ann", "lead"))
    with pytest.raises(InvariantViolation, match="taking high-impact memory out of use needs a lead"):
        svc.undo(approved.event_id, ANN)
    assert state_of(engine, "m_adr") == "active"
    # her own hold of an active ADR she may take back (it returns to where it was)
    put(engine, "m_org", "active", "org")
    held = svc.decide("m_org", "needs-review", ANN)
    assert svc.undo(held.event_id, ANN).to_state == "active"
    # a lead's retirement undone by the lead: back in use
    retired = svc.decide("m_org", "archive", LEE)
    assert svc.undo(retired.event_id, LEE).to_state == "active"
    # a compaction's new org-wide candidate, archived by the undo of that compaction: it never existed before
    put(engine, "m_o1", "active", "normal")
    put(engine, "m_o2", "candidate", "normal")
    with Session(engine) as s, s.begin():
        s.add(CompactionProposal(proposal_id="comp_org", tenant_id="acme", repository_id=None, members=["m_o1", "m_o2"],
                                 proposed_statement="One statement for both.", proposed_type="repo_convention",
                                 created_at=utcnow()))
    rs = ResolveService(engine)
    accepted = rs.accept_compaction("comp_org", ANN)
    assert state_of(engine, accepted.new_memory_id) == "candidate"
    rs.undo(accepted.decision_id, ANN)
    assert state_of(engine, accepted.new_memory_id) == "archived"


# ---- merge, resolve, supersede, compaction, prune ----------------------------------------------------

@pytest.mark.parametrize("path", ["merge", "keep_a", "keep_a_supersede", "neither"])
def test_merge_and_resolve_judge_a_held_adr_from_where_its_review_began(engine, path):
    put(engine, "m_norm", "active", "normal")
    put(engine, "m_adr", "active")
    ReviewService(engine).decide("m_adr", "needs-review", ANN)
    with Session(engine) as s, s.begin():
        if path == "merge":
            s.add(DuplicateCluster(cluster_id="dup_1", repository_id=REPO, scope_key=f"acme/{REPO}",
                                   type="code_fact", members=["m_norm", "m_adr"], canonical_id="m_norm",
                                   method="fuzzy", created_at=utcnow()))
        else:
            s.add(MemoryConflict(conflict_id="conf_1", severity="medium", tenant_id="acme", repository_id=REPO,
                                 memory_a="m_norm", memory_b="m_adr", reason="they disagree", created_at=utcnow()))
    rs = ResolveService(engine)

    def run(actor):
        if path == "merge":
            return rs.merge("dup_1", actor)
        return rs.resolve_conflict("conf_1", path.removesuffix("_supersede"), actor, supersede=path.endswith("supersede"))

    with pytest.raises(InvariantViolation, match=r"m_adr: review invariant: taking high-impact memory out of use "
                       r"needs a lead \(.*active -> needs_review -> (superseded|invalidated)\)"):
        run(ANN)
    assert (state_of(engine, "m_norm"), state_of(engine, "m_adr")) == ("active", "needs_review")
    result = run(LEE)
    expected = {"merge": "superseded", "keep_a": "invalidated", "keep_a_supersede": "superseded",
                "neither": "invalidated"}[path]
    assert result.changes["m_adr"] == ("needs_review", expected)


def test_compaction_approval_cannot_supersede_a_held_adr(engine):
    put(engine, "m_norm", "active", "normal")
    put(engine, "m_adr", "active")
    svc = ReviewService(engine)
    svc.decide("m_adr", "needs-review", ANN)
    with Session(engine) as s, s.begin():
        s.add(CompactionProposal(proposal_id="comp_1", tenant_id="acme", repository_id=REPO,
                                 members=["m_norm", "m_adr"], proposed_statement="Both, said once.",
                                 proposed_type="code_fact", created_at=utcnow()))
    new = ResolveService(engine).accept_compaction("comp_1", ANN).new_memory_id
    assert state_of(engine, new) == "candidate"  # a member is under review: the compacted memory waits
    with pytest.raises(InvariantViolation, match="m_adr: review invariant: taking high-impact memory out of use"):
        svc.decide(new, "approve", ANN)  # would supersede the ADR, whose review began active
    assert (state_of(engine, new), state_of(engine, "m_adr")) == ("candidate", "needs_review")
    svc.decide(new, "approve", LEE)
    assert (state_of(engine, new), state_of(engine, "m_adr"), state_of(engine, "m_norm")) == (
        "active", "superseded", "superseded")


def test_prune_apply_needs_a_lead_for_high_impact_memory_in_use(engine):
    put(engine, "m_org", "active", "org")
    put(engine, "m_org_old", "invalidated", "org")
    put(engine, "m_norm", "active", "normal")
    rules = parse_policy({"pruningPolicy": {"archiveIf": [{"confidenceBelow": 0.95}], "neverPruneIf": []}})
    plan = pruning_plan(engine, rules, utcnow())
    assert [i.memory_id for i in plan.archive] == ["m_norm", "m_org", "m_org_old"]
    result = apply_pruning_plan(engine, plan, MAX)
    refused = {c["memoryId"]: c["refused"] for c in result.changes if "refused" in c}
    assert list(refused) == ["m_org"] and "taking high-impact memory out of use needs a lead" in refused["m_org"]
    assert [state_of(engine, m) for m in ("m_norm", "m_org", "m_org_old")] == ["archived", "active", "archived"]
    apply_pruning_plan(engine, pruning_plan(engine, rules, utcnow()), LEE)
    assert state_of(engine, "m_org") == "archived"


# ---- the real CLI and HTTP API, once each ----------------------------------------------------------

def cli(url: str, *args: str, login: str):
    env = {"LOGNAME": login, "USER": login, "MEMTUI_NOW": FIXED_NOW}
    return CliRunner().invoke(memtui_app, ["--db", url, *args, "--actor", login], env=env)


def _governed(url: str) -> None:
    """lee (lead, every tenant) and ann (reviewer of acme) on the store at ``url``."""
    for args in (("reviewers", "add", "lee", "--role", "lead"),
                 ("reviewers", "add", "ann", "--role", "reviewer", "--scope", "acme")):
        res = cli(url, *args, login="lee")
        assert res.exit_code == 0, res.output


def test_cli_decide_judges_the_outcome(store_url):
    engine = open_store(store_url)
    try:
        put(engine, "m_adr", "active")
        _governed(store_url)
        assert cli(store_url, "decide", "m_adr", "needs-review", login="ann").exit_code == 0
        res = cli(store_url, "decide", "m_adr", "reject", login="ann")
        assert res.exit_code == 1
        assert ("m_adr: review invariant: taking high-impact memory out of use needs a lead" in res.output
                and "active -> needs_review -> invalidated" in res.output), res.output
        assert cli(store_url, "decide", "m_adr", "archive", login="ann").exit_code == 1
        assert state_of(engine, "m_adr") == "needs_review"
        res = cli(store_url, "decide", "m_adr", "reject", login="lee")
        assert res.exit_code == 0, res.output
        assert state_of(engine, "m_adr") == "invalidated"
    finally:
        engine.dispose()


def test_http_decide_judges_the_outcome(tmp_path):
    from .test_api import Server

    url = str(tmp_path / "s.db")
    engine = open_store(url)
    put(engine, "m_org", "active", "org")
    _governed(url)
    res = cli(url, "tokens", "create", "ann", login="lee")
    assert res.exit_code == 0, res.output
    token = res.stdout.strip().splitlines()[-1]
    server = Server(url, tmp_path / "serve.log")
    try:
        with httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {token}"}, timeout=30) as c:
            v = c.get("/memory/m_org").json()["version"]
            r = c.post("/memory/candidates/m_org/review", json={"decision": "needs_review", "expectedVersion": v})
            assert r.status_code == 200, r.text
            r = c.post("/memory/candidates/m_org/review", json={"decision": "reject", "expectedVersion": v + 1})
            assert r.status_code == 422, r.text
            body = r.json()
            assert body["invariant"] == "review"
            assert "taking high-impact memory out of use needs a lead" in body["detail"]
            assert "active -> needs_review -> invalidated" in body["detail"]
            r = c.post("/memory/m_org/archive", json={"expectedVersion": v + 1})
            assert r.status_code == 422 and "active -> needs_review -> archived" in r.json()["detail"], r.text
        assert state_of(engine, "m_org") == "needs_review"
    finally:
        server.stop()
        engine.dispose()


# ---- claims are enforced (Build item 5) ----------------------------------------------------------------

def test_a_claimed_memory_is_decided_by_its_claimer_or_a_lead_who_breaks_it(engine, monkeypatch):
    for mid in ("m1", "m2", "m3"):
        put(engine, mid, "candidate", "normal")
    svc = ReviewService(engine)
    assert svc.claim_next(ANN, n=3, ttl_minutes=30) == ["m1", "m2", "m3"]
    with pytest.raises(DecisionError) as info:
        svc.decide("m1", "approve", BOB)
    assert str(info.value) == ("m1 is claimed by ann until 2026-11-30T12:30:00Z: only they, or a lead who breaks "
                               "the claim, may decide it until then ('bob' has role 'reviewer')")
    assert (state_of(engine, "m1"), n_events(engine, "m1")) == ("candidate", 1)
    with pytest.raises(DecisionError, match="claimed by ann"):  # batch and other paths pass the same gate
        svc.decide_many(["m1", "m2"], "reject", BOB)
    assert svc.decide("m1", "approve", ANN).to_state == "active"
    # a lead breaks the claim: the decision stands, the claim is gone, and it is audited
    assert svc.decide("m2", "reject", LEE).to_state == "rejected"
    with Session(engine) as s:
        assert s.get(ReviewClaim, "m2") is None and s.get(ReviewClaim, "m3").claimed_by == "ann"
        broken = [(e.actor_id, e.subject, e.detail) for e in audit_events(s, kind="claim_broken")]
    assert broken == [("lee", "m2", {"claimedBy": "ann", "expiresAt": "2026-11-30T12:30:00Z"})]
    # once the claim has expired anyone may decide
    monkeypatch.setenv("MEMTUI_NOW", "2026-11-30T12:30:01Z")
    assert svc.decide("m3", "approve", BOB).to_state == "active"
    with Session(engine) as s:
        assert len(audit_events(s, kind="claim_broken")) == 1
