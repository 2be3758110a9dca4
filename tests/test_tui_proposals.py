"""The duplicate, conflict and compaction screens under Pilot: each key's decision changes the store as specified."""

from __future__ import annotations

import pytest
from sqlmodel import Session

from memtui.app import MemtuiApp
from memtui.clock import utcnow
from memtui.domain.invariants import Actor
from tests.gitrepo import import_anchored
from memtui.review.service import ReviewService
from memtui.screens.dialogs import ConfirmDialog, EditDialog, TextDialog
from memtui.store.models import CompactionProposal, DuplicateCluster, Memory, MemoryConflict

from tests.test_resolve import LEAD, RECORDS

REV = Actor("human", "reviewer-9", "reviewer")


@pytest.fixture
def store(sqlite_engine, tmp_path):
    f = tmp_path / "r.yaml"
    f.write_text(RECORDS)
    import_anchored(sqlite_engine, [f], LEAD, tmp_path)  # issue 21 item 3: the evidence in a checkout
    now = utcnow()
    with Session(sqlite_engine) as s, s.begin():
        s.add(DuplicateCluster(cluster_id="dup-1", repository_id="os", scope_key="acme/os:src/validation",
                               type="repo_convention", members=["mem_a", "mem_b"], canonical_id="mem_a",
                               best_score=88.0, scores={"mem_a|mem_b": 88.0}, method="fuzzy",
                               explanation="token sort 88", created_at=now))
        s.add(MemoryConflict(conflict_id="memconf_1", severity="medium", tenant_id="acme", repository_id="os",
                             module_path="src/validation", memory_a="mem_a", memory_b="mem_c", status="open",
                             reason="different object: OrderValidator vs RuleRegistry", created_at=now))
        s.add(CompactionProposal(proposal_id="memcomp_1", tenant_id="acme", repository_id="os",
                                 module_path="src/validation", members=["mem_d", "mem_e"],
                                 proposed_statement="RuleRegistry: OrderValidator calls RuleRegistry; and "
                                                    "RuleRegistry stores validation rules.",
                                 proposed_type="code_fact", shared=["RuleRegistry"], created_at=now))
        for mid in ("mem_a", "mem_c"):
            m = s.get(Memory, mid)
            m.conflict_state = "open"
            s.add(m)
    return sqlite_engine


async def _settle(app, pilot):
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_pick_canonical_edit_and_merge_with_confirmation(store):
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(150, 40)) as pilot:
        await _settle(app, pilot)
        await pilot.press("d")
        await _settle(app, pilot)
        await pilot.press("2")  # mem_b becomes the canonical
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, TextDialog)  # a multi-line editor (issue 24)
        await pilot.press("f7")  # select all: typing replaces it
        await pilot.press(*"Rules go through RuleRegistry.")
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("enter")  # the default is No
        await _settle(app, pilot)
        assert ReviewService(store).detail("mem_a").state == "active"
        await pilot.press("m")
        await pilot.pause()
        await pilot.press("y")
        await _settle(app, pilot)
    svc = ReviewService(store)
    assert svc.detail("mem_b").statement == "Rules go through RuleRegistry."
    a = svc.detail("mem_a")
    assert (a.state, a.superseded_by) == ("superseded", "mem_b")
    assert svc.history("mem_a")[-1].actor_id == "reviewer-9"


async def test_not_duplicates_key(store):
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(150, 40)) as pilot:
        await _settle(app, pilot)
        await pilot.press("d")
        await _settle(app, pilot)
        await pilot.press("d")  # asks first: a remembered decision must not come from a key pressed twice
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("n")
        await _settle(app, pilot)
        with Session(store) as s:
            assert s.get(DuplicateCluster, "dup-1").status == "open"
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("y")
        await _settle(app, pilot)
    with Session(store) as s:
        assert s.get(DuplicateCluster, "dup-1").status == "dismissed"


async def test_conflict_keys_keep_b_then_undo(store):
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(150, 40)) as pilot:
        await _settle(app, pilot)
        await pilot.press("C")  # conflicts (c is a decision key: comment)
        await _settle(app, pilot)
        await pilot.press("b")
        await pilot.pause()
        await pilot.press("y")
        await _settle(app, pilot)
        svc = ReviewService(store)
        assert svc.detail("mem_a").state == "invalidated" and svc.detail("mem_c").state == "active"
        await pilot.press("u")
        await _settle(app, pilot)
    assert ReviewService(store).detail("mem_a").state == "active"
    with Session(store) as s:
        assert s.get(MemoryConflict, "memconf_1").status == "open"


async def test_conflict_not_a_conflict_key(store):
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(150, 40)) as pilot:
        await _settle(app, pilot)
        await pilot.press("C")
        await _settle(app, pilot)
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("y")
        await _settle(app, pilot)
    with Session(store) as s:
        assert s.get(MemoryConflict, "memconf_1").status == "not_a_conflict"


async def test_undo_after_leaving_and_reopening_the_screen(store):
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(150, 40)) as pilot:
        await _settle(app, pilot)
        await pilot.press("p")
        await _settle(app, pilot)
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("y")
        await _settle(app, pilot)
        await pilot.press("escape")
        await _settle(app, pilot)
        await pilot.press("p")
        await _settle(app, pilot)
        await pilot.press("u")  # the decision was made before the screen was reopened
        await _settle(app, pilot)
    with Session(store) as s:
        assert s.get(CompactionProposal, "memcomp_1").status == "open"
    assert ReviewService(store).detail("mem_d").state == "active"


async def test_compaction_accept_and_reject_keys(store):
    app = MemtuiApp(store, REV)
    async with app.run_test(size=(150, 40)) as pilot:
        await _settle(app, pilot)
        await pilot.press("p")
        await _settle(app, pilot)
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("y")
        await _settle(app, pilot)
    with Session(store) as s:
        p = s.get(CompactionProposal, "memcomp_1")
        assert p.status == "accepted" and p.new_memory_id
    svc = ReviewService(store)
    assert svc.detail("mem_d").state == "superseded" and svc.detail(p.new_memory_id).state == "active"


def test_every_proposal_screen_implements_the_base_hooks():
    """ProposalScreen's hooks raise NotImplementedError; each of the three screens overrides all."""
    from memtui.screens.compaction import CompactionScreen
    from memtui.screens.conflicts import ConflictsScreen
    from memtui.screens.duplicates import DuplicatesScreen
    from memtui.screens.proposals import ProposalScreen

    for screen in (DuplicatesScreen, ConflictsScreen, CompactionScreen):
        missing = [h for h in ProposalScreen.HOOKS if getattr(screen, h) is getattr(ProposalScreen, h)]
        assert missing == [], f"{screen.__name__} lacks {missing}"
