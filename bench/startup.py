"""Start-up of ``memtui`` (issue 11, item 8): the code now beside the code before (commit ``BASELINE_COMMIT``).

Each figure is a whole process, started fresh ``--runs`` times, median quoted:

* ``queue_screen_seconds``: ``memtui --db STORE`` (the real entry point: argument parsing, opening the
  store, the acting reviewer, the app) until the queue screen is mounted, with Textual headless
  (``App.run`` swapped for ``run_test``, so no terminal is needed; ``bench/tui.py`` times the first row in
  a real terminal);
* ``help_seconds``: ``memtui lint --help`` (what every command pays before its own work);
* ``heavy_modules``: which of scikit-learn, gitpython, rapidfuzz, FastAPI, MCP, PyYAML, alembic, typer
  the queue start imported.

The store is :func:`store100k.build_store` of ``--n`` records (cached). One JSON object on stdout.

    .venv/bin/python bench/startup.py [--runs 5] [--n 2000]
"""

from __future__ import annotations

import argparse
import json
import os
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
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--n", type=int, default=2000, help="records in the store")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="startup-") as tmp:
        work = Path(tmp)
        db = work / "store.db"
        build_store(args.n, db)
        base = work / "baseline"
        base.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", BASELINE_COMMIT, "src"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        now = measure(str(ROOT / "src"), db, args.runs)
        before = measure(str(base / "src"), db, args.runs)
    print(json.dumps({"n": args.n, "runs": args.runs, "now": now, "baseline": {"commit": BASELINE_COMMIT, **before},
                      "load_avg_1m": round(os.getloadavg()[0], 2)}))


if __name__ == "__main__":
    main()
