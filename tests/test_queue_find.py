"""The queue as a query (issue 11, item 1): full-text search kept in step with edits, every filter,
every sort, keyset paging across sorts; on SQLite (FTS5) and PostgreSQL (tsvector)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import Session, select

from memtui.domain.invariants import Actor
from tests.gitrepo import import_anchored
from memtui.review.queue_query import FilterError, QueueFilter, filter_text, parse_filter_text
from memtui.review.service import ReviewService
from memtui.store.models import Evidence, Revalidation

DATA = Path(__file__).parent / "data"
LOADER = Actor("human", "loader")
REVIEWER = Actor("human", "reviewer-7", "reviewer")
ORG = """memories:
  - memoryId: mem_org
    type: code_fact
    statement: "Services log in JSON lines."
    scope: {tenantId: acme}
    state: candidate
    confidence: 0.5
    createdAt: 2026-11-25T00:00:00Z
    evidence:
      - {type: human, ref: "platform team"}
"""


@pytest.fixture
def svc(engine, tmp_path):
    (tmp_path / "org.yaml").write_text(ORG)
    import_anchored(engine, [DATA / "queue.yaml", tmp_path / "org.yaml"], LOADER, tmp_path)  # issue 21 item 3
    with Session(engine) as s, s.begin():  # what revalidation would have written
        ev = s.exec(select(Evidence).where(Evidence.memory_id == "mem_tests")).first()
        ev.reason_code = "referenced_symbol_deleted"
        s.add(ev)
        from memtui.clock import utcnow

        s.add(Revalidation(memory_id="mem_tests", job_id="job_1", status="needs_review", severity="high",
                           recommended_action="review", checked_at=utcnow()))
    return ReviewService(engine)


def ids(svc, **kw) -> list[str]:
    return [i.memory_id for i in svc.find(QueueFilter(**kw), None, 100)]


def test_sorts(svc):
    # ages at the fixed clock (2026-11-30): cache_ttl 90 d, adr 60 d, org 5 d, registry 10 d, tests 1 d
    assert ids(svc) == ["mem_cache_ttl", "mem_adr", "mem_org", "mem_registry", "mem_tests"]
    # high impact (the ADR; org-wide scope) first, then revalidation severity high (tests), then oldest
    assert ids(svc, sort="priority") == ["mem_adr", "mem_org", "mem_tests", "mem_cache_ttl", "mem_registry"]
    assert ids(svc, sort="age") == ["mem_cache_ttl", "mem_adr", "mem_registry", "mem_org", "mem_tests"]
    assert ids(svc, sort="confidence") == ["mem_org", "mem_tests", "mem_cache_ttl", "mem_registry", "mem_adr"]
    assert ids(svc, sort="confidence", descending=True) == [
        "mem_adr", "mem_registry", "mem_cache_ttl", "mem_tests", "mem_org"]


@pytest.mark.parametrize("sort", ["state", "priority", "age", "confidence"])
@pytest.mark.parametrize("descending", [False, True])
def test_keyset_pages_join_up_to_the_whole_order(svc, sort, descending):
    f = QueueFilter(sort=sort, descending=descending)
    whole = [i.memory_id for i in svc.find(f, None, 100)]
    paged, after = [], None
    while True:
        page = svc.find(f, after, 2)
        paged += [i.memory_id for i in page]
        if len(page) < 2:
            break
        after = page[-1].key
    assert paged == whole and len(whole) == 5


def test_filters(svc):
    assert ids(svc, states=("active",)) == ["mem_active_one"]
    assert ids(svc, memory_type="architecture_decision") == ["mem_adr"]
    assert ids(svc, repository_id="*") == ["mem_org"]
    assert ids(svc, repository_id="order-service") == ["mem_cache_ttl", "mem_adr", "mem_registry", "mem_tests"]
    assert ids(svc, module_path="src/main/java/com/acme/order") == ["mem_cache_ttl", "mem_registry"]
    assert ids(svc, module_path="src/main/java/com/acme/order/pricing/") == ["mem_cache_ttl"]
    assert ids(svc, module_path="src/main/java/com/acme/ord") == []  # a path, not a string prefix
    assert ids(svc, reason_code="referenced_symbol_deleted") == ["mem_tests"]
    assert ids(svc, min_confidence=0.65, max_confidence=0.84) == ["mem_cache_ttl", "mem_registry"]
    assert ids(svc, min_age_days=60) == ["mem_cache_ttl", "mem_adr"]
    assert ids(svc, max_age_days=10) == ["mem_org", "mem_registry", "mem_tests"]
    assert ids(svc, actor="reviewer-7") == []
    svc.decide("mem_registry", "needs-review", REVIEWER)
    assert ids(svc, actor="reviewer-7") == ["mem_registry"]
    assert len(ids(svc, actor="loader")) == 5
    f = QueueFilter(repository_id="order-service", max_confidence=0.8)
    assert svc.find_count(f) == 2 == len(svc.find(f))


def test_search_uses_the_index_and_follows_edits(svc):
    # every word is a prefix of a word in the statement; all must match
    assert ids(svc, search="rule") == ["mem_adr", "mem_registry", "mem_tests"]
    assert ids(svc, search="Registered RULES") == ["mem_registry"]
    assert ids(svc, search="expire") == ["mem_cache_ttl"]
    assert ids(svc, search="expire* (after\" [") == ["mem_cache_ttl"]  # operators and quotes are not syntax
    assert ids(svc, search="rule", sort="confidence") == ["mem_tests", "mem_registry", "mem_adr"]
    svc.edit_statement("mem_cache_ttl", REVIEWER, text="PriceCache entries live forever.")
    assert ids(svc, search="expire") == []
    assert ids(svc, search="forever") == ["mem_cache_ttl"]
    assert svc.find_count(QueueFilter(search="rule", states=("candidate",))) == 3


def test_filter_text_round_trip_and_errors():
    f = parse_filter_text("state=candidate,needs_review repo=r1 conf=0.2..0.9 age=3.. actor=ann",
                          QueueFilter(search="x", sort="age"))
    assert f == QueueFilter(states=("candidate", "needs_review"), repository_id="r1", min_confidence=0.2,
                            max_confidence=0.9, min_age_days=3, actor="ann", search="x", sort="age")
    assert parse_filter_text(filter_text(f), QueueFilter(search="x", sort="age")) == f
    assert QueueFilter.from_dict(f.to_dict()) == f
    assert parse_filter_text("", f) == QueueFilter(search="x", sort="age")
    with pytest.raises(FilterError, match="state"):
        parse_filter_text("state=bogus", f)
    with pytest.raises(FilterError, match="'conf=a..b'"):
        parse_filter_text("conf=a..b", f)
    with pytest.raises(FilterError, match="unknown filter 'colour'"):
        parse_filter_text("colour=red", f)
    with pytest.raises(FilterError, match="min_confidence"):
        QueueFilter(min_confidence=2)


def test_batch_decision_is_one_transaction_and_undone_as_one(svc):
    from memtui.domain.invariants import InvariantViolation

    with pytest.raises(InvariantViolation, match="mem_adr: review invariant"):
        svc.decide_many(["mem_registry", "mem_adr", "mem_tests"], "approve", REVIEWER, comment="batch")
    assert [svc.detail(m).state for m in ("mem_registry", "mem_adr", "mem_tests")] == ["candidate"] * 3
    assert len(svc.history("mem_registry")) == 1  # nothing of the refused batch was written
    out = svc.decide_many(["mem_registry", "mem_tests"], "needs-review", REVIEWER, comment="batch")
    assert [(o.memory_id, o.from_state, o.to_state) for o in out] == [
        ("mem_registry", "candidate", "needs_review"), ("mem_tests", "candidate", "needs_review")]
    assert [svc.history(m)[-1].comment for m in ("mem_registry", "mem_tests")] == ["batch", "batch"]
    back = svc.undo_many([o.event_id for o in reversed(out)], REVIEWER)
    assert [(o.memory_id, o.to_state) for o in back] == [("mem_tests", "candidate"), ("mem_registry", "candidate")]


def test_comment_on_a_decision_is_a_note_and_keeps_it_undoable(svc):
    from memtui.domain.decisions import DecisionError

    out = svc.decide("mem_registry", "needs-review", REVIEWER)
    note_id = svc.comment_on(out.event_id, REVIEWER, "checked with the owner")
    note = svc.history("mem_registry")[-1]
    assert (note.event_id, note.from_state, note.to_state, note.comment, note.reason) == (
        note_id, "needs_review", "needs_review", "checked with the owner", f"comment on {out.event_id}")
    with pytest.raises(DecisionError, match="empty"):
        svc.comment_on(out.event_id, REVIEWER, "  ")
    svc.undo(out.event_id, REVIEWER)
    assert svc.detail("mem_registry").state == "candidate"


def test_approval_gates_name_each_shut_gate(engine, svc):
    gates = {m: [g for g, _ in ReviewService(engine, REVIEWER).detail(m).gates]
             for m in ("mem_adr", "mem_org", "mem_registry")}
    assert gates == {"mem_adr": ["high impact needs a lead"], "mem_org": ["high impact needs a lead"],
                     "mem_registry": []}
    lead = Actor("human", "lee", "lead")
    assert ReviewService(engine, lead).detail("mem_adr").gates == ()
    assert svc.detail("mem_adr").gates == ()  # no viewer: no actor to judge for
