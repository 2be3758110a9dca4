"""A million memories on PostgreSQL (issue 22, item 8): load them, then time what people wait on.

Load: records 0..N-1 of ``bench/store100k.py``'s generator (twelve repositories and org-wide memory,
ten states — 40 % candidate, 20 % active —, one to three evidence rows each) go through the code
``memtui import`` runs (:func:`memtui.importers.native.prepare` and :class:`~memtui.importers.native.RecordWriter`:
validation, screening, creation checks, sealed first events, the store chain), ``--chunk`` records a
transaction, on ``--workers`` processes, into a fresh database ``--db-name`` on ``--admin``'s server;
then ``VACUUM ANALYZE``. A database that already holds a finished load of N (a ``store_setting`` row)
is reused unless ``--reload``; ``--drop`` drops it and exits. Progress goes to stderr.

Measurements (each may be skipped with ``--skip``):

* ``tui``: ``memtui --db URL`` in tmux (``bench/tui.py``'s driver): first queue row on screen,
  decision key to the next item painted (median, p95), and a search typed into the queue;
* ``search``: :meth:`memtui.review.service.ReviewService.find` (the first page of 200, what the
  queue paints) and ``find_count`` for a few searches, each with ``EXPLAIN ANALYZE`` of its page query;
  ``naive``: the same page by the query before issue 22 (every match sorted), where it differs;
* ``recall``: ``memtui serve`` on a local port, ``POST /recall`` for ``--recall-tasks`` tasks of the
  generator's words: the first request after start (cold), p50/p95 of the rest (warm), and the first
  request after a store change;
* ``maintain``: ``memtui import`` of 1,000 new records, then ``memtui maintain`` (every job), timed
  with its peak RSS; stopped (and reported so) past ``--maintain-timeout`` seconds or ``--maintain-rss-gb``.

Prints one JSON object (seconds, ms, MB; ``load_avg_1m``; ``targets`` and ``met``).

    .venv/bin/python bench/store1m.py [--n 1000000] [--workers 2] [--skip tui,recall] [--reload]
    .venv/bin/python bench/store1m.py --drop
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from store100k import _MODULES, _NOUNS, _REPOS, _VERBS, record  # noqa: E402  (the shared generator)

ADMIN = os.environ.get("MEMTUI_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
MEMTUI = [sys.executable, "-c", "import sys; from memtui.cli import main; sys.argv[0] = 'memtui'; main()"]
MARKER = "bench.store1m"  # store_setting key of a finished load: {"n": N, "load_seconds": ...}
SETTLE = 0.6  # seconds of an unchanged screen before the next key is sent (bench/tui.py: 0.25)
TARGETS = {"first_row_seconds": 1.0, "decision_ms_median": 50, "search_ms": 300, "recall_p95_ms": 100}


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _sa_url(url: str) -> str:
    return "postgresql+psycopg://" + url.split("://", 1)[1] if url.startswith(("postgresql://", "postgres://")) else url


def store_url(admin: str, name: str) -> str:
    """The URL of database ``name`` on ``admin``'s server (``memtui --db`` form)."""
    base, _, _ = admin.rpartition("/")
    return f"{base}/{name}"


def _admin(admin: str) -> sa.Engine:
    return sa.create_engine(_sa_url(admin), isolation_level="AUTOCOMMIT")


def drop_database(admin: str, name: str) -> None:
    eng = _admin(admin)
    with eng.connect() as c:
        c.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    eng.dispose()


def loaded(url: str, n: int) -> dict | None:
    """The marker of a finished load of ``n`` memories in ``url``, or None (no database, other n, unfinished)."""
    eng = sa.create_engine(_sa_url(url))
    try:
        with eng.connect() as c:
            value = c.execute(sa.text("SELECT value FROM store_setting WHERE key = :k"), {"k": MARKER}).scalar()
    except sa.exc.OperationalError:
        return None
    except sa.exc.ProgrammingError:
        return None
    finally:
        eng.dispose()
    meta = json.loads(value) if value else None
    return meta if meta and meta.get("n") == n else None


# ---- load ------------------------------------------------------------------------------------
def _load_chunks(url: str, chunks: list[tuple[int, int]], done) -> None:
    """Worker process: import records [a, b) of every chunk, one transaction each, as ``memtui import`` does."""
    from sqlmodel import Session

    from memtui.cli.launch import acting
    from memtui.importers.native import ImportReport, RecordWriter, prepare
    from memtui.importers.reader import RawRecord
    from memtui.store.engine import open_store

    engine = open_store(url, pool_size=1)
    actor = acting(engine, "bench", None)
    for a, b in chunks:
        prepared = [prepare(RawRecord("store1m.jsonl", i, i + 1, record(i))) for i in range(a, b)]
        report = ImportReport()
        with Session(engine) as session, session.begin():
            writer = RecordWriter(session, actor, report, batch=len(prepared))
            for p in prepared:
                writer.add(p)
            writer.flush()
            if report.rejected:
                session.rollback()
                raise RuntimeError(f"records {a}..{b}: {report.rejected[0]}")
        done.put((b - a, len(report.imported)))
    engine.dispose()


def load(admin: str, name: str, n: int, workers: int, chunk: int) -> dict:
    """A fresh database ``name`` holding records 0..n-1 (see the module docstring). Returns the load's figures."""
    url = store_url(admin, name)
    drop_database(admin, name)
    eng = _admin(admin)
    with eng.connect() as c:
        c.exec_driver_sql(f'CREATE DATABASE "{name}"')
    eng.dispose()
    subprocess.run(MEMTUI + ["--db", url, "--actor", "bench", "init"], check=True, capture_output=True)
    bounds = [(a, min(n, a + chunk)) for a in range(0, n, chunk)]
    ctx = multiprocessing.get_context("fork")
    done = ctx.Queue()
    procs = [ctx.Process(target=_load_chunks, args=(url, bounds[k::workers], done), daemon=True)
             for k in range(workers)]
    t0, cpu0 = time.perf_counter(), _children_cpu()
    for p in procs:
        p.start()
    handled = imported = 0
    next_analyze = 10_000  # the server may run no autovacuum: keep the planner's statistics within 2x of the truth
    try:
        while handled < n:
            if handled >= next_analyze:
                _analyze(url)
                next_analyze *= 2
            try:
                h, i = done.get(timeout=5)
            except Exception:  # queue.Empty: is everyone still alive?
                if any(p.exitcode not in (None, 0) for p in procs):
                    raise RuntimeError("a loader process failed (see its traceback above)")
                continue
            handled, imported = handled + h, imported + i
            rate = handled / (time.perf_counter() - t0)
            say(f"loaded {handled:,}/{n:,} ({rate:,.0f}/s, eta {(n - handled) / rate / 60:.1f} min, "
                f"load {os.getloadavg()[0]:.1f})")
        for p in procs:
            p.join()
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
    seconds = time.perf_counter() - t0
    cpu = _children_cpu() - cpu0
    say("VACUUM ANALYZE ...")
    t1 = time.perf_counter()
    eng = _admin(url)
    with eng.connect() as c:
        c.exec_driver_sql("VACUUM ANALYZE")
        sizes = c.execute(sa.text("SELECT pg_database_size(current_database())")).scalar()
    eng.dispose()
    meta = {"n": n, "imported": imported, "load_seconds": round(seconds, 1), "load_client_cpu_seconds": round(cpu, 1),
            "vacuum_analyze_seconds": round(time.perf_counter() - t1, 1), "database_mb": round(sizes / 1e6),
            "workers": workers, "chunk": chunk, "load_avg_1m": round(os.getloadavg()[0], 2)}
    eng = sa.create_engine(_sa_url(url))
    with eng.begin() as c:
        c.execute(sa.text("INSERT INTO store_setting (key, value) VALUES (:k, :v)"), {"k": MARKER, "v": json.dumps(meta)})
    eng.dispose()
    return meta


def _analyze(url: str) -> None:
    eng = _admin(url)
    with eng.connect() as c:
        c.exec_driver_sql("ANALYZE")
    eng.dispose()


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def _pct(values: list[float], p: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))], 1)


# ---- the queue in a real terminal -------------------------------------------------------------
def measure_tui(url: str, keys: int) -> dict:
    """``bench/tui.py``'s first row, decisions and search in ``memtui --db URL`` (tmux, 160x48)."""
    import tui

    class Tmux(tui.Tmux):  # a session name of its own: another bench may be driving bench/tui.py
        def __init__(self, name, argv, env):
            # a lead: the generator's org-wide memory is high impact, which only a lead may reject
            argv = [("lead" if a == "reviewer" and argv[i - 1] == "--role" else a) for i, a in enumerate(argv)]
            super().__init__(f"{name}-1m-{os.getpid()}", argv, env)

        def settle(self, quiet: float = 0.25, timeout: float = 10.0) -> None:
            # on a loaded machine a decision's write may land after 0.25 s of quiet; the next key
            # would then be ignored (the queue takes no key while a write is pending)
            super().settle(max(quiet, SETTLE), timeout)

    tui.Tmux = Tmux
    with tempfile.TemporaryDirectory(prefix="store1m-tui-") as config:
        env = {"TERM": "xterm-256color", "COLORTERM": "truecolor", "XDG_CONFIG_HOME": config,
               "TEXTUAL_ANIMATIONS": "none", "PATH": os.environ.get("PATH", "")}
        return tui.measure_memtui(url, keys, env)


# ---- search ------------------------------------------------------------------------------------
#: (label, words, sort): what a reviewer types; from the generator's vocabulary (bench/store100k.py)
SEARCHES = [
    ("one_noun", "ledgerwriter", "state"),
    ("template_words", "never call directly", "state"),
    ("three_words", "migrations touching pricing", "state"),
    ("common_word", "the", "state"),
    ("rare", "case 987654", "state"),
    ("one_noun_by_age", "ledgerwriter", "age"),
]


class _Captured:
    """The SQL statements an engine runs while the block runs (for EXPLAIN ANALYZE)."""

    def __init__(self, engine):
        self.engine, self.statements = engine, []

    def _hook(self, _conn, _cursor, statement, parameters, _context, _executemany):
        self.statements.append((statement, parameters))

    def __enter__(self):
        sa.event.listen(self.engine, "before_cursor_execute", self._hook)
        return self

    def __exit__(self, *exc):
        sa.event.remove(self.engine, "before_cursor_execute", self._hook)


def explain(engine, statement: str, parameters) -> dict:
    """EXPLAIN (ANALYZE, BUFFERS) of one captured statement: its plan lines and execution ms."""
    with engine.connect() as c:
        lines = [r[0] for r in c.exec_driver_sql("EXPLAIN (ANALYZE, BUFFERS) " + statement, parameters)]
    ms = next((float(x.split(":")[1].split()[0]) for x in lines if x.startswith("Execution Time")), None)
    return {"execution_ms": ms, "plan": lines}


def _timed(fn, runs: int = 3) -> tuple[float, object]:
    """The median wall ms of ``runs`` calls of ``fn`` (after one warm-up call) and its last result."""
    out = fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1000)
    return round(statistics.median(times), 1), out


def measure_search(url: str, plans: bool) -> dict:
    """The queue's search through the review service, per query of :data:`SEARCHES` (and the plain
    queue): the first page of 200 (what the queue paints; median ms of 3 after a warm-up) and the count;
    ``naive_page_ms``: the same page by one query ordering every match (the code before issue 22,
    ``queue_query._find_ordered``); with ``plans`` the EXPLAIN ANALYZE of each page query and the naive one."""
    from sqlmodel import Session

    from memtui.clock import utcnow
    from memtui.domain.invariants import Actor
    from memtui.review import queue_query
    from memtui.review.queue_query import QueueFilter
    from memtui.review.service import ReviewService
    from memtui.store.engine import open_store

    engine = open_store(url)
    actor = Actor("human", "bench", "reviewer")
    svc = ReviewService(engine, actor)

    def naive(f: QueueFilter) -> list:
        with Session(engine) as session:
            return queue_query._find_ordered(session, actor, f, None, 200, utcnow())

    out: dict = {}
    for label, words, sort in [("queue", "", "state")] + SEARCHES:
        f = QueueFilter(search=words, sort=sort)
        page_ms, page = _timed(lambda: svc.find(f, None, 200))
        count_ms, total = _timed(lambda: svc.find_count(f), runs=1)
        row = {"words": words, "sort": sort, "page_ms": page_ms, "page_rows": len(page), "count_ms": count_ms,
               "matches": total}
        if words:
            row["naive_page_ms"], rows = _timed(lambda: naive(f))
            row["same_as_naive"] = [r.memory.memory_id for r in rows] == [i.memory_id for i in page]
        if plans:
            with _Captured(engine) as cap:
                svc.find(f, None, 200)
            row["page_sql"] = [explain(engine, st, params) for st, params in cap.statements
                               if st.lstrip().upper().startswith("SELECT") and "memory" in st]
            if words:
                with _Captured(engine) as cap:
                    naive(f)
                row["naive_sql"] = [explain(engine, st, params) for st, params in cap.statements
                                    if st.lstrip().upper().startswith("SELECT") and "memory" in st]
        out[label] = row
        say(f"search {label}: page {page_ms} ms ({len(page)} rows), count {count_ms} ms ({total}), "
            f"naive page {row.get('naive_page_ms')} ms")
    engine.dispose()
    return out


# ---- recall over HTTP ----------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def recall_tasks(k: int, seed: int = 22) -> list[str]:
    """``k`` tasks in the generator's words (a class, a verb, a module), as an agent would ask."""
    import random

    rng = random.Random(seed)
    return [f"{rng.choice(_VERBS)} {rng.choice(_NOUNS)} in {rng.choice(_MODULES)}: why does "
            f"{rng.choice(_NOUNS)} fail?" for _ in range(k)]


class Server:
    """``memtui serve --db URL`` on a free local port (one worker), with a bearer token."""

    def __init__(self, url: str):
        import httpx

        self.token = subprocess.run(MEMTUI + ["--db", url, "--actor", "bench", "tokens", "create", "bench"],
                                    check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        port = _free_port()
        self.base = f"http://127.0.0.1:{port}"
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(MEMTUI + ["--db", url, "--actor", "bench", "serve", "--port", str(port),
                                               "--workers", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 120
        while True:
            try:
                if httpx.get(self.base + "/openapi.json", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.time() > deadline:
                self.close()
                raise RuntimeError(f"memtui serve did not start: {self.proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.1)
        self.start_seconds = round(time.perf_counter() - t0, 2)
        self.client = httpx.Client(base_url=self.base, headers={"Authorization": f"Bearer {self.token}"}, timeout=600)

    def recall(self, task: str, scope: str) -> tuple[float, dict]:
        t0 = time.perf_counter()
        r = self.client.post("/recall", json={"task": task, "scope": scope})
        ms = (time.perf_counter() - t0) * 1000
        if r.status_code != 200:
            raise RuntimeError(f"recall {r.status_code}: {r.text[:500]}")
        return ms, r.json()

    def close(self) -> None:
        if getattr(self, "client", None):
            self.client.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def measure_recall(server: Server, tasks: int, repo: str) -> dict:
    """The first recall after start (cold) and p50/p95 of ``tasks`` more (warm), scope ``repository:repo``."""
    scope = f"repository:{repo}"
    work = recall_tasks(tasks + 1)
    cold_ms, pack = server.recall(work[0], scope)
    say(f"recall cold {cold_ms:.0f} ms ({len(pack.get('memories', pack.get('included', [])))} in the pack)")
    warm = []
    for i, task in enumerate(work[1:]):
        warm.append(server.recall(task, scope)[0])
        if i % 50 == 49:
            say(f"recall {i + 1}/{tasks}: p95 so far {_pct(warm, 95)} ms")
    return {"scope": scope, "server_start_seconds": server.start_seconds, "cold_ms": round(cold_ms, 1),
            "warm_requests": len(warm), "warm_p50_ms": _pct(warm, 50), "warm_p95_ms": _pct(warm, 95),
            "warm_max_ms": _pct(warm, 100)}


# ---- 1,000 changes, then maintain -------------------------------------------------------------------
def change_records(n: int, run: int, k: int = 1000) -> list[dict]:
    """``k`` new records (ids after the loaded ``n``, distinct per ``run``) in the generator's shapes."""
    out = []
    for j in range(k):
        i = n + run * k + j
        rec = record(i)
        for key in ("memoryId", "candidateId", "candidate_id"):
            if key in rec:
                rec[key] = rec[key].split("-")[0] + f"-r{run}-{j:04d}"
        out.append(rec)
    return out


def _watch(proc: subprocess.Popen, timeout: float, rss_limit_mb: float) -> tuple[str, float, float]:
    """Wait for ``proc``; kill it past ``timeout`` s or ``rss_limit_mb`` (its whole process tree).
    Returns (outcome "ok" / "exit N" / "timeout" / "rss_limit", wall seconds, peak tree RSS MB)."""
    t0, peak = time.perf_counter(), 0.0
    while proc.poll() is None:
        rss = _tree_rss_mb(proc.pid)
        peak = max(peak, rss)
        over = "timeout" if time.perf_counter() - t0 > timeout else ("rss_limit" if rss > rss_limit_mb else None)
        if over:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return over, time.perf_counter() - t0, peak
        time.sleep(0.5)
    return ("ok" if proc.returncode == 0 else f"exit {proc.returncode}"), time.perf_counter() - t0, peak


def _tree_rss_mb(pid: int) -> float:
    """Resident MB of ``pid`` and its descendants (from /proc)."""
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d.name))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo += kids.get(p, [])
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def run_cli(args: list[str], timeout: float, rss_limit_mb: float) -> dict:
    """One ``memtui`` command in its own process group, watched (:func:`_watch`); its figures."""
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(MEMTUI + args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                env=dict(os.environ, MEMTUI_ACTOR="bench"))
        outcome, seconds, peak = _watch(proc, timeout, rss_limit_mb)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    return {"outcome": outcome, "seconds": round(seconds, 1), "peak_rss_mb": round(peak), "output": text[-1500:]}


def measure_changes(url: str, n: int, timeout: float, rss_limit_mb: float, jobs: str | None) -> dict:
    """Import 1,000 new records (``memtui import``), then ``memtui maintain`` (``--only jobs`` if given)."""
    eng = sa.create_engine(_sa_url(url))
    with eng.begin() as c:
        run = c.execute(sa.text("SELECT count(*) FROM store_setting WHERE key LIKE 'bench.store1m.run%'")).scalar()
        c.execute(sa.text("INSERT INTO store_setting (key, value) VALUES (:k, '')"), {"k": f"bench.store1m.run{run}"})
    eng.dispose()
    with tempfile.TemporaryDirectory(prefix="store1m-changes-") as tmp:
        path = Path(tmp) / "changes.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in change_records(n, run)), encoding="utf-8")
        imp = run_cli(["--db", url, "import", str(path)], timeout, rss_limit_mb)
    say(f"import of 1,000: {imp['outcome']} in {imp['seconds']} s")
    args = ["--db", url, "maintain"] + (["--only", jobs] if jobs else [])
    say(f"memtui {' '.join(args[2:])} (limit {timeout:.0f} s, {rss_limit_mb:.0f} MB) ...")
    mnt = run_cli(args, timeout, rss_limit_mb)
    say(f"maintain: {mnt['outcome']} in {mnt['seconds']} s, peak {mnt['peak_rss_mb']} MB")
    return {"import_1000": imp, "maintain": mnt, "jobs": jobs or "all"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="memories loaded")
    ap.add_argument("--admin", default=ADMIN, help="a PostgreSQL URL of the server (its own database is not touched)")
    ap.add_argument("--db-name", default="memtui_bench1m", help="the database created for the load")
    ap.add_argument("--workers", type=int, default=2, help="loader processes")
    ap.add_argument("--chunk", type=int, default=5000, help="records a transaction")
    ap.add_argument("--reload", action="store_true", help="load again even if the database holds a finished load")
    ap.add_argument("--drop", action="store_true", help="drop the database and exit")
    ap.add_argument("--skip", default="", help="comma list of: tui, search, recall, maintain")
    ap.add_argument("--keys", type=int, default=20, help="decisions (and cursor keys) timed in the terminal")
    ap.add_argument("--recall-tasks", type=int, default=200)
    ap.add_argument("--recall-repo", default=_REPOS[0])
    ap.add_argument("--no-plans", action="store_true", help="leave EXPLAIN ANALYZE out of the JSON")
    ap.add_argument("--maintain-only", default=None, help="memtui maintain --only JOBS (default: every job)")
    ap.add_argument("--maintain-timeout", type=float, default=1800.0, help="seconds before maintain is stopped")
    ap.add_argument("--maintain-rss-gb", type=float, default=8.0, help="peak RSS (GB) at which maintain is stopped")
    args = ap.parse_args()
    if args.drop:
        drop_database(args.admin, args.db_name)
        say(f"dropped {args.db_name}")
        return
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    url = store_url(args.admin, args.db_name)
    meta = None if args.reload else loaded(url, args.n)
    reused = meta is not None
    if meta is None:
        meta = load(args.admin, args.db_name, args.n, args.workers, args.chunk)
    out: dict = {"n": args.n, "database": args.db_name, "load": {**meta, "reused": reused}}
    if "tui" not in skip:
        if shutil.which("tmux"):
            say("the queue in a real terminal (tmux) ...")
            out["tui"] = measure_tui(url, args.keys)
        else:
            out["tui"] = {"skipped": "no tmux"}
    if "search" not in skip:
        out["search"] = measure_search(url, not args.no_plans)
    server = None
    try:
        if "recall" not in skip:
            say("memtui serve ...")
            server = Server(url)
            out["recall"] = measure_recall(server, args.recall_tasks, args.recall_repo)
        if "maintain" not in skip:
            out["changes"] = measure_changes(url, args.n, args.maintain_timeout, args.maintain_rss_gb * 1024,
                                             args.maintain_only)
            if server is not None:  # the first recall after 1,000 changes (the server kept running)
                ms, _ = server.recall(recall_tasks(1, seed=7)[0], f"repository:{args.recall_repo}")
                out["recall"]["after_changes_ms"] = round(ms, 1)
    finally:
        if server is not None:
            server.close()
    tui_, rec = out.get("tui", {}), out.get("recall", {})
    figures = {"first_row_seconds": tui_.get("first_row_seconds"), "decision_ms_median": tui_.get("decision_ms_median"),
               "search_ms": tui_.get("search_ms"), "recall_p95_ms": rec.get("warm_p95_ms")}
    out["figures"] = {**figures, "decision_ms_p95": tui_.get("decision_ms_p95"),
                      "search_service_page_ms_max": max((r["page_ms"] for r in out.get("search", {}).values()),
                                                        default=None),
                      "search_naive_page_ms_max": max((r.get("naive_page_ms", 0) for r in out.get("search", {}).values()),
                                                      default=None),
                      "recall_cold_ms": rec.get("cold_ms"),
                      "maintain_seconds": out.get("changes", {}).get("maintain", {}).get("seconds"),
                      "maintain_outcome": out.get("changes", {}).get("maintain", {}).get("outcome")}
    out["targets"] = TARGETS
    out["met"] = {k: (v is not None and v < TARGETS[k]) for k, v in figures.items()}
    out["load_avg_1m"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
