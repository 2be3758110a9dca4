"""Issue 21: what a user found after the first build, each a way round the trust boundary.

* item 1 (rules by outcome): a reviewer blocked an active architecture decision in one step, edited
  its statement to say the opposite, and a maintainer purged it with ``--force``; each now needs a
  lead, while a secret a reviewer writes into it still blocks it (the scanner contains it);
* item 4 (secrets): a token in ``--actor``, ``MEMTUI_ACTOR`` or the login name was stored in history;
* item 2 (canonical scopes): a repository key ``../x`` was taken;
* item 6 (integrity): a reviewer row inserted by SQL acted as a lead.
"""

from __future__ import annotations

import sqlalchemy as sa
import pytest
from sqlmodel import Session, select

from memtui.clock import utcnow
from memtui.domain.invariants import Actor, InvariantViolation
from memtui.governance.audit import audit_events
from memtui.review.lifecycle import create_memory
from memtui.review.service import ReviewService
from memtui.safety.incidents import purge
from memtui.store.engine import open_store
from memtui.store.models import Evidence, Memory, StateHistory

from .conftest import FIXED_NOW  # noqa: F401  (the suite's fixed clock)
from .test_trust_identity import governed, memtui, ok  # noqa: F401  (the governed store fixture)

ANN = Actor("human", "ann", "reviewer")
MAX = Actor("human", "max", "maintainer")
LEE = Actor("human", "lee", "lead")
TOKEN = "ghp_" + "Zq8" * 12  # built here, never written whole in the repository


def _adr(engine, mid: str = "m_adr") -> None:
    with Session(engine) as s, s.begin():
        create_memory(s, Memory(memory_id=mid, logical_memory_id=mid, type="architecture_decision",
                                statement="Orders are validated by RuleRegistry before pricing.", tenant_id="acme",
                                repository_id="order-service", state="active", confidence=0.9, origin="human",
                                review_state="approved", created_at=utcnow()),
                      [Evidence(memory_id=mid, ordinal=0, type="human", ref="lee", status="valid")], LEE,
                      reason="set up by the test")


def _state(engine, mid: str = "m_adr") -> str:
    with Session(engine) as s:
        return s.get(Memory, mid).state


def test_a_reviewer_cannot_block_edit_or_purge_an_active_architecture_decision(engine):
    _adr(engine)
    svc = ReviewService(engine)
    with pytest.raises(InvariantViolation, match=r"review invariant: blocking high-impact memory in use needs a "
                       r"lead .*active -> blocked"):
        svc.decide("m_adr", "block", ANN)
    with pytest.raises(InvariantViolation, match=r"review invariant: a edit of high-impact memory in use"):
        svc.edit_statement("m_adr", ANN, text="Orders are NOT validated before pricing.")
    with pytest.raises(InvariantViolation, match=r"review invariant: a purge of high-impact memory in use"):
        purge(engine, "m_adr", MAX, "tidy up", force=True)
    assert _state(engine) == "active"
    with Session(engine) as s:
        assert s.get(Memory, "m_adr").statement == "Orders are validated by RuleRegistry before pricing."
    svc.decide("m_adr", "block", LEE)  # a lead may
    assert _state(engine) == "blocked"


def test_a_secret_a_reviewer_writes_into_a_held_decision_still_blocks_it(engine):
    _adr(engine)
    svc = ReviewService(engine)
    svc.decide("m_adr", "needs-review", ANN)  # a hold anyone may cause
    with pytest.raises(InvariantViolation, match="a edit of high-impact memory"):
        svc.edit_statement("m_adr", ANN, text=f"Deploy with the token {TOKEN}.")
    svc.edit_statement("m_adr", LEE, text=f"Deploy with the token {TOKEN}.")
    assert _state(engine) == "blocked"
    with Session(engine) as s:
        assert TOKEN not in s.get(Memory, "m_adr").statement
        last = s.exec(select(StateHistory).where(StateHistory.memory_id == "m_adr")
                      .order_by(StateHistory.event_id.desc())).first()
        assert (last.to_state, last.actor_id) == ("blocked", "lee")


def test_the_scanner_blocks_what_a_reviewer_writes_into_a_candidate_decision(engine):
    with Session(engine) as s, s.begin():
        create_memory(s, Memory(memory_id="m_cand", logical_memory_id="m_cand", type="architecture_decision",
                                statement="Orders are validated first.", tenant_id="acme",
                                repository_id="order-service", state="candidate", confidence=0.9, origin="human",
                                created_at=utcnow()),
                      [Evidence(memory_id="m_cand", ordinal=0, type="human", ref="lee", status="valid")], LEE,
                      reason="set up by the test")
    ReviewService(engine).edit_statement("m_cand", ANN, text=f"Deploy with {TOKEN} first.")
    assert _state(engine, "m_cand") == "blocked"


@pytest.mark.parametrize("how", ["--actor", "MEMTUI_ACTOR", "login"])
def test_a_token_in_the_actor_name_is_refused_and_never_stored(store_url, tmp_path, how):
    src = tmp_path / "one.yaml"
    src.write_text("memories:\n  - memoryId: mem_one\n    type: repo_convention\n"
                   "    statement: Run the tests with make test.\n"
                   "    scope: {tenantId: acme, repositoryId: order-service}\n"
                   "    evidence:\n      - {type: human, ref: lee}\n", encoding="utf-8")
    ok(memtui(store_url, "import", str(src), login="root"))
    args, login, env = ["decide", "mem_one", "approve"], "root", {}
    if how == "--actor":
        args = ["--actor", TOKEN, *args]
    elif how == "MEMTUI_ACTOR":
        env = {"MEMTUI_ACTOR": TOKEN}
    else:
        login = TOKEN
    res = memtui(store_url, *args, login=login, env=env)
    assert res.exit_code == 2
    assert "holds a secret (GitHub token)" in res.output and TOKEN not in res.output
    eng = open_store(store_url)
    try:
        with eng.connect() as conn:
            for table in ("memory_state_history", "audit_event", "memory", "memory_usage_events"):
                rows = conn.execute(sa.text(f"select * from {table}")).fetchall()
                assert not any(TOKEN in str(r) for r in rows), table
        assert _state(eng, "mem_one") == "candidate"
    finally:
        eng.dispose()


@pytest.mark.parametrize("key", ["../x", "order-service/..", "a/./b", "a//b"])
def test_a_repository_key_that_is_a_path_is_refused(sqlite_engine, tmp_path, key):
    from memtui.importers.native import ImportRefused
    from memtui.importers.pipeline import import_paths

    src = tmp_path / "bad.yaml"
    src.write_text("memories:\n  - memoryId: mem_bad\n    type: code_fact\n    statement: A fact.\n"
                   f"    scope: {{tenantId: acme, repositoryId: '{key}'}}\n"
                   "    evidence:\n      - {type: human, ref: lee}\n", encoding="utf-8")
    with pytest.raises(ImportRefused) as info:
        import_paths(sqlite_engine, [src], LEE)
    assert "a key is a name, not a path" in str(info.value)
    with Session(sqlite_engine) as s:
        assert s.get(Memory, "mem_bad") is None


def test_a_reviewer_row_inserted_by_sql_grants_nothing(governed):
    url, eng = governed
    with eng.begin() as conn:
        row = conn.execute(sa.text("select added_at from reviewer where name = 'lee'")).one()
        conn.execute(sa.text("insert into reviewer (name, role, scopes, added_by, added_at) "
                             "values ('eve', 'lead', '[\"*\"]', 'lee', :at)"), {"at": row[0]})
    res = memtui(url, "decide", "mem_conv", "needs-review", login="eve")
    assert res.exit_code == 1 and "is not what the store chain sealed" in res.output
    res = memtui(url, "seal", "--force", login="eve")
    assert res.exit_code == 1
    with Session(eng) as s:
        assert s.get(Memory, "mem_conv").state == "candidate"
        assert [e.actor_id for e in audit_events(s, kind="unsealed_reviewer")] == ["eve", "eve"]
    check = memtui(url, "check", login="lee")
    assert check.exit_code == 1 and "reviewer eve" in check.output
    ok(memtui(url, "decide", "mem_conv", "needs-review", login="lee"))  # the sealed lead still acts


def test_every_refused_grant_is_audited(governed):
    """A reviewer or a stranger adding reviewers, a maintainer delegating: refused and audited (the
    README promises grant refusals are audited; these three were not)."""
    url, eng = governed
    assert memtui(url, "reviewers", "add", "bob", "--role", "reviewer", "--scope", "acme", login="ann").exit_code == 1
    assert memtui(url, "reviewers", "add", "bob", "--role", "reviewer", "--scope", "acme", login="zed").exit_code == 1
    assert memtui(url, "reviewers", "delegate", "ann", "lee", login="max").exit_code == 1
    with Session(eng) as s:
        refused = [(e.actor_id, e.subject) for e in audit_events(s, kind="grant_refused")]
    assert sorted(refused) == [("ann", None), ("max", "ann -> lee"), ("zed", None)]
