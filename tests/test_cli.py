"""The real ``memtui`` console script, run as a subprocess against a SQLite file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.domain.invariants import Actor
from memtui.domain.states import ALL_STATES
from memtui.importers.native import import_files
from memtui.store.engine import open_store

MEMTUI = Path(sys.executable).parent / "memtui"

STORE_YAML = """\
memories:
  - memoryId: mem_conv
    type: repo_convention
    statement: "Validation rules are registered through RuleRegistry."
    scope: {tenantId: acme, repositoryId: order-service}
    evidence:
      - type: file_span
        path: src/validation/RuleRegistry.java
        commitSha: 0123456789abcdef0123456789abcdef01234567
        lines: [10, 28]
        status: valid
  - memoryId: mem_live
    type: code_fact
    statement: "OrderValidator.validate is the entry point."
    scope: {tenantId: acme, repositoryId: order-service}
    evidence:  # a human source: active without a checkout to check against (issue 21 item 3)
      - type: human
        ref: "OrderValidator.validate, checked by the team"
    state: active
    reviewState: approved
  - memoryId: mem_adr
    type: architecture_decision
    statement: "Orders are validated before pricing."
    scope: {tenantId: acme, repositoryId: order-service}
    evidence:
      - type: adr
        ref: ADR-012
  - memoryId: mem_bill
    type: code_fact
    statement: "Invoices are immutable once issued."
    scope: {tenantId: acme, repositoryId: billing-service}
    evidence:
      - type: symbol
        symbol: Invoice.issue
    state: needs_review
"""

BAD_SYNTAX_LINE_7 = """\
memories:
  - memoryId: mem_late
    type: repo_convention
    statement: "Late."
    scope: {repositoryId: order-service}
    state: candidate
    tags: a: b
"""


def _argv(tmp_path: Path, args: tuple[str, ...]) -> list[str]:
    return [str(MEMTUI), *args, "--db", str(tmp_path / "store.db")]


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """Run ``memtui ARGS --db <tmp store>`` (MEMTUI_NOW comes from the test's environment)."""
    return subprocess.run(_argv(tmp_path, args), cwd=tmp_path, capture_output=True, text=True, timeout=60)


def run_many(tmp_path: Path, *commands: tuple[str, ...]) -> list[tuple[int, str, str]]:
    """Run independent read-only commands side by side (each start costs about a second of imports)."""
    procs = [subprocess.Popen(_argv(tmp_path, c), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for c in commands]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=60)
        out.append((p.returncode, stdout, stderr))
    return out


def write_source(tmp_path: Path) -> Path:
    src = tmp_path / "memories.yaml"
    src.write_text(STORE_YAML, encoding="utf-8")
    return src


@pytest.fixture
def store(tmp_path):
    """A SQLite store file holding the four memories of STORE_YAML (imported in-process, to save a start-up;
    test_cli_import_then_health_json imports through the console script)."""
    engine = open_store(str(tmp_path / "store.db"))
    report = import_files(engine, [write_source(tmp_path)], Actor(type="human", id="importer-1"))
    engine.dispose()
    assert len(report.imported) == 4
    return tmp_path


def health(tmp_path: Path) -> tuple[str, dict]:
    res = run(tmp_path, "health", "--json")
    assert res.returncode == 0, res.stderr
    return res.stdout, json.loads(res.stdout)


def test_cli_import_then_health_json(tmp_path):
    res = run(tmp_path, "import", str(write_source(tmp_path)), "--actor", "importer-1")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "imported 4, already present 0, rejected 0"
    _, data = health(tmp_path)
    rows = data["memoryHealth"]
    assert [r["repositoryId"] for r in rows] == ["billing-service", "order-service"]
    billing, order = rows
    for row in rows:
        assert list(row["byState"]) == list(ALL_STATES)
        assert len(row["byState"]) == 12
    assert order["byState"] == {s: {"candidate": 2, "active": 1}.get(s, 0) for s in ALL_STATES}
    assert billing["byState"] == {s: {"needs_review": 1}.get(s, 0) for s in ALL_STATES}
    assert (order["active"], order["candidatesPending"], order["needsReview"]) == (1, 2, 0)
    assert (billing["active"], billing["candidatesPending"], billing["needsReview"]) == (0, 0, 1)
    assert (order["total"], billing["total"]) == (3, 1)


def test_decide_then_history_shows_the_actor(store):
    res = run(store, "decide", "mem_conv", "needs-review", "--actor", "reviewer-1", "--comment", "span moved")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("mem_conv: candidate -> needs_review (event evt_")
    res = run(store, "history", "mem_conv")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.strip().splitlines()
    assert len(lines) == 2
    assert "(new) -> candidate" in lines[0]
    assert "candidate -> needs_review" in lines[1]
    assert "human:reviewer-1 (lead)" in lines[1]  # a single-user store: the user holds every role
    assert "reviewer decision: needs-review" in lines[1]
    assert "span moved" in lines[1]
    assert lines[1].startswith("2026-11-30T12:00:00Z")


def test_show_json(store):
    res = run(store, "show", "mem_conv", "--json")
    assert res.returncode == 0, res.stderr
    d = json.loads(res.stdout)
    assert (d["memoryId"], d["state"], d["version"], d["reviewState"]) == ("mem_conv", "candidate", 1, "none")
    assert d["scope"]["repositoryId"] == "order-service" and d["scope"]["tenantId"] == "acme"
    assert d["evidence"] == [{
        "type": "file_span", "path": "src/validation/RuleRegistry.java",
        "commitSha": "0123456789abcdef0123456789abcdef01234567", "lines": [10, 28], "symbol": None,
        "target": None, "ref": None, "spanHash": None, "status": "unchecked", "repositoryId": None,  # not the file's
        "current": None, "reasonCode": None, "reason": None,
    }]
    assert d["revalidation"] is None  # never revalidated
    run(store, "decide", "mem_conv", "approve", "--actor", "reviewer-1")
    d = json.loads(run(store, "show", "mem_conv", "--json").stdout)
    assert (d["state"], d["version"], d["reviewState"]) == ("active", 2, "approved")
    assert d["lastValidatedAt"] == "2026-11-30T12:00:00Z"


def test_import_with_yaml_syntax_error_changes_nothing(store):
    before, _ = health(store)
    good = store / "more.yaml"
    good.write_text(STORE_YAML.replace("mem_", "mem2_"), encoding="utf-8")
    bad = store / "broken.yaml"
    bad.write_text(BAD_SYNTAX_LINE_7, encoding="utf-8")
    res = run(store, "import", str(good), str(bad))
    assert res.returncode != 0
    assert str(bad) in res.stderr
    assert "line 7" in res.stderr
    after, _ = health(store)
    assert after == before


def test_unknown_memory_id_exits_1(store):
    commands = (("show", "mem_nope"), ("history", "mem_nope"), ("decide", "mem_nope", "approve"))
    for args, (code, _, stderr) in zip(commands, run_many(store, *commands)):
        assert code == 1, args
        assert "no memory 'mem_nope' in the store" in stderr, args
        assert "Traceback" not in stderr


def test_lead_role_approves_an_architecture_decision(store):
    res = run(store, "decide", "mem_adr", "approve", "--actor", "reviewer-1", "--role", "reviewer")
    assert res.returncode == 1
    assert "review invariant" in res.stderr
    res = run(store, "decide", "mem_adr", "approve", "--actor", "lead-1", "--role", "lead")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("mem_adr: candidate -> active")
    res = run(store, "history", "mem_adr", "--json")
    assert res.returncode == 0, res.stderr
    events = json.loads(res.stdout)
    assert [(e["fromState"], e["toState"]) for e in events] == [(None, "candidate"), ("candidate", "active")]
    last = events[-1]
    assert (last["actorType"], last["actorId"], last["actorRole"]) == ("human", "lead-1", "lead")
    assert last["compensates"] is None
