"""Import of YAML, JSON and JSON Lines files in the three record shapes (docs/record-format.md)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from sqlmodel import Session, func, select

from memtui.domain.invariants import Actor
from memtui.importers.native import ImportRefused, RecordError, import_files
from memtui.importers.reader import ImportFileError, read_records
from memtui.review.lifecycle import MemoryNotFound
from memtui.review.service import ReviewService
from memtui.store.models import Evidence, Memory, StateHistory

IMPORTER = Actor(type="human", id="importer-1", role="reviewer")
SHA = "0123456789abcdef0123456789abcdef01234567"

MEMORY = {
    "memoryId": "mem_rule_registry",
    "logicalMemoryId": "memlog_rule_registry",
    "type": "repo_convention",
    "statement": "Validation rules are registered through RuleRegistry.",
    "scope": {"tenantId": "acme", "repositoryId": "order-service", "modulePath": "src/validation",
              "appliesTo": ["validation"], "doesNotApplyTo": ["pricing"]},
    "evidence": [
        {"type": "file_span", "path": "src/validation/RuleRegistry.java", "commitSha": SHA,
         "lines": [10, 28], "status": "valid"},
        {"type": "call_edge", "symbol": "OrderValidator.validate", "target": "RuleRegistry.resolve"},
    ],
    "state": "active",
    "confidence": 0.84,
    "reviewState": "approved",
    "conflictState": "none",
    "impact": "normal",
    "origin": "agent",
    "proposedBy": {"type": "agent_workflow", "workflowRunId": "wf_01J"},
    "createdAt": "2026-07-02T00:00:00Z",
    "reviewAfterDays": 90,
    "tags": ["validation", "rules"],
    "invalidationPolicy": [{"symbolChanged": "RuleRegistry"},
                           {"edgeRemoved": "OrderValidator.validate CALLS RuleRegistry.resolve"}],
}

CANDIDATE = {
    "candidateId": "memcand_01J",
    "proposedType": "repo_convention",
    "statement": "Validation rules should be added through RuleRegistry.",
    "proposedScope": {"repositoryId": "order-service", "modulePath": "order.validation"},
    "evidence": ["src/validation/RuleRegistry.java", "judge:contract-verifier"],
    "proposedBy": {"type": "agent_workflow", "workflowRunId": "wf_02K"},
    "confidence": 0.6,
    "validation": {"status": "pending_review"},
}

AWTL = {
    "schema": "awtl.memory_candidate.v2",
    "candidate_id": "memcand-demo-a",
    "failure_class": "agent_failure",
    "failure_type": "contract_mismatch",
    "source_action_ids": ["action-12", "action-13"],
    "root_cause_summary": "Public response shape changed without updating contract evidence.",
    "proposed_memory": "If the public response schema changes, the contract artifact and verifier "
                       "evidence are updated together.",
    "scope": {"applies_to": ["public_api"], "does_not_apply_to": ["internal_refactor"]},
    "evidence_refs": ["judge:contract-verifier", "artifact:contract-output"],
    "verification_probe_candidate": "public-contract-regression",
    "promotion_status": "candidate",
    "requires_human_review": True,
    "repository_id": "order-service",
    "tenant_id": "acme",
}


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def write_shapes(tmp_path: Path, fmt: str) -> Path:
    """The three record shapes in one file of format ``fmt``."""
    if fmt == "yaml":
        return write(tmp_path, "shapes.yaml",
                     yaml.safe_dump({"memories": [MEMORY], "candidates": [CANDIDATE, AWTL]}, sort_keys=False))
    if fmt == "json":
        return write(tmp_path, "shapes.json", json.dumps([MEMORY, CANDIDATE, AWTL], indent=2))
    return write(tmp_path, "shapes.jsonl", "\n".join(json.dumps(r) for r in (MEMORY, CANDIDATE, AWTL)) + "\n")


def counts(engine) -> tuple[int, int, int]:
    with Session(engine) as s:
        return (s.exec(select(func.count()).select_from(Memory)).one(),
                s.exec(select(func.count()).select_from(Evidence)).one(),
                s.exec(select(func.count()).select_from(StateHistory)).one())


def as_utc(dt: datetime) -> datetime:
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def refused(engine, paths, **kw) -> ImportRefused:
    with pytest.raises(ImportRefused) as info:
        import_files(engine, paths, IMPORTER, **kw)
    return info.value


# ---- the three shapes in three formats ------------------------------------------------------

@pytest.mark.parametrize("fmt", ["yaml", "json", "jsonl"])
def test_three_shapes_import_with_their_fields(engine, tmp_path, fmt):
    path = write_shapes(tmp_path, fmt)
    report = import_files(engine, [path], IMPORTER)
    assert report.imported == ["mem_rule_registry", "memcand_01J", "memcand-demo-a"]
    assert report.unchanged == [] and report.rejected == []
    svc = ReviewService(engine)

    m = svc.detail("mem_rule_registry")
    assert m.logical_memory_id == "memlog_rule_registry"
    assert m.type == "repo_convention"
    assert m.statement == "Validation rules are registered through RuleRegistry."
    assert (m.scope.tenant_id, m.scope.repository_id, m.scope.module_path) == ("acme", "order-service",
                                                                               "src/validation")
    assert (m.scope.applies_to, m.scope.does_not_apply_to) == (("validation",), ("pricing",))
    # issue 21 item 3: no checkout holds its commit, so the active record arrives as a candidate
    assert (m.state, m.review_state, m.conflict_state, m.impact, m.origin) == (
        "candidate", "pending", "none", "normal", "agent")
    assert [mid for mid, _ in report.demoted] == ["mem_rule_registry"]
    assert m.confidence == pytest.approx(0.84)
    assert (m.proposer_type, m.proposer_id) == ("agent_workflow", "wf_01J")
    assert m.tags == ("validation", "rules")
    assert list(m.invalidation_policy) == MEMORY["invalidationPolicy"]
    assert as_utc(m.created_at) == datetime(2026, 7, 2, tzinfo=UTC)
    assert m.review_after_days == 90 and m.expires_after_days is None
    assert m.version == 1
    assert [(e.type, e.path, e.commit_sha, e.line_start, e.line_end, e.status) for e in m.evidence] == [
        ("file_span", "src/validation/RuleRegistry.java", SHA, 10, 28, "unchecked"),  # never the file's "valid"
        ("call_edge", None, None, None, None, "unchecked"),
    ]
    assert (m.evidence[1].symbol, m.evidence[1].target) == ("OrderValidator.validate", "RuleRegistry.resolve")

    c = svc.detail("memcand_01J")
    assert (c.type, c.state, c.review_state, c.origin) == ("repo_convention", "candidate", "pending", "agent")
    assert c.statement == "Validation rules should be added through RuleRegistry."
    assert (c.scope.tenant_id, c.scope.repository_id, c.scope.module_path) == ("default", "order-service",
                                                                               "order.validation")
    assert c.promotion_status == "pending_review"
    assert (c.proposer_type, c.proposer_id) == ("agent_workflow", "wf_02K")
    assert c.confidence == pytest.approx(0.6)
    # a bare string is a path when it names a file, else a free reference (§6.3)
    assert [(e.type, e.path, e.ref) for e in c.evidence] == [
        ("file_span", "src/validation/RuleRegistry.java", None), ("ref", None, "judge:contract-verifier")]
    assert as_utc(c.created_at) == datetime(2026, 11, 30, 12, 0, tzinfo=UTC)  # MEMTUI_NOW

    a = svc.detail("memcand-demo-a")
    assert a.statement == AWTL["proposed_memory"]
    assert (a.state, a.review_state, a.origin) == ("candidate", "pending", "imported")
    assert (a.scope.tenant_id, a.scope.repository_id, a.scope.module_path) == ("acme", "order-service", None)
    assert (a.scope.applies_to, a.scope.does_not_apply_to) == (("public_api",), ("internal_refactor",))
    assert (a.failure_class, a.failure_type) == ("agent_failure", "contract_mismatch")
    assert a.promotion_status == "candidate"
    assert a.requires_human_review is True
    assert a.root_cause_summary == AWTL["root_cause_summary"]
    assert (a.proposer_type, a.proposer_id) == ("awtl", "action-12")
    assert [(e.type, e.ref) for e in a.evidence] == [("ref", "judge:contract-verifier"),
                                                     ("ref", "artifact:contract-output")]

    assert counts(engine) == (3, 6, 3)
    for mid in report.imported:
        (ev,) = svc.history(mid)
        assert (ev.from_state, ev.actor_id, ev.actor_role) == (None, "importer-1", "reviewer")
        reason = f"imported from {path.name} record {report.imported.index(mid) + 1}"  # 1-based for people
        assert ev.reason == reason or ev.reason.startswith(reason + "; arrived active but no evidence resolves")


def test_awtl_failure_classes_and_defaults(engine, tmp_path):
    recs = [
        {"candidate_id": "c-env", "failure_class": "environment_blocker", "proposed_memory": "Needs Docker.",
         "requires_human_review": False, "promotion_status": "blocked_by_env"},
        {"candidate_id": "c-flaky", "failure_class": "flaky_test", "proposed_memory": "Test X is flaky.",
         "repository_id": "order-service", "module_path": "src/test", "type": "test_convention",
         "confidence": 0.3},
    ]
    path = write(tmp_path, "awtl.jsonl", "".join(json.dumps(r) + "\n" for r in recs))
    report = import_files(engine, [path], IMPORTER)
    assert report.imported == ["c-env", "c-flaky"]
    svc = ReviewService(engine)
    env = svc.detail("c-env")
    assert (env.failure_class, env.requires_human_review, env.promotion_status) == (
        "environment_blocker", False, "blocked_by_env")
    assert (env.type, env.scope.tenant_id, env.scope.repository_id) == ("failure_lesson", "default", None)
    assert env.confidence == pytest.approx(0.5)
    assert env.evidence == ()
    flaky = svc.detail("c-flaky")
    assert (flaky.type, flaky.scope.repository_id, flaky.scope.module_path) == (
        "test_convention", "order-service", "src/test")
    assert flaky.confidence == pytest.approx(0.3)
    assert flaky.proposer_id is None


def test_awtl_unknown_failure_class_is_refused(engine, tmp_path):
    path = write(tmp_path, "c.jsonl", json.dumps({"candidate_id": "c1", "failure_class": "cosmic_ray",
                                                  "proposed_memory": "x"}) + "\n")
    err = refused(engine, [path]).errors[0]
    assert isinstance(err, RecordError)
    assert (err.field, err.line, err.index, err.record_id) == ("failure_class", 1, 0, "c1")
    assert counts(engine) == (0, 0, 0)


def test_wrapped_records(engine, tmp_path):
    text = yaml.safe_dump([{"memory": {**MEMORY, "memoryId": "mem_wrapped"}},
                           {"candidate": {**CANDIDATE, "candidateId": "cand_wrapped"}}], sort_keys=False)
    report = import_files(engine, [write(tmp_path, "wrapped.yml", text)], IMPORTER)
    assert report.imported == ["mem_wrapped", "cand_wrapped"]
    assert ReviewService(engine).detail("cand_wrapped").promotion_status == "pending_review"


# ---- refusals ----------------------------------------------------------------------------------

GOOD_YAML = """\
memories:
  - memoryId: mem_good
    type: code_fact
    statement: "RuleRegistry is a singleton."
    scope: {repositoryId: order-service}
"""

BAD_SYNTAX_LINE_7 = """\
memories:
  - memoryId: mem_a
    type: repo_convention
    statement: "A"
    scope: {repositoryId: order-service}
    state: candidate
    tags: a: b
"""


def test_yaml_syntax_error_names_file_and_line_and_imports_nothing(engine, tmp_path):
    good = write(tmp_path, "good.yaml", GOOD_YAML)
    good_json = write_shapes(tmp_path, "json")
    bad = write(tmp_path, "bad.yaml", BAD_SYNTAX_LINE_7)
    exc = refused(engine, [good, good_json, bad])
    assert str(bad) in str(exc)
    assert "line 7" in str(exc)
    (err,) = exc.errors
    assert isinstance(err, ImportFileError)
    assert (err.path, err.line) == (str(bad), 7)
    assert counts(engine) == (0, 0, 0)
    with pytest.raises(MemoryNotFound):
        ReviewService(engine).detail("mem_good")


def test_json_syntax_error_names_the_line(engine, tmp_path):
    text = '[\n  {"memoryId": "m1", "type": "code_fact",\n   "statement": "s",\n   "scope": {}},\n]\n'
    bad = write(tmp_path, "bad.json", text)  # trailing comma: the error is at the "]" on line 5
    exc = refused(engine, [write(tmp_path, "good.yaml", GOOD_YAML), bad])
    (err,) = exc.errors
    assert (err.path, err.line) == (str(bad), 5)
    assert str(bad) in str(exc) and "line 5" in str(exc)
    assert counts(engine) == (0, 0, 0)


def test_jsonl_syntax_error_names_the_line(engine, tmp_path):
    lines = [json.dumps({**CANDIDATE, "candidateId": f"c{i}"}) for i in range(3)]
    lines.insert(2, '{"candidateId": "broken", ')
    bad = write(tmp_path, "c.jsonl", "\n".join(lines) + "\n")
    exc = refused(engine, [bad])
    assert (exc.errors[0].path, exc.errors[0].line) == (str(bad), 3)
    assert "line 3" in str(exc)
    assert counts(engine) == (0, 0, 0)


FIELD_ERRORS_YAML = """\
memories:
  - memoryId: mem_ok
    type: code_fact
    statement: "fine"
    scope: {repositoryId: order-service}
  - memoryId: mem_conf
    type: code_fact
    statement: "conf"
    scope: {repositoryId: order-service}
    confidence: "high"
  - memoryId: mem_nostmt
    type: code_fact
    scope: {repositoryId: order-service}
  - memoryId: mem_state
    type: code_fact
    statement: "s"
    scope:
      repositoryId: order-service
    state: bogus
  - memoryId: mem_unknown
    type: code_fact
    statment: "typo"
    statement: "s"
    scope: {repositoryId: order-service}
  - memoryId: mem_nested
    type: code_fact
    statement: "n"
    scope: {repositoryId: order-service}
    evidence:
      - type: file_span
        path: src/A.java
        lines: [20, 10]
"""

# (record index, memory id, field, line of the field; for a missing field the record's first line)
EXPECTED_FIELD_ERRORS = [
    (1, "mem_conf", "confidence", 10),
    (2, "mem_nostmt", "statement", 11),
    (3, "mem_state", "state", 19),
    (4, "mem_unknown", "statment", 22),
    (5, "mem_nested", "evidence[0].lines", 32),
]


def test_field_errors_name_file_line_index_and_field(engine, tmp_path):
    path = write(tmp_path, "records.yaml", FIELD_ERRORS_YAML)
    exc = refused(engine, [path])
    assert len(exc.errors) == len(EXPECTED_FIELD_ERRORS)
    for err, (index, mid, fld, line) in zip(exc.errors, EXPECTED_FIELD_ERRORS):
        assert isinstance(err, RecordError)
        assert (err.path, err.index, err.record_id, err.field, err.line) == (str(path), index, mid, fld, line)
        text = str(err)
        assert text.startswith(f"{path}: line {line}: record {index + 1} ({mid}): field '{fld}'")
        assert str(err) in str(exc)
    by_field = {e.field: e.message for e in exc.errors}
    assert "'high'" in by_field["confidence"]
    assert "missing" in by_field["statement"]
    assert "'bogus'" in by_field["state"]
    assert "unknown field" in by_field["statment"]
    assert counts(engine) == (0, 0, 0)  # mem_ok was valid, but nothing is imported


def test_skip_invalid_imports_the_valid_and_returns_rejects(engine, tmp_path):
    path = write(tmp_path, "records.yaml", FIELD_ERRORS_YAML)
    report = import_files(engine, [path], IMPORTER, skip_invalid=True)
    assert report.imported == ["mem_ok"]
    assert [(r.index, r.field) for r in report.rejected] == [(i, f) for i, _, f, _ in EXPECTED_FIELD_ERRORS]
    assert counts(engine) == (1, 0, 1)
    assert ReviewService(engine).detail("mem_ok").state == "candidate"


def test_json_field_error_names_its_line(engine, tmp_path):
    text = ('[\n'
            '  {\n'
            '    "memoryId": "mem_j",\n'
            '    "type": "code_fact",\n'
            '    "statement": "s",\n'
            '    "scope": {"repositoryId": "order-service"},\n'
            '    "confidence": "high"\n'
            '  }\n'
            ']\n')
    path = write(tmp_path, "r.json", text)
    (err,) = refused(engine, [path]).errors
    assert (err.path, err.index, err.record_id, err.field, err.line) == (str(path), 0, "mem_j", "confidence", 7)


def test_jsonl_field_error_names_its_line(engine, tmp_path):
    good = json.dumps({**CANDIDATE, "candidateId": "c_ok"})
    bad = json.dumps({**CANDIDATE, "candidateId": "c_bad", "confidence": 1.5})
    path = write(tmp_path, "r.jsonl", good + "\n\n" + bad + "\n")
    (err,) = refused(engine, [path]).errors
    assert (err.index, err.record_id, err.field, err.line) == (1, "c_bad", "confidence", 3)
    assert counts(engine) == (0, 0, 0)


def test_unknown_field_is_refused(engine, tmp_path):
    rec = {**AWTL, "promotion_stauts": "candidate"}
    path = write(tmp_path, "typo.json", json.dumps([rec], indent=2))
    (err,) = refused(engine, [path]).errors
    assert err.field == "promotion_stauts"
    assert "unknown field" in err.message
    nested = {**MEMORY, "memoryId": "m2", "scope": {"repositoryId": "r", "appliesTO": ["x"]}}
    path = write(tmp_path, "typo2.yaml", yaml.safe_dump([nested]))
    (err,) = refused(engine, [path]).errors
    assert err.field == "scope.appliesTO"
    assert counts(engine) == (0, 0, 0)


def test_unknown_top_level_key_is_refused(engine, tmp_path):
    path = write(tmp_path, "top.yaml", GOOD_YAML + "memorys: []\n")
    (err,) = refused(engine, [path]).errors
    assert isinstance(err, ImportFileError)
    assert err.line == 6
    assert "memorys" in str(err)


def test_duplicate_id_in_one_import_is_refused(engine, tmp_path):
    a = write(tmp_path, "a.yaml", GOOD_YAML)
    b = write(tmp_path, "b.yaml", GOOD_YAML)
    (err,) = refused(engine, [a, b]).errors
    assert (err.path, err.record_id, err.field) == (str(b), "mem_good", "memoryId")
    assert counts(engine) == (0, 0, 0)


# ---- idempotence and re-import -----------------------------------------------------------------

def test_importing_the_same_file_twice_adds_nothing(engine, tmp_path):
    path = write_shapes(tmp_path, "yaml")
    first = import_files(engine, [path], IMPORTER)
    after_first = counts(engine)
    assert after_first == (3, 6, 3)
    second = import_files(engine, [path], IMPORTER)
    assert second.imported == []
    assert second.unchanged == first.imported
    assert second.rejected == []
    assert counts(engine) == after_first
    # a decision in between does not make the file "changed"
    ReviewService(engine).decide("memcand_01J", "needs-review", Actor(type="human", id="reviewer-1"))
    third = import_files(engine, [path], IMPORTER)
    assert (third.imported, sorted(third.unchanged)) == ([], sorted(first.imported))
    assert ReviewService(engine).detail("memcand_01J").state == "needs_review"


def test_reimport_with_changed_content_is_refused(engine, tmp_path):
    path = write(tmp_path, "good.yaml", GOOD_YAML)
    import_files(engine, [path], IMPORTER)
    before = counts(engine)
    changed = write(tmp_path, "good.yaml", GOOD_YAML.replace("is a singleton", "is a prototype"))
    other = write(tmp_path, "other.yaml", GOOD_YAML.replace("mem_good", "mem_other"))
    exc = refused(engine, [other, changed])
    (err,) = exc.errors
    assert (err.record_id, err.field) == ("mem_good", "memoryId")
    assert "mem_good" in str(exc) and "memoryId" in str(exc)
    assert counts(engine) == before
    assert ReviewService(engine).detail("mem_good").statement == "RuleRegistry is a singleton."
    with pytest.raises(MemoryNotFound):
        ReviewService(engine).detail("mem_other")


# ---- invariants at import ----------------------------------------------------------------------

def test_active_record_without_evidence_arrives_as_a_candidate(engine, tmp_path):
    # issue 21 item 3: import obeys the evidence invariant by arriving as a candidate, the reason listed
    text = GOOD_YAML + "    state: active\n"
    path = write(tmp_path, "active.yaml", text)
    report = import_files(engine, [write(tmp_path, "fine.yaml", GOOD_YAML.replace("mem_good", "mem_fine")), path],
                          IMPORTER)
    assert report.imported == ["mem_fine", "mem_good"] and report.rejected == []
    ((mid, why),) = report.demoted
    assert mid == "mem_good" and "evidence invariant" in why and "it has no evidence" in why
    with Session(engine) as s:
        assert s.get(Memory, "mem_good").state == "candidate"


def test_active_record_with_gone_evidence_arrives_as_a_candidate(engine, tmp_path):
    text = GOOD_YAML + ("    state: active\n    evidence:\n      - type: file_span\n"
                        "        path: src/Gone.java\n        status: deleted\n")
    report = import_files(engine, [write(tmp_path, "gone.yaml", text)], IMPORTER)
    ((mid, why),) = report.demoted
    assert mid == "mem_good" and "evidence invariant" in why


def test_high_impact_record_arrives_live_only_when_approved(engine, tmp_path):
    rec = {**MEMORY, "memoryId": "mem_adr", "type": "architecture_decision", "reviewState": "pending",
           "evidence": [{"type": "human", "ref": "decided by the team"}]}  # a human source needs no checkout
    (err,) = refused(engine, [write(tmp_path, "adr.yaml", yaml.safe_dump([rec]))]).errors
    assert "review invariant" in str(err)
    rec["reviewState"] = "approved"
    report = import_files(engine, [write(tmp_path, "adr2.yaml", yaml.safe_dump([rec]))], IMPORTER)
    assert report.imported == ["mem_adr"]


# ---- the reader alone ---------------------------------------------------------------------------

def test_reader_keeps_record_lines_and_kinds(tmp_path):
    text = GOOD_YAML + "candidates:\n  - candidateId: c1\n    proposedType: x\n"
    recs = read_records(write(tmp_path, "r.yaml", text))
    assert [(r.index, r.line, r.kind) for r in recs] == [(0, 2, "memory"), (1, 7, "candidate")]


def test_reader_refuses_unknown_extension_and_missing_file(tmp_path):
    with pytest.raises(ImportFileError) as info:
        read_records(write(tmp_path, "r.txt", GOOD_YAML))
    assert "r.txt" in str(info.value)
    with pytest.raises(ImportFileError) as info:
        read_records(tmp_path / "nope.yaml")
    assert "nope.yaml" in str(info.value) and "no such file" in str(info.value)


def test_duplicate_yaml_key_is_a_syntax_error_with_its_line(tmp_path):
    text = GOOD_YAML + '    statement: "again"\n'
    with pytest.raises(ImportFileError) as info:
        read_records(write(tmp_path, "dup.yaml", text))
    assert info.value.line == 6
    assert "duplicate key 'statement'" in str(info.value)
