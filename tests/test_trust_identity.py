"""Identity from the connection, bounded grants, report identity, tokens list (issue 21 items 7, 8, 13
first part; build item 5 except claims): the real CLI (typer's runner in-process, a subprocess for the
acceptance) on a real SQLite file and the real PostgreSQL, with the login set by LOGNAME/USER and
PostgreSQL roles of their own for the ``current_user`` mapping."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select
from typer.testing import CliRunner

from memtui.cli import app
from memtui.governance.audit import audit_events
from memtui.store.engine import open_store
from memtui.store.models import Memory, StateHistory

STORE_YAML = """\
memories:
  - memoryId: mem_conv
    type: repo_convention
    statement: "Validation rules are registered through RuleRegistry."
    scope: {tenantId: acme, repositoryId: order-service}
    evidence:
      - type: symbol
        symbol: RuleRegistry.register
  - memoryId: mem_bill
    type: code_fact
    statement: "Invoice numbers are allocated by InvoiceSequence."
    scope: {tenantId: acme, repositoryId: billing-service}
    evidence:
      - type: symbol
        symbol: InvoiceSequence.next
"""

REPORT_FILES = 7
runner = CliRunner()


def as_login(login: str | None, **extra: str) -> dict:
    """The environment of a command run by the login ``login`` (getpass reads LOGNAME, then USER)."""
    env = {"LOGNAME": login, "USER": login} if login else {}
    return {**env, **extra}


def memtui(url: str, *args: str, login: str | None = None, env: dict | None = None):
    """The real CLI in-process on the store ``url``, run by ``login``."""
    return runner.invoke(app, ["--db", url, *args], env={**as_login(login), **(env or {})}, catch_exceptions=False)


def ok(res) -> str:
    assert res.exit_code == 0, res.output
    return res.stdout


@pytest.fixture
def governed(store_url, tmp_path):
    """Two candidates imported in a single-user store, then lee (lead, *), ann (reviewer,
    acme/order-service) and max (maintainer, acme) registered, lee's first by the login root."""
    src = tmp_path / "store.yaml"
    src.write_text(STORE_YAML, encoding="utf-8")
    ok(memtui(store_url, "import", str(src), login="root"))
    ok(memtui(store_url, "reviewers", "add", "lee", "--role", "lead", login="root"))
    ok(memtui(store_url, "reviewers", "add", "ann", "--role", "reviewer", "--scope", "acme/order-service", login="lee"))
    ok(memtui(store_url, "reviewers", "add", "max", "--role", "maintainer", "--scope", "acme", login="lee"))
    eng = open_store(store_url)
    yield store_url, eng
    eng.dispose()


def audits(engine, kind: str) -> list[tuple[str, str | None, dict]]:
    with Session(engine) as s:
        return [(e.actor_id, e.subject, e.detail) for e in audit_events(s, kind=kind)]


def state(engine, memory_id: str) -> str:
    with Session(engine) as s:
        return s.get(Memory, memory_id).state


def last_actor(engine, memory_id: str) -> tuple[str, str, str]:
    with Session(engine) as s:
        e = s.exec(select(StateHistory).where(StateHistory.memory_id == memory_id)
                   .order_by(StateHistory.event_id.desc())).first()
        return e.actor_id, e.actor_role, e.to_state


# ---- acceptance: MEMTUI_ACTOR=lee memtui decide ... by another login ---------------------------

def test_memtui_actor_naming_the_lead_is_refused_and_audited(governed):
    """Issue 21 item 13: ``MEMTUI_ACTOR=lee`` was taken on trust; run by the login ann (a process of
    its own) it is refused, exit 1, nothing changes, and the audit names ann and the claimed lee."""
    url, engine = governed
    env = {k: v for k, v in os.environ.items() if k not in ("MEMTUI_ROLE",)}
    env.update(as_login("ann", MEMTUI_ACTOR="lee", MEMTUI_DB=url))
    res = subprocess.run([sys.executable, "-m", "memtui", "decide", "mem_conv", "needs-review", "--comment", "x"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 1, res.stdout + res.stderr
    assert res.stdout == ""
    assert res.stderr == ("memtui: MEMTUI_ACTOR 'lee' refused: this connection is 'ann' (the login name"
                          + (" (PostgreSQL role 'postgres' owns the store)" if url.startswith("postgresql") else "")
                          + "), which does not act for 'lee' (issue 21: who acts is the connection's identity; "
                          "a lead may grant memtui reviewers delegate)\n")
    assert state(engine, "mem_conv") == "candidate"
    refused = audits(engine, "actor_refused")
    assert [(a, s, d["claimed"], d["via"]) for a, s, d in refused] == [("ann", "lee", "lee", "MEMTUI_ACTOR")]

    # the same with --actor, by a login that is no reviewer at all
    res = memtui(url, "decide", "mem_conv", "approve", "--actor", "lee", login="mallory")
    assert res.exit_code == 1 and "--actor 'lee' refused: this connection is 'mallory'" in res.stderr
    assert [(a, s, d["via"]) for a, s, d in audits(engine, "actor_refused")][1:] == [("mallory", "lee", "--actor")]
    assert state(engine, "mem_conv") == "candidate"

    # --actor naming the connection's own identity, or none: acts as the login
    ok(memtui(url, "decide", "mem_conv", "needs-review", "--actor", "ann", login="ann"))
    assert last_actor(engine, "mem_conv") == ("ann", "reviewer", "needs_review")
    ok(memtui(url, "decide", "mem_bill", "needs-review", login="lee"))
    assert last_actor(engine, "mem_bill") == ("lee", "lead", "needs_review")


def test_a_store_without_reviewers_takes_any_actor(store_url, tmp_path):
    """Nothing changes on a single-user store: --actor names whoever the user says."""
    src = tmp_path / "store.yaml"
    src.write_text(STORE_YAML, encoding="utf-8")
    ok(memtui(store_url, "import", str(src), login="root"))
    ok(memtui(store_url, "decide", "mem_conv", "needs-review", "--actor", "lee", login="ann"))
    ok(memtui(store_url, "decide", "mem_bill", "needs-review", login="ann", env={"MEMTUI_ACTOR": "someone"}))
    engine = open_store(store_url)
    try:
        assert last_actor(engine, "mem_conv") == ("lee", "lead", "needs_review")
        assert last_actor(engine, "mem_bill") == ("someone", "lead", "needs_review")
        assert audits(engine, "actor_refused") == []
    finally:
        engine.dispose()


def test_delegation_lets_one_reviewer_act_for_another(governed):
    """Build item 5: --actor may name a reviewer the connection acts for by a delegation row, which
    only a lead grants (for a principal within his own role and scopes); withdrawing it ends it."""
    url, engine = governed
    ok(memtui(url, "reviewers", "add", "bob", "--role", "reviewer", "--scope", "acme/billing-service", login="lee"))
    res = memtui(url, "reviewers", "delegate", "ann", "bob", login="max")
    assert res.exit_code == 1 and "needs a lead of this store; 'max' is a maintainer" in res.stderr
    res = memtui(url, "decide", "mem_bill", "needs-review", "--actor", "bob", login="ann")
    assert res.exit_code == 1 and "which does not act for 'bob'" in res.stderr

    assert ok(memtui(url, "reviewers", "delegate", "ann", "bob", login="lee")) == "ann may act for bob (granted by lee)\n"
    listed = json.loads(ok(memtui(url, "reviewers", "list", "--json", login="ann")))
    assert [(r["name"], r.get("actsFor")) for r in listed] == [
        ("ann", ["bob"]), ("bob", None), ("lee", None), ("max", None)]
    ok(memtui(url, "decide", "mem_bill", "needs-review", "--actor", "bob", login="ann"))
    assert last_actor(engine, "mem_bill") == ("bob", "reviewer", "needs_review")
    # bob does not act for ann: a delegation has one direction
    res = memtui(url, "decide", "mem_conv", "needs-review", "--actor", "ann", login="bob")
    assert res.exit_code == 1 and "this connection is 'bob'" in res.stderr

    ok(memtui(url, "reviewers", "delegate", "ann", "bob", "--revoke", login="lee"))
    res = memtui(url, "decide", "mem_bill", "approve", "--actor", "bob", login="ann")
    assert res.exit_code == 1 and "which does not act for 'bob'" in res.stderr
    assert [(a, s, d) for a, s, d in audits(engine, "delegation_granted")] == [
        ("lee", "bob", {"delegate": "ann", "principal": "bob"})]
    assert [(a, s) for a, s, _ in audits(engine, "delegation_revoked")] == [("lee", "bob")]


# ---- bounded grants (issue 21 item 8) -------------------------------------------------------------

def test_a_maintainer_cannot_make_anyone_lead_nor_grant_outside_his_scopes(governed):
    url, engine = governed
    for name in ("max", "ann", "zed"):
        res = memtui(url, "reviewers", "add", name, "--role", "lead", "--scope", "acme", login="max")
        assert res.exit_code == 1, name
        assert (f"making {name!r} a lead: refused, a maintainer may not grant the role lead (a maintainer "
                "grants: reviewer, maintainer)") in res.stderr
    res = memtui(url, "reviewers", "add", "zed", "--role", "reviewer", login="max")  # default scope *
    assert res.exit_code == 1 and "the scope * lies outside the scopes of 'max' (acme)" in res.stderr
    res = memtui(url, "reviewers", "add", "zed", "--role", "maintainer", "--scope", "other", login="max")
    assert res.exit_code == 1 and "the scope other lies outside the scopes of 'max' (acme)" in res.stderr
    # a maintainer cannot demote or remove a lead either
    res = memtui(url, "reviewers", "add", "lee", "--role", "reviewer", "--scope", "acme", login="max")
    assert res.exit_code == 1 and "a maintainer may not grant the role lead" in res.stderr
    res = memtui(url, "reviewers", "remove", "lee", login="max")
    assert res.exit_code == 1 and "removing 'lee' (a lead): refused" in res.stderr
    # within his own role and scopes he grants
    ok(memtui(url, "reviewers", "add", "zed", "--role", "reviewer", "--scope", "acme/billing-service", login="max"))

    with Session(engine) as s:
        from memtui.store.models import Reviewer

        assert [(r.name, r.role, r.scopes) for r in s.exec(select(Reviewer).order_by(Reviewer.name))] == [
            ("ann", "reviewer", ["acme/order-service"]), ("lee", "lead", ["*"]),
            ("max", "maintainer", ["acme"]), ("zed", "reviewer", ["acme/billing-service"])]
    refused = audits(engine, "grant_refused")
    assert [(a, s, d["role"]) for a, s, d in refused] == [
        ("max", "max", "lead"), ("max", "ann", "lead"), ("max", "zed", "lead"), ("max", "zed", "reviewer"),
        ("max", "zed", "maintainer"), ("max", "lee", "lead"), ("max", "lee", "lead")]


def test_a_lead_grants_within_his_scopes(governed):
    url, engine = governed
    ok(memtui(url, "reviewers", "add", "pat", "--role", "lead", "--scope", "acme/order-service", login="lee"))
    ok(memtui(url, "reviewers", "add", "kim", "--role", "lead", "--scope", "acme/order-service/src", login="pat"))
    res = memtui(url, "reviewers", "add", "kim", "--role", "lead", "--scope", "acme", login="pat")
    assert res.exit_code == 1 and "the scope acme lies outside the scopes of 'pat' (acme/order-service)" in res.stderr
    res = memtui(url, "reviewers", "add", "pat", "--role", "lead", login="pat")  # himself, everywhere
    assert res.exit_code == 1 and "the scope * lies outside the scopes of 'pat'" in res.stderr
    res = memtui(url, "reviewers", "add", "max", "--role", "reviewer", "--scope", "acme/order-service", login="pat")
    assert res.exit_code == 1 and "the scope acme lies outside the scopes of 'pat'" in res.stderr  # max's current
    res = memtui(url, "reviewers", "add", "ann", "--role", "reviewer", "--scope", "acme/order-service", login="ann")
    assert res.exit_code == 1 and "needs a lead or maintainer of this store; 'ann' is a reviewer" in res.stderr


# ---- memtui report (issue 21 item 7) --------------------------------------------------------------

def test_report_obeys_identity_and_scope_as_the_http_api(governed, tmp_path):
    url, engine = governed
    out = tmp_path / "reports"
    res = memtui(url, "report", "--out", str(out), login="ann")
    assert res.exit_code == 1
    assert res.stderr == ("memtui: memtui report: reports cover the whole store; 'ann' sees only "
                          "acme/order-service\n")
    assert not out.exists()
    assert audits(engine, "scope_refused") == [("ann", None, {"operation": "memtui report",
                                                              "scopes": ["acme/order-service"]})]
    res = memtui(url, "report", "--out", str(out), login="nobody")
    assert res.exit_code == 1 and "nobody is not a reviewer of this store" in res.stderr and not out.exists()
    res = memtui(url, "report", "--out", str(out), "--actor", "lee", login="ann")
    assert res.exit_code == 1 and not out.exists()
    written = ok(memtui(url, "report", "--out", str(out), login="lee")).splitlines()
    assert len(written) == REPORT_FILES and sorted(p.name for p in out.iterdir()) == sorted(
        os.path.basename(p) for p in written)


# ---- tokens list (issue 21 item 13) ---------------------------------------------------------------

def test_tokens_list_needs_a_lead_or_maintainer(governed):
    url, engine = governed
    ok(memtui(url, "tokens", "create", "ann", login="lee"))
    res = memtui(url, "tokens", "list", login="ann")
    assert res.exit_code == 1 and res.stdout == ""
    assert res.stderr == "memtui: tokens list needs the role lead or maintainer; 'ann' is a reviewer\n"
    assert audits(engine, "role_refused") == [("ann", None, {"operation": "tokens list", "role": "reviewer"})]
    assert memtui(url, "tokens", "list", login="stranger").exit_code == 1
    for admin in ("lee", "max"):
        rows = json.loads(ok(memtui(url, "tokens", "list", "--json", login=admin)))
        assert [(t["name"], t["kind"], t["createdBy"]) for t in rows] == [("ann", "reviewer", "lee")]


def test_tokens_list_on_a_single_user_store_needs_nobody(store_url):
    assert ok(memtui(store_url, "tokens", "list", login="whoever")).startswith("no tokens")


# ---- the TUI opens as the connection's identity ---------------------------------------------------

def test_the_tui_opens_as_the_connection_identity(governed, monkeypatch, capsys):
    from memtui.cli.launch import acting, run_tui

    url, engine = governed
    # the app must never start here: before issue 21 run_tui opened it as the claimed lee
    monkeypatch.setattr("memtui.app.MemtuiApp.run", lambda self: pytest.fail("the TUI opened as the claimed actor"))
    monkeypatch.setenv("LOGNAME", "ann")
    monkeypatch.setenv("USER", "ann")
    who = acting(engine, None, None)
    assert (who.id, who.role, who.scopes) == ("ann", "reviewer", ("acme/order-service",))
    assert run_tui(url, "lee", None) == 1  # refused before the app starts
    assert "memtui: --actor 'lee' refused: this connection is 'ann'" in capsys.readouterr().err
    monkeypatch.setenv("MEMTUI_ACTOR", "lee")
    assert run_tui(url, None, None) == 1
    assert [(a, s, d["via"]) for a, s, d in audits(engine, "actor_refused")] == [
        ("ann", "lee", "--actor"), ("ann", "lee", "MEMTUI_ACTOR")]


# ---- PostgreSQL: current_user mapped through the reviewers table ----------------------------------

@pytest.fixture
def pg_role(pg_database_url):
    """A PostgreSQL login role of this test's own, allowed to read and write the store's tables
    (not their owner); dropped afterwards. Yields (role, its URL to the test database)."""
    from tests.conftest import PG_ADMIN_URL, empty_pg_store

    empty_pg_store(pg_database_url)
    role = f"mt_ann_{uuid.uuid4().hex[:8]}"
    owner = sa.create_engine(pg_database_url, isolation_level="AUTOCOMMIT")
    admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE ROLE "{role}" LOGIN'))
    with owner.connect() as conn:
        conn.execute(sa.text(f'GRANT USAGE ON SCHEMA public TO "{role}"'))
        conn.execute(sa.text(f'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "{role}"'))
        conn.execute(sa.text(f'GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO "{role}"'))
    url = pg_database_url.replace("postgres@", f"{role}@", 1)
    assert role in url
    try:
        yield role, url
    finally:
        with owner.connect() as conn:
            conn.execute(sa.text(f'DROP OWNED BY "{role}"'))
        owner.dispose()
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP ROLE IF EXISTS "{role}"'))
        admin.dispose()


def test_postgresql_current_user_is_the_reviewer(pg_role, pg_database_url, tmp_path):
    """Each reviewer connects with a role of his own: the role's name is the reviewer; the login name
    and --actor cannot make that connection anyone else. The store owner's connection (postgres)
    falls back to the login name (README, "Who acts")."""
    from memtui.governance.reviewers import connection_identity

    role, role_url = pg_role
    src = tmp_path / "store.yaml"
    src.write_text(STORE_YAML, encoding="utf-8")
    ok(memtui(pg_database_url, "import", str(src), login="root"))
    ok(memtui(pg_database_url, "reviewers", "add", "lee", "--role", "lead", login="root"))
    ok(memtui(pg_database_url, "reviewers", "add", role, "--role", "reviewer", "--scope", "acme/order-service",
              login="lee"))

    mine = open_store(role_url)
    owner = open_store(pg_database_url)
    try:
        ident = connection_identity(mine)
        assert (ident.name, ident.source) == (role, f"PostgreSQL role {role!r}")
        # the login says lee, the connection is the role: it acts as the role's reviewer
        ok(memtui(role_url, "decide", "mem_conv", "needs-review", login="lee"))
        assert last_actor(owner, "mem_conv") == (role, "reviewer", "needs_review")
        res = memtui(role_url, "decide", "mem_bill", "needs-review", "--actor", "lee", login="lee")
        assert res.exit_code == 1
        assert f"--actor 'lee' refused: this connection is {role!r} (PostgreSQL role {role!r})" in res.stderr
        assert state(owner, "mem_bill") == "candidate"
        assert [(a, s, d["connection"]) for a, s, d in audits(owner, "actor_refused")] == [
            (role, "lee", f"PostgreSQL role {role!r}")]
        res = memtui(role_url, "tokens", "list", login="lee")
        assert res.exit_code == 1 and f"{role!r} is a reviewer" in res.stderr
        # the owner's connection: the login name
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("LOGNAME", "lee")
            mp.setenv("USER", "lee")
            assert connection_identity(owner).name == "lee"
            assert connection_identity(owner).source == "the login name (PostgreSQL role 'postgres' owns the store)"
    finally:
        mine.dispose()
        owner.dispose()
