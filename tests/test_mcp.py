"""``memtui mcp`` (issue 12 item 1): a real MCP client session (the SDK's ``stdio_client`` and
``ClientSession``) against a real ``memtui mcp`` subprocess on the demo store.

What the demo store holds after ``memtui demo --no-tui`` at the fixed clock, worked out from
``sample_data/memories.yaml`` and the sample history (README "Quick start"): the active memories
not in an open conflict are listed in :data:`ELIGIBLE`; of those, the six about order validation
are relevant to "add a validation rule" (:data:`VALIDATION_PACK`). The rest of the store is not
eligible: invalidated (the legacy RuleEngine, its evidence deleted), needs_review (rule registry
convention, touched span), conflicted (ADR-012 and the direct-configuration claim), candidates,
rejected, superseded, expired, and the blocked staging key.
"""

from __future__ import annotations

import shutil
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import sqlalchemy as sa
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.types import Implementation
from typer.testing import CliRunner

from memtui.cli import app as memtui_app

FIXED_NOW = "2026-11-30T12:00:00Z"  # the suite's clock (tests/conftest.py)
MEMTUI = str(Path(sys.executable).parent / "memtui")
SCOPE = "repository:order-service"
VALIDATION = "src/main/java/com/acme/order/validation"
#: Active, fresh, not conflicted, in order-service (or org-wide): what recall may ever return.
ELIGIBLE = {
    "mem_build_command", "mem_discount_rounding", "mem_order_total_limit", "mem_order_validator_entrypoint",
    "mem_register_rejects_duplicates", "mem_registry_stores_rules", "mem_rule_ids_dotted",
    "mem_validator_calls_registry",
}
#: The eligible memories about order validation: the pack for "add a validation rule" with room for all.
VALIDATION_PACK = {
    "mem_order_total_limit", "mem_order_validator_entrypoint", "mem_register_rejects_duplicates",
    "mem_registry_stores_rules", "mem_rule_ids_dotted", "mem_validator_calls_registry",
}
NEVER = {
    "mem_old_rule_engine": "invalidated", "mem_legacy_rule_change_runbook": "invalidated",
    "mem_rule_registry_convention": "needs_review", "mem_validation_tests": "needs_review",
    "mem_adr_012_rule_registry": "active",  # in an open conflict
    "mem_direct_validator_rules": "needs_review", "mem_staging_payment_key": "blocked",
    "mem_validator_caches_results": "rejected", "mem_legacy_rules_in_engine": "superseded",
    "mem_new_rules_via_registry": "candidate",
}
BASE_TOOLS = {"recall", "get_memory", "report_usage", "report_harm"}


def _build_demo(url: str, workdir: Path) -> None:
    out = CliRunner().invoke(memtui_app, ["demo", "--no-tui", "--workdir", str(workdir), "--db", url,
                                          "--actor", "loader", "--role", "lead"])
    assert out.exit_code == 0, out.output


@pytest.fixture(scope="module")
def demo_file(tmp_path_factory):
    """The demo store as a SQLite file, built once at the fixed clock; each test copies it."""
    root = tmp_path_factory.mktemp("mcp-demo")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMTUI_NOW", FIXED_NOW)
        db = root / "demo.db"
        _build_demo(str(db), root / "work")
        from memtui.store.engine import open_store

        eng = open_store(str(db))
        with eng.begin() as conn:
            conn.execute(sa.text("PRAGMA wal_checkpoint(TRUNCATE)"))
        eng.dispose()
    return db


@pytest.fixture
def demo_db(demo_file, tmp_path) -> str:
    db = tmp_path / "store.db"
    shutil.copy(demo_file, db)
    return str(db)


@asynccontextmanager
async def mcp_session(db: str, *args: str, client: str = "pytest-agent"):
    """A client session with ``memtui mcp --db DB ARGS`` running as a subprocess."""
    params = StdioServerParameters(command=MEMTUI, args=["mcp", "--db", db, *args],
                                   env={"MEMTUI_NOW": FIXED_NOW})
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, client_info=Implementation(name=client, version="1")) as session:
            await session.initialize()
            yield session


def _rows(db: str, sql: str, **params):
    from memtui.store.engine import open_store

    eng = open_store(db)
    try:
        with eng.connect() as conn:
            return conn.execute(sa.text(sql), params).all()
    finally:
        eng.dispose()


def _state(db: str, memory_id: str) -> str | None:
    rows = _rows(db, "SELECT state FROM memory WHERE memory_id = :m", m=memory_id)
    return rows[0][0] if rows else None


def _text(result) -> str:
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def _cli(args: list[str]):
    return CliRunner().invoke(memtui_app, args)


# ---- the tool list ------------------------------------------------------------------------------

async def test_tools_listed_and_propose_only_when_allowed(demo_db):
    async with mcp_session(demo_db) as s:
        tools = {t.name for t in (await s.list_tools()).tools}
        templates = {t.uri_template for t in (await s.list_resource_templates()).resource_templates}
        refused = await s.call_tool("propose_memory", {"statement": "x", "type": "code_fact", "scope": "acme",
                                                       "evidence": ["a.py"]})
    assert tools == BASE_TOOLS
    assert "memtui://memory/{memory_id}" in templates
    assert any(t.startswith("memtui://recall/{repository}") for t in templates)
    assert refused.is_error  # not offered, and not callable either
    async with mcp_session(demo_db, "--allow-propose") as s:
        tools = {t.name for t in (await s.list_tools()).tools}
    assert tools == BASE_TOOLS | {"propose_memory"}


# ---- recall -------------------------------------------------------------------------------------

async def _recall_checks(db: str) -> None:
    async with mcp_session(db, "--actor", "wf-agent-7") as s:
        result = await s.call_tool("recall", {"task": "add a validation rule", "scope": SCOPE, "limit": 20})
    assert not result.is_error, _text(result)
    pack = result.structured_content
    got = {m["memoryId"] for m in pack["memories"]}
    assert got == VALIDATION_PACK
    assert got <= ELIGIBLE and not (got & set(NEVER))
    for mid, state in NEVER.items():  # the store still holds them in those states: they were left out
        assert _state(db, mid) == state, mid
    excluded = {x["memoryId"]: x["reason"] for x in pack["excluded"]}
    assert excluded["mem_old_rule_engine"] == "stale"
    assert excluded["mem_rule_registry_convention"] == "conflicted"
    assert excluded["mem_adr_012_rule_registry"] == "conflicted"
    assert excluded["mem_validation_tests"] == "state_needs_review"
    text = _text(result)
    assert text.startswith("Relevant project memory") and "Left out" in text
    assert "stale memories about RuleEngine" in text
    assert "mem_old_rule_engine" not in text.split("Left out")[0]
    # one usage event per memory returned, with the agent as actor
    rows = _rows(db, "SELECT memory_id, detail FROM memory_usage_events WHERE context_pack_id = :p",
                 p=pack["contextPackId"])
    assert {r[0] for r in rows} == VALIDATION_PACK
    import json

    assert {(json.loads(r[1]) if isinstance(r[1], str) else r[1])["actor"] for r in rows} == {"agent:wf-agent-7"}


async def test_recall_returns_eligible_memories_only_with_exclusions(demo_db):
    await _recall_checks(demo_db)


async def test_recall_default_limit_scope_and_the_clients_name_as_actor(demo_db):
    """No --scope, no scope argument: the demo store's only repository; the pack is the default 5."""
    async with mcp_session(demo_db, client="claude-code-test") as s:
        result = await s.call_tool("recall", {"task": "add a validation rule"})
    ids = [m["memoryId"] for m in result.structured_content["memories"]]
    assert len(ids) == 5 and set(ids) <= VALIDATION_PACK
    assert result.structured_content["scope"]["label"] == SCOPE
    assert any(x["reason"] == "over_limit" for x in result.structured_content["excluded"])
    actors = _rows(demo_db, "SELECT detail FROM memory_usage_events WHERE context_pack_id = :p",
                   p=result.structured_content["contextPackId"])
    assert len(actors) == 5 and all("agent:claude-code-test" in str(r[0]) for r in actors)


async def test_recall_scope_outside_the_server_scope_is_refused(demo_db):
    pricing = "acme/order-service/src/main/java/com/acme/order/pricing"
    async with mcp_session(demo_db, "--scope", pricing) as s:
        outside = await s.call_tool("recall", {"task": "add a validation rule", "scope": SCOPE})
        other = await s.call_tool("recall", {"task": "x", "scope": "repository:billing"})
        default = await s.call_tool("recall", {"task": "how are discounts rounded"})
        inside = await s.call_tool("recall", {"task": "discount rounding", "scope": "repository:order-service/"
                                              "src/main/java/com/acme/order/pricing"})
        bad_limit = await s.call_tool("recall", {"task": "x", "limit": 0})
        no_task = await s.call_tool("recall", {"scope": SCOPE})
    assert outside.is_error and "scope: acme/order-service lies outside this server's scope" in _text(outside)
    assert other.is_error and "scope:" in _text(other) and "unknown repository 'billing'" in _text(other)
    assert not default.is_error
    assert {m["memoryId"] for m in default.structured_content["memories"]} == {"mem_discount_rounding"}
    assert {m["memoryId"] for m in inside.structured_content["memories"]} == {"mem_discount_rounding"}
    assert bad_limit.is_error and "limit: must be between 1 and 20" in _text(bad_limit)
    assert no_task.is_error and "task" in _text(no_task)


async def test_recall_resource_gives_the_same_pack(demo_db):
    async with mcp_session(demo_db) as s:
        read = await s.read_resource("memtui://recall/order-service?task=add%20a%20validation%20rule&limit=20")
    text = read.contents[0].text
    for mid in VALIDATION_PACK:
        assert f"Memory: {mid}" in text
    for mid in NEVER:
        assert f"Memory: {mid}" not in text


# ---- get_memory ---------------------------------------------------------------------------------

async def test_get_memory_returns_only_what_recall_could(demo_db):
    blocked_text = _rows(demo_db, "SELECT statement FROM memory WHERE memory_id = 'mem_staging_payment_key'")[0][0]
    async with mcp_session(demo_db) as s:
        ok = await s.call_tool("get_memory", {"memory_id": "mem_rule_ids_dotted"})
        answers = {mid: await s.call_tool("get_memory", {"memory_id": mid})
                   for mid in ("mem_staging_payment_key", "mem_old_rule_engine", "mem_rule_registry_convention",
                               "mem_adr_012_rule_registry", "mem_new_rules_via_registry", "no_such_memory")}
        resource = await s.read_resource("memtui://memory/mem_rule_ids_dotted")
        with pytest.raises(MCPError) as refused:
            await s.read_resource("memtui://memory/mem_staging_payment_key")
    assert not ok.is_error
    assert "Validation rule ids are stable, dotted, lowercase strings" in _text(ok)
    assert ok.structured_content["memoryId"] == "mem_rule_ids_dotted"
    for mid, answer in answers.items():
        assert answer.is_error, mid
        assert f"memory_id: {mid} is not available" in _text(answer)
    assert "authenticates with key" in blocked_text  # the stored (redacted) statement ...
    assert "authenticates" not in _text(answers["mem_staging_payment_key"])  # ... is not leaked
    assert "redacted" not in _text(answers["mem_staging_payment_key"])
    assert "Validation rule ids are stable" in resource.contents[0].text
    assert "not available" in str(refused.value)


async def test_get_memory_outside_the_server_scope_is_not_available(demo_db):
    async with mcp_session(demo_db, "--scope", "acme/order-service/src/main/java/com/acme/order/pricing") as s:
        pricing = await s.call_tool("get_memory", {"memory_id": "mem_discount_rounding"})
        validation = await s.call_tool("get_memory", {"memory_id": "mem_rule_ids_dotted"})
    assert not pricing.is_error
    assert validation.is_error and "not available" in _text(validation)


# ---- usage and harm -----------------------------------------------------------------------------

async def test_report_harm_challenges_the_memory_and_usage_names_the_agent(demo_db):
    assert _state(demo_db, "mem_rule_ids_dotted") == "active"
    async with mcp_session(demo_db, "--actor", "wf-harm") as s:
        harm = await s.call_tool("report_harm", {"memory_id": "mem_rule_ids_dotted",
                                                 "issue": "rule ids are no longer dotted"})
        used = await s.call_tool("report_usage", {"memory_id": "mem_registry_stores_rules", "outcome": "positive",
                                                  "workflow_run_id": "wf_01J"})
        again = await s.call_tool("recall", {"task": "add a validation rule", "scope": SCOPE, "limit": 20})
        bad = await s.call_tool("report_usage", {"memory_id": "mem_registry_stores_rules", "outcome": "great"})
        harm_via_usage = await s.call_tool("report_usage", {"memory_id": "mem_registry_stores_rules",
                                                            "outcome": "harm"})
        missing = await s.call_tool("report_harm", {"memory_id": "nope", "issue": "x"})
    assert not harm.is_error and "now challenged" in _text(harm)
    assert _state(demo_db, "mem_rule_ids_dotted") == "challenged"
    assert _rows(demo_db, "SELECT issue FROM memory_harm_events WHERE memory_id = 'mem_rule_ids_dotted'") == [
        ("rule ids are no longer dotted",)]
    history = _rows(demo_db, "SELECT actor_type, actor_id, to_state FROM memory_state_history "
                             "WHERE memory_id = 'mem_rule_ids_dotted' ORDER BY created_at DESC, event_id DESC")
    assert history[0] == ("agent", "wf-harm", "challenged")
    usage = _rows(demo_db, "SELECT outcome, workflow_run_id, detail FROM memory_usage_events WHERE usage_id = :u",
                  u=used.structured_content["usageId"])
    assert usage[0][0] == "positive" and usage[0][1] == "wf_01J" and "agent:wf-harm" in str(usage[0][2])
    assert "mem_rule_ids_dotted" not in {m["memoryId"] for m in again.structured_content["memories"]}
    assert bad.is_error and "outcome: must be one of positive, negative, neutral" in _text(bad)
    assert harm_via_usage.is_error and "report_harm" in _text(harm_via_usage)
    assert missing.is_error and "memory_id: nope is not available" in _text(missing)
    assert _cli(["check", "--db", demo_db]).exit_code == 0


# ---- propose_memory -----------------------------------------------------------------------------

PROPOSAL = {
    "statement": "When adding a validation rule, give it a test case in RuleRegistryTest.",
    "type": "test_convention",
    "scope": f"acme/order-service/{VALIDATION}",
    "evidence": [{"type": "file_span", "path": "src/test/java/com/acme/order/validation/RuleRegistryTest.java",
                  "lines": [28, 32]}],
}


async def _propose_checks(db: str) -> None:
    async with mcp_session(db, "--allow-propose", "--actor", "wf-propose") as s:
        new = await s.call_tool("propose_memory", PROPOSAL)
        same = await s.call_tool("propose_memory", PROPOSAL)
        paraphrase = await s.call_tool("propose_memory", {
            "statement": "Validation rules are registered through the RuleRegistry.", "type": "repo_convention",
            "scope": f"acme/order-service/{VALIDATION}",
            "evidence": [f"{VALIDATION}/RuleRegistry.java"]})
        contradiction = await s.call_tool("propose_memory", {
            "statement": "OrderValidator does not call RuleRegistry.", "type": "code_fact",
            "scope": f"acme/order-service/{VALIDATION}", "evidence": [f"{VALIDATION}/OrderValidator.java"]})
        secret = await s.call_tool("propose_memory", {
            "statement": "The payment sandbox is reached with access key AKIAIOSFODNN7EXAMPLF.",
            "type": "code_fact", "scope": "repository:order-service",
            "evidence": ["src/main/java/com/acme/order/client/PaymentClient.java"]})
    assert not new.is_error, _text(new)
    mid = new.structured_content["memoryId"]
    assert new.structured_content["state"] == "candidate" and new.structured_content["created"] is True
    row = _rows(db, "SELECT state, origin, proposer_type, proposer_id, review_state, repository_id, module_path "
                    "FROM memory WHERE memory_id = :m", m=mid)[0]
    assert tuple(row) == ("candidate", "agent", "agent", "wf-propose", "pending", "order-service", VALIDATION)
    assert _rows(db, "SELECT count(*) FROM evidence WHERE memory_id = :m", m=mid)[0][0] == 1
    shown = _cli(["show", mid, "--json", "--db", db])
    assert shown.exit_code == 0 and '"state": "candidate"' in shown.output
    from memtui.review.service import ReviewService
    from memtui.store.engine import open_store

    eng = open_store(db)
    try:
        queue = {item.memory_id: item.state for item in ReviewService(eng).queue_page(limit=1000)}
    finally:
        eng.dispose()
    assert queue.get(mid) == "candidate"  # waits in the review queue

    assert same.structured_content["memoryId"] == mid and same.structured_content["created"] is False
    assert _rows(db, "SELECT count(*) FROM memory WHERE memory_id = :m", m=mid)[0][0] == 1

    assert not paraphrase.is_error
    dups = paraphrase.structured_content["duplicateOf"]
    assert "mem_rule_registry_convention" in dups and "mem_rules_registered_via_registry" in dups
    assert "near-duplicate of mem_rule_registry_convention" in _text(paraphrase)

    assert contradiction.structured_content["conflictsWith"] == ["mem_validator_calls_registry"]
    assert contradiction.structured_content["duplicateOf"] == []
    assert "conflicts with mem_validator_calls_registry (active" in _text(contradiction)

    assert not secret.is_error
    sid = secret.structured_content["memoryId"]
    assert secret.structured_content["state"] == "blocked" and secret.structured_content["secretTypes"]
    stored = _rows(db, "SELECT state, statement FROM memory WHERE memory_id = :m", m=sid)[0]
    assert stored[0] == "blocked" and "AKIAIOSFODNN7EXAMPLF" not in stored[1] and "<redacted" in stored[1]
    assert "AKIAIOSFODNN7EXAMPLF" not in _text(secret)
    assert _rows(db, "SELECT count(*) FROM secret_finding WHERE memory_id = :m", m=sid)[0][0] >= 1
    assert _cli(["check", "--db", db]).exit_code == 0


async def test_propose_creates_a_candidate_duplicates_and_secrets(demo_db):
    await _propose_checks(demo_db)


async def test_propose_refusals_name_the_argument(demo_db):
    before = _rows(demo_db, "SELECT count(*) FROM memory")[0][0]
    file_span = [{"type": "file_span", "path": f"{VALIDATION}/RuleRegistry.java"}]
    cases = {
        "scope: broader than its evidence (invariant 2)": {
            "statement": "Every acme service registers rules centrally.", "type": "repo_convention",
            "scope": "acme", "evidence": file_span},
        "scope: unknown repository 'billing'": {
            "statement": "Billing uses RuleRegistry.", "type": "code_fact", "scope": "acme/billing",
            "evidence": file_span},
        "scope: repository 'order-service' belongs to tenant acme": {
            "statement": "x uses y.", "type": "code_fact", "scope": "globex/order-service", "evidence": file_span},
        "evidence: a proposal needs at least one piece of evidence": {
            "statement": "x uses y.", "type": "code_fact", "scope": SCOPE, "evidence": []},
        "evidence[0].type: an agent cannot supply replay evidence": {
            "statement": "x uses y.", "type": "code_fact", "scope": SCOPE,
            "evidence": [{"type": "replay", "ref": "probe:x"}]},
        "evidence[1]: Value error, a file_span needs a path": {
            "statement": "x uses y.", "type": "code_fact", "scope": SCOPE,
            "evidence": file_span + [{"type": "file_span"}]},
        "evidence[0].status: evidence status is set by revalidation": {
            "statement": "x uses y.", "type": "code_fact", "scope": SCOPE,
            "evidence": [{"type": "file_span", "path": "a.java", "status": "valid"}]},
        "failure_class: 'bad_luck' is not one of": {
            "statement": "x uses y.", "type": "failure_lesson", "scope": SCOPE, "evidence": file_span,
            "failure_class": "bad_luck"},
        "statement: is empty": {"statement": "  ", "type": "code_fact", "scope": SCOPE, "evidence": file_span},
    }
    async with mcp_session(demo_db, "--allow-propose") as s:
        answers = {expected: await s.call_tool("propose_memory", args) for expected, args in cases.items()}
    for expected, answer in answers.items():
        assert answer.is_error, expected
        assert expected in _text(answer), (expected, _text(answer))
    assert _rows(demo_db, "SELECT count(*) FROM memory")[0][0] == before  # nothing half-written


def test_mcp_command_refuses_a_bad_scope_before_serving(demo_db):
    unknown = _cli(["mcp", "--db", demo_db, "--scope", "acme/billing"])
    malformed = _cli(["mcp", "--db", demo_db, "--scope", "acme//x"])
    assert unknown.exit_code == 2 and "--scope: unknown repository 'billing'" in unknown.output
    assert malformed.exit_code == 2 and "--scope:" in malformed.output


async def test_propose_outside_the_server_scope_is_refused(demo_db):
    async with mcp_session(demo_db, "--allow-propose", "--scope", f"acme/order-service/{VALIDATION}") as s:
        outside = await s.call_tool("propose_memory", {
            "statement": "DiscountCalculator never rounds up.", "type": "code_fact",
            "scope": "acme/order-service/src/main/java/com/acme/order/pricing",
            "evidence": ["src/main/java/com/acme/order/pricing/DiscountCalculator.java"]})
    assert outside.is_error and "lies outside this server's scope" in _text(outside)


async def test_environment_blocker_is_recorded_and_never_auto_promoted(demo_db):
    async with mcp_session(demo_db, "--allow-propose", "--actor", "wf-e2e") as s:
        out = await s.call_tool("propose_memory", {
            "statement": "Before retrying an e2e run, install the browser binaries on the runner.",
            "type": "failure_lesson", "scope": SCOPE, "evidence": [{"type": "ref", "ref": "ci-run-42"}],
            "failure_class": "environment_blocker", "failure_type": "missing_dependency",
            "source_action_ids": ["act_1", "act_2"]})
    assert not out.is_error, _text(out)
    mid = out.structured_content["memoryId"]
    assert "environment blocker is never promoted automatically" in _text(out)
    row = _rows(demo_db, "SELECT state, failure_class, failure_type, source_action_ids FROM memory "
                         "WHERE memory_id = :m", m=mid)[0]
    assert row[0] == "candidate" and row[1] == "environment_blocker" and row[2] == "missing_dependency"
    assert "act_2" in str(row[3])
    replay = _cli(["replay", "record", mid, "--probe", "e2e-smoke", "--passed", "--db", demo_db])
    assert replay.exit_code == 0, replay.output
    assert _state(demo_db, mid) == "candidate"  # a passed replay does not promote an environment blocker


# ---- PostgreSQL ---------------------------------------------------------------------------------

@pytest.mark.postgres
@pytest.mark.parametrize("store_url", ["postgres"], indirect=True)
async def test_recall_and_propose_on_postgresql(store_url, tmp_path):
    _build_demo(store_url, tmp_path / "work")
    await _recall_checks(store_url)
    await _propose_checks(store_url)


# ---- untrusted text -----------------------------------------------------------------------------

async def test_untrusted_text_reaches_the_agent_as_plain_text(demo_db):
    hostile = "RuleRegistry holds every registered \x1b[31mValidationRule\x1b[0m in a [bold]LinkedHashMap[/bold]\x07."
    edited = _cli(["edit", "mem_registry_stores_rules", "--text", hostile, "--db", demo_db, "--actor", "loader"])
    assert edited.exit_code == 0, edited.output
    assert _state(demo_db, "mem_registry_stores_rules") == "active"
    async with mcp_session(demo_db) as s:
        got = await s.call_tool("get_memory", {"memory_id": "mem_registry_stores_rules"})
        pack = await s.call_tool("recall", {"task": "add a validation rule", "limit": 20})
    plain = "RuleRegistry holds every registered ValidationRule in a [bold]LinkedHashMap[/bold]\\x07."
    for answer in (got, pack):
        text = _text(answer)
        assert "\x1b" not in text and "\x07" not in text
        assert plain in text  # markup left as literal text, the escape removed, the bell shown as \x07
    assert got.structured_content["statement"] == plain
    assert plain in [m["statement"] for m in pack.structured_content["memories"]]


async def test_an_agent_never_sees_a_private_repository(demo_db):
    made = _cli(["scope", "set-visibility", "order-service", "private", "--db", demo_db, "--actor", "loader"])
    assert made.exit_code == 0, made.output
    async with mcp_session(demo_db, "--scope", "acme/order-service") as s:
        pack = await s.call_tool("recall", {"task": "add a validation rule", "limit": 20})
        got = await s.call_tool("get_memory", {"memory_id": "mem_rule_ids_dotted"})
        used = await s.call_tool("report_usage", {"memory_id": "mem_rule_ids_dotted", "outcome": "positive"})
    assert not pack.is_error and pack.structured_content["memories"] == []
    assert all(x["memoryId"] is None or not x["memoryId"].startswith("mem_rule") for x in
               pack.structured_content["excluded"])
    assert got.is_error and "not available" in _text(got)
    assert used.is_error and "not available" in _text(used)
