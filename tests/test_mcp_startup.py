"""``memtui mcp`` answers ``initialize`` at once (issue 22 item 2): before the SDK, the store or recall
are loaded, with exactly what the SDK answers, and the session the SDK then serves is the one the
client began (tests/test_mcp.py runs whole sessions through it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

MEMTUI = str(Path(sys.executable).parent / "memtui")
#: what the initialise path must not load: the SDK, the store's libraries, recall's
HEAVY = ("mcp", "mcp_types", "anyio", "sqlalchemy", "sqlmodel", "alembic", "sklearn", "numpy", "scipy",
         "fastapi", "starlette", "uvicorn", "httpx", "memtui.recall", "memtui.store.engine")


def _initialize(version: str, rid=1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {"roots": {"listChanged": True}},
        "clientInfo": {"name": "probe", "version": "1"}}}).encode() + b"\n"


def _exchange(db: str, lines: list[bytes], *args: str, fast: bool = True) -> list[dict]:
    """Send ``lines`` (requests) to ``memtui mcp --db DB ARGS`` and return its answers, one a request,
    reading them before closing its stdin (the SDK drops a request still running at end of input)."""
    env = dict(os.environ, MEMTUI_MCP_FAST_INIT="1" if fast else "0", MEMTUI_WARM="0")
    proc = subprocess.Popen([MEMTUI, "mcp", "--db", db, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    try:
        proc.stdin.write(b"".join(lines))
        proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline()) for _ in lines]
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0, proc.stderr.read().decode()
        assert proc.stdout.read().strip() == b""  # nothing more: no second answer to anything
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return answers


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    from memtui.store.engine import open_store

    path = tmp_path_factory.mktemp("mcp-start") / "store.db"
    open_store(str(path)).dispose()
    return str(path)


def test_the_initialize_answer_is_the_sdks_for_every_handshake_revision(db):
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    from memtui.mcp_server.stdio import HANDSHAKE_VERSIONS

    assert HANDSHAKE_VERSIONS == tuple(HANDSHAKE_PROTOCOL_VERSIONS)
    asked = [*HANDSHAKE_VERSIONS, "1999-01-01"]
    lines = [_initialize(v, rid=f"r{i}") for i, v in enumerate(asked)]
    fast = _exchange(db, lines[:1] + [b'{"jsonrpc":"2.0","id":"p","method":"ping"}\n'])
    assert [m["id"] for m in fast] == ["r0", "p"]  # one answer each: the SDK's to the replayed one is dropped
    for i, version in enumerate(asked):
        mine = _exchange(db, [lines[i]])
        sdk = _exchange(db, [lines[i]], fast=False)
        assert mine == sdk, version
        assert mine[0]["result"]["protocolVersion"] == (version if version in HANDSHAKE_VERSIONS else "2025-11-25")


def test_the_initialize_answer_names_the_served_scope(tmp_path):
    from typer.testing import CliRunner

    from memtui.cli import app

    db = str(tmp_path / "demo.db")
    out = CliRunner().invoke(app, ["demo", "--no-tui", "--workdir", str(tmp_path / "w"), "--db", db,
                                   "--actor", "loader", "--role", "lead"])
    assert out.exit_code == 0, out.output
    line = _initialize("2025-11-25")
    mine = _exchange(db, [line], "--scope", "repository:order-service")
    assert mine == _exchange(db, [line], "--scope", "repository:order-service", fast=False)
    assert mine[0]["result"]["instructions"].endswith("This server serves acme/order-service.")


def test_a_first_message_other_than_initialize_is_the_sdks_to_answer(db):
    answers = _exchange(db, [b'{"jsonrpc":"2.0","id":5,"method":"tools/list"}\n', _initialize("2025-11-25", 6)])
    assert [m["id"] for m in answers] == [5, 6]
    assert "error" in answers[0] and answers[1]["result"]["serverInfo"]["name"] == "memtui"


def test_the_initialise_path_imports_nothing_heavy():
    """What ``memtui mcp`` loads before it can answer: the console script's CLI, the mcp command and
    the stdlib-only front with its answer. The loader thread brings the rest afterwards."""
    code = (
        "import sys; sys.argv = ['memtui', 'mcp']\n"
        "import memtui.cli.warm, memtui.cli\n"
        "from memtui.cli.launch import tui_args; tui_args(sys.argv[1:])\n"
        "memtui.cli.click_group()\n"
        "from memtui.mcp_server.stdio import initialize_answer\n"
        "assert initialize_answer(" + repr(_initialize("2025-11-25")) + ", 'the whole store') is not None\n"
        "print(' '.join(sorted(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, MEMTUI_WARM="0"))
    assert out.returncode == 0, out.stderr
    loaded = set(out.stdout.split())
    assert "memtui.cli.mcp_cmds" in loaded
    assert sorted(m for m in HEAVY if m in loaded) == []
