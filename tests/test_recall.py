"""Recall (issue 5): small eligible packs, exclusions with reasons, usage events — on real stores."""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
import yaml
from sqlmodel import Session, select
from typer.testing import CliRunner

from memtui.cli import app as memtui_app
from memtui.domain.invariants import Actor
from memtui.importers.native import import_files
from memtui.maintenance.runner import maintain
from memtui.recall import (
    RecallError,
    format_pack_markdown,
    pack_to_json,
    parse_scope,
    recall,
    terms,
)
from memtui.sample import set_up_demo
from memtui.store.models import Evidence, Memory, UsageEvent
from tests.gitrepo import checkout_for

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
SHA = "0123456789abcdef0123456789abcdef01234567"
STALE = ("changed", "deleted", "unverifiable")
LOADER = Actor("human", "loader", "lead")


def _load(engine, tmp_path, records: list[dict], name: str = "memories.yaml", **kw):
    """Import ``records`` as a store a review and maintenance left them. Issue 21 item 3: an active
    record stays active only when its evidence resolves in a checkout, and import re-establishes the
    evidence status; so the files are committed in a checkout first, and the statuses the records
    give (what maintenance found later) are set after the import."""
    root = tmp_path / f"checkout-{Path(name).stem}"
    checkout_for(records, root)
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"memories": records}, sort_keys=False))
    report = import_files(engine, [path], LOADER, repo_dir=root, **kw)
    table = Evidence.__table__
    with engine.begin() as conn:
        for r in records:
            for i, e in enumerate(r.get("evidence", [])):
                if e.get("status", "unchecked") != "unchecked":
                    conn.execute(sa.update(table).where(table.c.memory_id == r["memoryId"], table.c.ordinal == i)
                                 .values(status=e["status"]))
    return report


def _mem(mid: str, statement: str, *, repo: str = "order-service", module: str | None = None,
         state: str = "active", path: str = "src/Main.java", status: str = "valid", **extra) -> dict:
    rec = {"memoryId": mid, "type": extra.pop("type", "code_fact"), "statement": statement,
           "scope": {"tenantId": "acme", "repositoryId": repo, **({"modulePath": module} if module else {}),
                     **extra.pop("scope", {})},
           "evidence": [{"type": "file_span", "path": path, "commitSha": SHA, "lines": [1, 5], "status": status}],
           "state": state, "confidence": extra.pop("confidence", 0.8),
           "reviewState": extra.pop("reviewState", "approved")}
    rec.update(extra)
    return rec


def _set(engine, table, where, **values):
    with engine.begin() as conn:
        conn.execute(sa.update(table).where(where).values(**values))


# ---- a small hand-made store ------------------------------------------------------------------

@pytest.fixture
def small(engine, tmp_path):
    _load(engine, tmp_path, [
        _mem("mem_registry", "Validation rules are registered through RuleRegistry.",
             module="src/validation", path="src/validation/RuleRegistry.java",
             scope={"appliesTo": ["validation"], "doesNotApplyTo": ["pricing"]}),
        _mem("mem_validator", "OrderValidator.validate runs every validation rule.", module="src/validation",
             path="src/validation/OrderValidator.java"),
        _mem("mem_engine", "The legacy RuleEngine holds the batch validation rules.", module="src/legacy",
             path="src/legacy/RuleEngine.java"),
        _mem("mem_pricing_rules", "Pricing rules round discounts with HALF_EVEN.", module="src/pricing",
             path="src/pricing/DiscountCalculator.java"),
        _mem("mem_conflicting", "Validation rules are configured directly in OrderValidator.",
             module="src/validation", path="src/validation/OrderValidator.java"),
        _mem("mem_candidate_rule", "New validation rules should get a RuleRegistryTest case.", state="candidate",
             reviewState="pending", module="src/validation", path="src/validation/RuleRegistryTest.java"),
        _mem("mem_unrelated", "The build needs Java 17 and Maven 3.9.", path="pom.xml"),
        _mem("mem_other_repo", "Validation rules live in the billing RuleRegistry.", repo="billing-service",
             path="src/RuleRegistry.java"),
        _mem("mem_secret", "Validation rules staging key AKIAIOSFODNN7EXAMPLE.", state="blocked",
             module="src/validation", path="src/validation/Keys.java"),
    ])
    # what maintenance would have found: the RuleEngine file changed, a conflict opened
    _set(engine, Evidence.__table__, Evidence.__table__.c.memory_id == "mem_engine", status="changed")
    _set(engine, Memory.__table__, Memory.__table__.c.memory_id == "mem_conflicting", conflict_state="open")
    return engine


def test_pack_holds_only_eligible_relevant_memories_ranked(small):
    pack = recall(small, "add a validation rule", "repository:order-service", record=False)
    ids = [m.memory_id for m in pack.memories]
    assert ids[:2] == ["mem_registry", "mem_validator"] or set(ids) >= {"mem_registry", "mem_validator"}
    assert "mem_unrelated" not in ids  # eligible but not relevant: a small pack, not the whole memory
    assert "mem_other_repo" not in ids and "mem_other_repo" not in {x.memory_id for x in pack.excluded}
    assert [m.relevance for m in pack.memories] == sorted((m.relevance for m in pack.memories), reverse=True)
    for forbidden in ("mem_engine", "mem_conflicting", "mem_candidate_rule", "mem_secret"):
        assert forbidden not in ids
    reasons = {x.memory_id: x.reason for x in pack.excluded}
    assert reasons["mem_engine"] == "stale"
    assert reasons["mem_conflicting"] == "conflicted"
    assert reasons["mem_candidate_rule"] == "state_candidate"
    assert reasons["mem_secret"] == "blocked"
    assert "1 stale memory about RuleEngine was excluded" in pack.summary
    assert any(s.startswith("1 conflicted memory about OrderValidator") for s in pack.summary)
    assert "1 blocked memory was excluded" in pack.summary


def test_module_scope_excludes_other_modules_with_reason(small):
    pack = recall(small, "validation rules and pricing rules", "repository:order-service/src/validation",
                  record=False)
    ids = {m.memory_id for m in pack.memories}
    assert "mem_registry" in ids and "mem_pricing_rules" not in ids
    excluded = {x.memory_id: x for x in pack.excluded}
    assert excluded["mem_pricing_rules"].reason == "out_of_scope"
    assert any("out-of-scope" in s for s in pack.summary)
    assert all(m.module_path in (None, "src/validation") for m in pack.memories)


def test_shared_identifier_makes_a_memory_relevant(small):
    pack = recall(small, "delete RuleEngine", "repository:order-service", record=False)
    assert {x.memory_id for x in pack.excluded} >= {"mem_engine"}
    assert "1 stale memory about RuleEngine was excluded" in pack.summary


def test_limit_leaves_eligible_memories_out_with_a_line(small):
    pack = recall(small, "validation rule RuleRegistry OrderValidator", "repository:order-service", limit=1,
                  record=False)
    assert len(pack.memories) == 1
    over = [x for x in pack.excluded if x.reason == "over_limit"]
    assert over and all(x.state == "active" for x in over)
    assert any("left out (limit 1)" in s for s in pack.summary)


def test_blocked_memory_text_never_appears(small):
    pack = recall(small, "validation rules staging key", "repository:order-service", record=False)
    text = json.dumps(pack_to_json(pack)) + format_pack_markdown(pack)
    assert "AKIAIOSFODNN7EXAMPLE" not in text
    assert "mem_secret" in {x.memory_id for x in pack.excluded}


def test_usage_events_written_once_per_included_memory(small):
    before = {m.memory_id: m.version for m in Session(small).exec(select(Memory))}
    pack = recall(small, "add a validation rule", "repository:order-service", actor=Actor("agent", "wf_1"))
    assert pack.memories and len(pack.usage_ids) == len(pack.memories)
    with Session(small) as s:
        events = list(s.exec(select(UsageEvent).order_by(UsageEvent.usage_id)))
        assert {e.memory_id for e in events} == {m.memory_id for m in pack.memories}
        assert {(e.usage_type, e.outcome, e.context_pack_id) for e in events} == {
            ("context_pack", "neutral", pack.context_pack_id)}
        assert sorted(e.detail["rank"] for e in events) == list(range(1, len(pack.memories) + 1))
        rows = {m.memory_id: m for m in s.exec(select(Memory))}
    for m in pack.memories:
        assert rows[m.memory_id].last_used_at == NOW
        assert rows[m.memory_id].version == before[m.memory_id]  # a reviewer's open decision stays valid
    assert recall(small, "add a validation rule", "repository:order-service", record=False).usage_ids == ()
    with Session(small) as s:
        assert len(s.exec(select(UsageEvent)).all()) == len(events)


def test_output_is_deterministic_and_formatted(small):
    a = recall(small, "add a validation rule", "repository:order-service", record=False)
    b = recall(small, "add a validation rule", "repository:order-service", record=False)
    assert pack_to_json(a) == pack_to_json(b)
    md = format_pack_markdown(a)
    assert md.startswith("Relevant project memory\n- Validation rules are registered through RuleRegistry.")
    assert "  - Applies to: validation" in md and "  - Does not apply to: pricing" in md
    assert "  - Verification: review approved" in md and "evidence 1 valid" in md
    assert re.search(r"`src/validation/RuleRegistry\.java:1-5@[0-9a-f]{7}`", md)  # the checkout's commit
    assert "Left out\n- 1 blocked memory was excluded.\n- 1 conflicted memory about OrderValidator" in md
    data = pack_to_json(a)
    first = data["memories"][0]
    assert set(first) >= {"memoryId", "statement", "scope", "appliesTo", "doesNotApplyTo", "verification", "evidence"}
    assert first["verification"]["evidenceStatus"] == {"valid": 1}
    assert data["excluded"][0]["reason"] and data["excludedSummary"]


def test_scope_parsing_and_errors(small):
    assert parse_scope("repository:order-service") == parse_scope("repository:order-service/")
    s = parse_scope("repository:acme/order-service/src/validation", {"acme/order-service"})
    assert (s.repository_id, s.module_path) == ("acme/order-service", "src/validation")
    s = parse_scope("repository:order-service/src/validation")
    assert (s.repository_id, s.module_path) == ("order-service", "src/validation")
    for bad in ("order-service", "repo:order-service", "repository:", ""):
        with pytest.raises(RecallError):
            parse_scope(bad)
    with pytest.raises(RecallError, match="unknown repository"):
        recall(small, "x", "repository:nope")
    with pytest.raises(RecallError, match="limit"):
        recall(small, "x", "repository:order-service", limit=0)


def test_terms_meet_across_word_forms():
    assert set(terms("add a validation rule")) == {"add", "valid", "rule"}
    # Snowball (memtui.similarity.text.stem): registry -> registri, validates -> valid
    assert {"ruleregistri", "rule", "registri", "valid"} <= set(terms("Validates rules via RuleRegistry"))


# ---- property: recall never returns an ineligible memory ----------------------------------------

STATES = ("candidate", "approved", "active", "needs_review", "challenged", "invalidated", "rejected",
          "superseded", "expired", "deprecated", "archived", "blocked")
WORDS = ("validation", "rule", "RuleRegistry", "OrderValidator", "pricing", "discount", "payment", "retry",
         "RuleEngine", "order", "total", "limit", "tests", "JUnit", "build")
MODULES = (None, "src/a", "src/a/b", "src/b", "src/ab")


def _random_store(engine, tmp_path, rnd: random.Random, trial: int) -> tuple[str, str]:
    repo, tenant = f"repo-{trial}", f"tenant-{trial}"
    records = []
    for i in range(rnd.randint(3, 12)):
        state = "active" if rnd.random() < 0.6 else rnd.choice(STATES)
        statuses = [rnd.choice(("valid",) * 12 + ("unchecked", "changed", "deleted", "unverifiable"))
                    for _ in range(rnd.randint(1, 2))]
        if state in ("approved", "active") and all(s == "deleted" for s in statuses):
            statuses[0] = "valid"  # the evidence invariant of the import; staleness comes below
        org_wide = rnd.random() < 0.1
        records.append({
            "memoryId": f"m{trial}_{i:02d}", "type": rnd.choice(("code_fact", "repo_convention")),
            "statement": " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(3, 7))) + ".",
            "scope": {"tenantId": tenant, **({} if org_wide else {"repositoryId": repo}),
                      **({"modulePath": m} if (m := rnd.choice(MODULES)) else {})},
            "evidence": [{"type": "human" if org_wide else "file_span", **({} if org_wide else {"path": f"f{j}.java"}),
                          **({"ref": "lead"} if org_wide else {}), "status": s} for j, s in enumerate(statuses)],
            "state": state, "confidence": round(rnd.uniform(0.3, 1.0), 2),
            "reviewState": "approved", "conflictState": rnd.choice(("none", "none", "resolved")),
        })
    _load(engine, tmp_path, records, name=f"store{trial}.yaml", skip_invalid=True)
    ids = [r["memoryId"] for r in records]
    conflicted = rnd.sample(ids, k=rnd.randint(0, len(ids) // 4))  # conflicts found later
    stale: dict[str, list[str]] = {}  # evidence that went stale later
    for mid in rnd.sample(ids, k=rnd.randint(0, len(ids) // 4)):
        stale.setdefault(rnd.choice(STALE), []).append(mid)
    with engine.begin() as conn:
        conn.execute(sa.update(Memory.__table__).where(Memory.__table__.c.memory_id.in_(conflicted))
                     .values(conflict_state="open"))
        for status, mids in sorted(stale.items()):
            conn.execute(sa.update(Evidence.__table__).where(Evidence.__table__.c.memory_id.in_(mids))
                         .values(status=status))
    scope = f"repository:{repo}" + (f"/{m}" if (m := rnd.choice(MODULES)) else "")
    return repo, scope


def _overlaps(module: str | None, wanted: str | None) -> bool:
    return wanted is None or module is None or module.startswith(wanted) or wanted.startswith(module)


def test_recall_never_returns_an_ineligible_memory(engine, tmp_path):
    seen_included, seen_reasons = 0, set()
    for trial in range(50):
        rnd = random.Random(trial)
        repo, scope = _random_store(engine, tmp_path, rnd, trial)
        wanted = scope.split("/", 1)[1] if "/" in scope else None
        task = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 4)))
        limit = rnd.randint(1, 5)
        record = trial % 3 == 0
        pack = recall(engine, task, scope, limit=limit, record=record)
        with Session(engine) as s:
            mine = select(Memory).where(Memory.memory_id.like(f"m{trial}\\_%", escape="\\"))
            rows = {m.memory_id: m for m in s.exec(mine)}
            statuses = {}
            for e in s.exec(select(Evidence).where(Evidence.memory_id.in_(list(rows)))):
                statuses.setdefault(e.memory_id, []).append(e.status)
            used = s.exec(select(UsageEvent).where(UsageEvent.memory_id.in_(list(rows)))).all()
        assert len(pack.memories) <= limit
        for m in pack.memories:
            row = rows[m.memory_id]
            assert row.state == "active", (trial, m.memory_id)
            assert row.conflict_state != "open", (trial, m.memory_id)
            assert not any(st in STALE for st in statuses.get(m.memory_id, [])), (trial, m.memory_id)
            assert row.repository_id in (repo, None), (trial, m.memory_id)
            assert _overlaps(row.module_path, wanted), (trial, m.memory_id, row.module_path, wanted)
            assert row.confidence >= 0.5
        included = {m.memory_id for m in pack.memories}
        assert not included & {x.memory_id for x in pack.excluded}
        for x in pack.excluded:
            assert x.reasons and x.reason in x.reasons
            row = rows[x.memory_id]
            if x.reason != "over_limit":
                ineligible = (row.state != "active" or row.conflict_state == "open" or row.confidence < 0.5
                              or any(st in STALE for st in statuses.get(x.memory_id, []))
                              or not _overlaps(row.module_path, wanted))
                assert ineligible, (trial, x)
        assert len(pack.summary) == len({x.reason for x in pack.excluded})
        assert len(used) == (len(pack.memories) if record else 0)
        again = recall(engine, task, scope, limit=limit, record=False)
        assert [m.memory_id for m in again.memories] == [m.memory_id for m in pack.memories]
        assert again.excluded == pack.excluded
        seen_included += len(pack.memories)
        seen_reasons |= {x.reason for x in pack.excluded}
    # the random stores really exercise both sides
    assert seen_included >= 20
    assert {"stale", "conflicted", "blocked", "out_of_scope", "low_confidence", "over_limit"} <= seen_reasons



def _straightforward(engine, task: str, scope: str, limit: int):
    """The pack's memories and exclusions as recall defined them before it was optimised (issue 12):
    every relevant memory loaded in full and weighed for eligibility and quality."""
    from memtui.domain.quality import _IDENTIFIER
    from memtui.recall import (
        ExcludedMemory, _assess, _document, _evidence_names, _load_pool, _pool, _primary_reason, _subject,
        _TextIndex, identifiers, resolve_scope, summarize,
    )

    with Session(engine) as session:
        rscope = resolve_scope(session, scope)
        pool, _key = _pool(session, rscope, None)
        members = session.exec(select(Memory).where(pool).order_by(Memory.memory_id)).all()
        index = _TextIndex.fit(tuple(_document(m) for m in members))  # fitted here, never kept
        task_ids = identifiers(task)
        relevance = dict(zip((m.memory_id for m in members), index.relevances(task)))
        wanted = {m for m, rel in relevance.items() if rel >= 0.05}
        names = defaultdict(set)  # memory -> identifiers of its document and all its evidence
        for m in members:
            names[m.memory_id] |= identifiers(_document(m))
        for e in session.exec(select(Evidence).where(Evidence.memory_id.in_(list(relevance)))):
            names[e.memory_id] |= {n.lower() for n in _evidence_names([e])}
        wanted |= {m for m, found in names.items() if task_ids & found}
        memories, evidence, usage, harm, reval = _load_pool(session, sorted(wanted))
        original = {i.lower(): i for i in _IDENTIFIER.findall(task)}
        ranked, excluded = [], []
        for m in memories:
            rel, ev = relevance[m.memory_id], evidence.get(m.memory_id, [])
            shared = sorted(task_ids & (identifiers(m.statement) | {n.lower() for n in _evidence_names(ev)}))
            if rel < 0.05 and not shared:
                continue
            subject = _subject(m, ev, [original.get(t, t) for t in shared])
            item, el = _assess(m, ev, usage, harm, reval, rscope, rel)
            if item is None:
                excluded.append(ExcludedMemory(m.memory_id, m.type, m.state, _primary_reason(el.reasons),
                                               el.reasons, rel, subject))
            else:
                ranked.append((-rel, -item.quality, m.memory_id, item, subject))
        ranked.sort(key=lambda t: t[:3])
        excluded += [ExcludedMemory(t[2], t[3].type, "active", "over_limit", ("over_limit",), -t[0], t[4])
                     for t in ranked[limit:]]
        return [t[3] for t in ranked[:limit]], excluded, summarize(excluded, limit)


#: few statements, so that many memories tie in relevance and quality (confidence) decides the order
TIED = ("Validation rule RuleRegistry.", "OrderValidator rule order total.", "pricing discount limit.",
        "RuleEngine retry payment tests.")


@pytest.mark.parametrize("trial", range(8))
def test_optimised_recall_equals_the_straightforward_computation(engine, tmp_path, trial):
    """Weighing only the eligible contenders in full changes nothing an agent gets (issue 12): the
    same included memories in the same order, the same exclusions and summary lines, on random
    stores with many ties in relevance and many over-limit memories."""
    rnd = random.Random(1000 + trial)
    repo, scope = _random_store(engine, tmp_path, rnd, trial)
    # more memories than the eligibility property uses, many with the same text: the limit cuts through ties
    _load(engine, tmp_path, [
        _mem(f"m{trial}_x{i:02d}", rnd.choice(TIED), repo=repo, module=rnd.choice(MODULES),
             confidence=rnd.choice((0.4, 0.6, 0.75, 0.95)),
             state=rnd.choice(("active",) * 4 + ("candidate", "needs_review")),
             path=f"src/{rnd.choice(WORDS)}.java", scope={"tenantId": f"tenant-{trial}"},
             reviewState=rnd.choice(("approved", "none")))
        for i in range(rnd.randint(20, 40))], name=f"extra{trial}.yaml", skip_invalid=True)
    checked = 0
    for _ in range(6):
        task = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 3)))
        limit = rnd.randint(1, 4)
        included, excluded, summary = _straightforward(engine, task, scope, limit)
        pack = recall(engine, task, scope, limit=limit, record=False)
        assert [m.memory_id for m in pack.memories] == [m.memory_id for m in included], (task, limit)
        assert list(pack.memories) == included
        assert sorted(pack.excluded, key=lambda x: x.memory_id) == sorted(excluded, key=lambda x: x.memory_id)
        assert pack.summary[:len(summary)] == summary
        checked += len(excluded)
    assert checked > 0  # the stores really leave memories out


# ---- the demo store (issue 5 acceptance) -----------------------------------------------------------

@pytest.fixture
def demo(sqlite_engine, tmp_path):
    set_up_demo(sqlite_engine, tmp_path / "work", LOADER)
    maintain(sqlite_engine, now=NOW)
    return sqlite_engine


def _cli(args: list[str]):
    return CliRunner().invoke(memtui_app, args)


def test_demo_recall_returns_eligible_memories_and_names_the_exclusions(demo, tmp_path):
    db = str(tmp_path / "store.db")
    result = _cli(["recall", "add a validation rule", "--scope", "repository:order-service", "--json", "--db", db])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    with Session(demo) as s:
        rows = {m.memory_id: m for m in s.exec(select(Memory))}
        stale = {e.memory_id for e in s.exec(select(Evidence)) if e.status in STALE}
        used = s.exec(select(UsageEvent)).all()
    assert 1 <= len(data["memories"]) <= 5
    for m in data["memories"]:
        row = rows[m["memoryId"]]
        assert row.state == "active" and row.conflict_state != "open" and m["memoryId"] not in stale
        assert m["evidence"] and m["verification"]["reviewState"]
    assert "mem_registry_stores_rules" in {m["memoryId"] for m in data["memories"]}
    excluded = {x["memoryId"]: x for x in data["excluded"]}
    assert excluded["mem_old_rule_engine"]["reason"] == "stale"
    assert "stale" in excluded["mem_old_rule_engine"]["reasons"]
    assert excluded["mem_rule_registry_convention"]["reason"] == "conflicted"
    assert excluded["mem_adr_012_rule_registry"]["reasons"] == ["conflicted"]  # active, but in an open conflict
    summary = " | ".join(data["excludedSummary"])
    assert "stale memories about RuleEngine" in summary and "conflicted memories about RuleRegistry" in summary
    assert {u.context_pack_id for u in used} == {data["contextPackId"]}
    assert len(used) == len(data["memories"]) == data["usageEventsRecorded"]

    text = _cli(["recall", "add a validation rule", "--scope", "repository:order-service", "--db", db,
                 "--no-record"])
    assert text.exit_code == 0
    assert text.output.startswith("Relevant project memory\n")
    assert "stale memories about RuleEngine" in text.output


def test_cli_recall_refuses_a_bad_scope(demo, tmp_path):
    result = _cli(["recall", "x", "--scope", "order-service", "--db", str(tmp_path / "store.db")])
    assert result.exit_code == 1
    assert "repository:NAME" in result.output
