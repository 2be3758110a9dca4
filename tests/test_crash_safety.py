"""Crash safety stays proven (issue 9, item 6): an import, a batch decision (a review policy sending every
agent memory to review) and a maintenance run killed with SIGKILL leave the store as it was before,
or as it is after the whole operation, and `memtui check` finds it intact (exit 0)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from memtui.store.engine import open_store

MEMTUI = Path(sys.executable).with_name("memtui")
BASE = 3000  # active agent memories in the store; every second one past its expiry date
NEW = 8000  # candidates in the file being imported


def _record(i: int, prefix: str, active: bool) -> dict:
    r = {"memoryId": f"{prefix}_{i:06d}", "type": "code_fact",
         "statement": f"Component {i} of {prefix} validates its input {i * 7} times.",
         "scope": {"tenantId": "acme", "repositoryId": "order-service"},
         "state": "active" if active else "candidate", "confidence": 0.8, "reviewState": "none",
         "origin": "agent", "evidence": [{"type": "human", "ref": f"note {i}"}]}
    if active and i % 2 == 0:
        r["expiresAt"] = "2026-01-01T00:00:00Z"
    return r


def _write_jsonl(path: Path, prefix: str, n: int, active: bool) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps(_record(i, prefix, active)) + "\n")
    return path


@pytest.fixture(scope="module")
def base_store(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("crash")
    db = d / "base.db"
    out = subprocess.run([str(MEMTUI), "--db", str(db), "import", str(_write_jsonl(d / "base.jsonl", "mem_base", BASE, True))],
                         capture_output=True, text=True, timeout=120, env=_env())
    assert out.returncode == 0, out.stderr
    return db


def _env() -> dict:
    import os

    return {**os.environ, "MEMTUI_NOW": "2026-11-30T12:00:00Z"}


def _copy(base: Path, to: Path) -> Path:
    shutil.copy(base, to)
    return to


def _scalar(db: Path, sql: str) -> int:
    engine = open_store(str(db))
    try:
        with engine.connect() as conn:
            return conn.execute(sa.text(sql)).scalar()
    finally:
        engine.dispose()


def _kill_after(args: list[str], delay: float) -> int:
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env())
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
    return proc.wait(timeout=30)


def _check(db: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(MEMTUI), "--db", str(db), "check"], capture_output=True, text=True, timeout=120,
                          env=_env())


def _crash_runs(base_store: Path, tmp_path: Path, command: list[str], delays: tuple[float, ...], measure: str,
                before: int, after: int) -> None:
    killed = 0
    for n, delay in enumerate(delays):
        db = _copy(base_store, tmp_path / f"run{n}.db")
        rc = _kill_after([str(MEMTUI), "--db", str(db), *command], delay)
        value = _scalar(db, measure)
        if rc == -signal.SIGKILL:
            killed += 1
            assert value in (before, after), f"killed after {delay}s: {value} is half of the operation"
        else:
            assert rc == 0 and value == after
        result = _check(db)
        assert result.returncode == 0, result.stdout + result.stderr
    assert killed, "no run was killed while it worked: the test proved nothing"


def test_import_killed_leaves_the_store_whole(base_store, tmp_path):
    src = _write_jsonl(tmp_path / "big.jsonl", "mem_big", NEW, False)
    _crash_runs(base_store, tmp_path, ["import", str(src)], (2.0, 4.5), "SELECT count(*) FROM memory",
                BASE, BASE + NEW)


def test_batch_decision_killed_leaves_the_store_whole(base_store, tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text("policy:\n  name: recheck-agent-memory\n  description: every agent memory\n"
                      "  sendToReviewIf:\n    - {origin: agent}\n")
    _crash_runs(base_store, tmp_path, ["policy", "apply", str(policy)], (1.8, 3.0),
                "SELECT count(*) FROM memory WHERE state = 'needs_review'", 0, BASE)


def test_maintenance_killed_leaves_the_store_whole(base_store, tmp_path):
    _crash_runs(base_store, tmp_path, ["maintain"], (1.8, 3.0),
                "SELECT count(*) FROM memory WHERE state = 'expired'", 0, BASE // 2)
