"""Compaction keeps recall intact and lineage follows sources (issue 10, items 6 and 7; seed 000 §20.3).

A compaction accepted while its new memory is only a candidate leaves every member in use; approving
the new memory supersedes them then (undoing that approval gives them back). A compacted or merged
memory lists its sources, and a source that is retracted sends the derived memory to review.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from sqlmodel import Session, select
from typer.testing import CliRunner

from memtui.cli import app as memtui_app
from memtui.domain.invariants import Actor
from memtui.maintenance.runner import maintain
from memtui.review.resolve import ResolveService
from memtui.review.service import ReviewService
from memtui.sample import set_up_demo
from memtui.store.models import CompactionProposal, StateHistory
from tests.test_resolve import LEAD, REV, store  # noqa: F401  (the fixture)

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _states(engine, ids):
    svc = ReviewService(engine)
    return {i: (svc.detail(i).state, svc.detail(i).superseded_by) for i in ids}


def _with_unreviewed_member(engine):
    with Session(engine) as s, s.begin():
        p = s.get(CompactionProposal, "memcomp_1")
        p.members = ["mem_b", "mem_d", "mem_e"]  # mem_b is a candidate nobody reviewed
        s.add(p)


def _status(engine, proposal_id="memcomp_1"):
    with Session(engine) as s:
        return s.get(CompactionProposal, proposal_id).status


def test_a_pending_compaction_leaves_its_members_in_use_until_it_is_approved(store):
    _with_unreviewed_member(store)
    r = ResolveService(store).accept_compaction("memcomp_1", REV)
    new = r.new_memory_id
    assert r.changes == {}  # nothing changed state: the new memory is a candidate, the members untouched
    assert _states(store, ["mem_b", "mem_d", "mem_e", new]) == {
        "mem_b": ("candidate", None), "mem_d": ("active", None), "mem_e": ("active", None), new: ("candidate", None)}
    assert _status(store) == "pending_review"
    detail = ReviewService(store).detail(new)
    assert detail.sources == ("mem_b", "mem_d", "mem_e") and detail.compaction_status == "pending_review"
    assert new in {i.memory_id for i in ReviewService(store).queue_page()}

    approved = ReviewService(store).decide(new, "approve", LEAD)
    assert _states(store, ["mem_b", "mem_d", "mem_e"]) == {
        "mem_b": ("superseded", new), "mem_d": ("superseded", new), "mem_e": ("superseded", new)}
    assert _status(store) == "accepted"

    ReviewService(store).undo(approved.event_id, LEAD)
    assert _states(store, ["mem_b", "mem_d", "mem_e", new]) == {
        "mem_b": ("candidate", None), "mem_d": ("active", None), "mem_e": ("active", None), new: ("candidate", None)}
    assert _status(store) == "pending_review"


def test_rejecting_the_pending_memory_withdraws_the_compaction(store):
    _with_unreviewed_member(store)
    r = ResolveService(store).accept_compaction("memcomp_1", REV)
    ReviewService(store).decide(r.new_memory_id, "reject", REV)
    assert _status(store) == "withdrawn"
    assert _states(store, ["mem_d", "mem_e"]) == {"mem_d": ("active", None), "mem_e": ("active", None)}


def test_kept_members_stay_when_the_compaction_becomes_active(store):
    _with_unreviewed_member(store)
    r = ResolveService(store).accept_compaction("memcomp_1", REV, keep=["mem_d"])
    ReviewService(store).decide(r.new_memory_id, "approve", LEAD)
    assert _states(store, ["mem_d", "mem_e"]) == {"mem_d": ("active", None), "mem_e": ("superseded", r.new_memory_id)}


def test_a_retracted_source_sends_the_derived_memory_to_review_naming_it(store):
    r = ResolveService(store).accept_compaction("memcomp_1", REV)  # every member reviewed: active at once
    new = r.new_memory_id
    assert ReviewService(store).detail(new).state == "active"
    assert ReviewService(store).detail("mem_e").state == "superseded"
    # a superseded source found wrong can still be rejected; the compacted memory goes to review
    out = ReviewService(store).decide("mem_e", "reject", REV, comment="RuleRegistry stores no rules any more")
    assert out.to_state == "invalidated"
    d = ReviewService(store).detail(new)
    assert d.state == "needs_review"
    last = ReviewService(store).history(new)[-1]
    assert last.reason == "lineage: source mem_e is invalidated (seed 000 §20.3)"


def test_merge_canonical_is_derived_from_the_merged_members(store):
    ResolveService(store).merge("dup-1", REV)  # mem_b superseded by mem_a
    assert ReviewService(store).detail("mem_a").sources == ("mem_b",)
    ReviewService(store).decide("mem_b", "block", LEAD, comment="held a token")
    assert ReviewService(store).detail("mem_a").state == "needs_review"


def test_archiving_a_superseded_source_is_housekeeping(store):
    r = ResolveService(store).accept_compaction("memcomp_1", REV)
    ReviewService(store).decide("mem_d", "archive", LEAD)
    assert ReviewService(store).detail(r.new_memory_id).state == "active"
    with Session(store) as s:
        reasons = [e.reason for e in s.exec(select(StateHistory).where(StateHistory.memory_id == r.new_memory_id))]
    assert not any(x.startswith("lineage") for x in reasons)


def test_demo_accepting_the_registry_compaction_as_a_candidate_keeps_recall(sqlite_engine, tmp_path):
    """Issue 10 acceptance: the RuleRegistry proposal accepted as a candidate leaves its active
    members in ``memtui recall "add a validation rule" --scope repository:order-service``."""
    set_up_demo(sqlite_engine, tmp_path / "work", Actor("human", "loader", "lead"))
    maintain(sqlite_engine, now=NOW)
    db = str(tmp_path / "store.db")
    cli = CliRunner()

    def recalled() -> set[str]:
        out = cli.invoke(memtui_app, ["recall", "add a validation rule", "--scope", "repository:order-service",
                                      "--json", "--limit", "20", "--db", db])
        assert out.exit_code == 0, out.output
        return {m["memoryId"] for m in json.loads(out.output)["memories"]}

    with Session(sqlite_engine) as s:
        proposal = next(p for p in s.exec(select(CompactionProposal))
                        if "mem_registry_stores_rules" in p.members)
    before = recalled()
    active_members = {m for m in proposal.members if ReviewService(sqlite_engine).detail(m).state == "active"}
    assert active_members and active_members <= before
    out = cli.invoke(memtui_app, ["compaction", "accept", proposal.proposal_id, "--candidate", "--db", db])
    assert out.exit_code == 0, out.output
    assert active_members <= recalled()
    # the next run proposes nothing new over the pending compaction, and changes nothing
    maintain(sqlite_engine, now=NOW)
    with Session(sqlite_engine) as s:
        rows = list(s.exec(select(CompactionProposal)))
    assert [p.status for p in rows if p.proposal_id == proposal.proposal_id] == ["pending_review"]
    assert not [p for p in rows if p.status == "open" and set(p.members) & set(proposal.members)]
