"""Faults leave nothing behind (issue 21, item 7; item 10 of what broke).

- ``kill -9`` of an import leaves no worker child running with the store open (the reader child dies
  with its parent: PR_SET_PDEATHSIG on Linux);
- a maintenance job killed mid-run, left ``running``, is marked ``abandoned`` at the next start (audited)
  and ``memtui check`` names it (a note: the check still passes);
- a store on a read-only mount, or a file its user cannot write, opens read-only: ``show``, ``check``,
  ``recall``, ``report`` and the TUI work, a decision is refused with one sentence, nothing is written;
  a read-only store is never migrated.

The read-only mount is real: each command runs in a private mount namespace (``unshare``) where the
store's folder is bind-mounted read-only, so root gets EROFS too; nothing is mounted outside it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from memtui.domain.invariants import Actor, LifecycleError
from memtui.importers.native import PARALLEL_BYTES, import_files
from memtui.review.service import ReviewService
from memtui.store.engine import StoreError, StoreReadOnly, open_store, read_only_reason

MEMTUI = Path(sys.executable).with_name("memtui")
LOADER = Actor("human", "loader", role="lead")


def _env(**extra: str) -> dict:
    env = {**os.environ, "MEMTUI_NOW": "2026-11-30T12:00:00Z", **extra}
    env.pop("MEMTUI_READ_ONLY", None)
    return env


def _record(i: int, prefix: str, *, active: bool, pad: int = 0) -> dict:
    r = {"memoryId": f"{prefix}_{i:06d}", "type": "code_fact",
         "statement": f"Component {i} of {prefix} validates its input {i * 7} times." + " Checked." * pad,
         "scope": {"tenantId": "acme", "repositoryId": "order-service"},
         "state": "active" if active else "candidate", "confidence": 0.8, "reviewState": "none",
         "origin": "agent", "evidence": [{"type": "human", "ref": f"note {i}"}]}
    if active and i % 2 == 0:
        r["expiresAt"] = "2026-01-01T00:00:00Z"
    return r


def _write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------------------- /proc


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, ppid) of a process from /proc, None once it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2:].split()
    return fields[0], int(fields[1])


def _live_pids() -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _proc_stat(int(entry))
            if st is not None and st[0] not in ("Z", "X"):
                out.append(int(entry))
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _holding(path: Path) -> list[int]:
    """Live processes with ``path`` (or its -wal/-shm) open, from /proc/PID/fd."""
    names = {str(path), f"{path}-wal", f"{path}-shm"}
    out = []
    for pid in _live_pids():
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") in names:
                    out.append(pid)
                    break
            except OSError:
                continue
    return out


def _memtui_processes_of(db: Path) -> list[int]:
    """Live processes started for this store (a forked child has its parent's command line)."""
    return [pid for pid in _live_pids() if str(db) in _cmdline(pid) and pid != os.getpid()]


# ------------------------------------------------------------------------------ kill -9 of import


def test_killing_an_import_leaves_no_worker_process_holding_the_store(new_sqlite_store, tmp_path):
    db = new_sqlite_store
    n = 24000
    src = _write_jsonl(tmp_path / "big.jsonl", [_record(i, "mem_big", active=False, pad=4) for i in range(n)])
    assert src.stat().st_size >= PARALLEL_BYTES  # big enough for the reader child
    proc = subprocess.Popen([str(MEMTUI), "--db", str(db), "import", str(src)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=_env())
    leftovers: list[int] = []
    try:
        children: list[int] = []
        deadline = time.monotonic() + 60
        while not children and proc.poll() is None and time.monotonic() < deadline:
            children = [pid for pid in _live_pids() if (_proc_stat(pid) or ("", 0))[1] == proc.pid]
            time.sleep(0.02)
        assert children, "the import ended before its worker child was seen: the test proved nothing"
        time.sleep(0.3)  # the child is preparing records, the parent writing them
        assert proc.poll() is None, "the import finished before it was killed"
        assert set(children) & set(_holding(db)), "the worker child does not hold the store open"
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            leftovers = sorted(set(_memtui_processes_of(db)) | set(_holding(db)))
            if not leftovers:
                break
            time.sleep(0.1)
        assert leftovers == [], f"left running after kill -9: {[_cmdline(p) for p in leftovers]}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in leftovers:  # never leave a stray process behind, even when the test fails
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    # the store is as it was before the import (all-or-nothing) and intact
    check = subprocess.run([str(MEMTUI), "--db", str(db), "check"], capture_output=True, text=True, timeout=120,
                           env=_env())
    assert check.returncode == 0, check.stdout + check.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM memory").fetchone()[0] in (0, n)


_POOL_SCRIPT = """
import sys, time
from memtui.processes import worker_pool
with worker_pool(2) as ex:
    futures = [ex.submit(time.sleep, 120) for _ in range(2)]
    print("ready", flush=True)
    time.sleep(120)
"""


def test_the_forked_worker_pool_dies_with_its_parent():
    """The pools of dedupe and similarity (``memtui.processes.worker_pool``): kill -9 of the process that
    forked them leaves none of its workers running."""
    proc = subprocess.Popen([sys.executable, "-c", _POOL_SCRIPT], stdout=subprocess.PIPE, text=True, env=_env())
    workers: list[int] = []
    try:
        assert proc.stdout.readline().strip() == "ready"
        workers = [pid for pid in _live_pids() if (_proc_stat(pid) or ("", 0))[1] == proc.pid]
        assert len(workers) == 2
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and set(workers) & set(_live_pids()):
            time.sleep(0.05)
        assert not set(workers) & set(_live_pids())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in set(workers) & set(_live_pids()):
            os.kill(pid, signal.SIGKILL)


# ------------------------------------------------------------------- a maintenance job killed


def _job_rows(db: Path) -> list[dict]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(r) for r in conn.execute("SELECT * FROM memory_maintenance_jobs ORDER BY started_at, job_id")]


def _kill_maintain_while_a_job_runs(db: Path) -> tuple[int, str]:
    """Start ``memtui maintain`` and SIGKILL it as soon as a job row is ``running``; (pid, job id) of a
    job it left running. Retries when the job finished between the look and the kill."""
    for _attempt in range(5):
        proc = subprocess.Popen([str(MEMTUI), "--db", str(db), "maintain"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=_env())
        try:
            running: list[dict] = []
            while proc.poll() is None and not running:
                try:
                    running = [r for r in _job_rows(db) if r["status"] == "running"]
                except sqlite3.OperationalError:  # a migration or write under way
                    pass
                time.sleep(0.01)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
            rc = proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        left = [r for r in _job_rows(db) if r["status"] == "running"]
        if rc == -signal.SIGKILL and left:
            assert len(left) == 1
            return proc.pid, left[0]["job_id"]
    pytest.fail("maintain was never killed while a job ran: the test proved nothing")


def test_a_job_left_running_by_a_killed_maintain_is_abandoned_at_the_next_start_and_check_names_it(
        new_sqlite_store, tmp_path):
    db = new_sqlite_store
    eng = open_store(str(db))
    try:
        import_files(eng, [_write_jsonl(tmp_path / "base.jsonl",
                                        [_record(i, "mem_base", active=True) for i in range(600)])], LOADER)
    finally:
        eng.dispose()
    pid, job_id = _kill_maintain_while_a_job_runs(db)
    row = next(r for r in _job_rows(db) if r["job_id"] == job_id)
    job_type = row["job_type"]

    # before any job starts again, check already names it (and still passes: nothing of it was kept)
    check = subprocess.run([str(MEMTUI), "--db", str(db), "check"], capture_output=True, text=True, timeout=120,
                           env=_env())
    assert f"note: maintenance job {job_id} ({job_type}, started 2026-11-30T12:00:00Z) was abandoned" in check.stdout
    assert check.returncode == 0, check.stdout + check.stderr
    assert (row["status"], row["pid"], row["host"]) == ("running", pid, socket.gethostname())  # its process

    # the next start marks it abandoned, with a note on the row and an audit event
    again = subprocess.run([str(MEMTUI), "--db", str(db), "maintain", "--only", "expire"], capture_output=True,
                           text=True, timeout=300, env=_env())
    assert again.returncode == 0, again.stderr
    assert f"marked 1 earlier maintenance job(s) abandoned, their process gone mid-run: {job_id}" in again.stderr
    row = next(r for r in _job_rows(db) if r["job_id"] == job_id)
    note = (f"process {pid} on {socket.gethostname()} ended while the job ran (killed or crashed); its "
            "transaction was rolled back, so nothing of it was kept")
    assert row["status"] == "abandoned" and json.loads(row["summary"])["abandoned"] == note
    assert [r for r in _job_rows(db) if r["status"] == "running"] == []
    with sqlite3.connect(db) as conn:
        audits = conn.execute("SELECT actor_id, detail FROM audit_event WHERE kind = 'job_abandoned' "
                              "AND subject = ?", (job_id,)).fetchall()
    assert len(audits) == 1 and audits[0][0] == "maintenance"
    assert json.loads(audits[0][1])["pid"] == pid

    check = subprocess.run([str(MEMTUI), "--db", str(db), "check", "--json"], capture_output=True, text=True,
                           timeout=120, env=_env())
    assert check.returncode == 0, check.stdout + check.stderr
    out = json.loads(check.stdout)
    assert out["abandonedJobs"] == [f"maintenance job {job_id} ({job_type}, started 2026-11-30T12:00:00Z) was "
                                    f"abandoned: {note}"]


_DIE_IN_A_JOB = """
import os, signal, sys
from memtui.maintenance.jobs import start_job
from memtui.store.engine import open_store
print(start_job(open_store(sys.argv[1]), "expire").job_id, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_job_of_a_killed_process_is_reaped_once_on_both_stores(store_url, engine):
    """SQLite and PostgreSQL: a process killed inside a job leaves it running; the next start marks it
    abandoned with one audit event, and a second start finds nothing more to do."""
    from memtui.maintenance.jobs import abandoned_jobs, reap_abandoned

    out = subprocess.run([sys.executable, "-c", _DIE_IN_A_JOB, store_url], capture_output=True, text=True,
                         timeout=120, env=_env())
    assert out.returncode == -signal.SIGKILL, out.stderr
    job_id = out.stdout.strip()
    listed = abandoned_jobs(engine)  # named before any start marks it
    assert len(listed) == 1 and listed[0].startswith(f"maintenance job {job_id} (expire, started ")
    assert reap_abandoned(engine) == [job_id]
    assert reap_abandoned(engine) == []
    with engine.connect() as conn:
        status = conn.execute(sa.text("SELECT status FROM memory_maintenance_jobs WHERE job_id = :j"),
                              {"j": job_id}).scalar()
        audits = conn.execute(sa.text("SELECT count(*) FROM audit_event WHERE kind = 'job_abandoned' "
                                      "AND subject = :j"), {"j": job_id}).scalar()
    assert (status, audits) == ("abandoned", 1)
    assert abandoned_jobs(engine) == listed


def test_a_running_job_of_a_live_process_is_left_alone(sqlite_engine):
    """The reaper takes only jobs whose process is gone: this process's own running job stays running."""
    from memtui.maintenance.jobs import abandoned_jobs, reap_abandoned, start_job

    mine = start_job(sqlite_engine, "expire")
    assert reap_abandoned(sqlite_engine) == []
    assert abandoned_jobs(sqlite_engine) == []
    with sqlite_engine.connect() as conn:
        status, pid = conn.execute(sa.text("SELECT status, pid FROM memory_maintenance_jobs WHERE job_id = :j"),
                                   {"j": mine.job_id}).one()
    assert (status, pid) == ("running", os.getpid())


# ------------------------------------------------------------------------------ read-only stores

RO_RECORDS = [
    {"memoryId": "mem_build_command", "type": "runbook", "statement": "Run the build with make build.",
     "scope": {"tenantId": "acme", "repositoryId": "order-service"}, "state": "active", "confidence": 0.8,
     "reviewState": "approved", "origin": "human", "evidence": [{"type": "human", "ref": "told by lee"}]},
    {"memoryId": "mem_cand", "type": "code_fact", "statement": "Order validation runs before payment.",
     "scope": {"tenantId": "acme", "repositoryId": "order-service"}, "state": "candidate", "confidence": 0.8,
     "reviewState": "none", "origin": "agent", "evidence": [{"type": "human", "ref": "note"}]},
]


def _ro_store(sqlite_template: Path, folder: Path) -> Path:
    """A store in ``folder`` holding :data:`RO_RECORDS`, closed cleanly (no -wal or -shm file left)."""
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "store.db"
    shutil.copyfile(sqlite_template, db)
    eng = open_store(str(db))
    try:
        report = import_files(eng, [_write_jsonl(folder.parent / "ro.jsonl", RO_RECORDS)], LOADER)
        assert not report.rejected
    finally:
        eng.dispose()
    assert not Path(f"{db}-wal").exists() and not Path(f"{db}-shm").exists()
    return db


_RO_MOUNT = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'


def _namespace_prefix() -> list[str]:
    """The ``unshare`` command that gives a private mount namespace here, or skip."""
    for prefix in (["unshare", "--mount", "--propagation", "private"],
                   ["unshare", "--map-root-user", "--mount", "--propagation", "private"]):
        if shutil.which("unshare") and subprocess.run([*prefix, "true"], capture_output=True).returncode == 0:
            return prefix
    pytest.skip("no private mount namespace (unshare) on this machine: a read-only mount cannot be made")


def _on_read_only_mount(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """``memtui ARGS`` with ``folder`` bind-mounted read-only, in a mount namespace of its own."""
    return subprocess.run([*_namespace_prefix(), "sh", "-c", _RO_MOUNT, "sh", str(folder), str(MEMTUI), *args],
                          capture_output=True, text=True, timeout=120, env=_env())


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_store_on_a_read_only_mount_is_read_and_refuses_decisions(sqlite_template, tmp_path):
    db = _ro_store(sqlite_template, tmp_path / "ro")
    before = _digest(db)
    probe = _on_read_only_mount(db.parent, "--db", str(db), "decide", "mem_cand", "approve")
    written = subprocess.run([*_namespace_prefix(), "sh", "-c", _RO_MOUNT, "sh", str(db.parent), "touch",
                              str(db)], capture_output=True, text=True)
    assert "Read-only file system" in written.stderr  # the mount is really read-only, for root too
    assert probe.returncode == 1
    assert probe.stderr.strip() == (f"memtui: the store {db} is read-only (on a read-only file system): "
                                    "decisions are refused; open it where it can be written to change anything")

    show = _on_read_only_mount(db.parent, "--db", str(db), "show", "mem_build_command")
    assert show.returncode == 0, show.stderr
    assert "Run the build with make build." in show.stdout
    check = _on_read_only_mount(db.parent, "--db", str(db), "check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "checked 2 memories and 2 history events: clean" in check.stderr
    recall = _on_read_only_mount(db.parent, "--db", str(db), "recall", "run the build",
                                 "--scope", "repository:order-service")
    assert recall.returncode == 0, recall.stderr
    assert "- Run the build with make build." in recall.stdout and "mem_build_command" in recall.stdout
    reports = tmp_path / "reports"
    report = _on_read_only_mount(db.parent, "--db", str(db), "report", "--out", str(reports))
    assert report.returncode == 0, report.stderr
    assert (reports / "memory-review-queue.yaml").is_file()
    assert "mem_cand" in (reports / "memory-review-queue.yaml").read_text()

    assert _digest(db) == before  # nothing was written, nothing else was created
    assert sorted(p.name for p in db.parent.iterdir()) == ["store.db"]
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT state FROM memory WHERE memory_id = 'mem_cand'").fetchone() == ("candidate",)


def test_a_store_file_its_user_cannot_write_is_read_and_refuses_decisions(sqlite_template):
    """The same for a user without write permission on the file and its folder (as nobody)."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv to run memtui as the user nobody")
    folder = Path(tempfile.mkdtemp(prefix="memtui-ro-"))  # /tmp: a path nobody can reach
    try:
        db = _ro_store(sqlite_template, folder / "store")
        os.chmod(folder, 0o755)
        os.chmod(db.parent, 0o755)
        os.chmod(db, 0o644)
        before = _digest(db)
        as_nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", str(MEMTUI), "--db", str(db)]
        env = _env(XDG_CONFIG_HOME=str(folder / "config"))
        show = subprocess.run([*as_nobody, "show", "mem_cand"], capture_output=True, text=True, timeout=120,
                              env=env, cwd=folder)
        assert show.returncode == 0, show.stderr
        assert "Order validation runs before payment." in show.stdout
        decide = subprocess.run([*as_nobody, "decide", "mem_cand", "reject"], capture_output=True, text=True,
                                timeout=120, env=env, cwd=folder)
        assert decide.returncode == 1
        assert decide.stderr.strip() == (f"memtui: the store {db} is read-only (the file is not writable): "
                                         "decisions are refused; open it where it can be written to change anything")
        assert _digest(db) == before
        assert sorted(p.name for p in db.parent.iterdir()) == ["store.db"]
    finally:
        shutil.rmtree(folder)


def test_memtui_read_only_opens_any_store_read_only(store_url, monkeypatch):
    """``MEMTUI_READ_ONLY=1`` (SQLite and PostgreSQL): reads work, a decision is refused with the sentence
    (a LifecycleError, as every decision path reports it)."""
    eng = open_store(store_url)
    try:
        import_files(eng, [_write_jsonl(Path(tempfile.mkdtemp()) / "r.jsonl", RO_RECORDS)], LOADER)
    finally:
        eng.dispose()
    monkeypatch.setenv("MEMTUI_READ_ONLY", "1")
    ro = open_store(store_url)
    try:
        assert read_only_reason(ro) == "MEMTUI_READ_ONLY is set"
        svc = ReviewService(ro)
        assert svc.detail("mem_cand").state == "candidate"
        with pytest.raises(StoreReadOnly) as refused:
            svc.decide("mem_cand", "approve", LOADER)
        assert isinstance(refused.value, LifecycleError)
        assert str(refused.value).endswith("is read-only (MEMTUI_READ_ONLY is set): decisions are refused; "
                                           "open it where it can be written to change anything")
    finally:
        ro.dispose()
    monkeypatch.delenv("MEMTUI_READ_ONLY")
    eng = open_store(store_url)
    try:
        assert ReviewService(eng).detail("mem_cand").state == "candidate"
    finally:
        eng.dispose()


def test_a_read_only_store_that_needs_migrating_is_not_migrated(new_sqlite_store, monkeypatch):
    from alembic import command

    from memtui.store.engine import _alembic_config, current_revision, head_revision

    eng = open_store(str(new_sqlite_store))
    with eng.begin() as conn:
        command.downgrade(_alembic_config(conn), "-1")
    older = current_revision(eng)
    eng.dispose()
    monkeypatch.setenv("MEMTUI_READ_ONLY", "1")
    with pytest.raises(StoreError) as refused:
        open_store(str(new_sqlite_store))
    assert str(refused.value) == (
        f"the store {new_sqlite_store} is read-only (MEMTUI_READ_ONLY is set) and is at revision {older}; this "
        f"memtui needs revision {head_revision()}, and a read-only store is not migrated: run 'memtui init' "
        "on it once where it can be written")
    with sqlite3.connect(new_sqlite_store) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [(older,)]


async def test_the_tui_on_a_read_only_store_shows_the_queue_and_refuses_a_decision(sqlite_template, tmp_path,
                                                                                  monkeypatch):
    from memtui.app import MemtuiApp
    from memtui.widgets.queue_list import QueueList

    db = _ro_store(sqlite_template, tmp_path / "ro")
    monkeypatch.setenv("MEMTUI_READ_ONLY", "1")
    engine = open_store(str(db))
    try:
        app = MemtuiApp(engine, Actor("human", "reviewer-7", role="reviewer"))
        async with app.run_test(size=(140, 30)) as pilot:
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert [r.memory_id for r in app.screen.query_one("#queue", QueueList).rows] == ["mem_cand"]
            assert [n.message for n in app._notifications] == [
                "The store is read-only (MEMTUI_READ_ONLY is set): you can read everything; decisions are refused."]
            await pilot.press("a")
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            messages = [n.message for n in app._notifications]
            assert any(f"the store {db} is read-only (MEMTUI_READ_ONLY is set): decisions are refused" in m
                       for m in messages), messages
            await pilot.press("m")  # maintenance: refused the same way, the screen says so
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            result = str(app.screen.query_one("#maint-result").render())
            assert result.startswith(f"Maintenance failed: the store {db} is read-only (MEMTUI_READ_ONLY is set)")
    finally:
        engine.dispose()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT state FROM memory WHERE memory_id = 'mem_cand'").fetchone() == ("candidate",)


def test_the_http_api_on_a_read_only_store_reads_and_refuses_a_decision(sqlite_template, tmp_path, monkeypatch):
    """A token is still accepted (its last use is not written), a memory is read, a review is refused
    with the sentence and nothing changes."""
    from starlette.testclient import TestClient

    from memtui.api.app import create_app
    from memtui.governance.reviewers import add_reviewer
    from memtui.governance.tokens import create_token

    for k in ("LOGNAME", "USER"):
        monkeypatch.setenv(k, "lee")
    db = _ro_store(sqlite_template, tmp_path / "ro")
    eng = open_store(str(db))
    try:
        add_reviewer(eng, "lee", "lead", ["*"], by="lee")
        _view, secret = create_token(eng, "lee", "reviewer", "lee")
    finally:
        eng.dispose()
    before = _digest(db)
    monkeypatch.setenv("MEMTUI_READ_ONLY", "1")
    ro = open_store(str(db))
    try:
        with TestClient(create_app(ro)) as client:
            auth = {"Authorization": f"Bearer {secret}"}
            got = client.get("/memory/mem_cand", headers=auth)
            assert got.status_code == 200, got.text
            assert got.json()["state"] == "candidate"
            refused = client.post("/memory/candidates/mem_cand/review", headers=auth,
                                  json={"decision": "approve", "expectedVersion": got.json()["version"]})
            assert refused.status_code == 409, refused.text
            assert refused.json()["detail"] == (f"the store {db} is read-only (MEMTUI_READ_ONLY is set): decisions "
                                                "are refused; open it where it can be written to change anything")
    finally:
        ro.dispose()
    assert _digest(db) == before
