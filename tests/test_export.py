"""Export back (issue 5): the AGENTS.md section and its markers, and the whole store as JSON moved
between stores (SQLite -> SQLite / PostgreSQL) with ids, history and health preserved."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
import yaml
from sqlmodel import Session, select
from typer.testing import CliRunner

from memtui.cli import app as memtui_app
from memtui.domain.invariants import Actor
from memtui.importers.native import import_files, parse_record
from tests.gitrepo import import_anchored
from memtui.importers.reader import RawRecord
from memtui.maintenance.runner import maintain
from memtui.maintenance.usage import record_usage
from memtui.recall import RecallError, recall
from memtui.reports.export import (
    REDACTED,
    ExportError,
    export_agents_md,
    export_json,
    import_json_store,
    markdown_statement,
    parse_agents_md,
)
from memtui.review.service import ReviewService
from memtui.sample import set_up_demo
from memtui.store.engine import open_store
from memtui.store.models import Evidence, Memory, StateHistory

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
SHA = "0123456789abcdef0123456789abcdef01234567"
LOADER = Actor("human", "loader", "lead")
REVIEWER = Actor("human", "reviewer-1", "reviewer")

TRICKY = [
    "Plain statement.",
    "Uses `mvn -q verify` (evidence: `not/this.java`) before release.",
    "Two\nlines   and\ttabs ",
    "Looks like a marker <!-- memtui:mem_fake --> in the middle.",
    "Ünïcödé and [bold]markup[/bold] and * stars * and _under_.",
    "Ends with parentheses (see ADR-012)",
]


def _active(mid: str, statement: str, type_: str = "code_fact", paths=("src/Main.java",), **extra) -> dict:
    return {"memoryId": mid, "type": type_, "statement": statement,
            "scope": {"tenantId": "acme", "repositoryId": "order-service", **extra.pop("scope", {})},
            "evidence": [{"type": "file_span", "path": p, "commitSha": SHA, "lines": [1, 3], "status": "valid"}
                         for p in paths],
            "state": "active", "confidence": 0.9, "reviewState": "approved", **extra}


def _load(engine, tmp_path, records, name="memories.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"memories": records}, sort_keys=False, allow_unicode=True))
    return import_anchored(engine, [path], LOADER, tmp_path)[0]  # issue 21 item 3: the evidence in a checkout


# ---- AGENTS.md -----------------------------------------------------------------------------

def test_agents_md_round_trip_gives_back_ids_and_statements(engine, tmp_path):
    records = [_active(f"mem_{i}", s, type_=("repo_convention", "code_fact", "runbook")[i % 3],
                       paths=("src/A.java", "docs/a `b`.md") if i == 1 else ("src/A.java",))
               for i, s in enumerate(TRICKY)]
    records.append({**_active("mem_cand", "A candidate is not exported."), "state": "candidate",
                    "reviewState": "pending"})
    records.append(_active("mem_other_repo", "Another repository.", scope={"repositoryId": "billing"}))
    _load(engine, tmp_path, records)
    text = export_agents_md(engine, "repository:order-service")
    parsed = parse_agents_md(text)
    expected = {(f"mem_{i}", markdown_statement(s)) for i, s in enumerate(TRICKY)}
    assert set(parsed) == expected and len(parsed) == len(expected)
    assert markdown_statement(TRICKY[2]) == "Two lines and tabs"
    # grouped by type, one heading each, in a fixed order; one marker per bullet
    assert text.index("### Repository conventions") < text.index("### Code facts") < text.index("### Runbooks")
    bullets = [line for line in text.splitlines() if line.startswith("- ")]
    assert len(bullets) == len(TRICKY) and all(b.endswith(" -->") for b in bullets)
    assert all(b.count("<!-- memtui:") == 1 for b in bullets if "mem_fake" not in b)
    assert "(evidence: `src/A.java`, `docs/a 'b'.md`)" in text
    assert export_agents_md(engine, "repository:order-service") == text  # deterministic


def test_agents_md_leaves_out_conflicted_and_stale_memory_and_says_so(engine, tmp_path):
    _load(engine, tmp_path, [_active("mem_ok", "Fine."), _active("mem_conflict", "In a conflict."),
                             _active("mem_stale", "Stale now."),
                             _active("mem_mod", "Other module.", scope={"modulePath": "src/pricing"})])
    with engine.begin() as conn:
        conn.execute(sa.update(Memory.__table__).where(Memory.__table__.c.memory_id == "mem_conflict")
                     .values(conflict_state="open"))
        conn.execute(sa.update(Evidence.__table__).where(Evidence.__table__.c.memory_id == "mem_stale")
                     .values(status="changed"))
    text = export_agents_md(engine, "repository:order-service")
    assert [i for i, _ in parse_agents_md(text)] == ["mem_mod", "mem_ok"]
    assert "left out until reviewed: mem_conflict (conflicted); mem_stale (stale)" in text
    narrow = export_agents_md(engine, "repository:order-service/src/validation")
    assert [i for i, _ in parse_agents_md(narrow)] == ["mem_ok"]  # repository-wide memory applies, other module not
    with pytest.raises(RecallError):
        export_agents_md(engine, "repository:nope")


def test_parse_reads_a_hand_edited_bullet_and_ignores_the_rest():
    text = ("# Title\n- not memtui\n"
            "- Edited by hand <!-- memtui:mem_a -->\n"
            "  * Kept (evidence: `x.py`) <!-- memtui:mem_b -->\n"
            "<!-- memtui export: left out until reviewed: mem_c (stale) -->\n")
    assert parse_agents_md(text) == [("mem_a", "Edited by hand"), ("mem_b", "Kept")]


# ---- whole-store JSON ----------------------------------------------------------------------

@pytest.fixture
def demo_sqlite(tmp_path):
    """The demo store (SQLite, ``source.db``) after maintenance, with a decision, an undo, usage and a recall."""
    src = open_store(str(tmp_path / "source.db"))
    set_up_demo(src, tmp_path / "work", LOADER)
    maintain(src, now=NOW)
    svc = ReviewService(src)
    svc.decide("mem_validation_tests", "approve", REVIEWER, comment="checked")
    out = svc.decide("mem_retry_behavior_unknown", "reject", REVIEWER)
    svc.undo(out.event_id, REVIEWER)
    record_usage(src, "mem_registry_stores_rules", "positive", REVIEWER)
    recall(src, "add a validation rule", "repository:order-service")
    yield src
    src.dispose()


def _history_counts(engine) -> Counter:
    with Session(engine) as s:
        return Counter(s.exec(select(StateHistory.memory_id)).all())


def _comparable(data: dict, redacted: list[str] = ()) -> dict:
    """The export without its time, the target's own job row and what import-store adds to a
    redacted memory (its arrival note, hence its version and content hash)."""
    data = json.loads(json.dumps(data))
    data.pop("exportedAt")
    data["history"] = [h for h in data["history"] if h["memoryId"] not in redacted]
    for mid in redacted:
        data["memoryExtras"].pop(mid, None)
        for m in data["memories"]:
            if m["memoryId"] == mid:
                m.pop("version", None)
    data["tables"].pop("memory_maintenance_jobs")  # the target gains the import_store job row
    seal = data.pop("integrity")  # issue 21 item 6: its seal covers the redacted memory's note too
    data["sealed"] = [s for s in seal["subjects"] if s[1] not in redacted]
    return data


def test_json_export_moves_the_store_with_ids_history_and_health(demo_sqlite, engine):
    data = json.loads(json.dumps(export_json(demo_sqlite)))  # through text, as the CLI writes it
    counts = import_json_store(engine, data, LOADER)
    assert counts["memories"] == len(data["memories"]) and counts["history"] == len(data["history"])
    assert ReviewService(engine).health() == ReviewService(demo_sqlite).health()
    assert ReviewService(engine).conflict_open_count() == ReviewService(demo_sqlite).conflict_open_count()
    expected = _history_counts(demo_sqlite)
    assert data["redacted"] == ["mem_staging_payment_key"]  # the demo's key memory is blocked on import
    expected["mem_staging_payment_key"] += 1  # import-store notes that it arrived redacted (issue 9)
    assert _history_counts(engine) == expected
    assert _comparable(export_json(engine), data["redacted"]) == _comparable(export_json(demo_sqlite), data["redacted"])
    detail = ReviewService(engine).detail("mem_order_validator_entrypoint")
    assert detail == ReviewService(demo_sqlite).detail("mem_order_validator_entrypoint")
    assert detail.evidence[0].current_location  # revalidation's findings came along
    # the moved store is a working store: recall gives the same pack, new evidence gets fresh ids
    a = recall(demo_sqlite, "add a validation rule", "repository:order-service", record=False)
    b = recall(engine, "add a validation rule", "repository:order-service", record=False)
    assert [m.memory_id for m in a.memories] == [m.memory_id for m in b.memories] and a.excluded == b.excluded
    path = demo_sqlite.url.database.rsplit("/", 1)[0] + "/extra.yaml"
    with open(path, "w") as fh:
        yaml.safe_dump({"memories": [_active("mem_new_after_move", "Added after the move.")]}, fh)
    assert import_files(engine, [path], LOADER).imported == ["mem_new_after_move"]
    # re-importing the original sample file finds everything already present (import hashes kept)
    from memtui.sample import sample_data_dir

    again = import_files(engine, [sample_data_dir() / "memories.yaml"], LOADER)
    assert again.imported == [] and len(again.unchanged) == 34


def test_exported_memories_are_native_records(demo_sqlite, tmp_path):
    data = export_json(demo_sqlite)
    for i, rec in enumerate(data["memories"]):
        memory, evidence = parse_record(RawRecord("export", i, None, rec, "memory"))
        assert memory.memory_id == rec["memoryId"] and len(evidence) == len(rec.get("evidence", []))
    # a store without open conflicts reads straight back through `memtui import`
    fresh = open_store(str(tmp_path / "plain.db"))
    _load(fresh, tmp_path, [_active("mem_a", "A."), _active("mem_b", "B.", paths=("x.py", "y.py"))])
    records = export_json(fresh)["memories"]
    target = open_store(str(tmp_path / "target.db"))
    path = tmp_path / "records.json"
    path.write_text(json.dumps({"memories": records}))
    assert import_files(target, [path], LOADER).imported == ["mem_a", "mem_b"]


def test_import_refuses_a_non_empty_store_and_foreign_files(demo_sqlite):
    data = export_json(demo_sqlite)
    before = _history_counts(demo_sqlite)
    with pytest.raises(ExportError, match="not empty"):
        import_json_store(demo_sqlite, data, LOADER)
    assert _history_counts(demo_sqlite) == before
    with pytest.raises(ExportError, match="not a memtui store export"):
        import_json_store(demo_sqlite, {"memories": []}, LOADER)


def test_invalid_record_in_export_writes_nothing(engine, tmp_path):
    src = open_store(str(tmp_path / "src.db"))
    _load(src, tmp_path, [_active("mem_a", "A."), _active("mem_b", "B.")])
    data = json.loads(json.dumps(export_json(src)))
    data["memories"][1]["confidence"] = "high"
    with pytest.raises(ExportError, match="confidence"):
        import_json_store(engine, data, LOADER)
    assert ReviewService(engine).health() == []


def test_blocked_memory_is_exported_redacted(engine, tmp_path):
    src = open_store(str(tmp_path / "src.db"))
    _load(src, tmp_path, [{**_active("mem_key", "Staging key AKIAIOSFODNN7EXAMPLE."), "state": "blocked"},
                          _active("mem_ok", "Fine.")])
    data = export_json(src)
    assert "AKIAIOSFODNN7EXAMPLE" not in json.dumps(data)
    assert data["redacted"] == ["mem_key"]
    import_json_store(engine, json.loads(json.dumps(data)), LOADER)
    assert ReviewService(engine).detail("mem_key").statement == REDACTED
    assert ReviewService(engine).detail("mem_key").state == "blocked"


# ---- CLI -----------------------------------------------------------------------------------

def _cli(args: list[str]):
    return CliRunner().invoke(memtui_app, args)


def test_cli_export_and_import_store(demo_sqlite, tmp_path):
    db = str(tmp_path / "source.db")
    md = tmp_path / "AGENTS.md"
    r = _cli(["export", "agents-md", "--scope", "repository:order-service", "--out", str(md), "--db", db])
    assert r.exit_code == 0, r.output
    assert parse_agents_md(md.read_text()) and "## Project memory: order-service" in md.read_text()
    r = _cli(["export", "agents-md", "--scope", "repository:order-service", "--db", db])
    assert r.exit_code == 0 and "<!-- memtui:mem_registry_stores_rules -->" in r.output
    dump = tmp_path / "store.json"
    assert _cli(["export", "json", "--out", str(dump), "--db", db]).exit_code == 0
    target = str(tmp_path / "target.db")
    r = _cli(["import-store", str(dump), "--db", target])
    assert r.exit_code == 0, r.output
    assert "imported 34 memories" in r.output
    assert ReviewService(open_store(target)).health() == ReviewService(demo_sqlite).health()
    r = _cli(["import-store", str(dump), "--db", target])
    assert r.exit_code == 1 and "not empty" in r.output
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = _cli(["import-store", str(bad), "--db", str(tmp_path / "other.db")])
    assert r.exit_code == 1 and "line 1" in r.output


def test_importing_an_exported_agents_md_adds_no_duplicates(engine, tmp_path):
    """issue 5: importing the exported section again yields the same memories (no duplicates)."""
    from memtui.importers.formats import import_paths

    records = [_active("mem_x1", "Rules are registered through RuleRegistry."),
               _active("mem_x2", "OrderValidator calls RuleRegistry.", type_="code_fact")]
    _load(engine, tmp_path, records)
    out = tmp_path / "export" / "AGENTS.md"
    out.parent.mkdir()
    out.write_text(export_agents_md(engine, "repository:order-service"))
    before = {h.repository_id: h.total for h in ReviewService(engine).health()}
    report = import_paths(engine, [out], LOADER, fmt="markdown", repository_id="order-service")
    assert report.imported == [] and sorted(report.unchanged) == ["mem_x1", "mem_x2"]
    assert {h.repository_id: h.total for h in ReviewService(engine).health()} == before
