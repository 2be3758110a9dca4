"""The HTTP API under load (issue 12 "Benchmark"; DESIGN.md scale targets: on PostgreSQL 300 decisions
per second sustained and recall p95 under 50 ms at 10,000 memories).

Starts `memtui serve` as a real process on PostgreSQL and on SQLite, each over a store of 10,000
memories loaded with `memtui import` from a generated JSONL (cached in bench/.cache/api/; import makes
every record a candidate), and drives it with concurrent clients once the server has warmed recall
(its first recall is timed, `first_recall_ms`; then the server's CPU must go idle, `warmup_seconds`):
decision clients toggle their own candidates between needs_review and active
(`POST /memory/candidates/{id}/review` with the version the previous answer gave) for the fixed time;
then, on a fresh server, recall clients ask `POST /recall` for tasks in the repository's words for half
that time (decision rate and recall latency are measured apart). Afterwards the history must hold
exactly one event per successful decision (`lost_decisions` and `doubled_decisions` 0) and
`memtui check` must be clean. The naive baseline is one `memtui decide` process per decision. The
top-level `decisions_per_second` and `http_recall_p95_ms` are PostgreSQL's.

Prints one JSON object. Usage:
    .venv/bin/python bench/api.py [--memories 10000] [--seconds 20] [--decision-clients 12]
                                  [--recall-clients 4] [--backends postgres,sqlite] [--profile]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import httpx
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "bench" / ".cache" / "api"
MEMTUI = [sys.executable, "-m", "memtui"]
PG_ADMIN = os.environ.get("MEMTUI_BENCH_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
REPO = "bench-service"
ACTOR = "bench"
_NOUNS = ["Order", "Rule", "Payment", "Discount", "Invoice", "Tax", "Shipping", "Cart", "Refund", "Ledger", "Audit",
          "Price", "Customer", "Coupon", "Stock", "Warehouse", "Currency", "Report", "Session", "Token"]
_ROLES = ["Validator", "Registry", "Client", "Policy", "Writer", "Table", "Quote", "Merger", "Queue", "Sync"]
#: 200 code names, 30 verbs, 40 objects: a task shares words with a few per cent of the store, as in a code base
SUBJECTS = [n + r for n in _NOUNS for r in _ROLES]
VERBS = ["validates", "registers", "caches", "retries", "rounds", "rejects", "publishes", "batches", "signs",
         "encrypts", "logs", "throttles", "splits", "merges", "sorts", "formats", "parses", "schedules", "locks",
         "streams", "indexes", "archives", "exports", "imports", "reconciles", "notifies", "aggregates",
         "deduplicates", "compresses", "migrates"]
OBJECTS = ["rules", "orders", "payments", "discounts", "invoices", "refunds", "events", "totals", "coupons",
           "receipts", "webhooks", "carts", "addresses", "prices", "rates", "limits", "quotas", "tokens", "sessions",
           "reports", "ledgers", "entries", "batches", "messages", "emails", "files", "records", "metrics",
           "alerts", "jobs", "locks", "keys", "certificates", "schemas", "migrations", "snapshots", "exports",
           "imports", "audits", "queues"]
MODULES = ["validation", "payment", "pricing", "billing", "shipping", "ledger", "customer", "stock"]


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def write_jsonl(path: Path, n: int) -> int:
    """n records: 80 % active (recall material), 20 % candidates (decision material). Returns #candidates."""
    rnd = random.Random(12)
    candidates = 0
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            subject, verb, obj, module = (rnd.choice(SUBJECTS), rnd.choice(VERBS), rnd.choice(OBJECTS),
                                          rnd.choice(MODULES))
            state = "candidate" if i % 5 == 0 else "active"
            candidates += state == "candidate"
            path_ = f"src/main/java/com/acme/{module}/{subject}.java"
            f.write(json.dumps({
                "memoryId": f"mem_bench_{i:05d}", "type": "code_fact",
                "statement": f"{subject} {verb} {obj} in the {module} module (case {i}).",
                "scope": {"tenantId": "acme", "repositoryId": REPO, "modulePath": f"src/main/java/com/acme/{module}"},
                "state": state, "confidence": 0.8, "reviewState": "approved" if state == "active" else "none",
                "origin": "agent",
                "evidence": [{"type": "file_span", "path": path_, "commitSha": "b" * 40, "lines": [10, 20],
                              "status": "valid"}],
                "createdAt": "2026-10-01T00:00:00Z", "lastValidatedAt": "2026-11-01T00:00:00Z",
            }) + "\n")
    return candidates


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    out = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {out.stderr or out.stdout}")
    return out


def import_store(db: str, jsonl: Path) -> float:
    t0 = time.perf_counter()
    run(MEMTUI + ["import", str(jsonl), "--db", db, "--actor", ACTOR])
    return time.perf_counter() - t0


def sqlite_store(n: int, jsonl: Path, work: Path) -> tuple[str, float | None]:
    """A copy of the cached pristine SQLite store (built with memtui import on first use)."""
    pristine = CACHE / f"store_v2_{n}.db"
    seconds = None
    if not pristine.exists():
        say(f"importing {n} memories into {pristine}")
        tmp = pristine.with_suffix(".tmp.db")
        tmp.unlink(missing_ok=True)
        seconds = import_store(str(tmp), jsonl)
        con = sa.create_engine(f"sqlite:///{tmp}")
        with con.connect() as c:
            c.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        con.dispose()
        tmp.rename(pristine)
    db = work / "store.db"
    shutil.copy(pristine, db)
    return str(db), seconds


def pg_store(jsonl: Path) -> tuple[str, float, callable]:
    name = f"memtui_bench_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = PG_ADMIN.rsplit("/", 1)[0] + "/" + name
    say(f"importing into PostgreSQL {name}")
    seconds = import_store(url, jsonl)

    def drop():
        with admin.connect() as c:
            c.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return url, seconds, drop


@contextlib.contextmanager
def store_for(backend: str, memories: int, work: Path):
    """``(db, import seconds or None)`` of the store of ``memories`` memories on ``backend``
    (``sqlite``: a copy of the cached one; ``postgres``: a fresh database, dropped afterwards)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    jsonl = CACHE / f"memories_v2_{memories}.jsonl"
    if not jsonl.exists():
        write_jsonl(jsonl, memories)
    if backend != "postgres":
        yield sqlite_store(memories, jsonl, work)
        return
    db, seconds, drop = pg_store(jsonl)
    try:
        yield db, seconds
    finally:
        drop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def candidate_ids(db_url: str) -> list[str]:
    from memtui.store.engine import make_engine

    engine = make_engine(db_url)
    with engine.connect() as c:
        ids = [r[0] for r in c.execute(sa.text("SELECT memory_id FROM memory WHERE state = 'candidate' ORDER BY memory_id"))]
    engine.dispose()
    return ids


def proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` and its children (uvicorn's workers), from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    pids = [pid] + [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _ppid(p) == pid]
    total = 0.0
    for p in pids:
        try:
            fields = (Path("/proc") / str(p) / "stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            pass
    return total


def _ppid(proc: Path) -> int | None:
    try:
        return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def wait_idle(pid: int, limit: float = 180) -> None:
    """Until the server (and its workers) used under 5 % of a core over half a second, or ``limit`` s."""
    deadline = time.time() + limit
    last = proc_cpu(pid)
    while time.time() < deadline:
        time.sleep(0.5)
        now = proc_cpu(pid)
        if now - last < 0.025:
            return
        last = now


def pct(values: list[float], p: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))], 2)


def drive(db: str, seconds: float, decision_clients: int, recall_clients: int, profile: Path | None,
          workers: int = 1) -> dict:
    token = run(MEMTUI + ["tokens", "create", ACTOR, "--db", db, "--actor", ACTOR]).stdout.strip()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = MEMTUI + ["serve", "--db", db, "--port", str(port), "--workers", str(workers)]
    if profile:
        cmd = [sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "memtui", "serve", "--db", db, "--port", str(port)]
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while True:
        try:
            if httpx.get(base + "/openapi.json", timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if server.poll() is not None or time.time() > deadline:
            raise SystemExit(f"memtui serve did not start: {server.stderr.read() if server.stderr else ''}")
        time.sleep(0.2)
    # the server warms recall in the background at start (issue 22): the first recall waits for it, and
    # the figures below are taken once it is done (the server's CPU idle), as on a server that has run a while
    ready = time.perf_counter()
    t0 = time.perf_counter()
    first = httpx.post(base + "/recall", json={"task": "change how OrderValidator validates rules",
                                               "scope": f"repository:{REPO}", "record": False},
                       headers={"Authorization": f"Bearer {token}"}, timeout=300)
    first_recall_ms = round((time.perf_counter() - t0) * 1000, 1)
    if first.status_code != 200:
        raise SystemExit(f"first recall {first.status_code}: {first.text[:300]}")
    wait_idle(server.pid)
    warmup_seconds = round(time.perf_counter() - ready, 1)
    ids = candidate_ids(db)
    per = len(ids) // max(1, decision_clients)
    review_ms: list[float] = []
    recall_ms: list[float] = []
    sizes: list[int] = []  # relevant memories left out of each pack (what a recall has to weigh and list)
    decided: list[dict] = []
    errors: list[str] = []
    lock = threading.Lock()
    start = time.perf_counter() + 0.5
    stop = start + seconds

    def decider(k: int) -> None:
        mine = ids[k * per:(k + 1) * per]
        state = {m: ("candidate", 1) for m in mine}
        local_ms, local_done = [], []
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
            while time.perf_counter() < start:
                time.sleep(0.01)
            i = 0
            while time.perf_counter() < stop:
                mid = mine[i % len(mine)]
                i += 1
                st, version = state[mid]
                decision = "approve" if st == "needs_review" else "needs_review"
                t0 = time.perf_counter()
                r = c.post(f"/memory/candidates/{mid}/review", json={"decision": decision, "expectedVersion": version})
                local_ms.append((time.perf_counter() - t0) * 1000)
                if r.status_code == 200:
                    out = r.json()
                    state[mid] = (out["toState"], out["version"])
                    local_done.append(out)
                else:
                    with lock:
                        errors.append(f"review {r.status_code}: {r.text[:200]}")
        with lock:
            review_ms.extend(local_ms)
            decided.extend(local_done)

    def recaller(k: int) -> None:
        rnd = random.Random(100 + k)
        local = []
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
            while time.perf_counter() < start:
                time.sleep(0.01)
            while time.perf_counter() < stop:
                task = f"change how {rnd.choice(SUBJECTS)} {rnd.choice(VERBS)} {rnd.choice(OBJECTS)}"
                t0 = time.perf_counter()
                r = c.post("/recall", json={"task": task, "scope": f"repository:{REPO}"})
                local.append((time.perf_counter() - t0) * 1000)
                if r.status_code == 200:
                    body = r.json()
                    sizes.append(body.get("excludedTotal", len(body["excluded"])))  # the list holds the first 50
                else:
                    with lock:
                        errors.append(f"recall {r.status_code}: {r.text[:200]}")
        with lock:
            recall_ms.extend(local)

    threads = ([threading.Thread(target=decider, args=(k,)) for k in range(decision_clients)]
               + [threading.Thread(target=recaller, args=(k,)) for k in range(recall_clients)])
    server_cpu0, client_cpu0 = proc_cpu(server.pid), sum(os.times()[:2])
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    server_cpu, client_cpu = proc_cpu(server.pid) - server_cpu0, sum(os.times()[:2]) - client_cpu0
    server.send_signal(2)  # SIGINT: uvicorn shuts down cleanly (the profile is written)
    try:
        server.wait(30)
    except subprocess.TimeoutExpired:
        server.kill()

    from memtui.store.engine import make_engine

    engine = make_engine(db)
    with engine.connect() as c:
        events = {r[0] for r in c.execute(sa.text(
            "SELECT event_id FROM memory_state_history WHERE actor_id = :a AND from_state IS NOT NULL"), {"a": ACTOR})}
    engine.dispose()
    answered = [d["eventId"] for d in decided]
    check = subprocess.run(MEMTUI + ["check", "--db", db], capture_output=True, text=True)
    return {
        "requests": len(review_ms) + len(recall_ms),
        "seconds": round(elapsed, 2),
        "decisions": len(decided),
        "decisions_per_second": round(len(decided) / elapsed, 1),
        "review": {"requests": len(review_ms), "p50_ms": pct(review_ms, 50), "p95_ms": pct(review_ms, 95)},
        "recall": {"requests": len(recall_ms), "p50_ms": pct(recall_ms, 50), "p95_ms": pct(recall_ms, 95),
                   "max_ms": round(max(recall_ms), 2) if recall_ms else None,
                   "per_second": round(len(recall_ms) / elapsed, 1),
                   "excluded_per_pack_median": int(statistics.median(sizes)) if sizes else None},
        "first_recall_ms": first_recall_ms,
        "warmup_seconds": warmup_seconds,
        "errors": len(errors),
        "error_samples": errors[:3],
        "lost_decisions": len(set(answered) - events),
        "doubled_decisions": len(events - set(answered)) + (len(answered) - len(set(answered))),
        "check_clean": check.returncode == 0,
        # where the machine's time went: the server's processes and this load generator's client threads
        "server_cpu_seconds": round(server_cpu, 2),
        "client_cpu_seconds": round(client_cpu, 2),
        "server_cpu_ms_per_request": round(1000 * server_cpu / max(1, len(review_ms) + len(recall_ms)), 2),
    }


def naive_baseline(db: str, decisions: int) -> dict:
    """One `memtui decide` process per decision (what a service without the API does)."""
    ids = candidate_ids(db)[-decisions:]
    t0 = time.perf_counter()
    for mid in ids:
        run(MEMTUI + ["decide", mid, "needs-review", "--db", db, "--actor", ACTOR])
    s = time.perf_counter() - t0
    return {"decisions": len(ids), "seconds": round(s, 2), "decisions_per_second": round(len(ids) / s, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--decision-clients", type=int, default=12)
    ap.add_argument("--recall-clients", type=int, default=4)
    ap.add_argument("--backends", default="postgres,sqlite")
    ap.add_argument("--workers", type=int, default=2, help="memtui serve --workers on PostgreSQL (SQLite: 1)")
    ap.add_argument("--naive", type=int, default=5, help="decisions for the `memtui decide` baseline")
    ap.add_argument("--profile", action="store_true", help="cProfile the server; top functions to stderr")
    args = ap.parse_args()
    os.environ.pop("MEMTUI_NOW", None)
    result: dict = {"memories": args.memories, "decision_clients": args.decision_clients,
                    "recall_clients": args.recall_clients, "load_avg_1m_start": round(os.getloadavg()[0], 2)}
    work = Path(os.environ.get("TMPDIR", "/tmp")) / f"memtui_bench_api_{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    try:
        for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
            with store_for(backend, args.memories, work) as (db, import_s):
                say(f"{backend}: driving for {args.seconds} s")
                prof = work / f"{backend}.prof" if args.profile else None
                workers = args.workers if backend == "postgres" and not prof else 1
                # decisions alone (the sustained rate), then recall alone (its latency), each a fresh server
                out = drive(db, args.seconds, args.decision_clients, 0, prof, workers=workers)
                if args.recall_clients:
                    rec = drive(db, args.seconds / 2, 0, args.recall_clients, None, workers=workers)
                    out["recall"] = rec["recall"]
                    out["requests"] += rec["requests"]
                    out["errors"] += rec["errors"]
                    out["error_samples"] += rec["error_samples"]
                    out["check_clean"] = out["check_clean"] and rec["check_clean"]
                out["workers"] = workers
                out["import_seconds"] = round(import_s, 2) if import_s is not None else "cached"
                out["naive_cli_decide"] = naive_baseline(db, args.naive)
                out["speedup_vs_naive"] = round(out["decisions_per_second"]
                                                / max(out["naive_cli_decide"]["decisions_per_second"], 1e-9), 1)
                result[backend] = out
                if prof and prof.exists():
                    import pstats

                    say(f"--- {backend} server profile (cumulative) ---")
                    pstats.Stats(str(prof), stream=sys.stderr).sort_stats("cumulative").print_stats(25)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result["load_avg_1m"] = round(os.getloadavg()[0], 2)
    pg = result.get("postgres") or {}
    # the figures, on PostgreSQL
    result["decisions_per_second"] = pg.get("decisions_per_second")
    result["http_recall_p95_ms"] = (pg.get("recall") or {}).get("p95_ms")
    result["targets"] = {"postgres_decisions_per_second": 300, "postgres_recall_p95_ms": 50,
                         "met": bool(pg) and pg["decisions_per_second"] >= 300 and (pg["recall"]["p95_ms"] or 1e9) < 50
                         and pg["lost_decisions"] == 0}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
