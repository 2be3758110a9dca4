"""A million memories on PostgreSQL (issue 22, item 8): load them, then time what people wait on.

Load: records 0..N-1 of ``bench/store100k.py``'s generator (twelve repositories and org-wide memory,
ten states, one to three evidence rows each), their evidence anchored in a git checkout per
repository (:func:`checkouts`, registered as the repositories' checkouts, so live records stay live),
go through the code ``memtui import`` runs (:func:`memtui.importers.native.prepare` and
:class:`~memtui.importers.native.RecordWriter`: validation, screening, the evidence check, creation
checks, sealed first events, the store chain), ``--chunk`` records a transaction, on ``--workers``
processes, into a fresh database ``--db-name`` on ``--admin``'s server; ``ANALYZE`` as it grows
(the server may run no autovacuum) and ``VACUUM ANALYZE`` at the end; the secret scanner's version is
recorded (every record was screened by it). A database holding a finished load of N is reused unless
``--reload``; ``--drop`` drops it and exits. Progress goes to stderr.

Measurements (``--skip`` any of them):

* ``tui``: ``memtui --db URL`` in tmux (``bench/tui.py``'s driver, as a lead): first queue row on
  screen, decision key to the next item painted (median, p95), a search typed into the queue (enter,
  once the typed words are on screen, to the results painted); the same on a ``--small-n`` store
  (the part that does not depend on the store's size);
* ``search``: :meth:`memtui.review.service.ReviewService.find` (the first page of 200, what the queue
  paints) and ``find_count`` for the searches of :data:`SEARCHES`, with ``EXPLAIN ANALYZE`` of each
  page query; ``naive_page_ms``: the same page by one query ordering every match (before issue 22);
* ``health``: :func:`memtui.review.health.build_health` of the whole store;
* ``recall``: ``memtui serve`` on a local port, ``POST /recall`` for ``--recall-tasks`` tasks of the
  generator's words: the first request after start (cold), p50/p95 of the rest (warm), and the first
  request after the 1,000 changes below;
* ``maintain``: ``memtui import`` of 1,000 new records, then ``memtui maintain --only JOB`` for each
  job, timed with its peak RSS; stopped (and reported so) past ``--maintain-timeout`` seconds or
  ``--maintain-rss-gb``; on a server without autovacuum the bench runs ``ANALYZE`` every minute
  meanwhile, as autovacuum would (:class:`Analyzer`).

Prints one JSON object (seconds, ms, MB; ``figures``, ``targets``, ``met``, ``load_avg_1m``).

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
CHECKOUTS = BENCH / ".cache" / "store1m"  # the repositories' git checkouts (gitignored; about 20 MB)
MARKER = "bench.store1m"  # store_setting key of a finished load: {"n": N, "load_seconds": ...}
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
def checkouts() -> dict[str, tuple[Path, str]]:
    """A git checkout per repository of the generator, holding every file its evidence names
    (``src/<module>/<Class>.py`` of 460 lines, ``docs/<module>.md``) in one commit; built once under
    :data:`CHECKOUTS`. Repository id -> (checkout, HEAD sha)."""
    out = {}
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.invalid",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.invalid",
               GIT_AUTHOR_DATE="2026-01-01T00:00:00Z", GIT_COMMITTER_DATE="2026-01-01T00:00:00Z")
    for repo in _REPOS:
        path = CHECKOUTS / repo
        if not (path / ".git").is_dir():
            shutil.rmtree(path, ignore_errors=True)
            for module in _MODULES:
                (path / "src" / module).mkdir(parents=True)
                for noun in _NOUNS:
                    (path / "src" / module / f"{noun}.py").write_text(
                        "".join(f"    step_{k} = {noun}.{module}({k})\n" for k in range(1, 461)))
                (path / "docs").mkdir(exist_ok=True)
                (path / "docs" / f"{module}.md").write_text(f"# {module}\n\nHow {repo} does {module}.\n")
            for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "bench checkout"]):
                subprocess.run(["git", "-C", str(path), *cmd], check=True, env=env, capture_output=True)
        head = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], check=True, capture_output=True,
                              text=True).stdout.strip()
        out[repo] = (path, head)
    return out


def anchored(rec: dict, heads: dict[str, str]) -> dict:
    """``rec`` with its evidence's commits set to its repository's checkout HEAD (the generator's
    commits are made up: live records would arrive as candidates, issue 21 item 3)."""
    repo = (rec.get("scope") or rec.get("proposedScope") or {}).get("repositoryId")
    for e in rec.get("evidence") or ():
        if "commitSha" in e and repo in heads:
            e["commitSha"] = heads[repo]
    return rec


def _load_chunks(url: str, chunks: list[tuple[int, int]], heads: dict[str, str], done) -> None:
    """Worker process: import records [a, b) of every chunk (:func:`anchored`), one transaction each,
    as ``memtui import`` does."""
    from sqlmodel import Session

    from memtui.cli.launch import acting
    from memtui.importers.native import ImportReport, RecordWriter, prepare
    from memtui.importers.reader import RawRecord
    from memtui.store.engine import open_store

    engine = open_store(url, pool_size=1)
    actor = acting(engine, "bench", None)
    for a, b in chunks:
        prepared = [prepare(RawRecord("store1m.jsonl", i, i + 1, anchored(record(i), heads))) for i in range(a, b)]
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
    from memtui.maintenance.repositories import register_repository
    from memtui.store.engine import open_store

    repos = checkouts()
    engine = open_store(url)
    for repo, (path, _head) in repos.items():
        register_repository(engine, repo, path, tenant_id="acme")
    engine.dispose()
    heads = {repo: head for repo, (_path, head) in repos.items()}
    bounds = [(a, min(n, a + chunk)) for a in range(0, n, chunk)]
    ctx = multiprocessing.get_context("fork")
    done = ctx.Queue()
    procs = [ctx.Process(target=_load_chunks, args=(url, bounds[k::workers], heads, done), daemon=True)
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
    from memtui.maintenance.secrets_job import SETTING_KEY
    from memtui.safety.secrets import SCANNER_VERSION

    eng = sa.create_engine(_sa_url(url))
    with eng.begin() as c:
        c.execute(sa.text("INSERT INTO store_setting (key, value) VALUES (:k, :v)"), {"k": MARKER, "v": json.dumps(meta)})
        # every record was screened by this scanner as it was imported: the store is as a maintained one
        # (a never-recorded version makes the next maintain rescan all 1,000,000 in one transaction)
        c.execute(sa.text("INSERT INTO store_setting (key, value) VALUES (:k, :v) ON CONFLICT (key) DO NOTHING"),
                  {"k": SETTING_KEY, "v": SCANNER_VERSION})
    eng.dispose()
    return meta


class Analyzer:
    """``ANALYZE`` every ``every`` seconds in a thread while the block runs, when the server runs no
    autovacuum (this machine's does not): without it a table a job fills keeps the statistics of its
    empty self, and a connection's cached generic plans keep scanning it whole."""

    def __init__(self, url: str, every: float = 60.0):
        import threading

        self.url, self.every, self.stop, self.thread = url, every, threading.Event(), None
        self.runs = 0

    def __enter__(self) -> "Analyzer":
        import threading

        eng = _admin(self.url)
        with eng.connect() as c:
            on = c.exec_driver_sql("SHOW autovacuum").scalar() == "on"
        eng.dispose()
        if not on:
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()
        return self

    def _run(self) -> None:
        while not self.stop.wait(self.every):
            _analyze(self.url)
            self.runs += 1

    def __exit__(self, *exc) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join()


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
    """``memtui --db URL --role lead`` in tmux at 160x48, driven with ``bench/tui.py``'s terminal and
    plan: process start to the first queue row on screen; ``keys`` cursor keys; ``keys`` decision keys,
    each timed to the next item painted, the next key sent only once the counter says the decision was
    written (a key pressed while a write is pending is ignored by the queue); a search typed, enter to
    its results painted. A lead: the generator's org-wide memory is high impact, only a lead rejects it."""
    import tui

    plan = tui._plan(url, keys)
    with tempfile.TemporaryDirectory(prefix="store1m-tui-") as config:
        env = {"TERM": "xterm-256color", "COLORTERM": "truecolor", "XDG_CONFIG_HOME": config,
               "TEXTUAL_ANIMATIONS": "none", "PATH": os.environ.get("PATH", "")}
        t = tui.Tmux(f"memtui-store1m-{os.getpid()}",
                     [str(tui.BIN / "memtui"), "--db", url, "--actor", "bench", "--role", "lead"], env)
        try:
            t.wait(lambda s: plan["first"] in s, timeout=120)
            first_row = time.perf_counter() - t.started
            t.settle(0.5)
            cursor = tui._keystrokes(t, "j", keys, lambda b, s: b != s)
            decisions = []
            for k, key in enumerate(plan["decide"], start=1):
                t.settle()
                before = t.screen(True)
                sent = t.keys(key)
                decisions.append(t.wait(lambda s: s != before, styled=True) - sent)
                t.wait(lambda s: f"decided {k} /" in s, timeout=60)
            t.settle()
            t.keys("/")
            t.wait(lambda s: "search statements" in s)
            t.keys(plan["query"], literal=True)
            # enter once the typed words are on screen (inside the 0.25 s before the queue would search
            # by itself): the figure is the search, not the backlog of 25 keys typed at once
            t.wait(lambda s: plan["query"] in s)
            sent = t.keys("Enter")
            loaded = f"loaded {min(plan['matches'], 200)} "
            search = t.wait(lambda s: plan["result"] in s and loaded in s and f"/{plan['query']}" in s) - sent
            t.keys("q")
        finally:
            t.close()
    say(f"decision samples ms: {[round(x * 1000) for x in decisions]}")
    d_med, d_p95 = tui._ms(decisions)
    return {"first_row_seconds": round(first_row, 3), "decision_ms_median": d_med, "decision_ms_p95": d_p95,
            "cursor_ms_median": tui._ms(cursor)[0], "search_ms": round(search * 1000, 1),
            "search_query": plan["query"], "search_matches": plan["matches"]}


# ---- search ------------------------------------------------------------------------------------
#: (label, QueueFilter fields): what a reviewer types (the generator's words, bench/store100k.py) and
#: the queue's other sorts and filters
SEARCHES = [
    ("one_noun", {"search": "ledgerwriter"}),
    ("template_words", {"search": "never call directly"}),
    ("three_words", {"search": "migrations touching pricing"}),
    ("common_word", {"search": "the"}),
    ("rare", {"search": "case 987654"}),
    ("one_noun_by_age", {"search": "ledgerwriter", "sort": "age"}),
    ("sort_priority", {"sort": "priority"}),
    ("sort_age", {"sort": "age"}),
    ("repository", {"repository_id": "billing-service"}),
    ("module", {"module_path": "src/auth"}),
    ("actor_nobody", {"actor": "nobody"}),
    ("reason_code", {"reason_code": "span_changed"}),
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
    for label, fields in [("queue", {})] + SEARCHES:
        f = QueueFilter(**fields)
        words = f.search
        page_ms, page = _timed(lambda: svc.find(f, None, 200))
        count_ms, total = _timed(lambda: svc.find_count(f), runs=1)
        row = {"filter": fields, "page_ms": page_ms, "page_rows": len(page), "count_ms": count_ms,
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


def measure_health(url: str) -> dict:
    """:func:`memtui.review.health.build_health` of the whole store (what ``memtui health``, the TUI's
    health screen and the HTTP health endpoint show): wall and CPU seconds, repositories, actions."""
    from memtui.review.health import build_health, health_dict
    from memtui.store.engine import open_store

    engine = open_store(url)
    t0, c0 = time.perf_counter(), time.process_time()
    model = build_health(engine)
    out = {"seconds": round(time.perf_counter() - t0, 2), "cpu_seconds": round(time.process_time() - c0, 2),
           "repositories": len(model.repositories), "actions": len(model.actions()),
           "json_kb": round(len(json.dumps(health_dict(model), default=str)) / 1024)}
    engine.dispose()
    say(f"health: {out['seconds']} s ({out['cpu_seconds']} s CPU)")
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
def change_records(n: int, run: int, heads: dict[str, str], k: int = 1000) -> list[dict]:
    """``k`` new records (ids after the loaded ``n``, distinct per ``run``) in the generator's shapes."""
    out = []
    for j in range(k):
        i = n + run * k + j
        rec = anchored(record(i), heads)
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


def measure_changes(url: str, n: int, timeout: float, rss_limit_mb: float, jobs: list[str]) -> dict:
    """Import 1,000 new records (``memtui import``), then ``memtui maintain --only JOB`` for each of
    ``jobs`` in turn, each watched (:func:`run_cli`); ``maintain_seconds`` is their sum when all end well."""
    eng = sa.create_engine(_sa_url(url))
    with eng.begin() as c:
        run = c.execute(sa.text("SELECT count(*) FROM store_setting WHERE key LIKE 'bench.store1m.run%'")).scalar()
        c.execute(sa.text("INSERT INTO store_setting (key, value) VALUES (:k, '')"), {"k": f"bench.store1m.run{run}"})
    eng.dispose()
    with tempfile.TemporaryDirectory(prefix="store1m-changes-") as tmp:
        path = Path(tmp) / "changes.jsonl"
        heads = {repo: head for repo, (_path, head) in checkouts().items()}
        path.write_text("".join(json.dumps(r) + "\n" for r in change_records(n, run, heads)), encoding="utf-8")
        imp = run_cli(["--db", url, "import", str(path)], timeout, rss_limit_mb)
    say(f"import of 1,000: {imp['outcome']} in {imp['seconds']} s")
    out = {"import_1000": imp, "jobs": {}}
    with Analyzer(url) as analyzer:
        for job in jobs:  # one process a job: a job stopped at a limit leaves the others measured
            say(f"memtui maintain --only {job} (limit {timeout:.0f} s, {rss_limit_mb:.0f} MB) ...")
            r = run_cli(["--db", url, "maintain", "--only", job], timeout, rss_limit_mb)
            say(f"  {job}: {r['outcome']} in {r['seconds']} s, peak {r['peak_rss_mb']} MB")
            out["jobs"][job] = r
    out["autovacuum_stand_in"] = analyzer.thread is not None  # ANALYZE every minute (the server runs none)
    done = all(r["outcome"] == "ok" for r in out["jobs"].values())
    out["maintain_seconds"] = round(sum(r["seconds"] for r in out["jobs"].values()), 1) if done else None
    out["maintain_outcome"] = "ok" if done else ", ".join(f"{j} {r['outcome']}" for j, r in out["jobs"].items()
                                                          if r["outcome"] != "ok")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="memories loaded")
    ap.add_argument("--admin", default=ADMIN, help="a PostgreSQL URL of the server (its own database is not touched)")
    ap.add_argument("--db-name", default="memtui_bench1m", help="the database created for the load")
    ap.add_argument("--workers", type=int, default=2, help="loader processes")
    ap.add_argument("--chunk", type=int, default=5000, help="records a transaction")
    ap.add_argument("--reload", action="store_true", help="load again even if the database holds a finished load")
    ap.add_argument("--drop", action="store_true", help="drop the database (and the small one) and exit")
    ap.add_argument("--skip", default="", help="comma list of: tui, search, health, recall, maintain")
    ap.add_argument("--keys", type=int, default=20, help="decisions (and cursor keys) timed in the terminal")
    ap.add_argument("--recall-tasks", type=int, default=200)
    ap.add_argument("--recall-repo", default=_REPOS[0])
    ap.add_argument("--no-plans", action="store_true", help="leave EXPLAIN ANALYZE out of the JSON")
    ap.add_argument("--maintain-jobs", default="secrets,revalidate,expire,dedupe,conflicts,compaction",
                    help="the maintain jobs timed, one process each, in this order")
    ap.add_argument("--small-n", type=int, default=2000,
                    help="memories of the small store whose first row is timed beside (0: none)")
    ap.add_argument("--maintain-timeout", type=float, default=1800.0, help="seconds before maintain is stopped")
    ap.add_argument("--maintain-rss-gb", type=float, default=8.0, help="peak RSS (GB) at which maintain is stopped")
    args = ap.parse_args()
    if args.drop:
        for name in (args.db_name, f"{args.db_name}_small"):
            drop_database(args.admin, name)
            say(f"dropped {name}")
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
            if args.small_n:  # the same terminal on a small store: what start-up costs whatever the size
                small = f"{args.db_name}_small"
                if loaded(store_url(args.admin, small), args.small_n) is None:
                    load(args.admin, small, args.small_n, 1, args.chunk)
                say(f"the same terminal on {args.small_n:,} memories ...")
                out["tui_small_store"] = {"n": args.small_n, **measure_tui(store_url(args.admin, small), 5)}
        else:
            out["tui"] = {"skipped": "no tmux"}
    if "search" not in skip:
        out["search"] = measure_search(url, not args.no_plans)
    if "health" not in skip:
        out["health"] = measure_health(url)
    server = None
    try:
        if "recall" not in skip:
            say("memtui serve ...")
            server = Server(url)
            out["recall"] = measure_recall(server, args.recall_tasks, args.recall_repo)
        if "maintain" not in skip:
            out["changes"] = measure_changes(url, args.n, args.maintain_timeout, args.maintain_rss_gb * 1024,
                                             [j.strip() for j in args.maintain_jobs.split(",") if j.strip()])
            if server is not None:  # the first recall after 1,000 changes (the server kept running)
                ms, _ = server.recall(recall_tasks(1, seed=7)[0], f"repository:{args.recall_repo}")
                out["recall"]["after_changes_ms"] = round(ms, 1)
    finally:
        if server is not None:
            server.close()
    tui_, rec = out.get("tui", {}), out.get("recall", {})
    searches = [r for r in out.get("search", {}).values() if "naive_page_ms" in r]
    figures = {"first_row_seconds": tui_.get("first_row_seconds"), "decision_ms_median": tui_.get("decision_ms_median"),
               "search_ms": tui_.get("search_ms"), "recall_p95_ms": rec.get("warm_p95_ms")}
    out["figures"] = {**figures, "decision_ms_p95": tui_.get("decision_ms_p95"),
                      "search_service_page_ms_max": max((r["page_ms"] for r in searches), default=None),
                      "search_naive_page_ms_max": max((r["naive_page_ms"] for r in searches), default=None),
                      "recall_cold_ms": rec.get("cold_ms"),
                      "maintain_seconds": out.get("changes", {}).get("maintain_seconds"),
                      "maintain_outcome": out.get("changes", {}).get("maintain_outcome"),
                      "small_store_first_row_seconds": out.get("tui_small_store", {}).get("first_row_seconds")}
    out["targets"] = TARGETS
    out["met"] = {k: (v is not None and v < TARGETS[k]) for k, v in figures.items()}
    out["load_avg_1m"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
