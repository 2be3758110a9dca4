"""Issue 21 items 8 and 9, the transports' part: bidirectional and other invisible formatting controls
escaped in every output (CLI, agents-md, recall, the TUI), the HTTP API (duplicate JSON keys, the bind
rule of ``serve`` and its TLS, the access log, an agent's ``GET /memory/{id}``, harm reports), MCP errors
that name nothing outside the caller's scope, ``export json`` without token hashes and a pruning plan
inside the caller's scopes.

HTTP tests run a real ``memtui serve`` process on a free local port (as tests/test_api.py); MCP tests a
real client session against a real ``memtui mcp`` subprocess (as tests/test_mcp.py).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
import yaml
from typer.testing import CliRunner

from memtui.cli import app as memtui_app
from memtui.store.engine import open_store

from .conftest import FIXED_NOW

SHA = "0123456789abcdef0123456789abcdef01234567"
MEMTUI = str(Path(sys.executable).parent / "memtui")
#: A "Trojan Source" statement: a right-to-left override and an isolate reorder what a reader sees.
BIDI = "Always call \u202eterces\u202c the \u2066validator\u2069 first\u200b."
#: What a reader sees instead: every control as a visible code.
BIDI_SHOWN = "Always call \\u202eterces\\u202c the \\u2066validator\\u2069 first\\u200b."
BIDI_CHARS = ("\u202e", "\u202c", "\u2066", "\u2069", "\u200b")


def rec(mid: str, statement: str, *, repo: str = "order-service", tenant: str = "acme", **extra) -> dict:
    return {"memoryId": mid, "type": "code_fact", "statement": statement,
            "scope": {"tenantId": tenant, "repositoryId": repo}, **extra}


def active(mid: str, statement: str, **kw) -> dict:
    return rec(mid, statement, state="active", reviewState="approved", confidence=0.9,
               evidence=[{"type": "file_span", "path": "src/Main.java", "commitSha": SHA, "lines": [1, 3],
                          "status": "valid"}], **kw)


def run(db: Path | str, *args: str, env: dict | None = None):
    return CliRunner().invoke(memtui_app, ["--db", str(db), *args], env=env, catch_exceptions=False)


def ok(result) -> str:
    assert result.exit_code == 0, result.output
    return result.output


def _import(db: Path | str, tmp_path: Path, *records: dict, env: dict | None = None) -> None:
    path = tmp_path / f"m{len(list(tmp_path.glob('m*.yaml')))}.yaml"
    path.write_text(yaml.safe_dump({"memories": list(records)}), encoding="utf-8")
    ok(run(db, "import", str(path), env=env))


def _no_bidi(text: str) -> None:
    for ch in BIDI_CHARS:
        assert ch not in text, f"U+{ord(ch):04X} reached the output"


# ---- 11 / item 8: bidi controls never reach the terminal ----------------------------------------

def test_bidi_controls_are_shown_as_codes_by_show_history_recall_and_agents_md(tmp_path):
    db = tmp_path / "s.db"
    _import(db, tmp_path, active("mem_bidi", BIDI))
    shown = ok(run(db, "show", "mem_bidi"))
    assert f"statement:  {BIDI_SHOWN}" in shown
    _no_bidi(shown)
    ok(run(db, "decide", "mem_bidi", "needs-review", "--comment", "why \u202eevil\u202c"))
    hist = ok(run(db, "history", "mem_bidi"))
    assert "why \\u202eevil\\u202c" in hist
    _no_bidi(hist)
    ok(run(db, "decide", "mem_bidi", "approve"))
    md = ok(run(db, "export", "agents-md", "--scope", "repository:order-service"))
    assert f"- {BIDI_SHOWN} (evidence: `src/Main.java`) <!-- memtui:mem_bidi -->" in md
    _no_bidi(md)
    recalled = ok(run(db, "recall", "call the validator first", "--scope", "repository:order-service", "--no-record"))
    assert f"- {BIDI_SHOWN}" in recalled
    _no_bidi(recalled)
    # JSON keeps the text exactly, written as \\u escapes (valid JSON, no raw control on the terminal)
    as_json = ok(run(db, "show", "mem_bidi", "--json"))
    assert json.loads(as_json)["statement"] == BIDI
    _no_bidi(as_json)


def test_visible_escapes_format_characters_but_keeps_joiners_inside_words():
    from memtui.text import json_text, visible, visible_line

    assert visible("a\u2067b\u2068c\u200ed\u200fe\u061cf\ufeffg") == "a\\u2067b\\u2068c\\u200ed\\u200fe\\u061cf\\ufeffg"
    assert visible_line("tag\U000e0041") == "tag\\U000e0041"  # invisible tag characters ("ASCII smuggling")
    assert visible("Rule\u200dStore") == "Rule\\u200dStore"  # a joiner hiding inside an identifier
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    assert visible(family) == family  # between two emoji it only joins
    assert json.loads(json_text("x\U000e0041\u202e")) == "x\U000e0041\u202e"
    assert "\u202e" not in json_text("x\u202e")


async def test_tui_detail_and_queue_show_bidi_controls_as_codes(tmp_path):
    from memtui.app import MemtuiApp
    from memtui.domain.invariants import Actor
    from memtui.importers.native import import_files
    from memtui.widgets.memory_detail import MemoryDetail
    from memtui.widgets.queue_list import QueueList

    engine = open_store(str(tmp_path / "s.db"))
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump({"memories": [rec("mem_bidi", BIDI)]}), encoding="utf-8")
    import_files(engine, [path], Actor("human", "loader", "lead"))
    app = MemtuiApp(engine, Actor("human", "reviewer-7", "reviewer"))
    async with app.run_test(size=(200, 40)) as pilot:
        for _ in range(5):
            await pilot.pause()
        cell = app.screen.query_one("#queue", QueueList).cell(0, "statement")
        assert cell == BIDI_SHOWN
        rendered = "\n".join(line.plain for line in app.screen.query_one("#detail", MemoryDetail).lines)
        assert BIDI_SHOWN in rendered
        _no_bidi(rendered + cell)
    engine.dispose()


# ---- a governed demo store, served ------------------------------------------------------------------

REPO = "order-service"
AS_LEE = {"MEMTUI_ACTOR": "lee", "LOGNAME": "lee", "USER": "lee", "MEMTUI_NOW": FIXED_NOW}


def _cli(*args: str, env: dict | None = None) -> str:
    out = CliRunner().invoke(memtui_app, list(args), env={**AS_LEE, **(env or {})})
    assert out.exit_code == 0, out.output
    return out.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Serve:
    """A `memtui serve` subprocess on a free port, its stdout and stderr kept apart."""

    def __init__(self, db: str, tmp: Path, *extra: str, scheme: str = "http", verify=True, wait: bool = True):
        self.port = _free_port()
        self.base = f"{scheme}://127.0.0.1:{self.port}"
        self.out, self.err = tmp / f"serve{self.port}.out", tmp / f"serve{self.port}.err"
        self.proc = subprocess.Popen([MEMTUI, "serve", "--db", db, "--port", str(self.port), *extra],
                                     env={**os.environ, "MEMTUI_NOW": FIXED_NOW},
                                     stdout=self.out.open("w"), stderr=self.err.open("w"))
        if not wait:
            return
        deadline = time.time() + 60
        while True:
            try:
                if httpx.get(self.base + "/openapi.json", timeout=2, verify=verify).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                raise AssertionError(f"memtui serve did not start: {self.err.read_text()}")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo store (SQLite) governed: lee lead, ann a reviewer of acme/billing-service only, max a
    maintainer; a memory
    of another tenant (globex/ledger); agent tokens bot, bot2, bot3 and lee's token."""
    tmp = tmp_path_factory.mktemp("trust_demo")
    db = str(tmp / "store.db")
    with pytest.MonkeyPatch.context() as mp:
        for k, v in AS_LEE.items():
            mp.setenv(k, v)
        _cli("demo", "--no-tui", "--workdir", str(tmp / "work"), "--db", db)
        other = tmp / "other.yaml"
        other.write_text(yaml.safe_dump({"memories": [rec("mem_ledger_secret", "Ledger rows are signed.",
                                                          repo="ledger", tenant="globex")]}), encoding="utf-8")
        _cli("import", str(other), "--db", db)
        _cli("reviewers", "add", "lee", "--role", "lead", "--db", db)
        _cli("reviewers", "add", "ann", "--role", "reviewer", "--scope", "acme/billing-service", "--db", db)
        _cli("reviewers", "add", "max", "--role", "maintainer", "--db", db)
        tokens = {name: _cli("tokens", "create", name, "--agent", "--db", db).strip()
                  for name in ("bot", "bot2", "bot3")}
        tokens["lee"] = _cli("tokens", "create", "lee", "--db", db).strip()
        tokens["ann"] = _cli("tokens", "create", "ann", "--db", db).strip()
    (tmp / "pristine").mkdir()
    return {"db": db, "tmp": tmp, "tokens": tokens, "pristine": _copy_store(db, tmp / "pristine")}


@pytest.fixture(scope="module")
def api(demo):
    server = Serve(demo["db"], demo["tmp"])
    yield {**demo, "base": server.base}
    server.stop()


def _client(api, who: str) -> httpx.Client:
    return httpx.Client(base_url=api["base"], headers={"Authorization": f"Bearer {api['tokens'][who]}"}, timeout=30)


def _copy_store(src: str, tmp: Path) -> str:
    """A consistent copy of a SQLite store (its write-ahead log included), by SQLite's backup API."""
    import sqlite3

    dst = str(tmp / "store.db")
    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        a.backup(b)
    return dst


def _one(db: str, sql: str, **params):
    engine = open_store(db)
    try:
        with engine.connect() as conn:
            return conn.execute(sa.text(sql), params).scalar()
    finally:
        engine.dispose()


# ---- 12: duplicate JSON keys ----------------------------------------------------------------------

def test_http_refuses_a_body_that_repeats_a_key(api):
    mid = "mem_validation_tests"
    version = _one(api["db"], "SELECT version FROM memory WHERE memory_id = :m", m=mid)
    body = ('{"decision": "needs_review", "expectedVersion": %d, "decision": "approve"}' % version).encode()
    nested = b'{"action": "narrow", "scopes": {"m": {"modulePath": "a", "modulePath": "b"}}}'
    with _client(api, "lee") as lee:
        r = lee.post(f"/memory/candidates/{mid}/review", content=body, headers={"Content-Type": "application/json"})
        n = lee.post("/memory/conflicts/nope/resolve", content=nested, headers={"Content-Type": "application/json"})
    assert r.status_code == 422, r.text
    assert r.json()["field"] == "decision" and "duplicate key 'decision'" in r.json()["detail"]
    assert n.status_code == 422 and n.json()["field"] == "modulePath", n.text
    assert _one(api["db"], "SELECT version FROM memory WHERE memory_id = :m", m=mid) == version  # nothing decided


# ---- 13: an agent reads only what MCP get_memory gives it -------------------------------------------

def test_agent_get_memory_follows_mcp_eligibility(api):
    with _client(api, "bot") as bot, _client(api, "lee") as lee:
        eligible = bot.get("/memory/mem_build_command")
        candidate = bot.get("/memory/mem_new_rules_via_registry")
        conflicted = bot.get("/memory/mem_adr_012_rule_registry")  # active, but in an open conflict
        reviewer = lee.get("/memory/mem_new_rules_via_registry")
    assert eligible.status_code == 200 and eligible.json()["memoryId"] == "mem_build_command"
    for r in (candidate, conflicted):
        assert r.status_code == 404 and "is not available" in r.json()["detail"], r.text
        assert "statement" not in r.json()
    assert reviewer.status_code == 200 and reviewer.json()["state"] == "candidate"


# ---- 13: harm reports by agents ---------------------------------------------------------------------

def test_one_agent_cannot_challenge_a_lead_adr_two_agents_can(api):
    from memtui.maintenance.harm import AGENT_QUORUM

    assert AGENT_QUORUM == 2
    mid = "mem_adr_012_rule_registry"  # an architecture decision: high-impact
    with _client(api, "bot") as bot, _client(api, "bot2") as bot2:
        first = bot.post(f"/memory/{mid}/usage", json={"outcome": "harm", "issue": "misled me"})
        again = bot.post(f"/memory/{mid}/usage", json={"outcome": "harm", "issue": "misled me again"})
        assert _one(api["db"], "SELECT state FROM memory WHERE memory_id = :m", m=mid) == "active"
        second = bot2.post(f"/memory/{mid}/usage", json={"outcome": "harm", "issue": "misled me too"})
    assert first.status_code == again.status_code == second.status_code == 200, second.text
    assert first.json()["newState"] is None and again.json()["newState"] is None  # recorded, state unchanged
    assert second.json()["newState"] == "challenged"
    assert _one(api["db"], "SELECT state FROM memory WHERE memory_id = :m", m=mid) == "challenged"
    assert _one(api["db"], "SELECT count(*) FROM memory_usage_events WHERE memory_id = :m AND outcome = 'harm'",
                m=mid) == 3
    assert _one(api["db"], "SELECT count(*) FROM memory_harm_events WHERE memory_id = :m", m=mid) == 1


def test_harm_reports_of_an_agent_are_rate_limited(api):
    from memtui.maintenance.harm import HARM_REPORTS_PER_HOUR

    assert HARM_REPORTS_PER_HOUR == 20
    mid = "mem_build_command"  # lee took it into use: lead-owned, so bot3 alone never challenges it
    with _client(api, "bot3") as bot3, _client(api, "bot") as bot:
        answers = [bot3.post(f"/memory/{mid}/usage", json={"outcome": "harm", "issue": f"report {i}"})
                   for i in range(21)]
        other = bot.post(f"/memory/{mid}/usage", json={"outcome": "positive"})
    assert [a.status_code for a in answers[:20]] == [200] * 20
    refused = answers[20]
    assert refused.status_code == 429, refused.text
    assert refused.headers["retry-after"] == "3600"  # the clock is fixed: the first report leaves the window in 1 h
    assert "20 in the last hour" in refused.json()["detail"]
    assert other.status_code == 200  # another agent is not limited by bot3's reports
    assert _one(api["db"], "SELECT count(*) FROM memory_usage_events WHERE memory_id = :m AND outcome = 'harm'",
                m=mid) == 20
    assert _one(api["db"], "SELECT state FROM memory WHERE memory_id = :m", m=mid) == "active"


# ---- 12: serve binds plain HTTP only to loopback, serves TLS, logs requests --------------------------

def test_serve_refuses_a_non_loopback_bind_without_tls(demo, tmp_path):
    port = _free_port()
    out = subprocess.run([MEMTUI, "serve", "--db", demo["db"], "--host", "0.0.0.0", "--port", str(port)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2, out.stderr
    assert "--host 0.0.0.0 is not a loopback interface" in out.stderr and "--tls-cert" in out.stderr
    assert "--insecure-bind" in out.stderr
    with pytest.raises(httpx.TransportError):
        httpx.get(f"http://127.0.0.1:{port}/openapi.json", timeout=2)
    half = subprocess.run([MEMTUI, "serve", "--db", demo["db"], "--host", "0.0.0.0", "--tls-cert", str(tmp_path / "c")],
                          capture_output=True, text=True, timeout=60)
    assert half.returncode == 2 and "--tls-cert and --tls-key go together" in half.stderr


def test_serve_insecure_bind_warns_and_serves(demo):
    server = Serve(demo["db"], demo["tmp"], "--host", "0.0.0.0", "--insecure-bind")
    try:
        assert httpx.get(server.base + "/openapi.json", timeout=5).status_code == 200
    finally:
        server.stop()
    err = server.err.read_text()
    assert "warning: serving plain HTTP on 0.0.0.0" in err and "--insecure-bind" in err


def test_serve_with_a_certificate_serves_tls_on_any_interface(demo, tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    import ssl

    trust = ssl.create_default_context(cafile=str(cert))
    server = Serve(demo["db"], demo["tmp"], "--host", "0.0.0.0", "--tls-cert", str(cert), "--tls-key", str(key),
                   scheme="https", verify=trust)
    try:
        r = httpx.get(server.base + "/memory/mem_build_command", verify=trust, timeout=10,
                      headers={"Authorization": f"Bearer {demo['tokens']['lee']}"})
        assert r.status_code == 200 and r.json()["memoryId"] == "mem_build_command"
        with pytest.raises(httpx.TransportError):  # plain HTTP is not spoken on that port
            httpx.get(f"http://127.0.0.1:{server.port}/openapi.json", timeout=5)
    finally:
        server.stop()
    assert "memtui API on https://0.0.0.0:" in server.err.read_text()
    assert "warning" not in server.err.read_text()


def test_access_log_prints_one_line_per_request(demo):
    quiet = Serve(demo["db"], demo["tmp"])
    logged = Serve(demo["db"], demo["tmp"], "--access-log")
    try:
        for server in (quiet, logged):
            with httpx.Client(base_url=server.base, timeout=10) as c:
                c.get("/memory/mem_build_command", headers={"Authorization": f"Bearer {demo['tokens']['lee']}"})
                c.get("/review-queue")  # no token: 401
    finally:
        quiet.stop()
        logged.stop()
    lines = logged.out.read_text().splitlines()
    assert [ln for ln in lines if "/memory/mem_build_command" in ln] == [
        ln for ln in lines if '"GET /memory/mem_build_command HTTP/1.1" 200' in ln]
    assert len([ln for ln in lines if '"GET /memory/mem_build_command HTTP/1.1" 200' in ln]) == 1
    assert len([ln for ln in lines if '"GET /review-queue HTTP/1.1" 401' in ln]) == 1
    assert "mtk_" not in logged.out.read_text() + logged.err.read_text()  # never a token
    assert "/memory/" not in quiet.out.read_text() + quiet.err.read_text()


# ---- 13: export json carries no token hash ------------------------------------------------------------

def test_export_json_carries_no_token_hash(demo):
    from memtui.governance.tokens import hash_secret

    out = _cli("export", "json", "--db", demo["db"])
    data = json.loads(out)
    assert "api_token" not in data["tables"]
    assert "tokenHash" not in out
    for secret in demo["tokens"].values():
        assert hash_secret(secret) not in out and secret not in out
    assert data["tables"]["memory_usage_events"] is not None  # the other tables are still exported


# ---- 13: a pruning plan lists only what the caller's scopes hold -----------------------------------

def test_prune_plan_obeys_scope(demo):
    mine = _cli("prune", "--db", demo["db"], "--now", FIXED_NOW)
    anns = _cli("prune", "--db", demo["db"], "--now", FIXED_NOW, "--actor", "ann",
                env={"MEMTUI_ACTOR": "ann", "LOGNAME": "ann", "USER": "ann"})
    listed = [ln.split()[1].rstrip(":") for ln in mine.splitlines() if ln.startswith(("archive ", "keep "))]
    assert listed and all(m.startswith("mem_") for m in listed)
    # ann reviews acme/billing-service only, where the demo has no memory: her plan is empty
    assert [ln for ln in anns.splitlines() if ln.startswith(("archive ", "keep "))] == []
    assert "plan: archive 0, keep 0" in anns


# ---- 13: MCP errors name nothing outside the caller's scope ----------------------------------------

@asynccontextmanager
async def mcp_session(db: str, *args: str):
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp.types import Implementation

    params = StdioServerParameters(command=MEMTUI, args=["mcp", "--db", db, *args], env={"MEMTUI_NOW": FIXED_NOW,
                                   **{k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ}})
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, client_info=Implementation(name="probe", version="1")) as session:
            await session.initialize()
            yield session


def _text(result) -> str:
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def test_mcp_scope_errors_name_nothing_outside_the_callers_scope(demo, tmp_path):
    db = _copy_store(demo["pristine"], tmp_path)  # as built, before the HTTP tests changed it
    async with mcp_session(db, "--scope", "acme/order-service") as s:
        nope = await s.call_tool("recall", {"task": "x", "scope": "repository:nope"})
        other = await s.call_tool("recall", {"task": "x", "scope": "repository:ledger"})
        tenant = await s.call_tool("recall", {"task": "x", "scope": "globex/ledger"})
    for answer in (nope, other, tenant):
        assert answer.is_error
        text = _text(answer)
        assert "globex" not in text.replace("'globex/ledger'", "") and "ledger" not in text.replace("'ledger'", "")
        assert "known here: order-service" in text, text
    # an existing repository outside the scope reads exactly as one that does not exist
    assert _text(other) == _text(nope).replace("'nope'", "'ledger'")
    # a private repository reads as unknown to an agent of the whole store
    _cli("scope", "set-visibility", "ledger", "private", "--db", db, "--actor", "max",
         env={"MEMTUI_ACTOR": "max", "LOGNAME": "max", "USER": "max"})
    async with mcp_session(db) as s:
        private = await s.call_tool("recall", {"task": "x", "scope": "repository:ledger"})
        unknown = await s.call_tool("recall", {"task": "x", "scope": "repository:nope"})
    assert private.is_error and "known here: order-service)" in _text(private)
    assert _text(private) == _text(unknown).replace("'nope'", "'ledger'")


async def test_mcp_harm_is_rate_limited_and_needs_a_quorum_on_an_adr(demo, tmp_path):
    db = _copy_store(demo["pristine"], tmp_path)  # as built, before the HTTP tests changed it
    adr = "mem_adr_012_rule_registry"
    async with mcp_session(db, "--actor", "agent-one") as s:
        alone = await s.call_tool("report_harm", {"memory_id": adr, "issue": "wrong"})
        answers = [await s.call_tool("report_harm", {"memory_id": "mem_build_command", "issue": f"r{i}"})
                   for i in range(20)]
    assert not alone.is_error and "state is unchanged" in _text(alone)
    assert [a.is_error for a in answers] == [False] * 19 + [True]
    assert "report_harm: harm reports: agent 'agent-one' filed 20 in the last hour" in _text(answers[-1])
    assert _one(db, "SELECT state FROM memory WHERE memory_id = :m", m=adr) == "active"
    async with mcp_session(db, "--actor", "agent-two") as s:
        joined = await s.call_tool("report_harm", {"memory_id": adr, "issue": "wrong here too"})
    assert not joined.is_error and "now challenged" in _text(joined)
    assert _one(db, "SELECT state FROM memory WHERE memory_id = :m", m=adr) == "challenged"


def test_http_recall_scope_errors_name_nothing_outside_the_callers_scope(api):
    with _client(api, "ann") as ann:  # a reviewer of acme/billing-service only
        nope = ann.post("/recall", json={"task": "x", "scope": "repository:nope", "record": False})
    assert nope.status_code == 422, nope.text
    assert nope.json()["detail"] == "unknown repository 'nope' (known here: none)"  # not ledger, not order-service


def test_policy_dry_run_lists_only_memory_inside_the_callers_scopes(demo, tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text("policy:\n  name: p\n  description: d\n  sendToReviewIf:\n    - type: runbook\n")
    db = _copy_store(demo["pristine"], tmp_path)
    mine = _cli("policy", "apply", str(policy), "--dry-run", "--db", db)
    anns = _cli("policy", "apply", str(policy), "--dry-run", "--db", db, "--actor", "ann",
                env={"MEMTUI_ACTOR": "ann", "LOGNAME": "ann", "USER": "ann"})
    # the demo's one live runbook lies in acme/order-service: lee sees it, ann (acme/billing-service) does not
    assert "mem_build_command: active -> needs_review" in mine and "would send 1 memories" in mine
    assert "mem_build_command" not in anns and "would send 0 memories" in anns


# ---- the harm rules on both stores (the service, without a transport) ------------------------------

def test_harm_quorum_and_rate_on_sqlite_and_postgres(engine, tmp_path):
    from memtui.domain.invariants import Actor
    from memtui.maintenance.harm import HARM_REPORTS_PER_HOUR, HarmRateLimited
    from memtui.maintenance.usage import record_usage
    from tests.gitrepo import import_anchored

    adr = active("mem_adr", "Orders are validated only through RuleRegistry.")
    adr["type"] = "architecture_decision"
    plain = active("mem_plain", "OrderValidator calls RuleRegistry.validate first.")
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump({"memories": [adr, plain]}), encoding="utf-8")
    import_anchored(engine, [path], Actor("human", "loader", "lead"), tmp_path)
    one, two = Actor("agent", "one", "agent"), Actor("agent", "two", "agent")
    assert record_usage(engine, "mem_adr", "harm", one, issue="wrong").new_state is None
    assert record_usage(engine, "mem_adr", "harm", one, issue="still wrong").new_state is None  # the same agent
    assert record_usage(engine, "mem_adr", "harm", two, issue="wrong").new_state == "challenged"
    # an ungoverned store has no lead-owned memory: one agent challenges a normal memory, as before
    assert record_usage(engine, "mem_plain", "harm", two, issue="wrong").new_state == "challenged"
    for i in range(HARM_REPORTS_PER_HOUR - 3):  # one has filed 2, two has filed 2
        record_usage(engine, "mem_plain", "harm", one, issue=f"r{i}")
    record_usage(engine, "mem_plain", "harm", one, issue="the twentieth")
    with pytest.raises(HarmRateLimited) as refused:
        record_usage(engine, "mem_plain", "harm", one, issue="one too many")
    assert refused.value.retry_after == 3600
    record_usage(engine, "mem_plain", "harm", Actor("human", "lee", "lead"), issue="a human is not limited")
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT detail FROM memory_usage_events WHERE outcome = 'harm'")).scalars().all()
    details = [d if isinstance(d, dict) else json.loads(d) for d in rows]
    assert sum(1 for d in details if d["actor"] == "agent:one") == HARM_REPORTS_PER_HOUR
    assert [d.get("quorum") for d in details if d["actor"] == "agent:one" and "wrong" in d.get("issue", "")] == [
        "pending", "pending"]


def test_ids_and_names_may_hold_no_bidi_or_zero_width_character(tmp_path):
    from memtui.text import control_problem

    assert control_problem("memoryId", "mem_\u202eabc") == "memoryId holds a control character (\\u202e at position 5)"
    assert control_problem("tag", "Rule\u200dStore") == "tag holds a control character (\\u200d at position 5)"
    assert control_problem("agent name", "claude-code") is None
    db = tmp_path / "s.db"
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump({"memories": [rec("mem_\u2066x\u2069", "A statement.")]}), encoding="utf-8")
    out = run(db, "import", str(path))
    assert out.exit_code == 1 and "\\u2066" in out.output and "\u2066" not in out.output


def test_http_health_of_a_repository_outside_the_callers_scopes_reads_as_unknown(api):
    with _client(api, "ann") as ann, _client(api, "lee") as lee:
        outside = ann.get(f"/repositories/{REPO}/memory/health")
        unknown = ann.get("/repositories/no-such-repo/memory/health")
        inside = lee.get(f"/repositories/{REPO}/memory/health")
    assert outside.status_code == unknown.status_code == 404, outside.text
    assert outside.json()["detail"] == unknown.json()["detail"].replace("no-such-repo", REPO)
    assert inside.status_code == 200 and inside.json()["memoryHealth"][0]["repositoryId"] == REPO
