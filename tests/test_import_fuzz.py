"""Fuzz the importers with hypothesis (issue 9, item 5): hostile native JSON/YAML/JSONL files and
Markdown memory files either import or are refused with the importer's own error
(:class:`ImportRefused`), never another exception; a refusal leaves the store exactly as it was.

Bounded and deterministic (``derandomize=True``, a fixed number of examples), so CI is stable.
Crashes it found are kept as plain regression tests at the end.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlmodel import Session, func, select

from memtui.domain.invariants import Actor
from memtui.importers.formats import import_paths
from memtui.importers.native import ImportRefused
from memtui.store.engine import open_store
from memtui.store.models import Evidence, Memory, StateHistory

ACTOR = Actor("human", "fuzzer", "lead")
FUZZ = settings(max_examples=150, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """One SQLite store for the whole fuzz run (a refusal must leave it as it was)."""
    engine = open_store(str(tmp_path_factory.mktemp("fuzz") / "fuzz.db"))
    yield engine
    engine.dispose()


def _counts(engine) -> tuple[int, int, int]:
    with Session(engine) as s:
        return tuple(s.exec(select(func.count()).select_from(t)).one() for t in (Memory, Evidence, StateHistory))


def _import(engine, name: str, data: bytes, **kw) -> None:
    """Import one file holding ``data``: success, or ImportRefused with the store unchanged."""
    before = _counts(engine)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / name
        path.write_bytes(data)
        try:
            import_paths(engine, [path], ACTOR, **kw)
        except ImportRefused as exc:
            assert str(exc)  # a message naming what was refused
            assert _counts(engine) == before


# ---- strategies --------------------------------------------------------------------------------

_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40) | st.sampled_from(
    ["\x1b[31mred\x1b[0m", "\x1b]8;;http://evil\x07link\x1b]8;;\x07", "[bold]x[/]", "a\x00b", "line\nbreak",
     "x" * 5000, "é" * 3000, "", " ", "mem_1", "mem_1", "memoryId"])
_scalar = st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70) | st.floats() | _text
_json = st.recursive(_scalar, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
                     max_leaves=20)
_FIELDS = ["memoryId", "logicalMemoryId", "type", "statement", "scope", "evidence", "state", "confidence",
           "reviewState", "tags", "createdAt", "supersededBy", "impact", "candidateId", "proposedScope",
           "proposedType", "candidate_id", "proposed_memory", "failure_class"]
_ids = st.sampled_from(["mem_1", "mem_2", "mem_3", "m\x1b[31m", "m\n1", "cand_1"])
_valid = st.fixed_dictionaries({
    "memoryId": _ids, "type": st.sampled_from(["code_fact", "repo_convention"]),
    "statement": st.text(min_size=1, max_size=30) | _text, "scope": st.just({"repositoryId": "r"})})
#: a valid record with at most two fields replaced by hostile values (tags, evidence, ids, odd types)
_mutation = st.dictionaries(st.sampled_from(_FIELDS), _json | _ids | st.lists(_text, max_size=3) | st.lists(
    st.fixed_dictionaries({"type": st.sampled_from(["file_span", "ref", "doc"])},
                          optional={"path": _text, "excerpt": _text | st.just("z" * 70_000), "lines": _json,
                                    "commitSha": _text}), max_size=2), max_size=2)
_record = st.builds(lambda base, mutation: {**base, **mutation}, _valid, _mutation)
_records = st.lists(_record | _json, max_size=5)


def _deep(n: int) -> str:
    return "[" * n + "]" * n


def _mangle(data: bytes, cuts: list[int], junk: bytes) -> bytes:
    """Insert ``junk`` (broken UTF-8, control bytes) at some positions of ``data``."""
    out = bytearray(data)
    for c in sorted(cuts, reverse=True):
        out[c % (len(out) + 1):c % (len(out) + 1)] = junk
    return bytes(out)


_junk = st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\x1b[2J", b"\"", b"{", b"\n", b": ", b"&a *a"])


# ---- the fuzz tests ------------------------------------------------------------------------------

@FUZZ
@given(records=_records, fmt=st.sampled_from(["json", "jsonl", "yaml"]), skip=st.booleans(),
       cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=3), junk=_junk,
       nonce=st.integers(min_value=0, max_value=10**9))
def test_native_files_import_or_are_refused_cleanly(store, records, fmt, skip, cuts, junk, nonce):
    # ids fresh for this example (the store is shared), repeated within it as drawn
    records = [{**r, "memoryId": f"{r['memoryId']}_{nonce}"} if isinstance(r, dict) and isinstance(
        r.get("memoryId"), str) and r["memoryId"].startswith("mem_") else r for r in records]
    if fmt == "json":
        data = json.dumps(records, ensure_ascii=False).encode("utf-8", "surrogatepass")
    elif fmt == "jsonl":
        data = "\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode("utf-8", "surrogatepass")
    else:
        data = yaml.safe_dump({"memories": records}, allow_unicode=True).encode("utf-8", "surrogatepass")
    if cuts:
        data = _mangle(data, cuts, junk)
    _import(store, f"m.{fmt}", data, skip_invalid=skip)


@FUZZ
@given(data=st.binary(max_size=400), fmt=st.sampled_from(["json", "jsonl", "yaml"]))
def test_random_bytes_import_or_are_refused_cleanly(store, data, fmt):
    _import(store, f"r.{fmt}", data)


@FUZZ
@given(lines=st.lists(st.sampled_from(["# Heading", "## Testing", "- Run `make test` before commits.",
                                       "- Use `src/api/` for handlers", "```bash", "```", "| a | b |", "|---|---|",
                                       "---", "name: x", "@docs/x.md", "[link](topic.md)", ""]) | _text,
                      max_size=12),
       memory=st.booleans(), cuts=st.lists(st.integers(min_value=0, max_value=5000), max_size=2), junk=_junk)
def test_markdown_files_import_or_are_refused_cleanly(store, lines, memory, cuts, junk):
    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    if cuts:
        data = _mangle(data, cuts, junk)
    _import(store, "MEMORY.md" if memory else "AGENTS.md", data, skip_invalid=memory)


_REGRESSIONS = [
    ("deep.json", _deep(100_000).encode()),
    ("deep.jsonl", (_deep(100_000) + "\n").encode()),
    ("deep.yaml", ("a: " + _deep(5000) + "\n").encode()),
    ("bomb.yaml", ("a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
        + "memories: [{memoryId: m, type: t, statement: s, scope: {}, tags: *i}]\n").encode()),
    ("dup.jsonl", b'{"a": 1, "a": 2}\n'),
    ("str.json", json.dumps('[{"memoryId": "m", "memoryId": "n"}]').encode()),
    ("same-id.jsonl", (json.dumps({"memoryId": "regress_1", "type": "t", "statement": "a", "scope": {}}) + "\n"
                       + json.dumps({"memoryId": "regress_1", "type": "t", "statement": "b", "scope": {}}) + "\n").encode()),
]


@pytest.mark.parametrize(("name", "data"), _REGRESSIONS, ids=[n for n, _ in _REGRESSIONS])
def test_regressions_deep_nesting_alias_bombs_duplicates(store, name, data):
    """Inputs that crashed (RecursionError) or would hang (an alias bomb hashed into 9**9 values)."""
    before = _counts(store)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / name
        path.write_bytes(data)
        with pytest.raises(ImportRefused) as info:
            import_paths(store, [path], ACTOR)
    assert _counts(store) == before
    assert name in str(info.value)
