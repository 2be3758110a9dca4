"""The HTTP maintenance API (issue 12) against a real `memtui serve` process on a free local port,
driven with httpx, on the demo store on SQLite and PostgreSQL.

The demo store is governed here: lee is a lead (every tenant), max a maintainer, ann a reviewer of acme/billing-service
only (order-service is outside her scopes), bot an agent. Each expected value is read from the store
or the CLI independently of the API.
"""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
import yaml
from typer.testing import CliRunner

from memtui.cli import app as memtui_app
from memtui.store.engine import open_store

from .conftest import FIXED_NOW, empty_pg_store

REPO = "order-service"


def _cli(*args: str, env: dict | None = None) -> str:
    """The CLI in-process; ``--actor NAME`` runs it as the login NAME (issue 21: who acts is the connection's identity)."""
    if env is None and "--actor" in args:
        login = args[list(args).index("--actor") + 1]
        env = {"LOGNAME": login, "USER": login}
    out = CliRunner().invoke(memtui_app, list(args), env=env)
    assert out.exit_code == 0, out.output
    return out.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _settle(pid: int, limit: float = 30) -> None:
    """Until process ``pid`` used under 5 % of a core over a quarter second (the server's warm-up of
    recall at start is done), or ``limit`` seconds: the tests measure a server past its start."""
    tick = os.sysconf("SC_CLK_TCK")

    def cpu() -> float:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / tick

    deadline, last = time.time() + limit, cpu()
    while time.time() < deadline:
        time.sleep(0.25)
        now = cpu()
        if now - last < 0.0125:
            return
        last = now


class Server:
    """A `memtui serve` subprocess on a free port."""

    def __init__(self, url: str, log: Path):
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "MEMTUI_NOW": FIXED_NOW}
        self.log = log.open("w")
        self.proc = subprocess.Popen([sys.executable, "-m", "memtui", "serve", "--db", url, "--port", str(self.port)],
                                     env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while True:
            try:
                if httpx.get(self.base + "/openapi.json", timeout=2).status_code == 200:
                    _settle(self.proc.pid)
                    return
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                raise AssertionError(f"memtui serve did not start: {log.read_text()}")
            time.sleep(0.2)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def api(request, tmp_path_factory):
    """The demo store (after maintenance), governed, with tokens, served by a real process."""
    tmp = tmp_path_factory.mktemp(f"api_{request.param}")
    if request.param == "sqlite":
        url = str(tmp / "store.db")
    else:
        url = request.getfixturevalue("pg_database_url")
        empty_pg_store(url)
    env = {"MEMTUI_NOW": FIXED_NOW, "MEMTUI_ACTOR": "lee", "LOGNAME": "lee", "USER": "lee"}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        _cli("demo", "--no-tui", "--workdir", str(tmp / "work"), "--db", url)
        _cli("reviewers", "add", "lee", "--role", "lead", "--db", url)
        _cli("reviewers", "add", "ann", "--role", "reviewer", "--scope", "acme/billing-service", "--db", url)
        _cli("reviewers", "add", "max", "--role", "maintainer", "--db", url)
        tokens = {"lee": _cli("tokens", "create", "lee", "--db", url).strip(),
                  "ann": _cli("tokens", "create", "ann", "--db", url).strip(),
                  "bot": _cli("tokens", "create", "bot", "--agent", "--db", url).strip()}
        revoked = _cli("tokens", "create", "lee", "--db", url).strip()
        rev_id = json.loads(_cli("tokens", "list", "--json", "--db", url))[-1]["tokenId"]
        _cli("tokens", "revoke", rev_id, "--db", url)
    # a token that expired a day before the fixed clock
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMTUI_NOW", "2026-11-27T12:00:00Z")
        for k in ("MEMTUI_ACTOR", "LOGNAME", "USER"):
            mp.setenv(k, "lee")
        expired = _cli("tokens", "create", "lee", "--expires", "2", "--db", url).strip()
    server = Server(url, tmp / "serve.log")
    engine = open_store(url)
    yield {"url": url, "base": server.base, "tokens": tokens, "revoked": revoked, "expired": expired,
           "engine": engine, "tmp": tmp}
    server.stop()
    engine.dispose()


def _h(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def _client(api, who: str = "lee") -> httpx.Client:
    return httpx.Client(base_url=api["base"], headers=_h(api["tokens"][who]), timeout=30)


def _one(api, sql: str, **params):
    with api["engine"].connect() as conn:
        return conn.execute(sa.text(sql), params).scalar()


def _problem(r: httpx.Response, status: int) -> dict:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/problem+json"
    body = r.json()
    assert body["status"] == status and body["type"].startswith("urn:memtui:problem:") and body["title"]
    return body


# ---- health (acceptance) ---------------------------------------------------------------------

def test_health_is_memtui_health_json_of_the_repository(api):
    with _client(api) as c:
        got = c.get(f"/repositories/{REPO}/memory/health").json()
    cli = json.loads(_cli("health", "--json", "--db", api["url"], "--actor", "lee"))
    assert got["memoryHealth"] == [h for h in cli["memoryHealth"] if h["repositoryId"] == REPO]
    assert got["memoryHealth"][0]["total"] == _one(api, "SELECT count(*) FROM memory WHERE repository_id = :r", r=REPO)
    assert got["memoryHealth"][0]["byState"]["active"] == _one(
        api, "SELECT count(*) FROM memory WHERE repository_id = :r AND state = 'active'", r=REPO)
    with _client(api) as c:
        _problem(c.get("/repositories/no-such-repo/memory/health"), 404)


# ---- authentication and authorisation --------------------------------------------------------

def test_no_wrong_revoked_or_expired_token_is_401(api):
    url = f"{api['base']}/memory/candidates/mem_payment_timeout/review"
    body = {"decision": "approve", "expectedVersion": 1}
    r = httpx.post(url, json=body)
    assert _problem(r, 401)["reason"] == "missing"
    assert r.headers["www-authenticate"].startswith("Bearer")
    for token, reason in (("mtk_not-a-token", "unknown"), (api["revoked"], "revoked"), (api["expired"], "expired")):
        r = httpx.post(url, json=body, headers=_h(token))
        assert _problem(r, 401)["reason"] == reason
        assert 'error="invalid_token"' in r.headers["www-authenticate"]
    r = httpx.get(f"{api['base']}/memory/mem_payment_timeout", headers={"Authorization": "Basic bGVlOmxlZQ=="})
    _problem(r, 401)
    assert _one(api, "SELECT version FROM memory WHERE memory_id = 'mem_payment_timeout'") == 1
    assert _one(api, "SELECT count(*) FROM audit_event WHERE kind = 'token_refused'") >= 2
    # the docs need no token
    assert httpx.get(api["base"] + "/docs").status_code == 200


def test_agent_token_never_decides_and_out_of_scope_reviewer_is_refused(api):
    mid = "mem_validation_tests"
    version = _one(api, "SELECT version FROM memory WHERE memory_id = :m", m=mid)
    body = {"decision": "approve", "expectedVersion": version}
    with _client(api, "bot") as bot:
        assert "agents recall" in _problem(bot.post(f"/memory/candidates/{mid}/review", json=body), 403)["detail"]
        _problem(bot.post(f"/memory/{mid}/archive", json={"expectedVersion": version}), 403)
        _problem(bot.get("/review-queue"), 403)
        assert bot.get("/memory/mem_discount_rounding").status_code == 200  # reading a memory recall gives is allowed
        _problem(bot.get(f"/memory/{mid}"), 404)  # needs_review: not one MCP get_memory gives (issue 21)
    with _client(api, "ann") as ann:
        detail = _problem(ann.post(f"/memory/candidates/{mid}/review", json=body), 403)["detail"]
        assert "outside" in detail
        _problem(ann.get(f"/memory/{mid}"), 403)
        assert ann.get("/review-queue").json()["items"] == []  # nothing of billing-service in the demo
        _problem(ann.get("/reports/memory-health-report"), 403)
    assert _one(api, "SELECT version FROM memory WHERE memory_id = :m", m=mid) == version
    assert _one(api, "SELECT count(*) FROM audit_event WHERE kind = 'role_refused' AND actor_id = 'bot'") >= 2
    assert _one(api, "SELECT count(*) FROM audit_event WHERE kind = 'scope_refused' AND actor_id = 'ann' "
                     "AND subject = :m", m=mid) == 1


# ---- decisions -------------------------------------------------------------------------------

def test_review_with_the_version_seen_then_409_on_the_stale_version(api):
    mid = "mem_validator_test_cases"
    with _client(api) as c:
        seen = c.get(f"/memory/{mid}").json()
        assert seen["state"] == "candidate"
        r = c.post(f"/memory/candidates/{mid}/review",
                   json={"decision": "needs_review", "comment": "look at the tests", "expectedVersion": seen["version"]})
        assert r.status_code == 200, r.text
        out = r.json()
        assert (out["fromState"], out["toState"], out["version"]) == ("candidate", "needs_review", seen["version"] + 1)
        stale = c.post(f"/memory/candidates/{mid}/review", json={"decision": "approve", "expectedVersion": seen["version"]})
        p = _problem(stale, 409)
        assert p["detail"].startswith(f"{mid} changed by human:lee at {FIXED_NOW}: look again")
        assert p["field"] == "expectedVersion"
        events = c.get(f"/memory/{mid}/history").json()["events"]
    assert events[-1]["eventId"] == out["eventId"]
    assert (events[-1]["toState"], events[-1]["actorId"], events[-1]["comment"]) == ("needs_review", "lee", "look at the tests")
    assert _one(api, "SELECT state FROM memory WHERE memory_id = :m", m=mid) == "needs_review"
    cli = json.loads(_cli("history", mid, "--json", "--db", api["url"], "--actor", "lee"))
    assert cli == events


def test_invariant_refusal_is_422_with_the_lifecycle_reason(api):
    # an open conflict keeps a memory from becoming live (invariant 4)
    mid = "mem_rule_registry_convention"
    version = _one(api, "SELECT version FROM memory WHERE memory_id = :m", m=mid)
    with _client(api) as c:
        p = _problem(c.post(f"/memory/candidates/{mid}/review", json={"decision": "approve", "expectedVersion": version}), 422)
    assert p["invariant"] == "conflict" and "open conflict" in p["detail"]
    assert _one(api, "SELECT version FROM memory WHERE memory_id = :m", m=mid) == version


def test_archive_and_get_memory_as_memtui_show(api):
    mid = "mem_build_command"
    with _client(api) as c:
        shown = c.get(f"/memory/{mid}").json()
        assert shown == json.loads(_cli("show", mid, "--json", "--db", api["url"], "--actor", "lee"))
        r = c.post(f"/memory/{mid}/archive", json={"comment": "obsolete", "expectedVersion": shown["version"]})
        assert r.status_code == 200, r.text
        _problem(c.get("/memory/no_such_memory"), 404)
    assert r.json()["toState"] == "archived"
    assert _one(api, "SELECT state FROM memory WHERE memory_id = :m", m=mid) == "archived"


def test_resolve_conflict(api):
    cid, a, b = None, None, None
    with api["engine"].connect() as conn:
        cid, a, b = conn.execute(sa.text(
            "SELECT conflict_id, memory_a, memory_b FROM memory_conflict WHERE status = 'open' "
            "AND memory_a <> 'mem_adr_012_rule_registry' ORDER BY conflict_id")).first()
    with _client(api) as c:
        r = c.post(f"/memory/conflicts/{cid}/resolve", json={"action": "not-a-conflict"})
        assert r.status_code == 200, r.text
        assert r.json()["action"] == "not_a_conflict"
        _problem(c.post(f"/memory/conflicts/{cid}/resolve", json={"action": "keep_a"}), 409)
        _problem(c.post("/memory/conflicts/memconf_nope/resolve", json={"action": "keep_a"}), 404)
        assert _problem(c.post(f"/memory/conflicts/{cid}/resolve", json={"action": "keep-c"}), 422)["field"] == "action"
    assert _one(api, "SELECT status FROM memory_conflict WHERE conflict_id = :c", c=cid) == "not_a_conflict"
    assert _one(api, "SELECT resolved_by FROM memory_conflict WHERE conflict_id = :c", c=cid) == "lee"


def test_revalidate_one_memory_with_the_maintenance_engine(api):
    mid = "mem_order_validator_entrypoint"
    jobs_before = _one(api, "SELECT count(*) FROM memory_maintenance_jobs WHERE job_type = 'revalidate'")
    with _client(api) as c:
        r = c.post(f"/memory/{mid}/revalidate")
        assert r.status_code == 200, r.text
        _problem(c.post("/memory/mem_old_rule_engine/revalidate"), 409)  # invalidated: not revalidated
    out = r.json()
    assert out["state"] == "active" and out["revalidation"]["status"] == "valid"
    assert _one(api, "SELECT count(*) FROM memory_maintenance_jobs WHERE job_type = 'revalidate'") == jobs_before + 1  # the refused one ran no job
    assert _one(api, "SELECT selected_count FROM memory_maintenance_jobs WHERE job_id = :j", j=out["jobId"]) == 1
    # the same state and clock as the demo's maintenance: nothing changed (the job is idempotent)
    assert _one(api, "SELECT updated_count FROM memory_maintenance_jobs WHERE job_id = :j", j=out["jobId"]) == 0
    assert out["changes"] == []


# ---- problem details -------------------------------------------------------------------------

@pytest.mark.parametrize("body, field", [
    ({"decision": "maybe", "expectedVersion": 1}, "decision"),
    ({"decision": "approve", "expectedVersion": "one"}, "expectedVersion"),
    ({"decision": "approve"}, "expectedVersion"),
    ({"decision": "approve", "expectedVersion": 1, "actor": "someone-else"}, "actor"),
    ("not json", "body"),
])
def test_validation_errors_are_problem_details_naming_the_field(api, body, field):
    with _client(api) as c:
        url = "/memory/candidates/mem_payment_timeout/review"
        r = c.post(url, content=body, headers={"content-type": "application/json"}) if isinstance(body, str) \
            else c.post(url, json=body)
    p = _problem(r, 422)
    assert p["field"] == field and p["detail"].startswith(field)


def test_query_errors_and_a_body_too_large(api):
    with _client(api) as c:
        assert _problem(c.get("/review-queue", params={"state": "active"}), 422)["field"] == "state"
        assert _problem(c.get("/review-queue", params={"limit": 0}), 422)["field"] == "limit"
        assert _problem(c.get("/review-queue", params={"cursor": "@@"}), 422)["field"] == "cursor"
        big = {"decision": "approve", "expectedVersion": 1, "comment": "x" * 70_000}
        assert _problem(c.post("/memory/candidates/mem_payment_timeout/review", json=big), 413)["field"] == "body"

        def chunks():  # no Content-Length: counted as it streams
            for _ in range(100):
                yield b" " * 1000

        r = c.post("/recall", content=chunks(), headers={"content-type": "application/json"})
        _problem(r, 413)
        _problem(c.get("/no/such/endpoint"), 404)
        assert _problem(c.post("/recall", json={"task": "x", "scope": "order-service"}), 422)["field"] == "scope"
    assert _one(api, "SELECT version FROM memory WHERE memory_id = 'mem_payment_timeout'") == 1


# ---- the queue, recall, usage, reports -------------------------------------------------------

def test_review_queue_pages_and_filters_as_the_store_says(api):
    with _client(api) as c:
        seen, cursor = [], None
        while True:
            page = c.get("/review-queue", params={"limit": 2, "repository": REPO, **({"cursor": cursor} if cursor else {})}).json()
            seen += [(i["state"], i["memoryId"]) for i in page["items"]]
            cursor = page["nextCursor"]
            if not cursor:
                break
        candidates = c.get("/review-queue", params={"state": "candidate", "type": "repo_convention"}).json()["items"]
        changed = c.get("/review-queue", params={"reasonCode": "span_changed"}).json()["items"]
    rank = {"needs_review": 0, "challenged": 1, "candidate": 2, "approved": 3}
    with api["engine"].connect() as conn:
        expected = sorted(((s, m) for m, s in conn.execute(sa.text(
            "SELECT memory_id, state FROM memory WHERE repository_id = :r AND state IN "
            "('needs_review', 'challenged', 'candidate', 'approved')"), {"r": REPO})), key=lambda t: (rank[t[0]], t[1]))
        conventions = sorted(r[0] for r in conn.execute(sa.text(
            "SELECT memory_id FROM memory WHERE state = 'candidate' AND type = 'repo_convention'")))
        span_changed = sorted(r[0] for r in conn.execute(sa.text(
            "SELECT DISTINCT m.memory_id FROM memory m JOIN evidence e ON e.memory_id = m.memory_id "
            "WHERE e.reason_code = 'span_changed' AND m.state IN ('needs_review', 'challenged', 'candidate', 'approved')")))
    assert seen == expected and len(seen) > 4
    assert sorted(i["memoryId"] for i in candidates) == conventions and conventions
    assert sorted(i["memoryId"] for i in changed) == span_changed and span_changed


def test_recall_is_memtui_recall_and_writes_usage_by_the_agent(api):
    from memtui.domain.invariants import Actor
    from memtui.recall import recall

    task, scope = "add a validation rule", f"repository:{REPO}"
    expected = recall(api["engine"], task, scope, actor=Actor("agent", "bot", "agent"), record=False)
    with _client(api, "bot") as bot:
        r = bot.post("/recall", json={"task": task, "scope": scope})
    assert r.status_code == 200, r.text
    pack = r.json()
    assert [m["memoryId"] for m in pack["memories"]] == [m.memory_id for m in expected.memories]
    assert pack["memories"] and pack["excludedSummary"] == list(expected.summary)
    with api["engine"].connect() as conn:
        rows = conn.execute(sa.text("SELECT memory_id, detail FROM memory_usage_events WHERE context_pack_id = :p"),
                            {"p": pack["contextPackId"]}).all()
    details = [d if isinstance(d, dict) else json.loads(d) for _, d in rows]
    assert sorted(m for m, _ in rows) == sorted(m["memoryId"] for m in pack["memories"])
    assert {d["actor"] for d in details} == {"agent:bot"}


def test_a_private_repository_is_never_recalled_by_an_agent(api):
    task, scope = "add a validation rule", f"repository:{REPO}"
    _cli("scope", "set-visibility", REPO, "private", "--db", api["url"], "--actor", "max")
    try:
        with _client(api, "bot") as bot, _client(api) as lee:
            assert bot.post("/recall", json={"task": task, "scope": scope, "record": False}).json()["memories"] == []
            _problem(bot.get("/memory/mem_order_validator_entrypoint"), 404)  # not available, as MCP says (issue 21)
            _problem(bot.post("/memory/mem_order_validator_entrypoint/usage", json={"outcome": "positive"}), 403)
            assert lee.post("/recall", json={"task": task, "scope": scope, "record": False}).json()["memories"]
    finally:
        _cli("scope", "set-visibility", REPO, "internal", "--db", api["url"], "--actor", "max")


def test_usage_by_an_agent_and_harm_challenges(api):
    mid = "mem_discount_rounding"  # lead-owned (lee, a lead, took it into use): two agents challenge it (issue 21)
    bot2 = _cli("tokens", "create", "bot2", "--agent", "--db", api["url"],
                env={"MEMTUI_ACTOR": "lee", "LOGNAME": "lee", "USER": "lee"}).strip()
    with _client(api, "bot") as bot:
        ok = bot.post(f"/memory/{mid}/usage", json={"outcome": "positive", "workflowRunId": "run-7"})
        first = bot.post(f"/memory/{mid}/usage", json={"outcome": "harm", "issue": "wrong rounding"})
    with httpx.Client(base_url=api["base"], headers=_h(bot2), timeout=30) as other:
        harm = other.post(f"/memory/{mid}/usage", json={"outcome": "harm", "issue": "wrong rounding too"})
    assert ok.status_code == 200 and first.status_code == 200 and harm.status_code == 200, (ok.text, harm.text)
    assert first.json()["newState"] is None
    assert harm.json()["newState"] == "challenged"
    assert _one(api, "SELECT workflow_run_id FROM memory_usage_events WHERE usage_id = :u", u=ok.json()["usageId"]) == "run-7"
    assert _one(api, "SELECT state FROM memory WHERE memory_id = :m", m=mid) == "challenged"
    assert _one(api, "SELECT actor_type FROM memory_state_history WHERE memory_id = :m ORDER BY event_id DESC",
                m=mid) == "agent"


def test_reports_are_the_files_memtui_report_writes(api):
    out = api["tmp"] / "reports"
    _cli("report", "--out", str(out), "--now", FIXED_NOW, "--db", api["url"], "--actor", "lee")
    with _client(api) as c:
        for name in ("memory-health-report", "memory-review-queue", "memory-conflicts"):
            r = c.get(f"/reports/{name}", params={"now": FIXED_NOW})
            assert r.status_code == 200, r.text
            assert r.json() == yaml.safe_load((out / f"{name}.yaml").read_text())
        assert "memory-pruning-plan" in _problem(c.get("/reports/nope"), 404)["detail"]


# ---- tokens on the command line --------------------------------------------------------------

def test_tokens_are_stored_hashed_and_administered_like_reviewers(tmp_path):
    db = str(tmp_path / "t.db")
    runner = CliRunner()
    secret = _cli("tokens", "create", "solo", "--db", db, "--actor", "solo").strip()  # single-user store: anyone
    assert secret.startswith("mtk_") and len(secret) > 40
    engine = open_store(db)
    with engine.connect() as conn:
        stored = conn.execute(sa.text("SELECT token_hash, kind, name FROM api_token")).all()
    import hashlib

    assert stored == [(hashlib.sha256(secret.encode()).hexdigest(), "reviewer", "solo")]
    _cli("reviewers", "add", "lee", "--role", "lead", "--db", db, "--actor", "lee")
    _cli("reviewers", "add", "ann", "--role", "reviewer", "--db", db, "--actor", "lee")
    refused = runner.invoke(memtui_app, ["tokens", "create", "ann", "--db", db, "--actor", "ann"],
                            env={"LOGNAME": "ann", "USER": "ann"})
    assert refused.exit_code == 1 and "lead or maintainer" in refused.output
    not_reviewer = runner.invoke(memtui_app, ["tokens", "create", "zed", "--db", db, "--actor", "lee"],
                                 env={"LOGNAME": "lee", "USER": "lee"})
    assert not_reviewer.exit_code == 2 and "not a reviewer" in not_reviewer.output
    _cli("tokens", "create", "zed", "--agent", "--expires", "7", "--db", db, "--actor", "lee")
    listed = _cli("tokens", "list", "--json", "--db", db, "--actor", "lee")
    assert secret not in listed and stored[0][0] not in listed
    rows = json.loads(listed)
    assert [(t["name"], t["kind"], t["status"]) for t in rows] == [("solo", "reviewer", "active"), ("zed", "agent", "active")]
    assert rows[1]["expiresAt"] == "2026-12-07T12:00:00Z"
    assert runner.invoke(memtui_app, ["tokens", "revoke", "zed", "--db", db, "--actor", "ann"],
                         env={"LOGNAME": "ann", "USER": "ann"}).exit_code == 1
    _cli("tokens", "revoke", "zed", "--db", db, "--actor", "lee")
    assert [t["status"] for t in json.loads(_cli("tokens", "list", "--json", "--db", db, "--actor", "lee"))] == [
        "active", "revoked"]
    with engine.connect() as conn:
        kinds = [r[0] for r in conn.execute(sa.text(
            "SELECT kind FROM audit_event WHERE kind LIKE 'token_%' ORDER BY audit_id"))]
        details = " ".join(str(r[0]) for r in conn.execute(sa.text("SELECT detail FROM audit_event")))
    assert kinds == ["token_created", "token_created", "token_revoked"]
    assert secret not in details and stored[0][0] not in details
    engine.dispose()


def test_memtui_start_up_does_not_import_the_web_stack():
    code = "import sys, memtui.cli; print(sorted(m for m in ('fastapi', 'uvicorn', 'starlette') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---- many clients at once (PostgreSQL: the team set-up) ---------------------------------------

LOAD_SECONDS = float(os.environ.get("MEMTUI_API_LOAD_SECONDS", "10"))
CLIENTS = 20


@pytest.mark.parametrize("store_url", ["postgres", "sqlite"], indirect=True)
def test_twenty_clients_deciding_at_once_lose_and_double_nothing(store_url, tmp_path):
    """PostgreSQL is the team set-up (LOAD_SECONDS, 10 s in the suite; the issue's 30 s with
    MEMTUI_API_LOAD_SECONDS=30); SQLite runs a third of that: no "database is locked" either."""
    from memtui.domain.invariants import Actor
    from memtui.importers.native import import_files

    engine = open_store(store_url)
    n_own, n_shared = 5, 10
    ids = [f"mem_load_{i:03d}" for i in range(CLIENTS * n_own + n_shared)]
    src = tmp_path / "load.yaml"
    src.write_text("".join(
        f"- memoryId: {mid}\n  type: code_fact\n  statement: Load subject number {i} holds.\n"
        f"  scope: {{tenantId: acme, repositoryId: {REPO}}}\n  state: candidate\n"
        f"  evidence: [{{type: human, ref: 'note {i}'}}]\n" for i, mid in enumerate(ids)))
    assert len(import_files(engine, [src], Actor("human", "loader", "lead")).imported) == len(ids)
    token = _cli("tokens", "create", "lee", "--db", store_url, "--actor", "lee").strip()
    server = Server(store_url, tmp_path / "serve.log")
    shared = ids[CLIENTS * n_own:]
    results: list[list] = [[] for _ in range(CLIENTS)]
    unexpected: list[str] = []
    stop_at = time.time() + (LOAD_SECONDS if "postgresql" in store_url else LOAD_SECONDS / 3)

    def client(k: int) -> None:
        rnd = random.Random(k)
        own = ids[k * n_own:(k + 1) * n_own]
        with httpx.Client(base_url=server.base, headers=_h(token), timeout=60) as c:
            while time.time() < stop_at:
                mid = rnd.choice(shared) if rnd.random() < 0.5 else rnd.choice(own)
                seen = c.get(f"/memory/{mid}").json()
                decision = "approve" if seen["state"] == "needs_review" else "needs_review"
                r = c.post(f"/memory/candidates/{mid}/review", json={"decision": decision, "expectedVersion": seen["version"]})
                if r.status_code == 200:
                    results[k].append(r.json())
                elif r.status_code != 409:
                    unexpected.append(f"{r.status_code} {r.text}")

    threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        server.stop()
    done = [d for rs in results for d in rs]
    assert unexpected == []
    assert len(done) > CLIENTS  # every client got decisions through
    with engine.connect() as conn:
        events = {r[0]: (r[1], r[2], r[3]) for r in conn.execute(sa.text(
            "SELECT event_id, memory_id, from_state, to_state FROM memory_state_history WHERE actor_id = 'lee'"))}
        versions = dict(conn.execute(sa.text("SELECT memory_id, version FROM memory WHERE memory_id LIKE 'mem_load_%'")).all())
    # every successful answer is exactly one event, and no event was written without an answer
    assert sorted(events) == sorted(d["eventId"] for d in done)
    assert all(events[d["eventId"]] == (d["memoryId"], d["fromState"], d["toState"]) for d in done)
    per_memory = {m: sum(1 for d in done if d["memoryId"] == m) for m in ids}
    assert all(versions[m] == 1 + per_memory[m] for m in ids)
    check = CliRunner().invoke(memtui_app, ["check", "--db", store_url])
    assert check.exit_code == 0, check.output
    engine.dispose()
