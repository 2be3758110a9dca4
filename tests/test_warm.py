"""The warm command server (issue 22, item 1): a warm command prints, exits and writes exactly as the
cold process does, only sooner; the server serves only its own user, folder and code."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memtui.cli.warm import command_of, fingerprint, runtime_dir

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"


def _run(args, env, cwd, stdin=None):
    return subprocess.run([sys.executable, "-m", "memtui", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, input=stdin, timeout=120)


def _servers(folder: Path) -> list[int]:
    pids = []
    for pid_file in folder.glob("*.pid"):
        try:
            pids.append(int(pid_file.read_text()))
        except (OSError, ValueError):
            pass
    return pids


def _wait_for_socket(folder: Path, seconds: float = 60) -> Path:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        socks = list(folder.glob("*.sock"))
        if socks and list(folder.glob("*.pid")):
            return socks[0]
        time.sleep(0.1)
    raise AssertionError(f"no warm server came up in {folder}: {sorted(p.name for p in folder.iterdir())}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(") ")[1][0] != "Z"


@pytest.fixture()
def warm(tmp_path):
    """(env for a warm run, env for a cold run, the store, the folder of the sockets); the servers
    started in the folder are stopped after the test."""
    folder = tmp_path / "warm"
    folder.mkdir(mode=0o700)
    db = tmp_path / "store.db"
    base = {**os.environ, "MEMTUI_DB": str(db), "MEMTUI_NOW": "2026-11-30T12:00:00Z", "LOGNAME": "rita",
            "USER": "rita", "MEMTUI_WARM_DIR": str(folder), "MEMTUI_WARM_IDLE": "60"}
    base.pop("MEMTUI_ACTOR", None)
    cold = {**base, "MEMTUI_WARM": "0"}
    warm_env = {**base, "MEMTUI_WARM": "1"}
    loaded = _run(["import", str(SAMPLE / "memories.yaml")], cold, tmp_path)
    assert loaded.returncode == 0, loaded.stderr
    yield warm_env, cold, db, folder
    for pid in _servers(folder):
        os.kill(pid, signal.SIGTERM)


def test_warm_commands_print_and_exit_as_cold_ones(warm, tmp_path):
    warm_env, cold, db, folder = warm
    first = _run(["show", "mem_rule_registry_convention"], warm_env, tmp_path)  # cold, starts the server
    _wait_for_socket(folder)
    cases = [
        ["show", "mem_rule_registry_convention"],
        ["history", "mem_rule_registry_convention"],
        ["show", "mem_no_such_memory"],                     # refused: exit 1, message on stderr
        ["health"],
        ["decide", "mem_rule_registry_convention", "frobnicate"],  # usage error: exit 2
        ["--help"],
        ["show", "--help"],
        ["--db", str(db), "conflicts"],
    ]
    for args in cases:
        hot = _run(args, warm_env, tmp_path)
        ref = _run(args, cold, tmp_path)
        assert (hot.returncode, hot.stdout, hot.stderr) == (ref.returncode, ref.stdout, ref.stderr), args
    assert first.stdout == _run(["show", "mem_rule_registry_convention"], cold, tmp_path).stdout
    assert {1, 2} <= {_run(a, warm_env, tmp_path).returncode for a in (cases[2], cases[4])}


def test_a_warm_decision_is_written_as_the_cold_process_writes_it(warm, tmp_path):
    warm_env, cold, _db, folder = warm
    _run(["health"], warm_env, tmp_path)
    _wait_for_socket(folder)
    pid = _servers(folder)[0]
    done = _run(["decide", "mem_org_imperative_commits", "approve", "--comment", "checked"], warm_env, tmp_path)
    assert done.returncode == 0, done.stderr
    history = _run(["history", "mem_org_imperative_commits"], cold, tmp_path).stdout
    assert "rita" in history.splitlines()[-1] and "checked" in history.splitlines()[-1]
    # the request ran in a child of the server, in the client's folder and environment
    assert _alive(pid)


def test_relative_paths_and_environment_are_the_clients(warm, tmp_path):
    warm_env, cold, db, folder = warm
    _run(["health"], warm_env, tmp_path)
    _wait_for_socket(folder)
    sub = tmp_path / "sub"
    sub.mkdir()
    env = {**warm_env}
    env.pop("MEMTUI_DB")
    relative = _run(["--db", "../store.db", "show", "mem_rule_registry_convention"], env, sub)
    assert relative.returncode == 0, relative.stderr
    assert relative.stdout == _run(["show", "mem_rule_registry_convention"], cold, tmp_path).stdout
    # the environment of each request: another MEMTUI_DB, another store
    other = {**warm_env, "MEMTUI_DB": str(tmp_path / "other.db")}
    missing = _run(["show", "mem_rule_registry_convention"], other, tmp_path)
    assert missing.returncode == 1 and "mem_rule_registry_convention" in missing.stderr


def test_a_new_fingerprint_stops_the_older_server(warm, tmp_path):
    warm_env, _cold, _db, folder = warm
    _run(["health"], warm_env, tmp_path)
    _wait_for_socket(folder)
    [old] = _servers(folder)
    changed = {**warm_env, "PYTHONPATH": str(tmp_path / "elsewhere")}  # another sys.path: another fingerprint
    assert _run(["health"], changed, tmp_path).returncode == 0
    deadline = time.monotonic() + 60
    while _alive(old) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(old)
    assert len(list(folder.glob("*.sock"))) == 1


def test_a_folder_open_to_others_is_never_used(tmp_path, monkeypatch):
    folder = tmp_path / "open"
    folder.mkdir()
    folder.chmod(0o755)
    monkeypatch.setenv("MEMTUI_WARM_DIR", str(folder))
    assert runtime_dir() is None
    folder.chmod(0o700)
    assert runtime_dir() == str(folder)
    monkeypatch.setenv("MEMTUI_WARM_DIR", str(tmp_path / "new"))
    assert runtime_dir() is None and runtime_dir(create=True) == str(tmp_path / "new")
    assert (tmp_path / "new").stat().st_mode & 0o777 == 0o700


def test_a_cold_run_in_an_open_folder_starts_no_server(warm, tmp_path):
    warm_env, cold, _db, folder = warm
    folder.chmod(0o755)
    out = _run(["health"], warm_env, tmp_path)
    assert out.returncode == 0
    time.sleep(1.5)
    assert list(folder.iterdir()) == []


def test_command_of_reads_past_the_global_options():
    assert command_of(["--db", "x.db", "show", "id"]) == "show"
    assert command_of(["--db=x.db", "--actor", "a", "decide"]) == "decide"
    assert command_of(["--db", "x.db"]) is None           # the TUI
    assert command_of([]) is None
    assert command_of(["--help"]) == "--help"
    assert command_of(["--db", "x", "--help"]) == "--help"
    assert command_of(["--version"]) is None


def test_fingerprint_follows_the_code(tmp_path):
    code = ("import sys, json; sys.argv=['x']; from memtui.cli.warm import fingerprint; print(fingerprint())")
    one = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONPATH": str(tmp_path)}).stdout
    assert one == again != other
    source = ROOT / "src" / "memtui" / "clock.py"
    st = source.stat()
    try:
        os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # an edited file
        edited = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    finally:
        os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert edited != one
    assert len(fingerprint()) == 20
