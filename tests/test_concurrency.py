"""Decisions against the state the reviewer saw, and review claims (issue 9, item 3), on SQLite and PostgreSQL.

Two real `memtui decide ID needs-review --expect-version N` processes race on one memory: exactly one
wins, the other exits 1 with "changed by", and exactly one event is written. Two reviewers claiming
from one queue never get the same item; claims expire.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from memtui.cli import app as memtui_app
from memtui.domain.invariants import Actor
from memtui.governance.integrity import check_store
from memtui.importers.native import import_files
from memtui.review.service import DecisionError, ReviewService
from memtui.store.engine import open_store

RUNS = 10
ANN = Actor("human", "ann", "reviewer")
BOB = Actor("human", "bob", "reviewer")

# The racers: one process imports the command line once, then for each run forks one child per
# argument list. Each child is a process of its own (its own engine, connections and transactions)
# running the real entry point, memtui.cli.main, as the console script does; its output goes to files.
# The children say they are ready and wait; once all are, they are released at one instant, so they
# reach the store together. (Forking saves each racer the second of imports it would otherwise pay,
# and a child leaves with os._exit once main() is done and its output flushed.)
RACERS = r"""
import atexit, json, os, sys
from memtui.cli import app, main  # the imports happen once, before any fork (decide's own too)
import memtui.review.service, memtui.store.engine, psycopg  # noqa: E401
for line in sys.stdin:
    job = json.loads(line)
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pids = []
    for i, argv in enumerate(job["argvs"]):
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            for fd, name, flags in ((0, os.devnull, os.O_RDONLY),
                                    (1, f"{job['dir']}/{i}.out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                    (2, f"{job['dir']}/{i}.err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
                os.dup2(os.open(name, flags, 0o644), fd)
            os.close(ready_r)
            os.close(go_w)
            os.write(ready_w, b"r")
            os.read(go_r, 1)
            sys.argv = ["memtui", *argv]
            try:
                main()
                code = 0
            except SystemExit as exc:  # as the interpreter turns it into an exit status
                code = 0 if exc.code is None else exc.code
                if not isinstance(code, int):
                    print(code, file=sys.stderr)
                    code = 1
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)  # without tearing down the interpreter the child shares with this one (half a second)
        pids.append(pid)
    os.close(ready_w)
    os.close(go_r)
    for _ in pids:  # every child is waiting
        assert os.read(ready_r, 1) == b"r"
    os.write(go_w, b"g" * len(pids))  # release them all at once
    codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]
    os.close(ready_r)
    os.close(go_w)
    print(json.dumps(codes), flush=True)
"""


def _race(racers: subprocess.Popen, run_dir, argvs: list[list[str]]) -> list[tuple[int, str, str]]:
    """Run ``memtui ARGV`` for each of ``argvs`` at once; (exit code, stdout, stderr) of each."""
    run_dir.mkdir()
    racers.stdin.write(json.dumps({"argvs": argvs, "dir": str(run_dir)}) + "\n")
    racers.stdin.flush()
    ready, _, _ = select.select([racers.stdout], [], [], 60)
    assert ready, "the racers did not finish in 60 s"
    line = racers.stdout.readline()
    assert line, (run_dir.parent / "racers.err").read_text()
    return [(rc, (run_dir / f"{i}.out").read_text(), (run_dir / f"{i}.err").read_text())
            for i, rc in enumerate(json.loads(line))]


def _candidates(engine, tmp_path, n: int) -> list[str]:
    src = tmp_path / "candidates.yaml"
    src.write_text("".join(
        f"- memoryId: mem_race_{i:02d}\n  type: code_fact\n  statement: Race subject number {i}.\n"
        f"  scope: {{tenantId: acme, repositoryId: order-service}}\n  state: candidate\n"
        f"  evidence: [{{type: human, ref: 'note {i}'}}]\n" for i in range(n)))
    report = import_files(engine, [src], Actor("human", "loader", "lead"))
    assert len(report.imported) == n
    return sorted(report.imported)


def _events(engine, memory_id: str) -> int:
    with engine.connect() as conn:
        return conn.execute(sa.text("SELECT count(*) FROM memory_state_history WHERE memory_id = :m"),
                            {"m": memory_id}).scalar()


def test_two_processes_deciding_with_the_same_version_one_wins(engine, store_url, tmp_path):
    ids = _candidates(engine, tmp_path, RUNS)
    racers_err = tmp_path / "racers.err"
    racers = subprocess.Popen([sys.executable, "-c", RACERS], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=racers_err.open("w"), text=True, start_new_session=True)
    try:
        for n, mid in enumerate(ids):
            version = ReviewService(engine).detail(mid).version
            results = _race(racers, tmp_path / f"run{n}", [
                ["decide", mid, "needs-review", "--expect-version", str(version), "--db", store_url, "--actor", who]
                for who in ("ann", "bob")])
            codes = sorted(rc for rc, _o, _e in results)
            assert codes == [0, 1], results
            loser = next(err for rc, _o, err in results if rc == 1)
            assert f"{mid} changed by human:" in loser and ": look again" in loser, loser
            assert "locked" not in loser and "Traceback" not in loser
            assert _events(engine, mid) == 2  # the import and exactly one decision
            assert ReviewService(engine).detail(mid).state == "needs_review"
    finally:
        racers.stdin.close()
        try:
            racers.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(racers.pid, signal.SIGKILL)
            racers.wait()
    assert check_store(engine).findings == ()


def test_a_stale_version_is_refused_naming_who_changed_it(engine, store_url, tmp_path):
    (mid,) = _candidates(engine, tmp_path, 1)
    svc = ReviewService(engine)
    seen = svc.detail(mid).version
    svc.decide(mid, "needs-review", ANN)
    out = CliRunner().invoke(memtui_app, ["decide", mid, "approve", "--expect-version", str(seen),
                                          "--db", store_url, "--actor", "bob"])
    assert out.exit_code == 1
    assert f"{mid} changed by human:ann at 2026-11-30T12:00:00Z: look again" in out.output
    assert svc.detail(mid).state == "needs_review" and _events(engine, mid) == 2
    out = CliRunner().invoke(memtui_app, ["edit", mid, "--text", "Other words.", "--expect-version", str(seen),
                                          "--db", store_url, "--actor", "bob"])
    assert out.exit_code == 1 and f"{mid} changed by human:ann" in out.output
    assert svc.detail(mid).statement == "Race subject number 0."
    now = svc.detail(mid).version
    out = CliRunner().invoke(memtui_app, ["decide", mid, "approve", "--expect-version", str(now),
                                          "--db", store_url, "--actor", "bob"])
    assert out.exit_code == 0, out.output


def test_the_optimistic_update_that_loses_says_changed_by(engine, tmp_path):
    """The version check passed, then someone else committed before this UPDATE: StaleDataError -> changed by."""
    from sqlmodel import Session

    from memtui.review.lifecycle import transition
    from memtui.store.models import Memory

    (mid,) = _candidates(engine, tmp_path, 1)
    with Session(engine) as session:
        session.begin()
        mine = session.get(Memory, mid)  # read version 1
        ReviewService(engine).decide(mid, "needs-review", ANN)  # another reviewer commits meanwhile
        transition(session, mine, "rejected", BOB, reason="reviewer decision: reject")
        from sqlalchemy.orm.exc import StaleDataError

        with pytest.raises(StaleDataError):
            session.commit()
    from memtui.review.concurrency import changed_by_now

    assert changed_by_now(engine, mid, 1).startswith(f"{mid} changed by human:ann at ")
    assert _events(engine, mid) == 2


# ---- claims ----------------------------------------------------------------------------------

def test_two_reviewers_claiming_never_share_an_item(engine, tmp_path):
    ids = _candidates(engine, tmp_path, 40)
    got: dict[str, list[str]] = {"ann": [], "bob": [], "cy": [], "di": []}
    errors: list[BaseException] = []

    def work(name: str) -> None:
        svc = ReviewService(engine)
        try:
            while True:
                claimed = svc.claim_next(Actor("human", name, "reviewer"), n=3, ttl_minutes=30)
                if not claimed:
                    return
                got[name].extend(claimed)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in got]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    every = [m for claimed in got.values() for m in claimed]
    assert len(every) == len(set(every)) == 40
    assert set(every) == set(ids)
    with engine.connect() as conn:
        owners = dict(conn.execute(sa.text("SELECT memory_id, claimed_by FROM review_claim")).all())
    assert owners == {m: name for name, claimed in got.items() for m in claimed}


def test_claims_follow_the_queue_order_and_expire(engine, store_url, tmp_path, monkeypatch):
    ids = _candidates(engine, tmp_path, 3)
    svc = ReviewService(engine)
    svc.decide(ids[2], "needs-review", ANN)  # needs_review comes first in the queue
    assert svc.claim_next(ANN, n=2, ttl_minutes=10) == [ids[2], ids[0]]
    assert svc.claim_next(BOB, n=5, ttl_minutes=10) == [ids[1]]
    assert svc.claim_next(BOB, n=5, ttl_minutes=10) == []
    monkeypatch.setenv("MEMTUI_NOW", "2026-11-30T12:10:01Z")  # every claim ran out: all come back, in queue order
    assert svc.claim_next(BOB, n=5, ttl_minutes=10) == [ids[2], ids[0], ids[1]]
    out = CliRunner().invoke(memtui_app, ["claim", "--n", "2", "--db", store_url, "--actor", "cy"])
    assert out.exit_code == 0 and out.stdout == ""
    assert "nothing to claim" in out.output
    assert svc.release(BOB, [ids[0]]) == 1
    out = CliRunner().invoke(memtui_app, ["claim", "--n", "2", "--ttl", "5", "--db", store_url, "--actor", "cy"])
    assert out.exit_code == 0 and out.stdout.split() == [ids[0]]
    out = CliRunner().invoke(memtui_app, ["claim", "--n", "0", "--db", store_url])
    assert out.exit_code == 2


def test_a_decision_error_is_a_decision_error(engine, tmp_path):
    (mid,) = _candidates(engine, tmp_path, 1)
    with pytest.raises(DecisionError, match="changed by human:loader"):
        ReviewService(engine).decide(mid, "approve", ANN, expected_version=7)


def test_sqlite_store_waits_for_a_busy_writer(tmp_path):
    """A second writer waits for the first instead of failing with "database is locked"."""
    engine = open_store(str(tmp_path / "busy.db"))
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 5000
    engine.dispose()


async def test_the_queue_decides_against_the_version_it_showed(sqlite_engine, tmp_path):
    """The TUI passes the version of the row on screen: a memory changed meanwhile is refused, naming who."""
    from pathlib import Path

    from memtui.app import MemtuiApp
    from tests.gitrepo import import_anchored

    # the records' evidence is committed in a checkout, so the active one arrives active (issue 21 item 3)
    import_anchored(sqlite_engine, [Path(__file__).parent / "data" / "queue.yaml"], Actor("human", "loader"), tmp_path)
    app = MemtuiApp(sqlite_engine, Actor("human", "reviewer-7", "reviewer"))
    async with app.run_test(size=(140, 30)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.press("j", "j")  # mem_registry, shown at version 1
        await pilot.pause()
        ReviewService(sqlite_engine).decide("mem_registry", "needs-review", ANN)  # another reviewer, meanwhile
        await pilot.press("a")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert any(m.startswith("mem_registry changed by human:ann at 2026-11-30T12:00:00Z: look again")
                   for m in messages), messages
    svc = ReviewService(sqlite_engine)
    assert svc.detail("mem_registry").state == "needs_review"
    assert [e.actor_id for e in svc.history("mem_registry")] == ["loader", "ann"]
    assert check_store(sqlite_engine).findings == ()
