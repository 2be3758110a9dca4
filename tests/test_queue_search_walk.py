"""A queue search gives the same rows and keys whatever path reads them (issue 22, item 8): on
PostgreSQL a search reads along its sort's index and hands sparse matches to the GIN index
(``queue_query._search_walk``); on SQLite it is one ordered query. With walks of a row or two both the
walk and the hand-over happen on a 40-memory store; the expected order is worked out here from the
generated records alone."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from memtui.domain.invariants import Actor
from memtui.importers.native import import_files
from memtui.review import queue_query
from memtui.review.queue_query import QueueFilter
from memtui.review.service import ReviewService

LOADER = Actor("human", "loader")
QUEUE = {"needs_review": 0, "challenged": 1, "candidate": 2}  # the rank of each queue state used here
STATES = ["needs_review", "candidate", "challenged", "candidate", "rejected"]
START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _records() -> list[dict]:
    out = []
    for i in range(40):
        words = ["Alpha", "rule", f"n{i}"] + (["zebra"] if i % 7 == 3 else []) + (["zebu"] if i % 11 == 5 else [])
        out.append({"memoryId": f"mem_{(i * 17) % 40:02d}_{i}", "type": "code_fact", "statement": " ".join(words) + ".",
                    "scope": {"tenantId": "acme", "repositoryId": "svc"}, "state": STATES[i % 5],
                    "confidence": round(0.3 + (i * 13 % 40) / 100, 2),
                    "createdAt": (START + timedelta(days=(i * 29) % 40)).isoformat().replace("+00:00", "Z")})
    return out


def _expected(records: list[dict], prefix: str, sort: str, descending: bool) -> list[str]:
    """Ids of the queue-state records with a word starting with ``prefix``, in ``sort`` order (id last)."""
    hits = [r for r in records if r["state"] in QUEUE
            and any(w.lower().startswith(prefix) for w in r["statement"].rstrip(".").split())]
    key = {"state": lambda r: QUEUE[r["state"]], "age": lambda r: r["createdAt"],
           "confidence": lambda r: r["confidence"]}[sort]
    return [r["memoryId"] for r in sorted(hits, key=lambda r: (key(r), r["memoryId"]), reverse=descending)]


@pytest.fixture
def store(engine, tmp_path):
    records = _records()
    path = tmp_path / "walk.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    report = import_files(engine, [path], LOADER)
    assert len(report.imported) == 40
    return ReviewService(engine), records


@pytest.mark.parametrize("sort", ["state", "age", "confidence"])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("prefix", ["rul", "zeb", "zebr", "nope"])  # every row, sparse, sparser, none
def test_search_pages_are_the_ordered_matches(store, monkeypatch, sort, descending, prefix):
    svc, records = store
    monkeypatch.setattr(queue_query, "WALK_STEPS", (1, 2))
    f = QueueFilter(search=prefix, sort=sort, descending=descending)
    want = _expected(records, prefix, sort, descending)
    assert [i.memory_id for i in svc.find(f, None, 100)] == want
    for size in (1, 2, 5):  # keyset pages join up to the whole order, wherever a page stops in a walk
        paged, after = [], None
        for _ in range(len(want) + 2):  # bounded: a page that does not move on fails, not hangs
            page = svc.find(f, after, size)
            paged += [i.memory_id for i in page]
            if len(page) < size:
                break
            after = page[-1].key
        assert paged == want
    assert svc.find_count(f) == len(want)


def test_a_search_page_filters_as_the_queue_does(store, monkeypatch):
    svc, records = store
    monkeypatch.setattr(queue_query, "WALK_STEPS", (2,))
    f = QueueFilter(search="zebra", states=("candidate", "challenged"), min_confidence=0.5)
    want = [r["memoryId"] for r in sorted(
        (r for r in records if "zebra" in r["statement"] and r["state"] in ("candidate", "challenged")
         and r["confidence"] >= 0.5), key=lambda r: (QUEUE[r["state"]], r["memoryId"]))]
    assert want and [i.memory_id for i in svc.find(f, None, 100)] == want
    state_of = {r["memoryId"]: r["state"] for r in records}
    assert [i.key for i in svc.find(f, None, 100)] == [(QUEUE[state_of[m]], m) for m in want]
