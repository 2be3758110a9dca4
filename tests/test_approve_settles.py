"""Approval clears what it settles (issue 23, item 3): approving (or accepting the proposed edit of) a
memory records the reviewer's revalidation result as the latest, so ``memtui show``, the health model,
recall and MCP agree with the decision; the replaced result stays in the history."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlmodel import Session, select
from typer.testing import CliRunner

from memtui.domain.invariants import Actor
from memtui.maintenance.runner import maintain
from memtui.review.health import build_health
from memtui.review.service import ReviewService
from memtui.store.models import MemoryConflict, Revalidation
from tests.test_revalidate_git import Repo

LEAD = Actor("human", "lee", "lead")
MID = "mem_rule_registry_convention"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _reval(engine, mid: str) -> Revalidation:
    with Session(engine) as s:
        row = s.get(Revalidation, mid)
        s.expunge(row)
        return row


def _cli(*args: str) -> str:
    from memtui.cli import app

    out = CliRunner().invoke(app, list(args), env={"LOGNAME": "lee", "USER": "lee"})
    assert out.exit_code == 0, out.output
    return out.output


def test_approving_on_the_demo_store_settles_the_revalidation(demo_copy, tmp_path):
    from memtui.recall import recall_memory, recalled_to_json
    from memtui.review.resolve import ResolveService

    db = str(tmp_path / "demo.db")
    before = _reval(demo_copy, MID)
    assert before.status == "needs_review" and before.reasons  # what the demo gives
    assert "revalidation: needs_review" in _cli("show", MID, "--db", db)
    assert any(MID in r.stale for r in build_health(demo_copy).repositories)
    with Session(demo_copy) as s:  # approval is refused while it is in an open conflict: resolve it first
        (conflict,) = s.exec(select(MemoryConflict.conflict_id).where(
            MemoryConflict.status == "open",
            (MemoryConflict.memory_a == MID) | (MemoryConflict.memory_b == MID))).all()
    ResolveService(demo_copy).resolve_conflict(conflict, "keep_b" if _side(demo_copy, conflict) == "b" else "keep_a",
                                               LEAD)
    _cli("decide", MID, "approve", "--db", db)

    shown = _cli("show", MID, "--db", db)
    assert "[active]" in shown.splitlines()[0]
    assert "needs_review" not in shown and "revalidation:" not in shown
    after = _reval(demo_copy, MID)
    assert (after.status, after.severity, after.reasons, after.reason_codes, after.recommended_action) == (
        "valid", "none", [], [], "none")
    health = build_health(demo_copy)
    assert not any(MID in r.stale for r in health.repositories)
    assert not [a for _repo, a in health.actions() if "stale" in a]  # the screen lists no stale memory
    recalled = recall_memory(demo_copy, MID, None, LEAD)
    assert recalled is not None and recalled.revalidation_status == "valid"  # MCP's get_memory / recall
    assert "(needs_review)" not in recalled.verification and "review approved" in recalled.verification
    assert recalled_to_json(recalled)["verification"]["revalidation"]["status"] == "valid"
    last = ReviewService(demo_copy).history(MID)[-1]  # the replaced result stays in the history
    assert last.reason.startswith("reviewer decision: approve")
    assert f"revalidation needs_review of {before.checked_at:%Y-%m-%dT%H:%M:%S}" in last.reason
    assert all(r in last.reason for r in before.reasons) and ", ".join(before.reason_codes) in last.reason
    maintain(demo_copy, now=NOW, only=["revalidate"])  # the next run agrees with the reviewer
    assert _reval(demo_copy, MID).status == "valid"
    assert ReviewService(demo_copy).detail(MID).state == "active"


def _side(engine, conflict_id: str) -> str:
    with Session(engine) as s:
        c = s.get(MemoryConflict, conflict_id)
        return "b" if c.memory_b == MID else "a"


def test_accepting_the_proposed_edit_settles_the_moved_path(sqlite_engine, tmp_path):
    from memtui.importers.formats import import_paths
    from memtui.maintenance.repositories import register_repository

    r = Repo(tmp_path / "r")
    r.write("src/billing/refund.py", "def refund():\n    return 1\n")
    r.write("AGENTS.md", "# Billing\n\n- Refunds are issued in `src/billing/refund.py` only.\n")
    r.commit("start")
    import_paths(sqlite_engine, [r.path / "AGENTS.md"], LEAD, repo_dir=r.path, repository_id="shop")
    register_repository(sqlite_engine, "shop", r.path)
    r.mv("src/billing/refund.py", "src/payments/refund.py")
    r.commit("move")
    maintain(sqlite_engine, now=NOW, only=["revalidate"])
    svc = ReviewService(sqlite_engine)
    (mid,) = [i.memory_id for i in svc.queue_page()]
    before = _reval(sqlite_engine, mid)
    assert before.status == "needs_review" and "path_moved" in before.reason_codes
    svc.edit_statement(mid, LEAD, proposed=True)
    after = _reval(sqlite_engine, mid)
    assert (after.status, after.reasons, after.proposed_statement) == ("valid", [], None)
    detail = svc.detail(mid)
    assert detail.state == "needs_review"  # still waits for the reviewer's decision
    assert not any(mid in h.stale for h in build_health(sqlite_engine).repositories)
    *_, settled, edited = svc.history(mid)
    assert edited.reason.startswith("statement edited (revalidation's proposal: moved paths): ")
    assert settled.reason.startswith(f"accepted edit: revalidation needs_review of {before.checked_at:%Y-%m-%d}")
    assert all(reason in settled.reason for reason in before.reasons) and settled.reason.endswith("now valid")


def test_approval_without_a_result_and_of_a_valid_one_writes_no_settlement(demo_copy):
    svc = ReviewService(demo_copy)
    with Session(demo_copy) as s:
        valid = s.exec(select(Revalidation.memory_id).where(Revalidation.status == "valid")).all()
    candidates = [i.memory_id for i in svc.queue_page(states=["candidate"], limit=50)]
    mid = next(m for m in candidates if m in valid)
    before = _reval(demo_copy, mid)
    svc.decide(mid, "approve", LEAD)
    assert "settled" not in svc.history(mid)[-1].reason
    after = _reval(demo_copy, mid)
    assert (after.status, after.checked_at, after.job_id) == ("valid", before.checked_at, before.job_id)
