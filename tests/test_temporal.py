"""Time and volume (issue 10, item 5): dated facts about one slot propose "newer supersedes older", and
a log-like group of observations is proposed for compaction instead of flooding the reviewer."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from sqlmodel import Session, select
from typer.testing import CliRunner

from memtui.cli import app as memtui_app
from memtui.domain.compaction import (CompactionCandidate, log_groups, log_key, propose_log_compactions)
from memtui.domain.invariants import Actor
from memtui.domain.temporal import Dated, newer, observation_order
from memtui.importers.native import import_files
from memtui.maintenance.runner import maintain
from memtui.recall import recall
from memtui.review.proposals import ProposalQueries
from memtui.review.resolve import ResolveService
from memtui.review.service import ReviewService
from memtui.store.models import CompactionProposal, DuplicateCluster, MemoryConflict

LEAD = Actor("human", "lead-1", "lead")
NOW = datetime(2026, 12, 1, tzinfo=UTC)
JAN, MAY = datetime(2026, 1, 10, 9, tzinfo=UTC), datetime(2026, 5, 2, 9, tzinfo=UTC)

def _dated(old_at: str = "2026-01-10T09:00:00Z", new_at: str = "2026-05-02T09:00:00Z") -> str:
    """Two approved facts about PaymentClient's timeout, 30 s recorded at ``old_at``, 60 s at ``new_at``."""
    rows = (("mem_timeout_old", 30, old_at), ("mem_timeout_new", 60, new_at))
    return "memories:\n" + "".join(
        f"  - {{memoryId: {mid}, type: code_fact, statement: \"PaymentClient uses a {seconds} second timeout.\", "
        f"scope: {{tenantId: acme, repositoryId: pay}}, state: active, reviewState: approved, "
        f"createdAt: \"{at}\", evidence: [{{type: human, ref: \"ops notes\"}}]}}\n" for mid, seconds, at in rows)


def test_newer_is_the_later_observation_or_the_later_day():
    assert newer(Dated("a", JAN), Dated("b", MAY)) == "b"
    assert newer(Dated("a", MAY), Dated("b", JAN)) == "a"
    assert newer(Dated("a", JAN), Dated("b", JAN + timedelta(minutes=5))) is None  # one session: no order
    # observations of one entity: the list order wins even when imported at the same instant
    assert newer(Dated("a", JAN, "mcp:Ann", 3), Dated("b", JAN, "mcp:Ann", 7)) == "b"
    assert newer(Dated("a", JAN, "mcp:Ann", 3), Dated("b", JAN, "mcp:Bob", 7)) is None
    assert observation_order(["entity:Ann", "observation:12"]) == 12 and observation_order(["x"]) == 0
    # a newer fact of another type, or over a high-impact older one, settles nothing
    assert newer(Dated("a", JAN, type="architecture_decision"), Dated("b", MAY, type="repo_convention")) is None
    assert newer(Dated("a", JAN, type="code_fact", high_impact=True), Dated("b", MAY, type="code_fact")) is None
    assert newer(Dated("a", JAN, type="code_fact"), Dated("b", MAY, type="code_fact", high_impact=True)) == "b"
    assert newer(Dated("a", JAN, type="code_fact", confidence=0.9), Dated("b", MAY, type="code_fact", confidence=0.45)) is None


def test_dated_conflict_proposes_newer_supersedes_older(engine, tmp_path):
    f = tmp_path / "r.yaml"
    f.write_text(_dated())
    import_files(engine, [f], LEAD)
    maintain(engine, now=NOW)
    [c] = ProposalQueries(engine).conflicts()
    assert c.newer is not None and c.newer[:2] == ("mem_timeout_new", "mem_timeout_old")
    assert c.newer[2] == ("newer supersedes older: mem_timeout_new (2026-05-02 after 2026-01-10) "
                          "replaces mem_timeout_old")
    # until a reviewer decides, recall says a newer fact is pending instead of dropping both silently
    pack = recall(engine, "PaymentClient timeout", "repository:pay", actor=LEAD, record=False)
    assert pack.memories == ()
    assert any(line.startswith("a newer fact about PaymentClient is pending review: mem_timeout_new would "
                               "supersede mem_timeout_old") for line in pack.summary)
    ResolveService(engine).resolve_conflict(c.conflict_id, "keep_newer", LEAD)
    old = ReviewService(engine).detail("mem_timeout_old")
    assert (old.state, old.superseded_by) == ("superseded", "mem_timeout_new")
    assert ReviewService(engine).detail("mem_timeout_new").sources == ()  # a newer fact is no derivation
    pack = recall(engine, "PaymentClient timeout", "repository:pay", actor=LEAD, record=False)
    assert [m.memory_id for m in pack.memories] == ["mem_timeout_new"]


def test_keep_newer_is_refused_without_an_order(engine, tmp_path):
    f = tmp_path / "r.yaml"
    f.write_text(_dated(new_at="2026-01-10T09:10:00Z"))
    import_files(engine, [f], LEAD)
    maintain(engine, now=NOW)
    [c] = ProposalQueries(engine).conflicts()
    assert c.newer is None
    import pytest

    from memtui.review.resolve import ResolveError
    with pytest.raises(ResolveError, match="neither memory is recorded later"):
        ResolveService(engine).resolve_conflict(c.conflict_id, "keep_newer", LEAD)
    with Session(engine) as s:
        assert s.get(MemoryConflict, c.conflict_id).status == "open"


def _obs(i: int, n: int) -> CompactionCandidate:
    return CompactionCandidate(f"m{i:03d}", "code_fact", "candidate", f"ExportJob: {n} tests passed",
                               "default", "svc", None, created_at=JAN, order=i)


def test_log_groups_mask_values_and_keep_the_latest():
    assert log_key("ExportJob: 242 tests passed.") == "exportjob: # tests passed"
    assert log_key("Build took 3.5s on 2026-01-03") == "build took # on #"
    assert log_key("RuleRegistry v2 is used") == "ruleregistry v2 is used"  # no value to mask: never a log
    few = [_obs(i, 240 + i) for i in range(1, 8)]
    assert log_groups(few) == []  # 7 observations are not yet a log
    many = few + [_obs(8, 300), _obs(9, 241)]
    [group] = log_groups(many)
    assert [c.memory_id for c in group][-1] == "m009"  # oldest first: the latest observation last
    [p] = propose_log_compactions(many)
    assert p.statement == "ExportJob: 241 tests passed" and len(p.members) == 9
    assert p.notes[0].startswith("log-like: 9 observations of \u201cexportjob: # tests passed\u201d")


def test_two_hundred_observations_give_a_compaction_proposal(engine, tmp_path):
    """Issue 10 acceptance: an MCP memory graph with one entity holding 200 observations "ExportJob: N
    tests passed" gives fewer than 10 conflicts (no pairwise findings inside the log) and one compaction
    proposal for that group (the latest observation kept)."""
    values = [240 + (i * 7) % 31 for i in range(200)]
    graph = tmp_path / "graph.jsonl"
    graph.write_text(json.dumps({"type": "entity", "name": "ExportJob", "entityType": "job",
                                 "observations": [f"ExportJob: {n} tests passed" for n in values]}) + "\n")
    db_url = engine.url.render_as_string(hide_password=False)
    out = CliRunner().invoke(memtui_app, ["import", str(graph), "--repository-id", "export-service",
                                          "--db", db_url])
    assert out.exit_code == 0, out.output
    maintain(engine, now=NOW)
    with Session(engine) as s:
        proposals = list(s.exec(select(CompactionProposal)))
        conflicts = list(s.exec(select(MemoryConflict)))
        clusters = list(s.exec(select(DuplicateCluster)))
    assert len(conflicts) == 0 and len(clusters) == 0  # before: 19,243 "different numbers" conflicts, 31 clusters
    log = [p for p in proposals if len(p.members) == 200]
    assert len(log) == 1 and log[0].proposed_statement == f"ExportJob: {values[-1]} tests passed"
