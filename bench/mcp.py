"""The MCP server as an agent meets it, and the HTTP API beside it (issue 22 item 2; targets on a quiet
machine: initialise under 0.5 s, warm recall p95 under 50 ms at 10,000 memories; over HTTP recall p95
under 50 ms and at least 300 decisions per second on PostgreSQL).

Starts ``memtui mcp --db DB`` as a real subprocess with the SDK's ``stdio_client`` and ``ClientSession``
(as tests/test_mcp.py does) over the 10,000-memory store of bench/api.py (the same generated JSONL;
the SQLite store cached in bench/.cache/api/, a fresh PostgreSQL database each run) and measures:

- ``mcp_initialize_seconds``: from spawning the process to the ``initialize`` answer
  (``sdk_initialize_seconds``: the same with ``MEMTUI_MCP_FAST_INIT=0``, the SDK answering, as before);
- ``mcp_first_recall_seconds``: the first ``recall`` tool call right after it;
- ``mcp_warm_recall_p50_ms`` / ``mcp_warm_recall_p95_ms``: ``--warm`` further recalls, one at a time,
  of random tasks in the store's words (recorded, as an agent's are: one usage event per memory);
- ``server_cpu_seconds``: the server process's CPU over the whole session;
- ``naive``: the same recall as a one-shot ``memtui recall --json`` process (``MEMTUI_WARM=0``), the
  way without a server, in the same run;
- ``http_recall_p95_ms`` and ``decisions_per_second``: then, on the PostgreSQL store, ``memtui serve``
  driven as bench/api.py drives it (12 decision clients for ``--api-seconds``, then 4 recall clients for
  half that, each on a fresh 2-worker server), with its naive baseline (one ``memtui decide`` process
  per decision).

Prints one JSON object (``load_avg_1m`` at the end). Usage:
    .venv/bin/python bench/mcp.py [--memories 10000] [--warm 60] [--naive 3] [--backends sqlite,postgres]
                                  [--api-seconds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# this file's folder is sys.path[0]: drop it, or this script would shadow the SDK's package ``mcp``
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
MEMTUI = str(Path(sys.executable).parent / "memtui")
AGENT = "bench-agent"


def _api():
    """bench/api.py as a module (its store builders and task vocabulary)."""
    spec = importlib.util.spec_from_file_location("bench_api", ROOT / "bench" / "api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


api = _api()


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's child processes that are still running, from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            fields = (p / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def tasks(n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    return [f"change how {rnd.choice(api.SUBJECTS)} {rnd.choice(api.VERBS)} {rnd.choice(api.OBJECTS)}"
            for _ in range(n)]


async def session_figures(db: str, warm: int) -> dict:
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp.types import Implementation

    env = {k: v for k, v in os.environ.items() if k != "MEMTUI_NOW"}
    params = StdioServerParameters(command=MEMTUI, args=["mcp", "--db", db, "--actor", AGENT], env=env)
    scope = f"repository:{api.REPO}"
    todo = tasks(warm + 1, 7)
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, client_info=Implementation(name=AGENT, version="1")) as session:
            await session.initialize()
            initialised = time.perf_counter()
            first = await session.call_tool("recall", {"task": todo[0], "scope": scope})
            first_done = time.perf_counter()
            if first.is_error:
                raise SystemExit(f"recall failed: {first.content}")
            warm_ms, excluded = [], []
            for task in todo[1:]:
                t = time.perf_counter()
                out = await session.call_tool("recall", {"task": task, "scope": scope})
                warm_ms.append((time.perf_counter() - t) * 1000)
                if out.is_error:
                    raise SystemExit(f"recall failed: {out.content}")
                excluded.append(out.structured_content["excludedTotal"])
            cpu = _children_cpu() - cpu0
    return {
        "mcp_initialize_seconds": round(initialised - t0, 3),
        "mcp_first_recall_seconds": round(first_done - initialised, 3),
        "mcp_warm_recall_p50_ms": api.pct(warm_ms, 50),
        "mcp_warm_recall_p95_ms": api.pct(warm_ms, 95),
        "warm_recalls": len(warm_ms),
        "excluded_per_pack_median": sorted(excluded)[len(excluded) // 2] if excluded else None,
        "server_cpu_seconds": round(cpu, 2),
    }


async def sdk_initialize_seconds(db: str) -> float:
    """Spawn to ``initialize`` answer with ``MEMTUI_MCP_FAST_INIT=0``: the SDK answers, as before issue 22."""
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp.types import Implementation

    env = {k: v for k, v in os.environ.items() if k != "MEMTUI_NOW"}
    env["MEMTUI_MCP_FAST_INIT"] = "0"
    params = StdioServerParameters(command=MEMTUI, args=["mcp", "--db", db, "--actor", AGENT], env=env)
    t0 = time.perf_counter()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, client_info=Implementation(name=AGENT, version="1")) as session:
            await session.initialize()
            return round(time.perf_counter() - t0, 3)


def naive(db: str, n: int) -> dict:
    """One cold ``memtui recall --json`` process per recall."""
    env = dict(os.environ, MEMTUI_WARM="0")
    env.pop("MEMTUI_NOW", None)
    seconds = []
    for task in tasks(n, 99):
        t = time.perf_counter()
        api.run([MEMTUI, "recall", task, "--scope", f"repository:{api.REPO}", "--json", "--db", db,
                 "--actor", AGENT], env=env)
        seconds.append(time.perf_counter() - t)
    return {"recalls": n, "median_seconds": round(sorted(seconds)[len(seconds) // 2], 3) if seconds else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--warm", type=int, default=60, help="warm recalls after the first")
    ap.add_argument("--naive", type=int, default=3, help="cold `memtui recall` processes for the baseline")
    ap.add_argument("--backends", default="sqlite,postgres")
    ap.add_argument("--api-seconds", type=float, default=20,
                    help="then drive `memtui serve` on the PostgreSQL store as bench/api.py does (decisions for "
                         "this long, recall for half); 0: skip")
    args = ap.parse_args()
    result: dict = {"memories": args.memories, "load_avg_1m_start": round(os.getloadavg()[0], 2)}
    work = Path(os.environ.get("TMPDIR", "/tmp")) / f"memtui_bench_mcp_{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    try:
        for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
            with api.store_for(backend, args.memories, work) as (db, _seconds):
                api.say(f"{backend}: MCP session")
                out = asyncio.run(session_figures(db, args.warm))
                out["sdk_initialize_seconds"] = asyncio.run(sdk_initialize_seconds(db))
                out["naive_cli_recall"] = naive(db, args.naive)
                if out["mcp_warm_recall_p50_ms"]:
                    out["speedup_warm_vs_naive"] = round(
                        1000 * out["naive_cli_recall"]["median_seconds"] / out["mcp_warm_recall_p50_ms"], 1)
                result[backend] = out
                if backend == "postgres" and args.api_seconds:
                    api.say(f"postgres: memtui serve for {args.api_seconds} s")
                    decided = api.drive(db, args.api_seconds, 12, 0, None, workers=2)
                    recalled = api.drive(db, args.api_seconds / 2, 0, 4, None, workers=2)
                    result["api_postgres"] = {
                        "decisions_per_second": decided["decisions_per_second"], "review": decided["review"],
                        "recall": recalled["recall"], "errors": decided["errors"] + recalled["errors"],
                        "lost_decisions": decided["lost_decisions"], "doubled_decisions": decided["doubled_decisions"],
                        "server_cpu_ms_per_request": [decided["server_cpu_ms_per_request"],
                                                      recalled["server_cpu_ms_per_request"]],
                        "client_cpu_seconds": decided["client_cpu_seconds"] + recalled["client_cpu_seconds"],
                        "naive_cli_decide": api.naive_baseline(db, 3)}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    first = result.get("sqlite") or result.get("postgres") or {}
    for key in ("mcp_initialize_seconds", "mcp_first_recall_seconds", "mcp_warm_recall_p95_ms"):
        result[key] = first.get(key)
    served = result.get("api_postgres") or {}
    result["http_recall_p95_ms"] = (served.get("recall") or {}).get("p95_ms")
    result["decisions_per_second"] = served.get("decisions_per_second")
    result["load_avg_1m"] = round(os.getloadavg()[0], 2)
    result["targets"] = {"mcp_initialize_seconds": 0.5, "mcp_warm_recall_p95_ms": 50, "http_recall_p95_ms": 50,
                         "decisions_per_second": 300,
                         "met": all((result.get(b) or {}).get("mcp_initialize_seconds", 9) < 0.5
                                    and ((result.get(b) or {}).get("mcp_warm_recall_p95_ms") or 1e9) < 50
                                    for b in ("sqlite", "postgres") if b in result)}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
