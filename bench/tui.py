"""The review queue in a real terminal at 100,000 memories (issue 11, item 8), beside a plain DataTable.

Builds (cached under bench/.cache/) a store of N memories with ``memtui import`` of a JSONL file,
then runs ``memtui`` inside tmux (160x48) and watches the screen with ``tmux capture-pane`` polling
(no Pilot): process start to the first queue row on screen; a decision key (``a``, or ``x`` where a
review gate is shut) to the next item painted (the cursor moves on as the write starts; the run
checks that every decision was written); a cursor key (``j``) to the moved
highlight painted; a search (``/`` query enter) to its one result painted. The same first-row and
keystroke figures are taken for a 25-line Textual app holding the same rows in a stock
``DataTable`` with a detail pane (the baseline; a decision there is ``update_cell`` + cursor down).

Prints one JSON object: n, import_seconds, import_peak_rss_mb, first_row_seconds, decision_ms_median,
decision_ms_p95, cursor_ms_median, search_ms, baseline_{first_row_seconds, decision_ms_median,
decision_ms_p95, cursor_ms_median}, targets. Usage: .venv/bin/python bench/tui.py [--n 100000] [--keys 40]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(__file__).resolve().parent / ".cache"
BIN = Path(sys.executable).parent
SIZE = (160, 48)
GENERATOR_VERSION = 1
POLL = 0.002  # seconds between screen captures


def statement(i: int) -> str:
    """The statement of generated memory ``i``: unique words (``token{i}``) make exact searches."""
    return f"Service{i % 97} resolves rule {i} through Registry{i % 13} (token{i})."


def record(i: int) -> dict:
    """Generated memory ``i``: every tenth needs review, the rest are candidates; approvable by a
    reviewer (file evidence in its repository, normal impact)."""
    return {
        "memoryId": f"mem_{i:06d}", "type": "code_fact", "statement": statement(i),
        "scope": {"tenantId": "acme", "repositoryId": f"repo{i % 5}", "modulePath": f"src/mod{i % 50}"},
        "state": "needs_review" if i % 10 == 0 else "candidate", "confidence": round(0.3 + (i % 70) / 100, 2),
        "createdAt": f"2026-{1 + i % 11:02d}-{1 + i % 28:02d}T00:00:00Z",
        "evidence": [{"type": "file_span", "path": f"src/mod{i % 50}/F{i}.java", "commitSha": "a" * 40,
                      "lines": [1, 10]}],
    }


def build_store(n: int, path: Path) -> dict:
    """Write N records as JSONL and ``memtui import`` them into the SQLite store ``path`` (a child
    process). Returns {"import_seconds", "import_peak_rss_mb"} of that process. Raises on failure."""
    src = path.with_suffix(".jsonl")
    with src.open("w", encoding="utf-8") as out:
        for i in range(n):
            out.write(json.dumps(record(i)) + "\n")
    path.unlink(missing_ok=True)
    start = time.perf_counter()
    proc = subprocess.run([str(BIN / "memtui"), "--db", str(path), "--actor", "loader", "import", str(src)],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"memtui import failed: {proc.stderr[-2000:]}")
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # the largest child so far: the import
    src.unlink()
    return {"import_seconds": round(seconds, 2), "import_peak_rss_mb": round(peak_kb / 1024, 1)}


def _builder():
    """bench/store100k.py's cached builder when it is there (issue 11, item 9), else :func:`build_store`."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    try:
        from store100k import build_store as shared
    except ImportError:
        return build_store, "bench/tui.py"
    return shared, "bench/store100k.py"


def cached_store(n: int) -> tuple[Path, dict]:
    """The store of N generated memories, built once (its import figures kept beside it)."""
    CACHE.mkdir(exist_ok=True)
    build, where = _builder()
    if where != "bench/tui.py":
        path = CACHE / f"tui-shared-{n}.db"
        figures = build(n, path)
        return path, {"import_seconds": figures.get("import_seconds"),
                      "import_peak_rss_mb": figures.get("import_peak_rss_mb"), "store_built_by": where}
    path = CACHE / f"tui-{n}-v{GENERATOR_VERSION}.db"
    meta = path.with_suffix(".json")
    if path.exists() and meta.exists():
        return path, {**json.loads(meta.read_text()), "import_cached": True}
    figures = build_store(n, path)
    meta.write_text(json.dumps(figures))
    return path, {**figures, "import_cached": False}


# ---- a real terminal ---------------------------------------------------------------------------
class Tmux:
    """One detached tmux session running ``argv``; the screen read with ``capture-pane``."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str]):
        self.name = name
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
        envs = [f"{k}={v}" for k, v in env.items()]
        self.started = time.perf_counter()
        subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", str(SIZE[0]), "-y", str(SIZE[1]),
                        "env", *envs, *argv], check=True)

    def screen(self, styled: bool = False) -> str:
        args = ["tmux", "capture-pane", "-p", "-t", self.name] + (["-e"] if styled else [])
        return subprocess.run(args, capture_output=True, text=True).stdout

    def keys(self, *keys: str, literal: bool = False) -> float:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *(["-l"] if literal else []), *keys], check=True)
        return time.perf_counter()

    def wait(self, until, timeout: float = 60.0, styled: bool = False) -> float:
        """Poll the screen until ``until(screen)`` is true; returns the time it was first seen."""
        end = time.perf_counter() + timeout
        while time.perf_counter() < end:
            shot = self.screen(styled)
            if until(shot):
                return time.perf_counter()
            time.sleep(POLL)
        raise TimeoutError(f"{self.name}: screen never showed what was awaited:\n{self.screen()}")

    def settle(self, quiet: float = 0.25, timeout: float = 10.0) -> None:
        """Wait until the (styled) screen has not changed for ``quiet`` seconds (detail pane drawn)."""
        last, since, end = self.screen(True), time.perf_counter(), time.perf_counter() + timeout
        while time.perf_counter() < end:
            time.sleep(0.02)
            shot = self.screen(True)
            if shot != last:
                last, since = shot, time.perf_counter()
            elif time.perf_counter() - since >= quiet:
                return

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


def _ms(values: list[float]) -> tuple[float, float]:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]
    return round(statistics.median(values) * 1000, 1), round(p95 * 1000, 1)


def _keystrokes(t: Tmux, key: str, count: int, changed) -> list[float]:
    """Press ``key`` ``count`` times; each time, how long until ``changed(before, screen)``."""
    out = []
    for _ in range(count):
        t.settle()
        before = t.screen(True)
        sent = t.keys(key)
        seen = t.wait(lambda s: changed(before, s), styled=True)
        out.append(seen - sent)
    return out


def _plan(db: Path, keys: int) -> dict:
    """What the screen will show, read through the review service: the first row's statement, the
    key that decides each of the rows the decisions land on (``a`` when no review gate is shut,
    else ``x``), and a search with its first result and match count."""
    from memtui.domain.invariants import Actor
    from memtui.review.queue_query import QueueFilter
    from memtui.review.service import ReviewService
    from memtui.store.engine import open_store

    engine = open_store(str(db))
    svc = ReviewService(engine, Actor("human", "bench", "reviewer"))
    rows = svc.find(QueueFilter(), None, 2 * keys + 2)
    decide = ["x" if svc.detail(r.memory_id).gates else "a" for r in rows[keys:2 * keys]]
    target = svc.find(QueueFilter(), None, 1000)[-1]  # a memory well down the queue
    words = [w for w in QueueFilter(search=target.statement).terms if len(w) > 3][:3]
    query = " ".join(words)
    results = svc.find(QueueFilter(search=query), None, 201)
    engine.dispose()
    from memtui.text import visible

    shown = lambda st: visible(st).replace("\n", " ⏎ ")[:24]  # noqa: E731  (as the list draws it)
    return {"first": shown(rows[0].statement), "decide": decide, "query": query,
            "result": shown(results[0].statement), "matches": len(results)}


def measure_memtui(db: Path, keys: int, env: dict) -> dict:
    """First row, decisions, cursor keys and a search in ``memtui`` on ``db``."""
    plan = _plan(db, keys)
    out_plan = {"search_query": plan["query"], "search_matches": plan["matches"]}
    t = Tmux("memtui-bench", [str(BIN / "memtui"), "--db", str(db), "--actor", "bench", "--role", "reviewer"], env)
    try:
        t.wait(lambda s: plan["first"] in s)
        first_row = time.perf_counter() - t.started
        t.settle(0.5)
        cursor = _keystrokes(t, "j", keys, lambda b, s: b != s)
        decisions = []
        for key in plan["decide"]:  # the cursor on the next item is the first change painted
            t.settle()
            before = t.screen(True)
            sent = t.keys(key)
            decisions.append(t.wait(lambda s: s != before, styled=True) - sent)
        t.wait(lambda s: f"decided {len(plan['decide'])} /" in s, timeout=10)  # every decision was written
        t.settle()
        t.keys("/")
        t.wait(lambda s: "search statements" in s)
        t.keys(plan["query"], literal=True)
        sent = t.keys("Enter")
        loaded = f"loaded {plan['matches']} " if plan["matches"] <= 200 else "loaded 200 "
        search = t.wait(lambda s: plan["result"] in s and loaded in s and f"/{plan['query']}" in s) - sent
        t.keys("q")
    finally:
        t.close()
    print("decision samples ms:", [round(x * 1000) for x in decisions], file=sys.stderr)
    print("cursor samples ms:", [round(x * 1000) for x in cursor], file=sys.stderr)
    d_med, d_p95 = _ms(decisions)
    return {"first_row_seconds": round(first_row, 3), "decision_ms_median": d_med, "decision_ms_p95": d_p95,
            "cursor_ms_median": _ms(cursor)[0], "search_ms": round(search * 1000, 1), **out_plan}


BASELINE_APP = '''
import sqlite3, sys
from rich.text import Text
from textual.app import App
from textual.containers import Horizontal
from textual.widgets import DataTable, Static

class Baseline(App):
    CSS = "DataTable { width: 3fr; height: 1fr; } #d { width: 2fr; }"
    BINDINGS = [("a", "decide", "Decide"), ("j", "down", "Down"), ("q", "quit", "Quit")]
    def compose(self):
        with Horizontal():
            yield DataTable(id="t", cursor_type="row")
            yield Static(id="d")
    def on_mount(self):
        t = self.query_one(DataTable)
        t.add_column("state", key="state"); t.add_column("statement", key="statement")
        t.add_column("type"); t.add_column("conf")
        rows = sqlite3.connect(sys.argv[1]).execute(
            "SELECT memory_id, state, statement, type, confidence FROM memory "
            "WHERE state IN ('needs_review', 'challenged', 'candidate', 'approved') ORDER BY CASE state "
            "WHEN 'needs_review' THEN 0 WHEN 'challenged' THEN 1 WHEN 'candidate' THEN 2 ELSE 3 END, memory_id")
        for mid, state, st, ty, conf in rows:
            t.add_row(Text(state), Text(st), Text(ty), Text(f"{conf:.2f}"), key=mid)
        t.focus()
    def on_data_table_row_highlighted(self, e):
        self.query_one("#d", Static).update(Text(str(e.row_key.value)))
    def action_down(self):
        self.query_one(DataTable).action_cursor_down()
    def action_decide(self):
        t = self.query_one(DataTable)
        key = t.coordinate_to_cell_key((t.cursor_row, 0)).row_key
        t.update_cell(key, "state", Text("decided"))
        t.action_cursor_down()
Baseline().run()
'''


def measure_baseline(db: Path, keys: int, env: dict, first: str) -> dict:
    """The same figures for a stock DataTable app holding every row (loaded at start, as it must)."""
    script = CACHE / "baseline_app.py"
    script.write_text(BASELINE_APP)
    t = Tmux("memtui-bench-baseline", [sys.executable, str(script), str(db)], env)
    try:
        t.wait(lambda s: first in s, timeout=600)
        first_row = time.perf_counter() - t.started
        t.settle(0.5)
        cursor = _keystrokes(t, "j", keys, lambda b, s: b != s)
        decisions = _keystrokes(t, "a", keys, lambda b, s: b != s)
        t.keys("q")
    finally:
        t.close()
    d_med, d_p95 = _ms(decisions)
    return {"baseline_first_row_seconds": round(first_row, 3), "baseline_decision_ms_median": d_med,
            "baseline_decision_ms_p95": d_p95, "baseline_cursor_ms_median": _ms(cursor)[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000, help="memories in the store")
    ap.add_argument("--keys", type=int, default=40, help="decisions and cursor keys timed")
    ap.add_argument("--no-baseline", action="store_true", help="skip the DataTable baseline")
    ap.add_argument("--db", type=Path, help="time this existing SQLite store instead (no import figures)")
    args = ap.parse_args()
    if not shutil.which("tmux"):
        raise SystemExit("bench/tui.py needs tmux (a real terminal)")
    if args.db:
        db, figures = args.db, {"import_seconds": None, "import_peak_rss_mb": None, "store": str(args.db)}
    else:
        db, figures = cached_store(args.n)
    work = CACHE / "run.db"  # decisions change the store: time them on a copy
    for suffix in ("", "-wal", "-shm"):
        Path(str(work) + suffix).unlink(missing_ok=True)
    shutil.copyfile(db, work)
    config = CACHE / "config"  # no saved queue filter of the user's
    shutil.rmtree(config, ignore_errors=True)
    env = {"TERM": "xterm-256color", "COLORTERM": "truecolor", "XDG_CONFIG_HOME": str(config),
           "TEXTUAL_ANIMATIONS": "none", "PATH": os.environ.get("PATH", "")}
    out = {"n": args.n, **figures, **measure_memtui(work, args.keys, env)}
    if not args.no_baseline:
        out.update(measure_baseline(db, args.keys, env, _plan(db, 1)["first"]))
    out["load_avg_1m"] = round(os.getloadavg()[0], 2)  # the machine is shared: latency follows its load
    out["targets"] = {"first_row_seconds": 0.7, "decision_ms_median": 33, "decision_ms_p95": 66,
                      "cursor_ms_median": 33, "search_ms": 200, "import_seconds": 15, "import_peak_rss_mb": 400}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
