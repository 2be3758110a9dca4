"""The promotion gate: replay evidence, never for environment blockers, recurrence for imported candidates."""

from __future__ import annotations

from memtui.domain.invariants import Actor
from memtui.importers.native import import_files
from memtui.maintenance.promotion import record_replay
from memtui.review.service import ReviewService

HUMAN = Actor("human", "ci-bot-owner", "reviewer")
SHA = "b258aeaf198d7210e9314b696e6b2160b398a127"


def _awtl(cid, failure_class, failure_type):
    return (f'  - {{candidate_id: {cid}, failure_class: {failure_class}, failure_type: {failure_type}, '
            f'proposed_memory: "Update the contract artifact with the response schema ({cid}).", '
            f'repository_id: os, tenant_id: acme, evidence_refs: ["judge:contract-verifier"]}}\n')


def _store(engine, tmp_path, awtl_lines):
    f = tmp_path / "c.yaml"
    f.write_text("memories:\n"
                 "  - memoryId: mem_agent\n    type: code_fact\n    statement: \"OrderValidator calls RuleRegistry.\"\n"
                 "    scope: {tenantId: acme, repositoryId: os}\n    evidence:\n"
                 f"      - {{type: file_span, path: src/A.java, commitSha: \"{SHA}\", lines: [1, 2], status: valid}}\n"
                 "candidates:\n" + "".join(awtl_lines))
    import_files(engine, [f], HUMAN)


def test_passed_replay_promotes_an_agent_candidate(sqlite_engine, tmp_path):
    _store(sqlite_engine, tmp_path, [])
    out = record_replay(sqlite_engine, "mem_agent", "unit-tests", True, HUMAN)
    assert out.promoted
    last = ReviewService(sqlite_engine).history("mem_agent")[-1]
    assert (last.to_state, last.actor_type, last.actor_id) == ("active", "system", "promotion-gate")


def test_failed_replay_never_promotes(sqlite_engine, tmp_path):
    _store(sqlite_engine, tmp_path, [])
    out = record_replay(sqlite_engine, "mem_agent", "unit-tests", False, HUMAN)
    assert not out.promoted and ReviewService(sqlite_engine).detail("mem_agent").state == "candidate"


def test_environment_blocker_is_never_promoted(sqlite_engine, tmp_path):
    _store(sqlite_engine, tmp_path, [_awtl(f"c{i}", "environment_blocker", "missing_browser") for i in range(3)])
    out = record_replay(sqlite_engine, "c0", "e2e", True, HUMAN)
    assert not out.promoted and "environment blocker" in out.reason
    assert ReviewService(sqlite_engine).detail("c0").state == "candidate"


def test_imported_candidate_needs_recurrence(sqlite_engine, tmp_path):
    _store(sqlite_engine, tmp_path, [_awtl(f"c{i}", "agent_failure", "contract_mismatch") for i in range(2)])
    out = record_replay(sqlite_engine, "c0", "public-contract-regression", True, HUMAN)
    assert not out.promoted and "occurred 2 time(s); 3 are needed" in out.reason


def test_imported_candidate_with_three_occurrences_is_promoted(sqlite_engine, tmp_path):
    _store(sqlite_engine, tmp_path, [_awtl(f"c{i}", "agent_failure", "contract_mismatch") for i in range(3)])
    out = record_replay(sqlite_engine, "c0", "public-contract-regression", True, HUMAN)
    assert out.promoted
    d = ReviewService(sqlite_engine).detail("c0")
    assert d.state == "active" and any(e.type == "replay" and e.status == "valid" for e in d.evidence)
