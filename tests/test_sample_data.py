"""The sample data is real: its evidence points at real spans of the bundled git history, and the demo loads it."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import git
import pytest
import yaml

from memtui.domain.invariants import Actor
from memtui.review.service import ReviewService
from memtui.sample import set_up_demo

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
REQUIRED = ["mem_rule_registry_convention", "mem_order_validator_entrypoint", "mem_old_rule_engine",
            "mem_validation_tests", "mem_retry_behavior_unknown"]


@pytest.fixture(scope="module")
def sample_clone(tmp_path_factory):
    dest = tmp_path_factory.mktemp("sample") / "order-service"
    return git.Repo.clone_from(str(SAMPLE / "order-service.bundle"), str(dest), branch="main")


def test_bundle_has_the_history_the_exercise_needs(sample_clone):
    repo = sample_clone
    validated = repo.commit("memories-validated")
    head = repo.head.commit
    changed = {d.a_path or d.b_path: d.change_type for d in validated.diff(head)}
    assert changed["src/main/java/com/acme/order/validation/RuleRegistry.java"] == "M"
    assert changed["src/main/java/com/acme/order/legacy/RuleEngine.java"] == "D"
    assert changed["docs/legacy/rule-engine.md"] == "D"
    # OrderValidator changed only by added lines above validate(): its validate body is the same text
    old = validated.tree["src/main/java/com/acme/order/validation/OrderValidator.java"].data_stream.read().decode()
    new = head.tree["src/main/java/com/acme/order/validation/OrderValidator.java"].data_stream.read().decode()
    start = old.index("public ValidationResult validate") if "public ValidationResult validate" in old else old.index("validate(")
    body = old[start:old.index("\n    }\n", start)]
    assert body in new and new.index(body) > old.index(body)


def test_every_span_hash_matches_the_recorded_commit(sample_clone):
    data = yaml.safe_load((SAMPLE / "memories.yaml").read_text())
    checked = 0
    for rec in data["memories"] + data.get("candidates", []):
        for ev in rec.get("evidence", []) if isinstance(rec.get("evidence"), list) else []:
            if not isinstance(ev, dict) or "spanHash" not in ev:
                continue
            blob = sample_clone.git.show(f"{ev['commitSha']}:{ev['path']}", strip_newline_in_stdout=False)
            lines = blob.splitlines(keepends=True)
            start, end = ev["lines"]
            span = "".join(lines[start - 1:end]).encode()
            assert ev["spanHash"] == "sha256:" + hashlib.sha256(span).hexdigest(), (rec.get("memoryId"), ev)
            checked += 1
    assert checked >= 20


def test_demo_sets_up_store_and_is_idempotent(sqlite_engine, tmp_path):
    actor = Actor("human", "demo-user")
    first = set_up_demo(sqlite_engine, tmp_path / "work", actor)
    assert (first.checkout / ".git").is_dir()
    assert len(first.report.imported) >= 28
    svc = ReviewService(sqlite_engine)
    for mid in REQUIRED:
        assert svc.detail(mid).scope.repository_id == "order-service"
    assert svc.detail("mem_order_validator_entrypoint").state == "active"
    assert svc.detail("mem_retry_behavior_unknown").state == "candidate"
    second = set_up_demo(sqlite_engine, tmp_path / "work", actor)
    assert second.report.imported == [] and len(second.report.unchanged) == len(first.report.imported)


def test_demo_command_prints_counts(tmp_path):
    exe = Path(sys.executable).parent / "memtui"
    db = tmp_path / "d.db"
    out = subprocess.run([str(exe), "demo", "--no-tui", "--db", str(db), "--workdir", str(tmp_path / "w")],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "order-service:" in out.stdout
    assert "  active " in out.stdout and "  candidate " in out.stdout
