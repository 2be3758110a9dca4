"""The one health model at scale (issue 11, item 6): ``memtui.review.health.build_health`` over a store of N
memories (the store of ``bench/review_queue.py``, plus usage and harm events), beside a naive baseline
that asks the store per memory (usage, harm, revalidation, entering event: four queries a memory) on a
subset and is extrapolated to N.

Prints one JSON object: memories, seconds (build_health, median of --runs), naive_seconds_per_memory,
naive_seconds_extrapolated, speedup_vs_naive, actions (how many action sentences), same_actions_as_cli
(the JSON ``memtui health --json`` prints, built in-process, lists the same actions).
Usage: .venv/bin/python bench/health.py [--memories 100000] [--naive 500] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).parent))
from review_queue import build_store  # noqa: E402


def add_usage(engine, n: int) -> None:
    """Usage on every 50th memory (10 uses each: high use), harm on every 500th."""
    from memtui.store.models import HarmEvent, UsageEvent

    now = datetime(2026, 11, 25, tzinfo=UTC)
    uses, harms = [], []
    for i in range(0, n, 50):
        for k in range(10):
            uses.append(dict(usage_id=f"use_{i:06d}_{k}", memory_id=f"mem_{i:06d}", usage_type="context_pack",
                             outcome="positive", detail={}, created_at=now - timedelta(days=k)))
    for i in range(0, n, 500):
        harms.append(dict(harm_id=f"harm_{i:06d}", memory_id=f"mem_{i:06d}", issue="bench", action="reported",
                          created_at=now))
    with engine.begin() as conn:
        conn.execute(sa.insert(UsageEvent.__table__), uses)
        conn.execute(sa.insert(HarmEvent.__table__), harms)


def naive(engine, n: int) -> float:
    """Seconds per memory when each memory's health facts are asked for one by one."""
    from sqlmodel import Session, func, select

    from memtui.store.models import HarmEvent, Memory, Revalidation, StateHistory, UsageEvent

    t = time.perf_counter()
    with Session(engine) as s:
        ids = s.exec(select(Memory.memory_id).order_by(Memory.memory_id).limit(n)).all()
        for mid in ids:
            s.exec(select(func.count()).select_from(UsageEvent).where(UsageEvent.memory_id == mid)).one()
            s.exec(select(func.count()).select_from(HarmEvent).where(HarmEvent.memory_id == mid)).one()
            s.get(Revalidation, mid)
            s.exec(select(StateHistory).where(StateHistory.memory_id == mid)
                   .order_by(StateHistory.event_id.desc())).first()
    return (time.perf_counter() - t) / max(1, len(ids))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=100_000)
    ap.add_argument("--naive", type=int, default=500)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    os.environ["MEMTUI_NOW"] = "2026-11-30T12:00:00Z"  # the CLI's clock, so both see the same backlog ages
    from memtui.review.health import build_health, health_dict
    from memtui.review.service import health_json

    with tempfile.TemporaryDirectory() as d:
        print(f"building {args.memories} memories …", file=sys.stderr)
        engine = build_store(Path(d) / "health.db", args.memories)
        add_usage(engine, args.memories)
        now = datetime(2026, 11, 30, 12, tzinfo=UTC)
        times, model = [], None
        for _ in range(args.runs):
            t = time.perf_counter()
            model = build_health(engine, None, now)
            times.append(time.perf_counter() - t)
        per = naive(engine, args.naive)
        cli = health_json(engine, None)
        seconds = statistics.median(times)
        print(json.dumps({
            "memories": args.memories, "seconds": round(seconds, 3),
            "naive_seconds_per_memory": round(per, 6),
            "naive_seconds_extrapolated": round(per * args.memories, 2),
            "speedup_vs_naive": round(per * args.memories / seconds, 1),
            "actions": len(model.actions()),
            "same_actions_as_cli": [a for r in health_dict(model)["memoryHealth"] for a in r["actionRequired"]]
            == [a for r in cli["memoryHealth"] for a in r["actionRequired"]],
        }))
        engine.dispose()


if __name__ == "__main__":
    main()
