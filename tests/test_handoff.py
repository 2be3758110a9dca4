"""Hand-off to the reviewer's tools (issue 24, item 7): ``o`` on an evidence item runs ``$EDITOR``
with ``+LINE FILE`` (the checkout's file, or a read-only copy of the blob at the evidence's commit);
``O`` runs ``git show`` of its commit; ``E`` without a proposed edit edits the statement in
``$EDITOR``. Real stores, real git, a real editor script that records its arguments."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

from sqlmodel import Session, select

from memtui.app import MemtuiApp
from memtui.domain.invariants import Actor
from memtui.review.handoff import editor_command, evidence_file
from memtui.review.service import ReviewService
from memtui.store.models import Repository

REVIEWER = Actor("human", "reviewer-7")


def _recorder(tmp_path: Path, name: str = "editor", body: str = "") -> tuple[Path, Path]:
    """An executable that appends its arguments (JSON) to a log, then runs ``body`` (shell)."""
    log = tmp_path / f"{name}.log"
    script = tmp_path / name
    script.write_text(f"#!/bin/sh\n{os.sys.executable} -c 'import json,sys; "
                      f"open(sys.argv[1], \"a\").write(json.dumps(sys.argv[2:]) + \"\\n\")' {log} \"$@\"\n{body}\n")
    script.chmod(0o755)
    return script, log


def _checkout(engine, repo_id: str) -> Path:
    with Session(engine) as s:
        return Path(s.exec(select(Repository.checkout_path).where(Repository.repository_id == repo_id)).one())


async def _settled(pilot):
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def _evidence_screen_then(app, pilot, mid: str, key: str) -> None:
    """Open ``mid``'s first evidence from the queue, press ``key``, settle."""
    await _settled(pilot)
    queue = app.screen.query_one("#queue")
    queue.move_cursor(row=[r.memory_id for r in queue.rows].index(mid))
    await _settled(pilot)
    await pilot.press("e")
    await _settled(pilot)
    await pilot.press(key)
    await _settled(pilot)


def test_editor_command_takes_visual_first_and_splits_it():
    assert editor_command(Path("/x/A.java"), 12, {"EDITOR": "nano"}) == ["nano", "+12", "/x/A.java"]
    assert editor_command(Path("/x/A.java"), 3, {"VISUAL": "code --wait", "EDITOR": "vi"}) == [
        "code", "--wait", "+3", "/x/A.java"]
    assert editor_command(Path("a b.txt"), None, {}) == ["vi", "a b.txt"]


async def test_o_on_an_evidence_item_opens_the_editor_at_its_line(demo_copy, tmp_path, monkeypatch):
    script, log = _recorder(tmp_path)
    monkeypatch.setenv("EDITOR", str(script))
    monkeypatch.delenv("VISUAL", raising=False)
    mid = "mem_rule_registry_convention"
    ev = ReviewService(demo_copy).detail(mid).evidence[0]
    checkout = _checkout(demo_copy, ev.repository_id or "order-service")
    expected_line = ev.current_line_start or ev.line_start
    expected_file = checkout / (ev.current_path or ev.path)
    assert expected_file.is_file() and expected_line
    app = MemtuiApp(demo_copy, REVIEWER)
    async with app.run_test(size=(80, 24)) as pilot:
        await _evidence_screen_then(app, pilot, mid, "o")
        assert type(app.screen).__name__ == "EvidenceScreen"  # back in the TUI afterwards
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert calls == [[f"+{expected_line}", str(expected_file)]]


def test_evidence_whose_file_is_gone_opens_a_read_only_copy_of_the_recorded_blob(demo_copy, tmp_path):
    from memtui.domain.states import ALL_STATES
    from memtui.review.queue_query import QueueFilter

    service = ReviewService(demo_copy)
    for mid in [r.memory_id for r in service.find(QueueFilter(states=tuple(ALL_STATES)), None, 500)]:
        for i, ev in enumerate(service.detail(mid).evidence):
            if ev.path and ev.commit_sha and ev.status == "deleted":
                target = evidence_file(demo_copy, mid, i, tmp_path)
                assert target.temporary and target.line == ev.line_start
                assert not (target.path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
                checkout = _checkout(demo_copy, ev.repository_id or "order-service")
                shown = subprocess.run(["git", "-C", str(checkout), "show", f"{ev.commit_sha}:{ev.path}"],
                                       capture_output=True, check=True).stdout
                assert target.path.read_bytes() == shown
                return
    raise AssertionError("the demo store has no evidence whose file is gone")


async def test_O_shows_the_evidence_commit_with_git_show(demo_copy, tmp_path, monkeypatch):
    pager, log = _recorder(tmp_path, "pager", "cat > /dev/null")
    monkeypatch.setenv("GIT_PAGER", str(pager))
    mid = "mem_rule_registry_convention"
    ev = ReviewService(demo_copy).detail(mid).evidence[0]
    app = MemtuiApp(demo_copy, REVIEWER)
    async with app.run_test(size=(80, 24)) as pilot:
        await _evidence_screen_then(app, pilot, mid, "O")
        assert type(app.screen).__name__ == "EvidenceScreen"  # back in the TUI afterwards
    # git pages only on a terminal: where it did, the pager got no arguments (the commit on stdin)
    assert not log.exists() or log.read_text().splitlines() == ["[]"]


def test_show_commit_runs_git_show_of_the_evidence_commit(demo_copy, capfd):
    from memtui.review.handoff import evidence_commit, show_commit

    checkout, sha = evidence_commit(demo_copy, "mem_rule_registry_convention", 0)
    assert sha == ReviewService(demo_copy).detail("mem_rule_registry_convention").evidence[0].commit_sha
    assert show_commit(checkout, sha) == 0
    assert f"commit {sha}" in capfd.readouterr().out


async def test_E_without_a_proposal_edits_the_statement_in_the_editor(demo_copy, tmp_path, monkeypatch):
    new = "Validation rules are registered in RuleRegistry, never in OrderValidator."
    script, log = _recorder(tmp_path, "editor", f"printf '%s\\n' '{new}' > \"$1\"")
    monkeypatch.setenv("VISUAL", str(script))
    service = ReviewService(demo_copy)
    app = MemtuiApp(demo_copy, REVIEWER)
    async with app.run_test(size=(120, 30)) as pilot:
        await _settled(pilot)
        queue = app.screen.query_one("#queue")
        row = next(i for i, r in enumerate(queue.rows) if not service.detail(r.memory_id).proposed_statement)
        mid, before = queue.rows[row].memory_id, service.detail(queue.rows[row].memory_id)
        queue.move_cursor(row=row)
        await _settled(pilot)
        await pilot.press("E")
        await _settled(pilot)
    [args] = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(args) == 1 and args[0].startswith(os.path.join(os.environ.get("TMPDIR", "/tmp"), "memtui-statement-"))
    after = service.detail(mid)
    assert after.statement == new and after.state == before.state and after.version == before.version + 1
    assert not Path(args[0]).exists()  # the temporary file is gone
