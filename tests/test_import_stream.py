"""`memtui import` at scale (issue 11, item 9): JSON Lines read a line at a time and written in batches
of 1,000 inside ONE transaction, with the all-or-nothing rule, the error messages and the screening of
the record-by-record import. Files here span several batches, so a record in a later batch is what
decides; both stores (SQLite, PostgreSQL) through the real CLI. The batch here is 100 records
(``native.BATCH``, the same code path), so a file of a few hundred records spans several batches."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from sqlmodel import Session, func, select
from typer.testing import CliRunner

from memtui.cli import app as memtui_app
from memtui.domain.integrity import content_hash, event_hash
from memtui.governance.integrity import check_store
import memtui.importers.native as native
from memtui.importers.pipeline import detect_format
from memtui.importers.reader import open_records, read_records
from memtui.store.models import AuditEvent, Evidence, Memory, SecretFinding, StateHistory

from tests.test_import import MEMORY

N = 250  # three batches of BATCH


@pytest.fixture(autouse=True)
def _small_batches(monkeypatch):
    """Batches of 100 records instead of 1,000: the same writer, a tenth of the records per test."""
    monkeypatch.setattr(native, "BATCH", 100)


def record(i: int, **changes) -> dict:
    rec = copy.deepcopy(MEMORY)
    rec["memoryId"] = f"mem-{i:05d}"
    rec["logicalMemoryId"] = f"log-{i:05d}"
    rec["statement"] = f"Rule {i} is registered through RuleRegistry."
    rec.update(changes)
    return rec


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def run_import(url: str, *args: str):
    return CliRunner().invoke(memtui_app, ["import", "--db", url, "--actor", "importer-1", *args])


def counts(url: str) -> tuple[int, int, int]:
    from memtui.store.engine import open_store

    engine = open_store(url)
    try:
        with Session(engine) as s:
            return tuple(s.exec(select(func.count()).select_from(t)).one() for t in (Memory, Evidence, StateHistory))
    finally:
        engine.dispose()


def test_bad_record_in_the_last_batch_writes_nothing(store_url, tmp_path):
    records = [record(i) for i in range(N)]
    records[-1]["confidence"] = 2
    path = write_jsonl(tmp_path / "big.jsonl", records)
    result = run_import(store_url, str(path))
    assert result.exit_code == 1
    assert f"{path}: line {N}: record {N} (mem-{N - 1:05d}): field 'confidence': " in result.output
    assert "1 record(s) refused; nothing was imported" in result.output
    assert counts(store_url) == (0, 0, 0)


def test_clash_with_the_store_in_a_later_batch_writes_nothing(store_url, tmp_path):
    first = write_jsonl(tmp_path / "one.jsonl", [record(220)])
    assert run_import(store_url, str(first)).exit_code == 0
    records = [record(i) for i in range(N)]
    records[220]["statement"] = "Something else entirely."
    path = write_jsonl(tmp_path / "big.jsonl", records)
    result = run_import(store_url, str(path))
    assert result.exit_code == 1
    assert f"line 221: record 221 (mem-00220): field 'memoryId': already in the store with different content" \
        in result.output
    assert counts(store_url) == (1, 2, 1)


def test_duplicate_id_across_batches_names_both_places(store_url, tmp_path):
    records = [record(i) for i in range(150)]
    records[140]["memoryId"] = "mem-00003"
    path = write_jsonl(tmp_path / "dup.jsonl", records)
    result = run_import(store_url, str(path))
    assert result.exit_code == 1
    assert (f"{path}: line 141: record 141 (mem-00003): field 'memoryId': duplicate id: "
            f"{path}: line 4 (record 4) has the same id") in result.output
    assert counts(store_url) == (0, 0, 0)


def test_skip_invalid_across_batches_writes_the_rest_sealed(store_url, tmp_path):
    records = [record(i) for i in range(N)]
    records[5]["state"] = "bogus"
    records[180] = {"memoryId": "mem-00180"}  # no type, statement, scope
    lines = [json.dumps(r) for r in records]
    lines.insert(100, "{not json")  # line 101
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run_import(store_url, "--skip-invalid", str(path))
    assert result.exit_code == 0, result.output
    assert f"imported {N - 2}, already present 0, rejected 3" in result.output
    assert f"{path}: line 6: record 6 (mem-00005): field 'state'" in result.output
    assert f"{path}: line 101: record 101: JSON syntax error at column 2" in result.output
    assert f"{path}: line 182: record 182 (mem-00180): field 'type': required field is missing" in result.output
    assert counts(store_url) == (N - 2, 2 * (N - 2), N - 2)

    from memtui.store.engine import open_store

    engine = open_store(store_url)
    try:
        assert check_store(engine).findings == ()  # every chain and content hash as `memtui check` recomputes it
        with Session(engine) as s:
            m = s.get(Memory, "mem-00249")
            ev = s.exec(select(StateHistory).where(StateHistory.memory_id == "mem-00249")).one()
            # issue 21 item 3: no checkout to check its evidence against, so the active record is a candidate
            assert (m.state, m.review_state, m.statement) == ("candidate", "pending",
                                                               "Rule 249 is registered through RuleRegistry.")
            assert (ev.from_state, ev.to_state, ev.actor_id) == (None, "candidate", "importer-1")
            assert ev.reason.startswith("imported from mixed.jsonl record 251; arrived active but no evidence "
                                        "resolves against the repository")
            fields = {c.name: getattr(ev, c.name) for c in StateHistory.__table__.columns}
            assert ev.prev_hash == "" and ev.event_hash == event_hash("", fields)
            row = {c.name: getattr(m, c.name) for c in Memory.__table__.columns}
            assert m.content_hash == content_hash(row, ev.event_hash)
            spans = s.exec(select(Evidence.ordinal, Evidence.type, Evidence.line_start)
                           .where(Evidence.memory_id == "mem-00249").order_by(Evidence.ordinal)).all()
            assert [tuple(r) for r in spans] == [(0, "file_span", 10), (1, "call_edge", None)]
    finally:
        engine.dispose()
    again = run_import(store_url, str(path).replace("mixed", "mixed"), "--skip-invalid")
    assert f"imported 0, already present {N - 2}, rejected 3" in again.output


def test_secret_in_a_later_batch_is_blocked_and_redacted(store_url, tmp_path):
    records = [record(i) for i in range(120)]
    records[110]["statement"] = "Deploys use AKIAIOSFODNN7EXAMPLE for the bucket."
    records[115]["statement"] = "Ask alice.smith@acme-corp.com before changing rule 115."
    path = write_jsonl(tmp_path / "secret.jsonl", records)
    result = run_import(store_url, str(path))
    assert result.exit_code == 0, result.output
    assert "blocked: mem-00110: secret found (AWS access key)" in result.output
    assert "redacted: mem-00115: e-mail in statement" in result.output

    from memtui.store.engine import open_store

    engine = open_store(store_url)
    try:
        with Session(engine) as s:
            m = s.get(Memory, "mem-00110")
            assert (m.state, m.review_state) == ("blocked", "none")
            assert m.statement == "Deploys use <redacted: AWS access key> for the bucket."
            assert [f.secret_type for f in s.exec(select(SecretFinding))] == ["AWS access key"]
            assert [a.subject for a in s.exec(select(AuditEvent).where(AuditEvent.kind == "secret_blocked"))] == [
                "mem-00110"]
            event = s.exec(select(StateHistory).where(StateHistory.memory_id == "mem-00110")).one()
            assert event.to_state == "blocked" and event.reason.endswith(
                "; blocked: secret found (AWS access key), text redacted")
            assert s.get(Memory, "mem-00115").statement == "Ask <redacted: e-mail> before changing rule 115."
        assert check_store(engine).findings == ()
    finally:
        engine.dispose()


def test_streamed_records_are_the_records_read_whole(tmp_path):
    path = tmp_path / "odd.jsonl"
    path.write_bytes(b'{"memoryId": "a"}\r\n\n   \n{"memoryId": \n\xff\xfe\n{"a": 1, "a": 2}\n[1, 2]\n{"memoryId": "z"}')
    streamed = list(open_records(path))
    assert [(r.path, r.index, r.line, r.data, r.error) for r in streamed] == [
        (r.path, r.index, r.line, r.data, r.error) for r in read_records(path)]
    assert [(r.index, r.line, r.error is None) for r in streamed] == [
        (0, 1, True), (1, 4, False), (2, 5, False), (3, 6, False), (4, 7, True), (5, 8, True)]
    assert streamed[1].error == "JSON syntax error at column 14: Expecting value"


def test_format_of_a_jsonl_file_from_its_head(tmp_path):
    mcp = tmp_path / "graph.jsonl"
    mcp.write_text("".join(json.dumps({"type": "entity", "name": f"E{i}", "entityType": "service",
                                       "observations": ["x"]}) + "\n" for i in range(50)), encoding="utf-8")
    assert detect_format(mcp) == "mcp"
    pretty = tmp_path / "mem0.jsonl"  # one JSON document over many lines: read whole, as before
    pretty.write_text(json.dumps({"results": [{"id": "1", "memory": "Prefers tabs"}]}, indent=2), encoding="utf-8")
    assert detect_format(pretty) == "mem0"
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps({"results": [{"id": "1", "memory": "Prefers tabs"}]}) + "\n\n", encoding="utf-8")
    assert detect_format(one) == "mem0"
    native = write_jsonl(tmp_path / "native.jsonl", [record(i) for i in range(30)])
    assert detect_format(native) == "native"


def test_large_file_read_in_a_second_process_gives_the_same_outcome(store_url, tmp_path, monkeypatch):
    """A JSON Lines file of PARALLEL_BYTES or more is validated and screened in a forked child while
    this process writes: the same report, rows and refusals as the one-process path on the same file."""
    if not native._may_fork():
        pytest.skip("another thread runs in this process (or one CPU): the reader child is not used")
    children: list[int] = []
    real = native._prepared_in_child
    monkeypatch.setattr(native, "_prepared_in_child", lambda *a: (children.append(1), real(*a))[1])
    records = [record(i) for i in range(N)]
    records[10]["statement"] = "Deploys use AKIAIOSFODNN7EXAMPLE for the bucket."
    records[199]["confidence"] = -1
    records[240]["memoryId"] = "mem-00007"
    path = write_jsonl(tmp_path / "big.jsonl", records)
    assert path.stat().st_size < native.PARALLEL_BYTES

    outputs = []
    for threshold in (1, 10**12):  # a second process, then one process
        monkeypatch.setattr(native, "PARALLEL_BYTES", threshold)
        refused = run_import(store_url, str(path))
        assert refused.exit_code == 1 and counts(store_url) == (0, 0, 0)
        kept = run_import(store_url, "--skip-invalid", str(path))
        assert kept.exit_code == 0, kept.output
        outputs.append((refused.output, kept.output, counts(store_url)))
        assert len(children) == (2 if threshold == 1 else 0)
        children.clear()
        from memtui.store.engine import open_store

        engine = open_store(store_url)
        try:
            with Session(engine) as s:
                assert s.get(Memory, "mem-00010").state == "blocked"
            with engine.begin() as conn:  # empty the store for the next round
                for table in ("audit_event", "secret_finding", "memory_state_history", "evidence", "memory"):
                    conn.exec_driver_sql(f"DELETE FROM {table}")
        finally:
            engine.dispose()
    assert outputs[0] == outputs[1]
    refused, kept, rows = outputs[0]
    assert "2 record(s) refused; nothing was imported" in refused
    assert f"{path}: line 200: record 200 (mem-00199): field 'confidence'" in refused
    assert f"{path}: line 241: record 241 (mem-00007): field 'memoryId': duplicate id: {path}: line 8 (record 8)" \
        in refused
    assert f"imported {N - 2}, already present 0, rejected 2" in kept
    assert rows == (N - 2, 2 * (N - 2), N - 2)


def test_a_record_error_and_a_file_error_cross_processes_intact():
    """What the reading process sends back pickles to an equal error (same text, same fields)."""
    import pickle

    from memtui.importers.native import RecordError
    from memtui.importers.reader import ImportFileError

    err = RecordError("a.jsonl", 4, 5, "mem-1", "scope.repositoryId", "bad")
    back = pickle.loads(pickle.dumps(err))
    assert (str(back), back.path, back.index, back.line, back.record_id, back.field) == (
        str(err), "a.jsonl", 4, 5, "mem-1", "scope.repositoryId")
    ferr = ImportFileError("a.jsonl", "cannot read", 3, 7)
    fback = pickle.loads(pickle.dumps(ferr))
    assert (str(fback), fback.line, fback.column) == ("a.jsonl: line 3, column 7: cannot read", 3, 7)
