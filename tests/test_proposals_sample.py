"""Issue 4 acceptance on the sample data: one RuleRegistry duplicate cluster, the RuleRegistry/OrderValidator
conflict open and excluded from recall, a compaction proposal for the three narrow memories, and the reports."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import yaml

from memtui.domain.invariants import Actor
from memtui.maintenance.assess import assess
from memtui.maintenance.runner import maintain
from memtui.reports.maintenance import write_reports
from memtui.review.proposals import ProposalQueries
from memtui.sample import set_up_demo

NOW = datetime(2026, 12, 1, tzinfo=UTC)
NEAR_DUPLICATES = {"mem_rules_registered_via_registry", "mem_registry_for_rules", "mem_new_rules_via_registry"}
COMPACTION_THREE = {"mem_validator_calls_registry", "mem_registry_stores_rules", "mem_new_rules_added_to_registry"}


@pytest.fixture
def demo(engine, tmp_path):
    set_up_demo(engine, tmp_path / "work", Actor("human", "loader", "lead"))
    maintain(engine, now=NOW)
    return engine


def test_near_duplicates_form_one_cluster(demo):
    clusters = ProposalQueries(demo).clusters()
    holding = [c for c in clusters if NEAR_DUPLICATES & {m.memory_id for m in c.members}]
    assert len(holding) == 1
    assert NEAR_DUPLICATES <= {m.memory_id for m in holding[0].members}
    assert holding[0].canonical_id in NEAR_DUPLICATES


def test_registry_vs_validator_is_an_open_conflict_excluded_from_recall(demo):
    conflicts = ProposalQueries(demo).conflicts()
    pairs = {frozenset((c.a.memory_id, c.b.memory_id)) for c in conflicts}
    assert frozenset(("mem_rule_registry_convention", "mem_direct_validator_rules")) in pairs
    by_id = {a.memory_id: a for a in assess(demo)}
    for mid in ("mem_rule_registry_convention", "mem_direct_validator_rules"):
        assert not by_id[mid].eligibility.eligible
        assert "conflicted" in by_id[mid].eligibility.reasons


def test_three_narrow_memories_yield_a_compaction_proposal(demo):
    proposals = ProposalQueries(demo).proposals()
    assert any(COMPACTION_THREE <= {m.memory_id for m in p.members} for p in proposals)
    for p in proposals:  # never a conflicting or stale member
        for m in p.members:
            assert m.conflict_state != "open"
            assert all(e.status not in ("changed", "deleted", "unverifiable") for e in m.evidence)


def test_reports_list_them(demo, tmp_path):
    write_reports(demo, tmp_path, NOW)
    dups = yaml.safe_load((tmp_path / "memory-duplicates.yaml").read_text())["duplicateClusters"]
    assert any(NEAR_DUPLICATES <= set(c["members"]) for c in dups)
    conflicts = yaml.safe_load((tmp_path / "memory-conflicts.yaml").read_text())["memoryConflicts"]
    c = next(c for c in conflicts if set(c["memories"]) == {"mem_rule_registry_convention", "mem_direct_validator_rules"})
    assert (c["status"], c["action"]) == ("open", "exclude_both_from_default_context") and c["reason"]
    assert c["scope"]["repositoryId"] == "order-service"
    comp = yaml.safe_load((tmp_path / "memory-compaction-proposals.yaml").read_text())["compactionProposals"]
    p = next(p for p in comp if COMPACTION_THREE <= set(p["members"]))
    assert p["proposedStatement"] and p["evidence"] and p["broadensScope"] is False
