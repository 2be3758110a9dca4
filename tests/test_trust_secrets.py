"""Issue 21, items 4-6 (build item 4): secrets in every stored string, passwords written as words,
and usage, harm and recall input.

A GitHub token (built here from pieces, so the repository holds no literal token) is put into each
field a record can carry, into a harm report's issue, a usage report's workflow run id and a recall
task — through the CLI, the real HTTP server and a real MCP client — and must appear in no output and
not in the bytes of the SQLite database file and its write-ahead log (nor in any text column of
PostgreSQL). A field that identifies or places something is refused naming the field; any other
field is redacted and its memory blocked (safety/guard.py says which is which).
"""

from __future__ import annotations

import json
import os
import socket
import string
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
import yaml
from sqlmodel import Session, select
from typer.testing import CliRunner

from memtui.cli import app as memtui_app
from memtui.domain.invariants import Actor
from memtui.safety.secrets import find_secrets
from memtui.store.engine import open_store
from memtui.store.models import HarmEvent, Memory, StateHistory, UsageEvent

from .conftest import FIXED_NOW
from .gitrepo import git

MEMTUI = str(Path(sys.executable).parent / "memtui")
#: ghp_ and 36 alphanumerics, assembled at run time (never a literal in the repository)
TOKEN = "gh" + "p_" + "".join((string.ascii_letters + string.digits)[(7 * i + 3) % 62] for i in range(36))
LOADER = Actor("human", "loader", "lead")


def test_the_token_is_a_github_token():
    assert [h.type for h in find_secrets(f"x {TOKEN} y")] == ["GitHub token"]


def rec(mid: str, statement: str = "Order lines are validated by RuleRegistry.", **extra) -> dict:
    out = {"memoryId": mid, "type": "code_fact", "statement": statement,
           "scope": {"tenantId": "acme", "repositoryId": "order-service"},
           "evidence": [{"type": "file_span", "path": "src/Orders.java", "lines": [1, 3]}]}
    for k, v in extra.items():
        if k == "scope":
            out["scope"] = {**out["scope"], **v}
        else:
            out[k] = v
    return out


#: field -> a record holding the token there; each arrives blocked with the field redacted
REDACTED = {
    "appliesTo": rec("mem_applies", scope={"appliesTo": [f"src/{TOKEN}/**"]}),
    "doesNotApplyTo": rec("mem_notapplies", scope={"doesNotApplyTo": [f"legacy/{TOKEN}"]}),
    "evidence[0].path": rec("mem_evpath", evidence=[{"type": "file_span", "path": f"src/{TOKEN}.java",
                                                     "lines": [1, 2]}]),
    "evidence[0].ref": rec("mem_evref", evidence=[{"type": "ref", "ref": f"https://ci.example/run?t={TOKEN}"}]),
    "proposedBy.id": rec("mem_proposer", proposedBy={"type": "agent", "id": f"agent-{TOKEN}"}),
    "invalidationPolicy": rec("mem_policy", invalidationPolicy=[{"fileChanged": f"src/{TOKEN}.java"}]),
    "tags": rec("mem_tags", tags=["order", TOKEN]),
    "statement": rec("mem_words", "For the orders replica the password is swordfish."),
}
#: field -> a record holding the token there; the import is refused naming the field
REFUSED = {
    "memoryId": rec(f"mem_{TOKEN}"),
    "logicalMemoryId": rec("mem_logical", logicalMemoryId=f"logical-{TOKEN}"),
    "scope.modulePath": rec("mem_module", scope={"modulePath": f"src/{TOKEN}"}),
    "supersededBy": rec("mem_super", supersededBy=f"mem_{TOKEN}"),
}


def run(db: str, *args: str, env: dict | None = None):
    return CliRunner().invoke(memtui_app, ["--db", db, *args], env={"MEMTUI_NOW": FIXED_NOW, **(env or {})})


def _write(tmp: Path, name: str, records: list[dict]) -> Path:
    path = tmp / name
    path.write_text(yaml.safe_dump({"memories": records}), encoding="utf-8")
    return path


def _outputs_hold_no_token(*outputs: str) -> None:
    for out in outputs:
        assert TOKEN not in out, out[:2000]


def _store_holds_no_token(store_url: str) -> None:
    """Not in the bytes of the SQLite file and its -wal; on PostgreSQL, not in any row of any table."""
    if store_url.startswith("postgresql"):
        engine = sa.create_engine(store_url)
        meta = sa.MetaData()
        meta.reflect(engine)
        with engine.connect() as conn:
            for table in meta.sorted_tables:
                for row in conn.execute(sa.select(table)):
                    assert TOKEN not in " ".join(str(v) for v in row), (table.name, row)
        engine.dispose()
        return
    path = Path(store_url.removeprefix("sqlite:///"))
    for p in (path, Path(f"{path}-wal")):
        if p.exists():
            assert TOKEN.encode() not in p.read_bytes(), f"the token is in {p.name}"


# ---- item 4: every field of a record ---------------------------------------------------------------

def test_a_token_in_any_field_of_a_record_is_redacted_or_refused_and_never_stored(store_url, tmp_path):
    db = store_url
    path = _write(tmp_path, "redacted.yaml", list(REDACTED.values()))
    imported = run(db, "import", str(path))
    assert imported.exit_code == 0, imported.output
    outputs = [imported.output]
    for fieldname, record in REFUSED.items():
        refused = run(db, "import", str(_write(tmp_path, f"refused-{fieldname}.yaml", [record])))
        assert refused.exit_code == 1, refused.output
        assert f"field '{fieldname}'" in refused.output and "holds a secret (GitHub token)" in refused.output, \
            refused.output
        outputs.append(refused.output)
    engine = open_store(db)
    try:
        with Session(engine) as s:
            states = {m.memory_id: m.state for m in s.exec(select(Memory))}
    finally:
        engine.dispose()
    assert states == {r["memoryId"]: "blocked" for r in REDACTED.values()}  # nothing of the refused ones
    for fieldname, record in REDACTED.items():
        mid = record["memoryId"]
        shown = run(db, "show", mid)
        as_json = run(db, "show", mid, "--json")
        history = run(db, "history", mid)
        assert shown.exit_code == as_json.exit_code == history.exit_code == 0, shown.output
        outputs += [shown.output, as_json.output, history.output]
    assert "<redacted: GitHub token>" in run(db, "show", "mem_applies", "--json").output
    assert "swordfish" not in run(db, "show", "mem_words").output
    # maintenance over them, then every export
    for job in ("revalidate", "secrets", "expire", "dedupe", "conflicts"):
        outputs.append(run(db, "maintain", job).output)
    outputs.append(run(db, "export", "json").output)
    outputs.append(run(db, "export", "agents-md", "--scope", "repository:order-service").output)
    outputs.append(run(db, "recall", "validate order lines", "--scope", "repository:order-service").output)
    _outputs_hold_no_token(*outputs)
    _store_holds_no_token(store_url)


def test_a_decision_comment_reviewer_token_label_and_repository_name_holding_a_token_are_refused(tmp_path):
    db = str(tmp_path / "s.db")
    assert run(db, "import", str(_write(tmp_path, "m.yaml", [rec("mem_a")]))).exit_code == 0
    comment = run(db, "decide", "mem_a", "reject", "--comment", f"see {TOKEN}")
    reviewer = run(db, "reviewers", "add", f"bot-{TOKEN}", "--role", "reviewer")
    scoped = run(db, "reviewers", "add", "ann", "--role", "reviewer", "--scope", f"acme/{TOKEN}")
    label = run(db, "tokens", "create", f"ci-{TOKEN}", "--agent")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    git(checkout, "init", "-q", "-b", "main")
    git(checkout, "commit", "-q", "--allow-empty", "-m", "start")
    repo = run(db, "repo", "add", f"repo-{TOKEN}", str(checkout))
    for result, fieldname in ((reviewer, "reviewer name"), (scoped, "--scope"), (label, "reviewer name"),
                              (repo, "repository name")):
        assert result.exit_code != 0, result.output
        assert f"{fieldname} holds a secret (GitHub token)" in result.output, result.output
    assert comment.exit_code == 1 and "holds a secret (GitHub token)" in comment.output
    _outputs_hold_no_token(comment.output, reviewer.output, scoped.output, label.output, repo.output,
                           run(db, "reviewers", "list").output, run(db, "repo", "list").output)
    _store_holds_no_token(f"sqlite:///{db}")


# ---- item 6: usage, harm and recall input ---------------------------------------------------------

def test_cli_harm_issue_and_workflow_run_id_with_a_token_are_refused_naming_the_field(store_url, tmp_path):
    db = store_url
    assert run(db, "import", str(_write(tmp_path, "m.yaml", [rec("mem_a")]))).exit_code == 0
    harm = run(db, "usage", "mem_a", "--outcome", "harm", "--issue", f"it leaked {TOKEN}")
    runid = run(db, "usage", "mem_a", "--outcome", "positive", "--workflow-run", f"run-{TOKEN}")
    words = run(db, "usage", "mem_a", "--outcome", "harm", "--issue", "it told me the password is swordfish")
    for result, fieldname in ((harm, "issue"), (runid, "workflowRunId"), (words, "issue")):
        assert result.exit_code == 1, result.output
        assert f"{fieldname} holds a secret" in result.output, result.output
    _outputs_hold_no_token(harm.output, runid.output, run(db, "export", "json").output)
    engine = open_store(db)
    try:
        with Session(engine) as s:
            assert s.exec(select(HarmEvent)).all() == [] and s.exec(select(UsageEvent)).all() == []
            assert s.get(Memory, "mem_a").state == "candidate"  # nothing challenged it
    finally:
        engine.dispose()
    _store_holds_no_token(store_url)


def test_recall_keeps_a_hash_of_the_task_and_redacts_a_secret_in_it(store_url, tmp_path):
    import hashlib

    from memtui.recall import pack_to_json, recall
    from memtui.importers.native import import_files

    engine = open_store(store_url)
    try:
        import_files(engine, [_write(tmp_path, "m.yaml", [
            rec("mem_a", state="active", reviewState="approved", origin="human",
                evidence=[{"type": "human", "ref": "lee said so"}])])], LOADER)
        with Session(engine) as s:
            assert s.get(Memory, "mem_a").state == "active"
        task = f"validate order lines with RuleRegistry using {TOKEN}"
        pack = recall(engine, task, "repository:order-service", actor=Actor("agent", "bot"))
        assert [m.memory_id for m in pack.memories] == ["mem_a"]
        assert TOKEN not in json.dumps(pack_to_json(pack)) and "<redacted: GitHub token>" in pack.task
        with Session(engine) as s:
            (use,) = s.exec(select(UsageEvent)).all()
        assert use.detail["taskSha256"] == hashlib.sha256(task.encode()).hexdigest()
        assert "task" not in use.detail
    finally:
        engine.dispose()
    _store_holds_no_token(store_url)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def served(tmp_path):
    """A SQLite store with one active memory, an agent token, and a `memtui serve` subprocess on it."""
    db = str(tmp_path / "s.db")
    assert run(db, "import", str(_write(tmp_path, "m.yaml", [rec(
        "mem_a", state="active", reviewState="approved", origin="human",
        evidence=[{"type": "human", "ref": "lee said so"}])]))).exit_code == 0
    created = run(db, "tokens", "create", "bot", "--agent")
    assert created.exit_code == 0, created.output
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([MEMTUI, "serve", "--db", db, "--port", str(port)],
                            env={**os.environ, "MEMTUI_NOW": FIXED_NOW},
                            stdout=(tmp_path / "serve.out").open("w"), stderr=(tmp_path / "serve.err").open("w"))
    try:
        deadline = time.time() + 60
        while True:
            try:
                if httpx.get(base + "/openapi.json", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None and time.time() < deadline, (tmp_path / "serve.err").read_text()
            time.sleep(0.2)
        yield {"db": db, "base": base, "token": created.stdout.strip()}
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_http_harm_issue_run_id_and_recall_task_with_a_token(served):
    with httpx.Client(base_url=served["base"], headers={"Authorization": f"Bearer {served['token']}"},
                      timeout=30) as c:
        harm = c.post("/memory/mem_a/usage", json={"outcome": "harm", "issue": f"leaked {TOKEN}"})
        runid = c.post("/memory/mem_a/usage", json={"outcome": "positive", "workflowRunId": f"run-{TOKEN}"})
        pack = c.post("/recall", json={"task": f"validate order lines {TOKEN}", "scope": "repository:order-service"})
        report = c.get("/reports/usefulness")
    assert harm.status_code == 422 and harm.json()["field"] == "issue", harm.text
    assert runid.status_code == 422 and runid.json()["field"] == "workflowRunId", runid.text
    assert "holds a secret (GitHub token)" in harm.json()["detail"]
    assert pack.status_code == 200 and [m["memoryId"] for m in pack.json()["memories"]] == ["mem_a"], pack.text
    _outputs_hold_no_token(harm.text, runid.text, pack.text, report.text,
                           run(served["db"], "export", "json").output)
    engine = open_store(served["db"])
    try:
        with Session(engine) as s:
            assert s.exec(select(HarmEvent)).all() == []
            assert s.get(Memory, "mem_a").state == "active"
    finally:
        engine.dispose()
    _store_holds_no_token(f"sqlite:///{served['db']}")


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


async def test_mcp_harm_run_id_recall_task_and_proposal_with_a_token(tmp_path):
    db = str(tmp_path / "s.db")
    assert run(db, "import", str(_write(tmp_path, "m.yaml", [rec(
        "mem_a", state="active", reviewState="approved", origin="human",
        evidence=[{"type": "human", "ref": "lee said so"}])]))).exit_code == 0
    async with mcp_session(db, "--allow-propose") as s:
        harm = await s.call_tool("report_harm", {"memory_id": "mem_a", "issue": f"leaked {TOKEN}"})
        runid = await s.call_tool("report_usage", {"memory_id": "mem_a", "outcome": "positive",
                                                   "workflow_run_id": f"run-{TOKEN}"})
        pack = await s.call_tool("recall", {"task": f"validate order lines {TOKEN}",
                                            "scope": "repository:order-service"})
        blocked = await s.call_tool("propose_memory", {
            "statement": "Order lines are validated in the registry.", "type": "code_fact",
            "scope": "acme/order-service", "evidence": [{"type": "file_span", "path": f"src/{TOKEN}.java",
                                                         "lines": [1, 2]}],
            "failure_type": f"ft-{TOKEN}", "source_action_ids": [f"act-{TOKEN}"]})
        refused = await s.call_tool("propose_memory", {
            "statement": "Order lines are validated in the registry.", "type": "code_fact",
            "scope": f"acme/order-service/src/{TOKEN}", "evidence": [f"src/{TOKEN}/A.java"]})
    assert harm.is_error and "issue" in _text(harm) and "holds a secret" in _text(harm)
    assert runid.is_error and "workflowRunId holds a secret (GitHub token)" in _text(runid)
    assert not pack.is_error and "mem_a" in _text(pack)
    assert not blocked.is_error and "stored blocked" in _text(blocked), _text(blocked)
    assert refused.is_error and "holds a secret (GitHub token)" in _text(refused), _text(refused)
    _outputs_hold_no_token(*(_text(r) for r in (harm, runid, pack, blocked, refused)),
                           run(db, "export", "json").output)
    _store_holds_no_token(f"sqlite:///{db}")


# ---- maintenance and data from before --------------------------------------------------------------

def test_history_reasons_never_hold_a_secret_a_job_copies_into_them(engine):
    from memtui.review.lifecycle import transition
    from memtui.importers.native import import_files

    import tempfile

    with tempfile.TemporaryDirectory() as d:
        import_files(engine, [_write(Path(d), "m.yaml", [rec("mem_a")])], LOADER)
    with Session(engine) as s, s.begin():
        transition(s, s.get(Memory, "mem_a"), "needs_review", Actor("system", "maintenance"),
                   reason=f"referenced_symbol_deleted: src/{TOKEN}.java is gone")
    with Session(engine) as s:
        reasons = [h.reason for h in s.exec(select(StateHistory).where(StateHistory.memory_id == "mem_a"))]
    # the path's high-entropy run and the token are one span: the whole run is redacted
    assert "referenced_symbol_deleted: <redacted: GitHub token>.java is gone" in reasons


def test_rescan_redacts_every_field_and_report_stored_before(engine):
    """Rows written before this scanner (straight into the tables): the rescan redacts the token in
    appliesTo and an evidence path, blocks the memory, and cleans harm, usage and recall rows."""
    from memtui.importers.native import import_files
    from memtui.maintenance.secrets_job import run_secret_rescan
    from memtui.store.models import Evidence

    import tempfile
    from datetime import datetime, timezone

    with tempfile.TemporaryDirectory() as d:
        import_files(engine, [_write(Path(d), "m.yaml", [rec("mem_a")])], LOADER)
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    with engine.begin() as conn:  # as an older memtui stored them
        conn.execute(sa.update(Memory.__table__).values(applies_to=[f"src/{TOKEN}/**"]))
        conn.execute(sa.update(Evidence.__table__).values(path=f"src/{TOKEN}.java"))
        conn.execute(sa.insert(HarmEvent.__table__).values(harm_id="harm_1", memory_id="mem_a",
                                                           issue=f"leaked {TOKEN}", action="challenged",
                                                           created_at=now))
        conn.execute(sa.insert(UsageEvent.__table__).values(usage_id="use_1", memory_id="mem_a",
                                                            workflow_run_id=f"run-{TOKEN}", usage_type="context_pack",
                                                            outcome="neutral", created_at=now,
                                                            detail={"task": f"do it with {TOKEN}", "rank": 1}))
    result = run_secret_rescan(engine, now, force=True)
    assert result.changes[0]["memoryId"] == "mem_a" and result.changes[0]["types"] == ["GitHub token"]
    assert result.changes[0]["fields"] == ["appliesTo", "evidence[0].path"]
    assert result.summary["reportsRedacted"] == 2
    with Session(engine) as s:
        m = s.get(Memory, "mem_a")
        assert m.state == "blocked" and m.applies_to == ["<redacted: GitHub token>**"]
        assert s.exec(select(Evidence.path)).one() == "<redacted: GitHub token>.java"
        assert s.get(HarmEvent, "harm_1").issue == "leaked <redacted: GitHub token>"
        use = s.get(UsageEvent, "use_1")
        assert use.workflow_run_id == "<redacted: GitHub token>" and "task" not in use.detail
        assert len(use.detail["taskSha256"]) == 64
        for h in s.exec(select(StateHistory)):
            assert TOKEN not in h.reason
    assert run_secret_rescan(engine, now).summary.get("skipped")  # same scanner: nothing to do


# ---- item 5: passwords written as words -----------------------------------------------------------

@pytest.mark.parametrize("text,secret", [
    ("the password is swordfish", "swordfish"),
    ("password: swordfish", "swordfish"),
    ("curl -u admin:swordfish https://api.example.net", "swordfish"),
    ("mysql -uroot -pswordfish", "swordfish"),
    ("Use secret 'swordfish' for the vault", "swordfish"),
    ("The admin password is 'correct horse battery staple'", "correct horse battery staple"),
    ("Passwort für die Datenbank: Geheim123!", "Geheim123"),
    ("Le mot de passe est papillon", "papillon"),
    ("La contraseña de la base de datos es mariposa", "mariposa"),
    ("Server=db;User Id=sa;Password=marigold;", "marigold"),
    ("psql \"host=db user=app password=avocado dbname=shop\"", "avocado"),
    ("redis://:honeydew@cache:6379/0", "honeydew"),
    ("sshpass -p snowflake ssh deploy@10.0.0.5", "snowflake"),
])
def test_passwords_written_as_words_are_found(text, secret):
    hits = find_secrets(text)
    assert hits, text
    assert any(secret in text[h.start:h.end] for h in hits), [(h.type, text[h.start:h.end]) for h in hits]


@pytest.mark.parametrize("text", [
    "The password is stored in Vault and rotated weekly.",
    "password: required",
    "Passwords must be hashed with bcrypt; the password field is hidden.",
    "The secret is that nobody reads the docs.",
    "password = os.environ['DB_PASSWORD']",
    "Use `--password-stdin` with docker login.",
    "mysql -u root -p orders  # prompts for the password",
    "The password reset flow lives in auth/reset.py.",
    "Set BETTER_AUTH_SECRET=local-dev-secret for local builds.",
    "password: ${DB_PASSWORD}",
    "The password is case sensitive.",
    "Das Passwort ist erforderlich.",
])
def test_words_about_passwords_are_not_flagged(text):
    assert find_secrets(text) == [], [(h.type, text[h.start:h.end]) for h in find_secrets(text)]


def test_the_password_is_swordfish_blocks_the_memory_on_import(tmp_path):
    db = str(tmp_path / "s.db")
    result = run(db, "import", str(_write(tmp_path, "m.yaml", [rec("mem_pw", "The admin password is swordfish.")])))
    assert result.exit_code == 0, result.output
    shown = run(db, "show", "mem_pw").output
    assert "blocked" in shown and "swordfish" not in shown
    assert "<redacted: password written as words>" in shown
