"""Secret scanning and personal-data redaction (issue 9, item 1; design §22.4, invariant 5 "safety").

Every kind of secret the issue names is imported through the real CLI into a real store (SQLite and
PostgreSQL): the memory is blocked, and the secret is absent from ``show``, ``history``, ``recall``,
``health``, ``report``, ``export json``, ``export agents-md`` and every text column of the database.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import sqlalchemy as sa
import yaml
from sqlmodel import Session, select
from typer.testing import CliRunner

from memtui.cli import app as memtui_app
from memtui.domain.invariants import Actor
from memtui.governance.audit import audit_events
from memtui.maintenance.secrets_job import SETTING_KEY, run_secret_rescan
from memtui.review.service import ReviewService
from memtui.safety.personal import redact_personal
from memtui.safety.secrets import SCANNER_VERSION, find_secrets, redact_secrets
from memtui.store.engine import open_store
from memtui.store.models import Memory, SecretFinding, StateHistory, StoreSetting

from tests.conftest import FIXED_NOW
from tests.gitrepo import anchor_files

SHA = "0123456789abcdef0123456789abcdef01234567"
PRIVATE_KEY = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
               "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----")
#: (memory id, statement, the secret itself, the type the summary names)
KINDS = [
    ("mem_aws", "The orders bucket is read with key AKIAIOSFODNN7EXAMPLE in CI.", "AKIAIOSFODNN7EXAMPLE",
     "AWS access key"),
    ("mem_ghp", "The release job pushes with ghp_R8eQ2kVx7TmN4pLw9ZsY3aBcD5fGhJ6uK1oW.",
     "ghp_R8eQ2kVx7TmN4pLw9ZsY3aBcD5fGhJ6uK1oW", "GitHub token"),
    ("mem_pk", f"The deploy key of the orders host is {PRIVATE_KEY}", "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgO",
     "private key"),
    ("mem_pw", "Order admin config: password = hunter2", "hunter2", "password or key assignment"),
    ("mem_prose", "For order imports, the staging DB password is hunter2x9", "hunter2x9",
     "password or key in prose"),
    ("mem_url", "Order replicas sync from https://orders:Tr0ub4dor@db.internal:5432/orders.",
     "orders:Tr0ub4dor", "basic-auth URL"),
]
CONTROL = ("mem_ok", "Order validation rules are registered through RuleRegistry in the order service.")


def _record(mid: str, statement: str) -> dict:
    return {"memoryId": mid, "type": "code_fact", "statement": statement,
            "scope": {"tenantId": "acme", "repositoryId": "order-service"},
            "evidence": [{"type": "file_span", "path": "src/main/java/Orders.java", "commitSha": SHA,
                          "lines": [1, 3], "status": "valid"}],
            "state": "active", "confidence": 0.9, "reviewState": "approved", "origin": "human",
            "proposedBy": {"type": "agent", "id": "agent-7"}, "tags": ["order"]}


def _cli(*args: str):
    return CliRunner().invoke(memtui_app, list(args))


def _import_anchored(path: Path, db: str, *extra: str):
    """``memtui import --repo CHECKOUT`` of ``path`` with its evidence committed in a checkout, so its
    active records arrive active (issue 21 item 3: import checks evidence against the repository)."""
    (copy,), root, _, _ = anchor_files([path], path.parent / f"anchor-{path.stem}")
    return _cli("import", str(copy), "--repo", str(root), "--repository-id", "order-service", "--db", db, *extra)


def _dump_text_columns(engine) -> str:
    """Every row of every table of the store as text (the raw database, not memtui's views)."""
    out = []
    meta = sa.MetaData()
    meta.reflect(engine)
    with engine.connect() as conn:
        for table in meta.sorted_tables:
            for row in conn.execute(sa.select(table)):
                out.append(" ".join(str(v) for v in row))
    return "\n".join(out)


@pytest.fixture
def secret_store(store_url, tmp_path):
    """A store with the six secret memories and one control memory imported through the CLI."""
    path = tmp_path / "memories.yaml"
    path.write_text(yaml.safe_dump({"memories": [_record(m, s) for m, s, _, _ in KINDS] + [_record(*CONTROL)]},
                                   sort_keys=False))
    r = _import_anchored(path, store_url, "--actor", "ann")
    assert r.exit_code == 0, r.output
    return store_url, r.output


def test_every_secret_kind_is_blocked_and_never_shown(secret_store, tmp_path):
    db, summary = secret_store
    for mid, _statement, secret, kind in KINDS:
        assert f"blocked: {mid}: secret found ({kind})" in summary
        assert secret not in summary
    engine = open_store(db)
    svc = ReviewService(engine)
    for mid, _s, _secret, kind in KINDS:
        d = svc.detail(mid)
        assert d.state == "blocked", mid
        assert f"<redacted: {kind}>" in d.statement
    assert svc.detail(CONTROL[0]).state == "active"

    outputs = []
    for mid, *_ in KINDS:
        for cmd in (["show", mid], ["show", mid, "--json"], ["history", mid], ["history", mid, "--json"]):
            r = _cli(*cmd, "--db", db)
            assert r.exit_code == 0, r.output
            outputs.append(r.output)
    task = "order bucket release deploy key admin config imports replicas password validation rules"
    r = _cli("recall", task, "--scope", "repository:order-service", "--json", "--db", db, "--limit", "10")
    assert r.exit_code == 0, r.output
    pack = json.loads(r.output)
    assert [m["memoryId"] for m in pack["memories"]] == [CONTROL[0]]  # the control memory is recallable
    outputs.append(r.output)
    outputs.append(_cli("recall", task, "--scope", "repository:order-service", "--db", db).output)
    health = _cli("health", "--db", db)
    assert health.exit_code == 0
    assert health.output.count("secret incident: ") == len(KINDS)
    assert "mem_aws (order-service) owner agent-7: AWS access key found " in health.output
    outputs += [health.output, _cli("health", "--json", "--db", db).output]
    r = _cli("report", "--out", str(tmp_path / "reports"), "--db", db)
    assert r.exit_code == 0, r.output
    outputs += [p.read_text() for p in sorted((tmp_path / "reports").iterdir())]
    assert "secretIncidents" in (tmp_path / "reports" / "memory-health-report.yaml").read_text()
    for cmd in (["export", "json"], ["export", "agents-md", "--scope", "repository:order-service"]):
        r = _cli(*cmd, "--db", db)
        assert r.exit_code == 0, r.output
        outputs.append(r.output)
    agents_md = outputs[-1]
    assert CONTROL[0] in agents_md and not any(mid in agents_md for mid, *_ in KINDS)
    outputs.append(_dump_text_columns(engine))
    everything = "\n".join(outputs)
    for _mid, _s, secret, _kind in KINDS:
        assert secret not in everything, secret
    with Session(engine) as s:
        findings = list(s.exec(select(SecretFinding)))
        assert {f.memory_id for f in findings} == {mid for mid, *_ in KINDS}
        assert hashlib.sha256(b"AKIAIOSFODNN7EXAMPLE").hexdigest() in {f.secret_hash for f in findings}
        blocked = audit_events(s, kind="secret_blocked")
        assert sorted(a.subject for a in blocked) == sorted(mid for mid, *_ in KINDS)
        exports = audit_events(s, kind="export")
        assert [a.detail["exportKind"] for a in exports] == ["json", "agents-md"]
        assert exports[1].detail["memoryIds"] == [CONTROL[0]]
    engine.dispose()


# ---- the scanner itself (pure) ---------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "getUserPasswordHash returns the hash stored in PASSWORD_FIELD",
    "Fixed in 3f2a9c1d4b5e6f708192a3b4c5d6e7f8091a2b3c; see also 3f2a9c1.",
    "Request 123e4567-e89b-12d3-a456-426614174000 failed",
    "See src/main/java/com/acme/order/validation/OrderValidationServiceImpl.java for the rules",
    "the password reset flow lives in auth/reset.py",
    "The password is stored in Vault; the token is read from GITHUB_TOKEN",
    "password = os.environ['DB_PASSWORD']",
    "api_key: ${API_KEY}",
    "Use OrderValidationService.validateOrderLines; the sha256 is "
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "PVT_kwDOCt2Azc4BJVxt is the project id; --field-id PVTSSF_lADOCt2Azc4BJVxtzg5iI8c",
])
def test_false_positives_not_flagged(text):
    assert find_secrets(text) == []


@pytest.mark.parametrize("mid,statement,secret,kind", KINDS)
def test_each_kind_found_with_its_span_and_hash(mid, statement, secret, kind):
    hits = find_secrets(statement)
    assert [h.type for h in hits] == [kind]
    h = hits[0]
    assert secret in statement[h.start:h.end]
    assert h.secret_hash == hashlib.sha256(statement[h.start:h.end].encode()).hexdigest()
    redacted, _ = redact_secrets(statement)
    assert secret not in redacted and f"<redacted: {kind}>" in redacted
    assert find_secrets(redacted) == []  # redacted text is clean: a rescan changes nothing


def test_scanner_speed_on_10000_statements():
    import time

    statements = [f"Order rule {i}: validation of line {i} goes through RuleRegistry.register "
                  f"in src/main/java/Rule{i}.java (commit {i:040x})" for i in range(10_000)]
    t = time.perf_counter()
    for s in statements:
        find_secrets(s)
    per = (time.perf_counter() - t) / len(statements)
    assert per < 0.0005, f"{per * 1e6:.0f} µs per statement"


def test_personal_data_redaction():
    text, kinds = redact_personal("Build in /home/alice/src/orders, ask alice.smith@acme.io or +1 415 555 0100; "
                                  r"on Windows C:\Users\alice\orders. Port 8080, v1.2.3, 2024-01-05.")
    assert text == ("Build in ~/src/orders, ask <redacted: e-mail> or <redacted: phone>; "
                    r"on Windows ~\orders. Port 8080, v1.2.3, 2024-01-05.")
    assert kinds == ["home path", "home path", "e-mail", "phone"]


def test_personal_data_redacted_on_import_unless_kept(sqlite_engine, tmp_path):
    db = str(tmp_path / "store.db")
    path = tmp_path / "m.yaml"
    rec = _record("mem_home", "Orders build from /Users/alice/work/orders; ask alice@acme.io.")
    rec["state"], rec["reviewState"] = "candidate", "pending"
    path.write_text(yaml.safe_dump({"memories": [rec]}))
    r = _cli("import", str(path), "--db", db)
    assert r.exit_code == 0, r.output
    assert "redacted: mem_home: home path in statement" in r.output
    assert "redacted: mem_home: e-mail in statement" in r.output
    assert ReviewService(open_store(db)).detail("mem_home").statement == \
        "Orders build from ~/work/orders; ask <redacted: e-mail>."
    db2 = str(tmp_path / "keep.db")
    r = _cli("import", str(path), "--db", db2, "--keep-personal-data")
    assert r.exit_code == 0 and "redacted:" not in r.output
    assert "alice@acme.io" in ReviewService(open_store(db2)).detail("mem_home").statement


# ---- edits, comments, block by hand ------------------------------------------------------------

def _one(db: str, tmp_path: Path, mid: str = "mem_ok", statement: str = CONTROL[1], state: str = "candidate") -> None:
    rec = _record(mid, statement)
    rec["state"] = state
    rec["reviewState"] = "pending" if state == "candidate" else "approved"
    p = tmp_path / f"{mid}.yaml"
    p.write_text(yaml.safe_dump({"memories": [rec]}))
    r = _import_anchored(p, db)
    assert r.exit_code == 0, r.output


def test_comment_with_secret_is_refused(store_url, tmp_path):
    _one(store_url, tmp_path)
    engine = open_store(store_url)
    before = len(ReviewService(engine).history("mem_ok"))
    r = _cli("decide", "mem_ok", "approve", "--comment", "approved; staging password is hunter2x9", "--db", store_url)
    assert r.exit_code == 1
    assert "password or key in prose" in r.output and "hunter2x9" not in r.output
    d = ReviewService(engine).detail("mem_ok")
    assert d.state == "candidate" and len(ReviewService(engine).history("mem_ok")) == before
    with pytest.raises(Exception, match="AWS access key"):
        ReviewService(engine).undo("no-such-event", Actor("human", "ann"), comment="key AKIAIOSFODNN7EXAMPLE")
    engine.dispose()


def test_edit_with_secret_stores_redacted_and_blocks(store_url, tmp_path):
    _one(store_url, tmp_path)
    r = _cli("edit", "mem_ok", "--text", "Orders use token ghp_R8eQ2kVx7TmN4pLw9ZsY3aBcD5fGhJ6uK1oW", "--db", store_url)
    assert r.exit_code == 0, r.output
    engine = open_store(store_url)
    d = ReviewService(engine).detail("mem_ok")
    assert d.state == "blocked" and d.statement == "Orders use token <redacted: GitHub token>"
    assert "ghp_R8eQ" not in _dump_text_columns(engine)
    with Session(engine) as s:
        assert [f.secret_type for f in s.exec(select(SecretFinding))] == ["GitHub token"]
        assert [a.detail["how"] for a in audit_events(s, kind="secret_blocked")] == ["edit"]
    engine.dispose()


def test_decide_block_by_hand_is_audited(store_url, tmp_path):
    _one(store_url, tmp_path)
    r = _cli("decide", "mem_ok", "block", "--comment", "leaks an internal host name", "--db", store_url)
    assert r.exit_code == 0, r.output
    assert "candidate -> blocked" in r.output
    engine = open_store(store_url)
    with Session(engine) as s:
        (a,) = audit_events(s, kind="memory_blocked")
        assert a.subject == "mem_ok" and a.detail["comment"] == "leaks an internal host name"
    engine.dispose()


# ---- the rescan job -----------------------------------------------------------------------------

def test_rescan_blocks_old_memory_and_is_idempotent(store_url, tmp_path):
    from datetime import datetime

    now = datetime.fromisoformat(FIXED_NOW.replace("Z", "+00:00"))
    _one(store_url, tmp_path, state="active")
    engine = open_store(store_url)
    # written before the scanner knew the pattern: straight into the store, as an old memtui would have
    with Session(engine) as s, s.begin():
        m = s.get(Memory, "mem_ok")
        m.statement = "Orders bucket key AKIAIOSFODNN7EXAMPLE"
        s.add(m)
        s.add(StoreSetting(key=SETTING_KEY, value="detect-secrets 0.0+old"))
    first = run_secret_rescan(engine, now)
    assert first.updated == 1 and first.changes[0]["types"] == ["AWS access key"]
    d = ReviewService(engine).detail("mem_ok")
    assert d.state == "blocked" and d.statement == "Orders bucket key <redacted: AWS access key>"
    with Session(engine) as s:
        assert s.get(StoreSetting, SETTING_KEY).value == SCANNER_VERSION
        events = list(s.exec(select(StateHistory).where(StateHistory.memory_id == "mem_ok")))
        assert [e.to_state for e in events][-2:] == ["active", "blocked"]
        n_findings = len(list(s.exec(select(SecretFinding))))
    assert "AKIAIOSFODNN7EXAMPLE" not in _dump_text_columns(engine)
    second = run_secret_rescan(engine, now)
    assert second.updated == 0 and second.selected == 0
    forced = run_secret_rescan(engine, now, force=True)
    assert forced.updated == 0
    with Session(engine) as s:
        assert len(list(s.exec(select(SecretFinding)))) == n_findings
        assert len(list(s.exec(select(StateHistory).where(StateHistory.memory_id == "mem_ok")))) == len(events)
    engine.dispose()


def test_maintain_runs_the_rescan(tmp_path):
    db = str(tmp_path / "store.db")
    _one(db, tmp_path)
    r = _cli("maintain", "--only", "secrets", "--db", db)
    assert r.exit_code == 0, r.output
    with Session(open_store(db)) as s:
        assert s.get(StoreSetting, SETTING_KEY).value == SCANNER_VERSION


def test_history_comment_from_before_is_redacted_when_shown(store_url, tmp_path):
    _one(store_url, tmp_path)
    engine = open_store(store_url)
    with Session(engine) as s, s.begin():  # an old comment, written before comments were scanned
        e = s.exec(select(StateHistory).where(StateHistory.memory_id == "mem_ok")).one()
        e.comment = "key AKIAIOSFODNN7EXAMPLE"
        s.add(e)
    for cmd in (["history", "mem_ok"], ["history", "mem_ok", "--json"], ["export", "json"]):
        r = _cli(*cmd, "--db", store_url)
        assert r.exit_code == 0 and "AKIAIOSFODNN7EXAMPLE" not in r.output
        assert "<redacted: AWS access key>" in r.output
    engine.dispose()


# ---- purge --------------------------------------------------------------------------------------

def test_purge_is_audited_and_lists_recalls_and_exports(store_url, tmp_path):
    _one(store_url, tmp_path, state="active")
    task = "order validation rules RuleRegistry"
    r = _cli("recall", task, "--scope", "repository:order-service", "--json", "--db", store_url)
    pack = json.loads(r.output)
    assert [m["memoryId"] for m in pack["memories"]] == ["mem_ok"]
    assert _cli("export", "agents-md", "--scope", "repository:order-service", "--db", store_url).exit_code == 0
    r = _cli("purge", "mem_ok", "--comment", "wrong", "--db", store_url)
    assert r.exit_code == 1 and "not blocked" in r.output
    assert _cli("decide", "mem_ok", "block", "--comment", "holds a customer's name", "--db", store_url).exit_code == 0
    r = _cli("purge", "mem_ok", "--db", store_url)
    assert r.exit_code == 2
    r = _cli("purge", "mem_ok", "--comment", "incident 42: customer data", "--db", store_url)
    assert r.exit_code == 0, r.output
    assert "recalled 1 time(s)" in r.output and pack["contextPackId"] in r.output
    assert "exported 1 time(s)" in r.output and "export agents-md" in r.output
    engine = open_store(store_url)
    with Session(engine) as s:
        assert s.get(Memory, "mem_ok") is None
        assert list(s.exec(select(StateHistory).where(StateHistory.memory_id == "mem_ok"))) == []
        (p,) = audit_events(s, kind="purge")
        assert p.subject == "mem_ok" and p.detail["comment"] == "incident 42: customer data"
        assert [x["contextPackId"] for x in p.detail["recalls"]] == [pack["contextPackId"]]
        assert [x["kind"] for x in p.detail["exports"]] == ["agents-md"]
        assert p.detail["deleted"]["memory"] == 1 and p.detail["deleted"]["usageEvents"] == 1
    assert _cli("show", "mem_ok", "--db", store_url).exit_code == 1
    engine.dispose()


def test_purge_keeps_the_finding_and_health_says_purged(tmp_path):
    db = str(tmp_path / "store.db")
    _one(db, tmp_path, mid="mem_aws", statement=KINDS[0][1])
    r = _cli("purge", "mem_aws", "--comment", "rotated the key", "--db", db)
    assert r.exit_code == 0, r.output
    with Session(open_store(db)) as s:
        assert [f.secret_type for f in s.exec(select(SecretFinding))] == ["AWS access key"]
    assert "mem_aws (org-wide) owner -: AWS access key found" in _cli("health", "--db", db).output


def test_demo_imports_the_sample_key_blocked(tmp_path):
    from memtui.sample import set_up_demo

    engine = open_store(str(tmp_path / "demo.db"))
    setup = set_up_demo(engine, tmp_path / "work", Actor("human", "demo", "lead"))
    assert ("mem_staging_payment_key", ["AWS access key"]) in setup.report.blocked
    d = ReviewService(engine).detail("mem_staging_payment_key")
    assert d.state == "blocked" and "AKIAIOSFODNN7EXAMPLE" not in d.statement
    engine.dispose()


def test_edited_merge_and_compaction_text_with_secret_refused(store_url):
    from memtui.review.resolve import ResolveService
    from memtui.safety.guard import SecretInComment

    engine = open_store(store_url)
    svc = ResolveService(engine)
    ann = Actor("human", "ann", "lead")
    with pytest.raises(SecretInComment, match="GitHub token"):
        svc.merge("no-cluster", ann, canonical_text="push with ghp_R8eQ2kVx7TmN4pLw9ZsY3aBcD5fGhJ6uK1oW")
    with pytest.raises(SecretInComment, match="password or key assignment"):
        svc.accept_compaction("no-proposal", ann, statement="db: password = hunter2")
    engine.dispose()


def test_evidence_file_content_shown_is_redacted(tmp_path):
    from memtui.maintenance.repositories import register_repository
    from memtui.review.evidence import compare_evidence
    from tests.gitrepo import git

    repo = tmp_path / "orders"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "app.properties").write_text("name=orders\naws.key=AKIAIOSFODNN7EXAMPLE\nport=8080\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "init")
    sha = git(repo, "rev-parse", "HEAD").strip()
    db = str(tmp_path / "store.db")
    rec = _record("mem_cfg", "Orders read their settings from app.properties.")
    rec["state"], rec["reviewState"] = "candidate", "pending"
    rec["evidence"] = [{"type": "file_span", "path": "app.properties", "commitSha": sha, "lines": [1, 3]}]
    p = tmp_path / "m.yaml"
    p.write_text(yaml.safe_dump({"memories": [rec]}))
    assert _cli("import", str(p), "--db", db).exit_code == 0
    engine = open_store(db)
    register_repository(engine, "order-service", repo)
    cmp = compare_evidence(engine, "mem_cfg", 0)
    shown = [r.left.text for r in cmp.rows if r.left] + [r.right.text for r in cmp.rows if r.right]
    assert "aws.key=<redacted: AWS access key>" in shown and "name=orders" in shown
    assert not any("AKIAIOSFODNN7EXAMPLE" in t for t in shown)
    engine.dispose()


def test_blocked_memory_without_findings_is_withheld_in_show(store_url, tmp_path):
    """The issue's finding: a memory imported as blocked still printed its statement in `show`."""
    _one(store_url, tmp_path, mid="mem_hand", statement="Order rules live with the customer named Jane Roe.",
         state="candidate")
    assert _cli("decide", "mem_hand", "block", "--comment", "customer name", "--db", store_url).exit_code == 0
    rec = _record("mem_imported_blocked", "Internal host orders-db-7 is reachable from CI.")
    rec["state"] = "blocked"
    p = tmp_path / "blocked.yaml"
    p.write_text(yaml.safe_dump({"memories": [rec]}))
    assert _cli("import", str(p), "--db", store_url).exit_code == 0
    for mid, text in (("mem_hand", "Jane Roe"), ("mem_imported_blocked", "orders-db-7")):
        for cmd in (["show", mid], ["show", mid, "--json"]):
            r = _cli(*cmd, "--db", store_url)
            assert r.exit_code == 0 and text not in r.output
            assert "[redacted: blocked memory]" in r.output


def test_fast_gate_agrees_with_the_case_insensitive_gate():
    """The import's gate (lowercased ASCII, case-sensitive) lets through exactly the texts the
    case-insensitive gate does (issue 11, item 9): random mixed-case texts built from the gate's own
    fragments, near misses and non-ASCII text (which takes the original gate)."""
    import random

    from memtui.safety import secrets

    fragments = ["Pass", "pWd", "SECRET", "kEy", "Token", "credENTIAL", "LOGIN", "Bearer", "basic", "://",
                 "Private", "akia", "AsIa", "GHp_", "gho", "glPAT", "XOX", "SK_", "rk-", "Pk_", "EYJ", "npm_",
                 "PyPI-", "sg.", "SG,", "sK9", "skG", "AIZA", "akc", "Ap7", "aP_", "12345678:", "1234567:",
                 "Ab0+/_-", "x" * 23, "Y" * 24, "é", "ſ", "K", "İ", " ", "/", ".", "-", "_", "a", "Z", "9"]
    rng = random.Random(11)
    texts = ["", "plain words only", "SrcOrderValidatorRuleRegistry", "a" * 23 + " " + "b" * 23]
    texts += ["".join(rng.choice(fragments) for _ in range(rng.randint(1, 12))) for _ in range(20000)]
    for text in texts:
        assert secrets._gated(text) == (secrets._GATE.search(text) is not None), text
