"""Issue 21, items 2 and 3: scopes are canonical on every entry, and import obeys the evidence invariant.

Real stores (SQLite file and PostgreSQL), a real git repository in a tmp folder, the real CLI
(typer's CliRunner), real maintenance.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
import yaml
from sqlmodel import Session, select
from typer.testing import CliRunner

from memtui.cli import app
from memtui.domain.scopes import NotCanonical, canonical_key, canonical_module_path, parse_scope
from memtui.importers.native import import_files
from memtui.store.engine import open_store
from memtui.store.models import Evidence, Memory, Reviewer, StateHistory
from tests.gitrepo import git

runner = CliRunner()
VALIDATION = "src/main/java/com/acme/order/validation"
ESCAPE = f"{VALIDATION}/../../order/client"  # resolves to src/main/java/com/acme/order/client
CLIMB = "src/../../etc"  # climbs above the repository root
MADE_UP = "0123456789abcdef0123456789abcdef01234567"


def memtui(url: str, *args: str, login: str | None = None):
    """The real CLI in-process; ``login`` acts as that login (LOGNAME/USER and --actor)."""
    env = {}
    if login:
        env = {"LOGNAME": login, "USER": login}
        args = (*args, "--actor", login)
    return runner.invoke(app, ["--db", url, *args], env=env, catch_exceptions=False)


def _repo(tmp_path: Path) -> tuple[Path, str]:
    """A checkout ``order-service`` with RuleRegistry.java and docs/validation.md at one commit."""
    root = tmp_path / "order-service"
    (root / VALIDATION).mkdir(parents=True)
    (root / "docs").mkdir()
    (root / VALIDATION / "RuleRegistry.java").write_text("class RuleRegistry {}\n", encoding="utf-8")
    (root / "docs" / "validation.md").write_text("# Validation\nRules go through RuleRegistry.\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    return root, git(root, "rev-parse", "HEAD").strip()


def _record(mid: str, module: str | None = VALIDATION, evidence: list | None = None, state: str = "active",
            repository: str = "order-service", tenant: str = "acme") -> dict:
    return {"memoryId": mid, "type": "code_fact", "statement": f"Statement {mid} about validation.",
            "scope": {"tenantId": tenant, "repositoryId": repository, **({"modulePath": module} if module else {})},
            "evidence": evidence if evidence is not None else [{"type": "human", "ref": "agreed at the retro"}],
            "state": state, "reviewState": "approved" if state == "active" else "none", "origin": "agent"}


def _write(tmp_path: Path, name: str, records: list[dict]) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"memories": records}, sort_keys=False), encoding="utf-8")
    return path


def _memory(engine, mid: str) -> Memory | None:
    with Session(engine) as s:
        return s.get(Memory, mid)


def _evidence(engine, mid: str) -> list[tuple[str, str | None]]:
    with Session(engine) as s:
        return [(e.status, e.reason_code) for e in s.exec(
            select(Evidence).where(Evidence.memory_id == mid).order_by(Evidence.ordinal))]


# ---- item 2: canonical scopes -----------------------------------------------------------------

def test_canonical_forms_and_the_climbing_dotdot_refused_naming_the_field():
    assert canonical_module_path("src\\main//java/./com/") == "src/main/java/com"
    assert canonical_module_path(ESCAPE) == "src/main/java/com/acme/order/client"
    assert canonical_module_path("./") is None and canonical_module_path(None) is None
    with pytest.raises(NotCanonical) as info:
        canonical_module_path(CLIMB, "scope.modulePath")
    assert str(info.value).startswith("field 'scope.modulePath': '..' climbs above the repository root")
    assert "canonical scope rule" in str(info.value)
    assert canonical_key(" ACME ", "tenantId") == "acme"
    with pytest.raises(NotCanonical, match="field 'repositoryId': a key holds a backslash"):
        canonical_key("order\\service", "repositoryId")
    assert parse_scope("ACME/Order-Service/src//a/./b/").label == "acme/order-service/src/a/b"


@pytest.fixture
def governed(store_url, tmp_path):
    """A governed store: lee (lead, every tenant) and rita (reviewer, acme/order-service/<validation>),
    with one memory in validation imported by lee."""
    res = memtui(store_url, "reviewers", "add", "lee", "--role", "lead", login="lee")
    assert res.exit_code == 0, res.output
    res = memtui(store_url, "reviewers", "add", "rita", "--role", "reviewer", "--scope",
                 f"acme/order-service/{VALIDATION}", login="lee")
    assert res.exit_code == 0, res.output
    src = _write(tmp_path, "seed.yaml", [_record("mem_inside", state="candidate")])
    res = memtui(store_url, "import", str(src), login="lee")
    assert res.exit_code == 0, res.output
    engine = open_store(store_url)
    yield store_url, engine
    engine.dispose()


def test_dotdot_cannot_escape_a_reviewer_scope_on_import_decision_or_check(governed, tmp_path):
    url, engine = governed
    # 1. rita imports an active memory whose module path climbs out of her scope with '..': refused,
    #    naming the scope rule and where the path really is (today's main imported it)
    src = _write(tmp_path, "escape.yaml", [_record("mem_escape", module=ESCAPE)])
    res = memtui(url, "import", str(src), login="rita")
    assert res.exit_code == 1, res.output
    assert "scope refused" in res.output and "acme/order-service/src/main/java/com/acme/order/client" in res.output
    assert _memory(engine, "mem_escape") is None
    # a '..' above the repository root is refused naming the field and the rule
    src = _write(tmp_path, "climb.yaml", [_record("mem_climb", module=CLIMB)])
    res = memtui(url, "import", str(src), login="lee")
    assert res.exit_code == 1, res.output
    assert "field 'scope.modulePath'" in res.output and "'..' climbs above the repository root" in res.output
    assert _memory(engine, "mem_climb") is None
    # lee (every tenant) may import it: it is stored canonical, resolved
    src = _write(tmp_path, "lee.yaml", [_record("mem_client", module=f"{VALIDATION}\\..//../order/client/",
                                                tenant="ACME", repository="Order-Service", state="candidate")])
    res = memtui(url, "import", str(src), login="lee")
    assert res.exit_code == 0, res.output
    m = _memory(engine, "mem_client")
    assert (m.tenant_id, m.repository_id, m.module_path) == ("acme", "order-service",
                                                             "src/main/java/com/acme/order/client")

    # 2. a memory stored before the rule (written straight into the database) with the '..' path:
    #    rita cannot decide it, and `memtui check` names it (today's main: decided, check clean)
    with engine.begin() as conn:
        conn.execute(sa.update(Memory.__table__).where(Memory.__table__.c.memory_id == "mem_inside")
                     .values(module_path=ESCAPE))
    res = memtui(url, "decide", "mem_inside", "reject", "--comment", "no", login="rita")
    assert res.exit_code != 0, res.output
    assert "scope refused" in res.output
    assert _memory(engine, "mem_inside").state == "candidate"
    res = memtui(url, "check")
    assert res.exit_code == 1
    assert (f"memory mem_inside: scope not canonical: field 'module_path': {ESCAPE!r} is not canonical "
            "(canonical: 'src/main/java/com/acme/order/client')") in res.output


def test_reviewer_scopes_are_stored_canonical_and_check_names_a_stored_bad_one(store_url):
    res = memtui(store_url, "reviewers", "add", "lee", "--role", "lead", login="lee")
    assert res.exit_code == 0, res.output
    res = memtui(store_url, "reviewers", "add", "rita", "--role", "reviewer", "--scope",
                 "ACME/Order-Service/src\\main//java/", login="lee")
    assert res.exit_code == 0, res.output
    res = memtui(store_url, "reviewers", "add", "otto", "--role", "reviewer", "--scope",
                 f"acme/order-service/{CLIMB}", login="lee")
    assert res.exit_code == 2 and "'..' climbs above the repository root" in res.output
    engine = open_store(store_url)
    try:
        with Session(engine) as s:
            assert s.get(Reviewer, "rita").scopes == ["acme/order-service/src/main/java"]
            assert s.get(Reviewer, "otto") is None
        assert memtui(store_url, "check").exit_code == 0
        with engine.begin() as conn:  # an old row, or an edit of the database
            conn.execute(sa.update(Reviewer.__table__).where(Reviewer.__table__.c.name == "rita")
                         .values(scopes=[f"acme/order-service/{VALIDATION}/../../.."]))
        res = memtui(store_url, "check")
        assert res.exit_code == 1
        assert (f"reviewer 'rita': scope not canonical: 'acme/order-service/{VALIDATION}/../../..' is not "
                "canonical (canonical: 'acme/order-service/src/main/java/com')") in res.output
    finally:
        engine.dispose()


def test_recall_scope_filter_is_canonical(sqlite_engine, tmp_path):
    from memtui.recall import RecallError, RecallScope, parse_scope as parse_recall_scope

    assert parse_recall_scope("repository:Order-Service/src//a/./b/", ["order-service"]) == \
        RecallScope("order-service", "src/a/b")
    with pytest.raises(RecallError, match="climbs above the repository root"):
        parse_recall_scope(f"repository:order-service/{CLIMB}", ["order-service"])


# ---- item 3: import obeys the evidence invariant ---------------------------------------------

def test_made_up_commit_arrives_as_candidate_with_the_reason_in_the_summary(store_url, tmp_path):
    root, head = _repo(tmp_path)
    records = [
        # the record: a made-up commit and file, self-declared valid
        _record("mem_fake", evidence=[{"type": "file_span", "path": "src/Made/Up.java", "commitSha": MADE_UP,
                                       "lines": [1, 3], "status": "valid"}]),
        # a real commit, a file absent at it
        _record("mem_absent", evidence=[{"type": "file_span", "path": "src/Nope.java", "commitSha": head,
                                         "status": "valid"}]),
        # real evidence, a status the file made up: arrives active, the status re-established
        _record("mem_real", evidence=[{"type": "file_span", "path": f"{VALIDATION}/RuleRegistry.java",
                                       "commitSha": head, "lines": [1, 1], "status": "deleted"}]),
        # a doc that exists (no commit) resolves; one that does not, does not
        _record("mem_doc", module=None, evidence=[{"type": "doc", "path": "docs/validation.md", "status": "valid"}]),
        _record("mem_nodoc", module=None, evidence=[{"type": "doc", "ref": "docs/missing.md", "status": "valid"}]),
    ]
    res = memtui(store_url, "import", str(_write(tmp_path, "in.yaml", records)), "--repo", str(root))
    assert res.exit_code == 0, res.output
    assert "imported 5, already present 0, rejected 0" in res.output
    lines = [line for line in res.output.splitlines() if line.startswith("  imported as a candidate: ")]
    assert [line.split(": ")[1] for line in lines] == ["mem_fake", "mem_absent", "mem_nodoc"]
    assert "arrived active but no evidence resolves against the repository (evidence invariant" in lines[0]
    assert f"evidence[0]: commit {MADE_UP[:7]} of src/Made/Up.java is not in the checkout" in lines[0]
    assert f"evidence[0]: src/Nope.java does not exist at commit {head[:7]}" in lines[1]
    assert "evidence[0]: doc docs/missing.md does not exist in the checkout" in lines[2]
    engine = open_store(store_url)
    try:
        states = {mid: (_memory(engine, mid).state, _memory(engine, mid).review_state)
                  for mid in ("mem_fake", "mem_absent", "mem_real", "mem_doc", "mem_nodoc")}
        assert states == {"mem_fake": ("candidate", "pending"), "mem_absent": ("candidate", "pending"),
                          "mem_real": ("active", "approved"), "mem_doc": ("active", "approved"),
                          "mem_nodoc": ("candidate", "pending")}
        # the file's status is never kept: what the check found, else unchecked
        assert _evidence(engine, "mem_fake") == [("unverifiable", "commit_unknown")]
        assert _evidence(engine, "mem_absent") == [("unverifiable", "path_unknown")]
        assert _evidence(engine, "mem_real") == [("unchecked", None)]
        assert _evidence(engine, "mem_nodoc") == [("unverifiable", "doc_missing")]
        with Session(engine) as s:
            (event,) = s.exec(select(StateHistory).where(StateHistory.memory_id == "mem_fake")).all()
        assert (event.from_state, event.to_state) == (None, "candidate")
        assert "no evidence resolves against the repository" in event.reason
        # recall no longer offers it as "evidence 1 valid"
        res = memtui(store_url, "recall", "Statement mem_fake about validation", "--scope",
                     "repository:order-service", "--json")
        assert res.exit_code == 0, res.output
        assert "mem_fake" not in [m["memoryId"] for m in yaml.safe_load(res.output)["memories"]]
    finally:
        engine.dispose()


def test_without_a_checkout_an_active_record_arrives_as_candidate_saying_so(sqlite_engine, tmp_path):
    from memtui.domain.invariants import Actor

    _, head = _repo(tmp_path)
    rec = _record("mem_nocheckout", evidence=[{"type": "file_span", "path": f"{VALIDATION}/RuleRegistry.java",
                                               "commitSha": head, "status": "valid"}])
    human = _record("mem_human")  # a human source needs no checkout (invariant 1, as on a decision)
    report = import_files(sqlite_engine, [_write(tmp_path, "x.yaml", [rec, human])], Actor("human", "lee", "lead"))
    assert report.imported == ["mem_nocheckout", "mem_human"]
    ((mid, why),) = report.demoted
    assert mid == "mem_nocheckout"
    assert ("evidence[0] (file_span): no checkout of repository 'order-service' to check it against "
            "(import with --repo, or register it: memtui repo add)") in why
    assert _memory(sqlite_engine, "mem_nocheckout").state == "candidate"
    assert _memory(sqlite_engine, "mem_human").state == "active"
    assert _evidence(sqlite_engine, "mem_nocheckout") == [("unchecked", None)]


def test_a_missing_doc_does_not_leave_a_memory_active_after_maintenance(store_url, tmp_path):
    root, _ = _repo(tmp_path)
    rec = _record("mem_docs", module=None, evidence=[{"type": "doc", "path": "docs/validation.md"}])
    res = memtui(store_url, "import", str(_write(tmp_path, "d.yaml", [rec])), "--repo", str(root))
    assert res.exit_code == 0, res.output
    engine = open_store(store_url)
    try:
        assert _memory(engine, "mem_docs").state == "active"
        git(root, "rm", "-q", "docs/validation.md")
        git(root, "commit", "-q", "-m", "drop the doc")
        from memtui.maintenance.revalidation_job import run_revalidation

        run_revalidation(engine, "order-service", root, datetime(2026, 11, 30, 12, tzinfo=UTC))
        assert _memory(engine, "mem_docs").state == "needs_review"  # today's main: still active
        assert _evidence(engine, "mem_docs") == [("unverifiable", "doc_missing")]
    finally:
        engine.dispose()
