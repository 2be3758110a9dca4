"""The memory page service (issue 11, item 3) on SQLite and PostgreSQL: history, usage and harm, related
clusters, conflicts, compaction proposals and lineage, as they change with real decisions."""

from __future__ import annotations

from memtui.domain.invariants import Actor
from memtui.maintenance.usage import record_usage
from memtui.review.resolve import ResolveService
from memtui.review.service import ReviewService

from tests.test_resolve import LEAD, REV, store  # noqa: F401  (store: the resolve suite's fixture, both databases)

AGENT = Actor("agent", "coder-1")


def _related(page):
    return [(r.relation, r.subject_id, r.status, r.open) for r in page.related]


def test_related_items_follow_the_decisions(store):  # noqa: F811
    svc = ReviewService(store)
    page = svc.memory_page("mem_a")
    assert _related(page) == [("duplicate cluster", "dup-1", "open", True), ("conflict", "memconf_1", "open", True)]
    assert page.related[0].about == "with mem_b" and page.related[1].about.startswith("with mem_c: different object")
    assert [(e.from_state, e.to_state, e.actor_id) for e in page.history] == [(None, "active", LEAD.id)]
    assert page.usage == () and page.quality is not None

    merged = ResolveService(store).merge("dup-1", REV, comment="one rule")
    a, b = svc.memory_page("mem_a"), svc.memory_page("mem_b")
    assert _related(a)[:1] == [("duplicate cluster", "dup-1", "merged", False)]
    assert ("made from", "mem_b", "superseded", True) in _related(a)
    assert _related(b) == [("duplicate cluster", "dup-1", "merged", False),
                           ("made into", "mem_a", "active", True)]  # the canonical once, not again as "superseded by"
    last = b.history[-1]
    assert (last.from_state, last.to_state, last.actor_id) == ("candidate", "superseded", REV.id)

    accepted = ResolveService(store).accept_compaction("memcomp_1", LEAD)
    d = svc.memory_page("mem_d")
    assert ("compaction", "memcomp_1", "accepted", False) in _related(d)
    assert ("made into", accepted.new_memory_id, "active", True) in _related(d)
    new = svc.memory_page(accepted.new_memory_id)
    assert [r for r in _related(new) if r[0] == "made from"] == [("made from", "mem_d", "superseded", True),
                                                                 ("made from", "mem_e", "superseded", True)]
    assert new.related[0].about.startswith("its new memory: RuleRegistry: OrderValidator calls")
    assert merged.decision_id


def test_usage_and_harm_one_line_a_report(store):  # noqa: F811
    record_usage(store, "mem_e", "positive", AGENT)
    record_usage(store, "mem_e", "harm", AGENT, issue="sent the agent to the wrong file")
    page = ReviewService(store).memory_page("mem_e")
    assert [(u.kind, u.what, u.detail) for u in page.usage] == [
        ("use", "context_pack positive", "agent:coder-1"),
        ("harm", "context_pack harm (challenged)", "sent the agent to the wrong file")]
    assert page.history[-1].to_state == "challenged" and page.history[-1].actor_id == "coder-1"
    assert page.detail.waits_for == "harm reported: sent the agent to the wrong file"
