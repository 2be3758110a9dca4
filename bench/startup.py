"""Start-up of ``memtui`` (issue 11, item 8): the code now beside the code before (commit ``BASELINE_COMMIT``).

Each figure is a whole process, started fresh ``--runs`` times, median quoted:

* ``queue_screen_seconds``: ``memtui --db STORE`` (the real entry point: argument parsing, opening the
  store, the acting reviewer, the app) until the queue screen is mounted, with Textual headless
  (``App.run`` swapped for ``run_test``, so no terminal is needed; ``bench/tui.py`` times the first row in
  a real terminal);
* ``help_seconds``: ``memtui lint --help`` (what every command pays before its own work);
* ``heavy_modules``: which of scikit-learn, gitpython, rapidfuzz, FastAPI, MCP, PyYAML, alembic, typer
  the queue start imported;
* ``commands`` (issue 22, item 1): the console script ``memtui`` for ``--help``, ``show ID``,
  ``history ID``, ``health`` and ``decide ID reject`` (a different candidate each run), median seconds
  ``cold`` (``MEMTUI_WARM=0``: a whole fresh process, the naive baseline) and ``warm`` (through the warm
  command server, :mod:`memtui.cli.warm`, started by the first run and not counted), with the targets
  (``show``/``decide`` under 0.25 s, ``--help`` under 0.15 s).

``--baseline`` also times the queue start of issue 11's commit (``BASELINE_COMMIT``) on a store it builds.

The store is :func:`store100k.build_store` of ``--n`` records (cached). One JSON object on stdout.

    .venv/bin/python bench/startup.py [--runs 5] [--n 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from store100k import BASELINE_COMMIT, ROOT, build_store  # noqa: E402

HEAVY = ("sklearn", "git", "rapidfuzz", "fastapi", "mcp", "yaml", "alembic", "typer")

CHILD = """
import asyncio, json, sys
db = sys.argv[1]
import memtui.app

async def first_screen(app):
    async with app.run_test(size=(160, 48)) as pilot:
        while type(app.screen).__name__ != "QueueScreen":
            await pilot.pause(0.005)
    print(json.dumps(sorted(m for m in %r if m in sys.modules)), flush=True)

memtui.app.MemtuiApp.run = lambda self, *a, **k: asyncio.run(first_screen(self))
sys.argv = ["memtui", "--db", db]
from memtui.cli import main
try:
    main()
except SystemExit:
    pass
""" % (HEAVY,)


def _timed(cmd: list[str], env: dict) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"{cmd[:3]} exited {out.returncode}: {out.stderr[-2000:]}")
    return time.perf_counter() - t0, out.stdout


def measure(pythonpath: str, db: Path, runs: int) -> dict:
    """Median whole-process seconds of the queue start and of ``memtui lint --help`` with ``pythonpath``."""
    env = dict(os.environ, PYTHONPATH=pythonpath, MEMTUI_ACTOR="bench", HOME=str(db.parent))
    queue, helps, heavy = [], [], ""
    for _ in range(runs + 1):  # the first run warms the file cache and is not counted
        seconds, heavy = _timed([sys.executable, "-c", CHILD, str(db)], env)
        queue.append(seconds)
        helps.append(_timed([sys.executable, "-m", "memtui", "lint", "--help"], env)[0])
    return {"queue_screen_seconds": round(statistics.median(queue[1:]), 3),
            "help_seconds": round(statistics.median(helps[1:]), 3),
            "heavy_modules": json.loads(heavy.strip().splitlines()[-1])}


TARGETS = {"--help": 0.15, "show": 0.25, "decide": 0.25}


def commands(db: Path, runs: int) -> dict:
    """Median whole-process seconds of light commands through the console script, cold and warm."""
    import sqlite3

    with sqlite3.connect(db) as conn:
        ids = [r[0] for r in conn.execute("SELECT memory_id FROM memory WHERE state = 'candidate' "
                                          "ORDER BY memory_id LIMIT ?", (4 * (runs + 2),))]
    script = str(Path(sys.executable).with_name("memtui"))
    warm_dir = Path(tempfile.mkdtemp(prefix="warm-"))
    warm_dir.chmod(0o700)
    base = dict(os.environ, MEMTUI_DB=str(db), LOGNAME="bench", USER="bench", HOME=str(db.parent),
                MEMTUI_WARM_DIR=str(warm_dir))
    base.pop("MEMTUI_ACTOR", None)
    modes = {"cold": {**base, "MEMTUI_WARM": "0"}, "warm": {**base, "MEMTUI_WARM": "1"}}
    _timed([script, "health"], modes["warm"])  # starts the server
    for _ in range(600):
        if list(warm_dir.glob("*.sock")):
            break
        time.sleep(0.05)
    decided = iter(ids)
    cases = {"--help": lambda: ["--help"], "show": lambda: ["show", ids[0]], "history": lambda: ["history", ids[0]],
             "health": lambda: ["health"], "decide": lambda: ["decide", next(decided), "reject", "--comment", "b"]}
    out: dict = {}
    try:
        for name, argv in cases.items():
            out[name] = {}
            for mode, env in modes.items():
                times = [_timed([script, *argv()], env)[0] for _ in range(runs + 1)]
                out[name][mode] = round(statistics.median(times[1:]), 3)
            if name in TARGETS:
                out[name]["target"] = TARGETS[name]
                out[name]["meets_target_warm"] = out[name]["warm"] < TARGETS[name]
    finally:
        for pid_file in warm_dir.glob("*.pid"):
            try:
                os.kill(int(pid_file.read_text()), 15)
            except (OSError, ValueError):
                pass
        shutil.rmtree(warm_dir, ignore_errors=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--n", type=int, default=2000, help="records in the store")
    ap.add_argument("--baseline", action="store_true", help="also time the queue start of issue 11's commit")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="startup-") as tmp:
        work = Path(tmp)
        db = work / "store.db"
        build_store(args.n, db)
        cmds = commands(db, args.runs)
        now = measure(str(ROOT / "src"), db, args.runs)
        before = None
        if args.baseline:  # the code of issue 11's change; it cannot open a store of a newer schema
            base = work / "baseline"
            base.mkdir()
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", BASELINE_COMMIT, "src"], check=True,
                                     capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
            old_db = work / "old.db"
            build_store(args.n, old_db)
            before = {"commit": BASELINE_COMMIT, **measure(str(base / "src"), old_db, args.runs)}
    print(json.dumps({"n": args.n, "runs": args.runs, "commands": cmds, "now": now, "baseline": before,
                      "load_avg_1m": round(os.getloadavg()[0], 2)}))


if __name__ == "__main__":
    main()
