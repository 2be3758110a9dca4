"""Reviewers, roles and scopes (issue 9, item 2): the real CLI (typer's runner) on a real SQLite file
and on the real PostgreSQL, the real Textual app under Pilot, and the pure scope rules."""

from __future__ import annotations

import json

import pytest
from sqlmodel import Session, select
from memtui.widgets.queue_list import QueueList
from typer.testing import CliRunner

from memtui.cli import app
from memtui.domain.invariants import Actor
from memtui.domain.scopes import Scope, ScopeSyntaxError, covers_repository, in_scopes, parse_scope
from memtui.governance.audit import audit_events
from memtui.store.engine import open_store
from memtui.store.models import Memory, StateHistory

STORE_YAML = """\
memories:
  - memoryId: mem_adr
    type: architecture_decision
    statement: "Orders are validated before pricing."
    scope: {tenantId: acme, repositoryId: order-service}
    evidence:
      - type: adr
        ref: ADR-012
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
    state: needs_review
  - memoryId: mem_bill_live
    type: code_fact
    statement: "Invoices are immutable once issued by InvoiceService."
    scope: {tenantId: acme, repositoryId: billing-service}
    evidence:  # a human source: active without a checkout to check against (issue 21 item 3)
      - type: human
        ref: "InvoiceService.issue, checked by the billing team"
    state: active
    reviewState: approved
  - memoryId: mem_org
    type: repo_convention
    statement: "Every service publishes its events through the outbox."
    scope: {tenantId: acme}
    evidence:
      - type: human
        ref: "ADR-001, accepted by the architects"
    state: active
    reviewState: approved
"""

ACTIVE_ADR_YAML = """\
memories:
  - memoryId: mem_adr_active
    type: architecture_decision
    statement: "Pricing never calls the payment gateway directly."
    scope: {tenantId: acme, repositoryId: order-service}
    evidence:
      - type: human
        ref: "ADR-020, accepted by the architects"
    state: active
    reviewState: approved
"""

BILLING_YAML = """\
memories:
  - memoryId: mem_bill_new
    type: code_fact
    statement: "Credit notes reference the invoice they correct."
    scope: {tenantId: acme, repositoryId: billing-service}
    evidence:
      - type: symbol
        symbol: CreditNote.invoice
"""

runner = CliRunner()


def memtui(url: str, *args: str, env: dict | None = None):
    """Run the real CLI in-process against the store at ``url``; with ``--actor NAME`` the command
    runs as the login NAME (LOGNAME/USER), as who acts is the connection's identity (issue 21 item 5)."""
    env = dict(env or {})
    if "--actor" in args:
        login = args[list(args).index("--actor") + 1]
        env.setdefault("LOGNAME", login)
        env.setdefault("USER", login)
    return runner.invoke(app, ["--db", url, *args], env=env, catch_exceptions=False)


@pytest.fixture
def governed(store_url, tmp_path):
    """The five memories, imported by the login user of a single-user store, then reviewers
    ann (reviewer, acme/order-service) and lee (lead, every tenant) added from the login user."""
    src = tmp_path / "store.yaml"
    src.write_text(STORE_YAML, encoding="utf-8")
    res = memtui(store_url, "import", str(src))
    assert res.exit_code == 0, res.output
    res = memtui(store_url, "reviewers", "add", "ann", "--role", "reviewer", "--scope", "acme/order-service")
    assert res.exit_code == 0, res.output
    res = memtui(store_url, "reviewers", "add", "lee", "--role", "lead")
    assert res.exit_code == 0, res.output
    eng = open_store(store_url)
    yield store_url, eng
    eng.dispose()


def _state(engine, memory_id: str) -> str:
    with Session(engine) as s:
        return s.get(Memory, memory_id).state


def _audits(engine, kind: str) -> list[tuple[str, str | None, dict]]:
    with Session(engine) as s:
        return [(e.actor_id, e.subject, e.detail) for e in audit_events(s, kind=kind)]


# ---- acceptance (issue 9) ----------------------------------------------------------------------

def test_reviewer_lead_declared_role_and_unknown_actor_on_decide(governed):
    url, engine = governed
    res = memtui(url, "decide", "mem_adr", "approve", "--actor", "ann")
    assert res.exit_code == 1
    assert "review invariant" in res.stderr and "'ann' has role 'reviewer'" in res.stderr
    assert _state(engine, "mem_adr") == "candidate"

    res = memtui(url, "decide", "mem_adr", "approve", "--actor", "ann", "--role", "lead")
    assert res.exit_code == 2
    assert "roles come from memtui reviewers" in res.stderr
    res = memtui(url, "decide", "mem_adr", "approve", "--actor", "ann", env={"MEMTUI_ROLE": "lead"})
    assert res.exit_code == 2
    assert "MEMTUI_ROLE is not accepted" in res.stderr

    res = memtui(url, "decide", "mem_adr", "approve", "--actor", "nobody")
    assert res.exit_code == 1
    assert "nobody is not a reviewer of this store (see memtui reviewers list)" in res.stderr
    assert _state(engine, "mem_adr") == "candidate"
    assert _audits(engine, "unknown_actor") == [("nobody", None, {})]

    res = memtui(url, "decide", "mem_adr", "approve", "--actor", "lee")
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("mem_adr: candidate -> active")
    with Session(engine) as s:
        last = s.exec(select(StateHistory).where(StateHistory.memory_id == "mem_adr")
                      .order_by(StateHistory.event_id.desc())).first()
    assert (last.actor_id, last.actor_role, last.to_state) == ("lee", "lead", "active")


def test_deciding_outside_the_scopes_is_refused_and_audited(governed):
    url, engine = governed
    res = memtui(url, "decide", "mem_bill", "approve", "--actor", "ann")
    assert res.exit_code == 1
    assert "mem_bill: scope refused: acme/billing-service lies outside the scopes of 'ann'" in res.stderr
    assert _state(engine, "mem_bill") == "needs_review"
    assert _audits(engine, "scope_refused") == [
        ("ann", "mem_bill", {"scopes": ["acme/order-service"], "memoryScope": "acme/billing-service"})]
    # inside the scopes a reviewer decides normal memory; the lead decides anywhere
    assert memtui(url, "decide", "mem_conv", "approve", "--actor", "ann").exit_code == 0
    assert memtui(url, "decide", "mem_bill", "approve", "--actor", "lee").exit_code == 0
    assert _state(engine, "mem_bill") == "active"
    # undo of the lead's decision by ann: the memory lies outside her scopes
    res = memtui(url, "undo", "mem_bill", "--actor", "ann")
    assert res.exit_code == 1 and "mem_bill: outside your scopes (acme/order-service)" in res.stderr
    assert _state(engine, "mem_bill") == "active"


def test_maintainer_operations_need_the_maintainer_role(governed, tmp_path):
    url, engine = governed
    policy = tmp_path / "policy.yaml"
    policy.write_text("policy:\n  name: p\n  description: d\n  sendToReviewIf:\n    - type: code_fact\n")
    res = memtui(url, "policy", "apply", str(policy), "--actor", "ann")
    assert res.exit_code == 1 and "needs the role maintainer" in res.stderr
    res = memtui(url, "scope", "set-visibility", "billing-service", "private", "--actor", "lee")
    assert res.exit_code == 1 and "needs the role maintainer" in res.stderr
    assert _state(engine, "mem_bill_live") == "active"
    assert [(a, d["operation"]) for a, _, d in _audits(engine, "role_refused")] == [
        ("ann", "policy apply"), ("lee", "scope set-visibility")]


def test_out_of_scope_memory_is_invisible_to_ann(governed):
    url, engine = governed
    for cmd in ("show", "history"):
        res = memtui(url, cmd, "mem_bill", "--actor", "ann")
        assert res.exit_code == 1
        assert "mem_bill: outside your scopes (acme/order-service)" in res.stderr
        assert "Invoice" not in res.output
    assert memtui(url, "show", "mem_bill", "--actor", "lee").exit_code == 0

    res = memtui(url, "health", "--json", "--actor", "ann")
    assert res.exit_code == 0, res.output
    assert [(h["repositoryId"], h["total"]) for h in json.loads(res.stdout)["memoryHealth"]] == [("order-service", 2)]
    res = memtui(url, "health", "--json", "--actor", "lee")
    assert [(h["repositoryId"], h["total"]) for h in json.loads(res.stdout)["memoryHealth"]] == [
        ("billing-service", 2), ("order-service", 2), (None, 1)]

    res = memtui(url, "export", "json", "--actor", "ann")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert sorted(m["memoryId"] for m in data["memories"]) == ["mem_adr", "mem_conv"]
    assert {h["memoryId"] for h in data["history"]} == {"mem_adr", "mem_conv"}
    assert "Invoice" not in res.stdout and "outbox" not in res.stdout
    assert "reviewer" not in data["tables"] and "audit_event" not in data["tables"]
    lee_export = json.loads(memtui(url, "export", "json", "--actor", "lee").stdout)
    assert len(lee_export["memories"]) == 5

    res = memtui(url, "export", "agents-md", "--scope", "repository:billing-service", "--actor", "ann")
    assert res.exit_code == 0, res.output
    assert "Invoice" not in res.stdout
    assert "Invoices are immutable" in memtui(url, "export", "agents-md", "--scope", "repository:billing-service",
                                              "--actor", "lee").stdout

    task = "change how invoices are issued by InvoiceService"
    res = memtui(url, "recall", task, "--scope", "repository:billing-service", "--json", "--no-record",
                 "--actor", "ann")
    assert res.exit_code == 0, res.output
    pack = json.loads(res.stdout)
    assert [m["memoryId"] for m in pack["memories"]] == []  # not even the org-wide one: outside her scopes
    assert not [x for x in pack["excluded"] if x["memoryId"] in ("mem_bill", "mem_bill_live", "mem_org")]
    pack = json.loads(memtui(url, "recall", task, "--scope", "repository:billing-service", "--json", "--no-record",
                             "--actor", "lee").stdout)
    assert "mem_bill_live" in [m["memoryId"] for m in pack["memories"]]


def test_decision_report_lists_only_decisions_inside_the_readers_scopes(governed):
    url, engine = governed
    assert memtui(url, "decide", "mem_conv", "approve", "--actor", "ann", "--comment", "ok").exit_code == 0
    assert memtui(url, "decide", "mem_bill", "approve", "--actor", "lee", "--comment", "billing ok").exit_code == 0
    ann = json.loads(memtui(url, "--actor", "ann", "decisions", "export", "--format", "json").stdout)
    lee = json.loads(memtui(url, "--actor", "lee", "decisions", "export", "--format", "json").stdout)
    ids = lambda rep: sorted(m["memoryId"] for d in rep["decisions"] for m in d["memories"])  # noqa: E731
    assert ids(ann) == ["mem_conv"]
    assert ids(lee) == ["mem_bill", "mem_conv"]


def test_import_in_a_governed_store(governed, tmp_path):
    url, engine = governed
    adr = tmp_path / "adr.yaml"
    adr.write_text(ACTIVE_ADR_YAML, encoding="utf-8")
    res = memtui(url, "import", str(adr), "--actor", "mallory")
    assert res.exit_code == 1
    assert "mallory is not a reviewer of this store" in res.stderr
    with Session(engine) as s:
        assert s.get(Memory, "mem_adr_active") is None

    bill = tmp_path / "bill.yaml"
    bill.write_text(BILLING_YAML, encoding="utf-8")
    res = memtui(url, "import", str(bill), "--actor", "ann")
    assert res.exit_code == 1
    assert "mem_bill_new" in res.stderr and "scope refused" in res.stderr
    with Session(engine) as s:
        assert s.get(Memory, "mem_bill_new") is None

    res = memtui(url, "import", str(adr), "--actor", "ann")
    assert res.exit_code == 0, res.output
    with Session(engine) as s:
        m = s.get(Memory, "mem_adr_active")
        assert (m.state, m.review_state) == ("candidate", "pending")
        event = s.exec(select(StateHistory).where(StateHistory.memory_id == "mem_adr_active")).one()
    assert (event.from_state, event.to_state, event.actor_id) == (None, "candidate", "ann")
    assert "arrived active but high-impact memory" in event.reason and "kept as a candidate" in event.reason


def test_a_lead_imports_an_active_architecture_decision_as_active(governed, tmp_path):
    url, engine = governed
    adr = tmp_path / "adr.yaml"
    adr.write_text(ACTIVE_ADR_YAML, encoding="utf-8")
    assert memtui(url, "import", str(adr), "--actor", "lee").exit_code == 0
    assert _state(engine, "mem_adr_active") == "active"


def test_reviewer_administration(governed):
    url, engine = governed
    # lee is a lead now: the login user (not a reviewer) may no longer administer
    res = memtui(url, "reviewers", "add", "bob", "--role", "reviewer", "--scope", "acme")
    assert res.exit_code == 1 and "needs a lead or maintainer" in res.stderr
    res = memtui(url, "reviewers", "add", "bob", "--role", "reviewer", "--scope", "acme", "--actor", "ann")
    assert res.exit_code == 1 and "'ann' is a reviewer" in res.stderr
    assert memtui(url, "reviewers", "add", "bob", "--role", "reviewer", "--scope", "acme", "--actor", "lee").exit_code == 0
    assert memtui(url, "reviewers", "add", "x", "--role", "boss", "--actor", "lee").exit_code == 2
    assert memtui(url, "reviewers", "add", "x", "--role", "reviewer", "--scope", "acme//a", "--actor", "lee").exit_code == 2
    res = memtui(url, "reviewers", "remove", "lee", "--actor", "lee")
    assert res.exit_code == 1 and "last lead or maintainer" in res.stderr
    assert memtui(url, "reviewers", "remove", "bob", "--actor", "lee").exit_code == 0
    res = memtui(url, "reviewers", "list", "--json")
    assert [(r["name"], r["role"], r["scopes"]) for r in json.loads(res.stdout)] == [
        ("ann", "reviewer", ["acme/order-service"]), ("lee", "lead", ["*"])]
    added = [(a, s, d["role"]) for a, s, d in _audits(engine, "reviewer_added")]
    assert added[2] == ("lee", "bob", "reviewer") and len(added) == 3
    assert [(a, s) for a, s, _ in _audits(engine, "reviewer_removed")] == [("lee", "bob")]


def test_set_visibility_private_drops_memory_from_recall_outside(governed):
    from memtui.recall import recall

    url, engine = governed
    agent = Actor(type="agent", id="bot")
    task = "change how invoices are issued by InvoiceService"
    before = recall(engine, task, "repository:billing-service", actor=agent, record=False)
    assert "mem_bill_live" in [m.memory_id for m in before.memories]
    assert memtui(url, "reviewers", "add", "max", "--role", "maintainer", "--actor", "lee").exit_code == 0
    res = memtui(url, "scope", "set-visibility", "billing-service", "private", "--actor", "max")
    assert res.exit_code == 0, res.output
    assert "billing-service: visibility internal -> private; 2 memories, 1 dropped from recall" in res.stdout
    assert _audits(engine, "visibility_changed") == [("max", "billing-service", {
        "before": "internal", "after": "private", "memories": 2, "droppedFromRecall": 1,
        "reviewersOutside": ["ann"]})]
    after = recall(engine, task, "repository:billing-service", actor=agent, record=False)
    assert "mem_bill_live" not in [m.memory_id for m in after.memories]
    assert all(x.memory_id != "mem_bill_live" for x in after.excluded)
    lee = recall(engine, task, "repository:billing-service", actor=Actor("human", "lee", "lead", ("*",)), record=False)
    assert "mem_bill_live" in [m.memory_id for m in lee.memories]
    assert memtui(url, "scope", "set-visibility", "billing-service", "secret", "--actor", "max").exit_code == 2


def test_single_user_store_keeps_declared_roles(store_url, tmp_path):
    src = tmp_path / "store.yaml"
    src.write_text(STORE_YAML, encoding="utf-8")
    assert memtui(store_url, "import", str(src)).exit_code == 0
    assert memtui(store_url, "decide", "mem_bill", "approve", "--actor", "anyone").exit_code == 0
    res = memtui(store_url, "decide", "mem_adr", "approve", "--role", "boss")
    assert res.exit_code == 2 and "--role must be one of reviewer, lead, maintainer" in res.stderr
    assert memtui(store_url, "decide", "mem_adr", "approve", "--role", "lead").exit_code == 0


# ---- the TUI ------------------------------------------------------------------------------------

@pytest.fixture
def governed_sqlite(tmp_path):
    url = str(tmp_path / "tui.db")
    src = tmp_path / "store.yaml"
    src.write_text(STORE_YAML, encoding="utf-8")
    assert memtui(url, "import", str(src)).exit_code == 0
    assert memtui(url, "reviewers", "add", "ann", "--role", "reviewer", "--scope", "acme/order-service").exit_code == 0
    assert memtui(url, "reviewers", "add", "lee", "--role", "lead").exit_code == 0
    eng = open_store(url)
    yield eng
    eng.dispose()


@pytest.mark.parametrize("name, expected", [("ann", ["mem_adr", "mem_conv"]),
                                            ("lee", ["mem_bill", "mem_adr", "mem_conv"])])
async def test_queue_shows_only_memory_inside_the_scopes(governed_sqlite, name, expected):
    from memtui.app import MemtuiApp
    from memtui.governance.reviewers import resolve_actor

    app_ = MemtuiApp(governed_sqlite, resolve_actor(governed_sqlite, name, None))
    async with app_.run_test(size=(140, 30)) as pilot:
        await pilot.pause()
        await app_.workers.wait_for_complete()
        await pilot.pause()
        table = app_.screen.query_one("#queue", QueueList)
        assert [r.memory_id for r in table.rows] == expected
        app_.action_goto("health")
        await pilot.pause()
        await app_.workers.wait_for_complete()
        await pilot.pause()
        from textual.widgets import DataTable

        health = app_.screen.query_one("#health-table", DataTable)
        assert health.row_count == (1 if name == "ann" else 3)


# ---- the pure scope rules -----------------------------------------------------------------------

def test_parse_scope():
    assert parse_scope("*") == Scope(None)
    assert parse_scope("acme") == Scope("acme")
    assert parse_scope("acme/order-service") == Scope("acme", "order-service")
    assert parse_scope("acme/order-service/src/pricing/") == Scope("acme", "order-service", "src/pricing")
    assert parse_scope("acme/order-service/src/pricing").label == "acme/order-service/src/pricing"
    for bad in ("", "acme//x", "/x", "acme/*", "*/x", "acme/\x1b[31m"):
        with pytest.raises(ScopeSyntaxError):
            parse_scope(bad)


@pytest.mark.parametrize("memory, scopes, inside", [
    (("acme", "order-service", None), ["acme/order-service"], True),
    (("acme", "order-service", "src/pricing"), ["acme/order-service"], True),
    (("acme", "billing-service", None), ["acme/order-service"], False),
    (("other", "order-service", None), ["acme/order-service"], False),
    (("acme", None, None), ["acme/order-service"], False),  # org-wide: tenant-level scopes only
    (("acme", None, None), ["acme"], True),
    (("acme", None, None), ["*"], True),
    (("acme", "order-service", "src/pricing/rules"), ["acme/order-service/src/pricing"], True),
    (("acme", "order-service", "src/pricingx"), ["acme/order-service/src/pricing"], False),
    (("acme", "order-service", None), ["acme/order-service/src/pricing"], False),
    (("acme", "billing-service", None), ["acme/order-service", "acme/billing-service"], True),
    (("acme", "billing-service", None), [], False),
    (("acme", "billing-service", None), None, True),
])
def test_in_scopes(memory, scopes, inside):
    assert in_scopes(*memory, scopes) is inside


def test_covers_repository():
    assert covers_repository(["acme/order-service/src"], "acme", "order-service")
    assert covers_repository(["acme"], "acme", "order-service")
    assert not covers_repository(["acme/billing-service"], "acme", "order-service")
    assert not covers_repository(["other"], "acme", "order-service")
    assert covers_repository(None, "acme", "order-service")


# ---- the same rule on every decision path (service level, SQLite and PostgreSQL) ----------------

from tests.test_resolve import store  # noqa: E402,F401  (the duplicate / conflict / compaction store)

ANN_OTHER = Actor("human", "ann", "reviewer", ("acme/billing-service",))
ANN_OS = Actor("human", "ann", "reviewer", ("acme/os/src/validation",))


def _snapshot(engine) -> list[tuple[str, str, int]]:
    with Session(engine) as s:
        return [(m.memory_id, m.state, m.version) for m in s.exec(select(Memory).order_by(Memory.memory_id))]


@pytest.mark.parametrize("call", [
    lambda svc: svc.merge("dup-1", ANN_OTHER),
    lambda svc: svc.not_duplicates("dup-1", ANN_OTHER),
    lambda svc: svc.resolve_conflict("memconf_1", "keep_a", ANN_OTHER),
    lambda svc: svc.accept_compaction("memcomp_1", ANN_OTHER),
    lambda svc: svc.reject_compaction("memcomp_1", ANN_OTHER),
], ids=["merge", "not-duplicates", "resolve", "compaction-accept", "compaction-reject"])
def test_every_proposal_decision_outside_the_scopes_is_refused_and_audited(store, call):
    from memtui.domain.invariants import ScopeRefused
    from memtui.review.resolve import ResolveService

    before = _snapshot(store)
    with pytest.raises(ScopeRefused) as err:
        call(ResolveService(store))
    assert "outside the scopes of 'ann' (acme/billing-service)" in str(err.value)
    assert _snapshot(store) == before
    audits = _audits(store, "scope_refused")
    assert len(audits) == 1 and audits[0][0] == "ann" and audits[0][1].startswith("mem_")
    assert audits[0][2] == {"scopes": ["acme/billing-service"], "memoryScope": "acme/os/src/validation"}


def test_proposal_decisions_inside_the_scopes_go_through(store):
    from memtui.review.resolve import ResolveService
    from memtui.review.service import ReviewService

    r = ResolveService(store).merge("dup-1", ANN_OS)
    assert r.changes == {"mem_b": ("candidate", "superseded")}
    out = ReviewService(store).undo(ReviewService(store).history("mem_b")[-1].event_id, ANN_OS)
    assert (out.from_state, out.to_state) == ("superseded", "candidate")
    assert _audits(store, "scope_refused") == []


def test_prune_by_a_maintainer_archives_only_inside_its_scopes(engine, tmp_path):
    """A scoped maintainer's --apply archives its own repository's memory; the other's stays, the
    refusal is named and audited (the rest of the plan commits)."""
    from memtui.clock import utcnow
    from memtui.governance.reviewers import add_reviewer, resolve_actor
    from memtui.importers.native import import_files
    from memtui.maintenance.prune import apply_pruning_plan, load_pruning_policy, pruning_plan

    f = tmp_path / "p.yaml"
    f.write_text("""
memories:
  - memoryId: mem_old_a
    type: code_fact
    statement: "Old fact A about FooService."
    scope: {tenantId: acme, repositoryId: a}
    evidence: [{type: symbol, symbol: FooService.run}]
    state: expired
  - memoryId: mem_old_b
    type: code_fact
    statement: "Old fact B about BarService."
    scope: {tenantId: acme, repositoryId: b}
    evidence: [{type: symbol, symbol: BarService.run}]
    state: expired
""")
    import_files(engine, [f], Actor("human", "loader"))
    add_reviewer(engine, "max", "maintainer", ["acme/a"], "root")
    plan = pruning_plan(engine, load_pruning_policy(None), utcnow())
    assert {i.memory_id for i in plan.archive} == {"mem_old_a", "mem_old_b"}  # the design's policy: expired
    result = apply_pruning_plan(engine, plan, resolve_actor(engine, "max", None), None, now=utcnow())
    assert _state(engine, "mem_old_a") == "archived"
    assert _state(engine, "mem_old_b") == "expired"
    assert any("mem_old_b" in str(c.get("refused", "")) for c in result.changes)
    assert [(a, s) for a, s, _ in _audits(engine, "scope_refused")] == [("max", "mem_old_b")]


def test_proposal_listings_show_only_memory_inside_the_scopes(store):
    from memtui.governance.reviewers import add_reviewer

    url = store.url.render_as_string(hide_password=False)
    add_reviewer(store, "lee", "lead", [], "root")
    add_reviewer(store, "ann", "reviewer", ["acme/billing-service"], "lee")
    add_reviewer(store, "eve", "reviewer", ["acme/os"], "lee")
    for cmd, key in (("duplicates", "clusterId"), ("conflicts", "conflictId"), ("compactions", "proposalId")):
        ann = memtui(url, cmd, "--json", "--actor", "ann")
        eve = memtui(url, cmd, "--json", "--actor", "eve")
        assert ann.exit_code == 0 and eve.exit_code == 0, (ann.output, eve.output)
        assert json.loads(ann.stdout) == [], cmd
        assert [r[key] for r in json.loads(eve.stdout)] == [{"duplicates": "dup-1", "conflicts": "memconf_1",
                                                             "compactions": "memcomp_1"}[cmd]]
    ann = memtui(url, "quality", "--json", "--actor", "ann")
    assert json.loads(ann.stdout) == []
    assert len(json.loads(memtui(url, "quality", "--json", "--actor", "eve").stdout)) == 5


def test_claims_only_reach_memory_inside_the_reviewers_scopes(governed):
    url, _engine = governed
    res = memtui(url, "claim", "--n", "10", "--actor", "ann")
    assert res.exit_code == 0, res.output
    assert res.stdout.split() == ["mem_adr", "mem_conv"]  # both candidates of acme/order-service; not mem_bill
    res = memtui(url, "claim", "--n", "10", "--actor", "lee")
    assert res.stdout.split() == ["mem_bill"]


def test_secret_incidents_are_listed_only_inside_the_readers_scopes(governed, tmp_path):
    url, _engine = governed
    leak = tmp_path / "leak.yaml"
    leak.write_text(BILLING_YAML.replace("mem_bill_new", "mem_bill_key").replace(
        "Credit notes reference the invoice they correct.", "Billing signs with key AKIAIOSFODNN7EXAMPLE."),
        encoding="utf-8")
    res = memtui(url, "import", str(leak), "--actor", "lee")
    assert res.exit_code == 0, res.output
    lee = json.loads(memtui(url, "health", "--json", "--actor", "lee").stdout)
    ann = json.loads(memtui(url, "health", "--json", "--actor", "ann").stdout)
    assert [i["memoryId"] for i in lee["secretIncidents"]] == ["mem_bill_key"]
    assert ann["secretIncidents"] == []
    assert "mem_bill_key" not in memtui(url, "health", "--actor", "ann").stdout
