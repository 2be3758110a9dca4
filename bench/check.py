"""`memtui check` at scale (issue 9, item 4): 100,000 memories with chained history, the whole check
(states, transitions, hash chain, content hashes, evidence and scope, blocked memory, foreign keys),
beside a naive baseline (one memory and one history query per memory, on a sample, extrapolated).

Prints one JSON object: memories, events, seconds, findings, naive_seconds_estimate, speedup_vs_naive,
peak_rss_mb. Usage: .venv/bin/python bench/check.py [--memories 100000] [--naive 5000] [--store PATH]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy as sa


def build_store(path: Path, n: int):
    """A store of ``n`` memories as memtui writes them: a creating event, and for every second memory a
    decision, each chained and sealed with :mod:`memtui.domain.integrity` (bulk insert), and the store
    chain sealed over them (:func:`memtui.governance.integrity.seal_store`)."""
    from memtui.domain.integrity import content_hash, event_hash
    from memtui.store.engine import open_store
    from memtui.store.models import Evidence, Memory, StateHistory

    engine = open_store(str(path))
    now = datetime(2026, 11, 1, tzinfo=UTC)
    states = ["candidate"] * 4 + ["needs_review"] * 2 + ["active"] * 4
    with engine.begin() as conn:
        for start in range(0, n, 5000):
            rows, ev, hist = [], [], []
            for i in range(start, min(n, start + 5000)):
                mid = f"mem_{i:06d}"
                state = states[i % 10]
                row = dict(memory_id=mid, logical_memory_id=mid, type="code_fact",
                           statement=f"Service{i % 97} calls Registry{i % 13} for rule {i}.",
                           tenant_id="acme", repository_id=f"repo{i % 5}", module_path=None, applies_to=[],
                           does_not_apply_to=[], state=state, confidence=0.6, review_state="none",
                           conflict_state="none", impact="normal", origin="agent", requires_human_review=False,
                           source_action_ids=[], tags=[], invalidation_policy=[], created_at=now, version=1)
                events = [dict(event_id=f"evt_{i:012d}_0", memory_id=mid, from_state=None,
                               to_state="candidate" if i % 2 else state, reason="imported", comment=None,
                               actor_type="human", actor_id="bench", actor_role="reviewer", job_id=None,
                               compensates=None, review_state_before=None, decision_id=None, created_at=now)]
                if i % 2:
                    if state != "candidate":
                        events.append(dict(events[0], event_id=f"evt_{i:012d}_1", from_state="candidate",
                                           to_state=state, reason="reviewer decision",
                                           created_at=now + timedelta(minutes=1)))
                    else:
                        events.append(dict(events[0], event_id=f"evt_{i:012d}_1", from_state="candidate",
                                           to_state="candidate", reason="statement edited",
                                           created_at=now + timedelta(minutes=1)))
                prev = ""
                for e in events:
                    e["prev_hash"], e["event_hash"] = prev, event_hash(prev, e)
                    prev = e["event_hash"]
                row["content_hash"] = content_hash(row, prev)
                rows.append(row)
                ev.append(dict(memory_id=mid, ordinal=0, type="file_span", repository_id=None,
                               path=f"src/S{i % 97}.java", commit_sha="a" * 40, line_start=1, line_end=9,
                               status="valid"))
                hist.extend(events)
            conn.execute(sa.insert(Memory.__table__), rows)
            conn.execute(sa.insert(Evidence.__table__), ev)
            conn.execute(sa.insert(StateHistory.__table__), hist)
        from memtui.governance.integrity import seal_store

        seal_store(conn, None)  # the store chain, one row per memory, as memtui's writes leave it (issue 21)
    return engine


def naive(engine, sample: int) -> float:
    """Seconds per memory for the obvious way: one session, for each memory its row and its events."""
    from sqlmodel import Session, select

    from memtui.domain.integrity import chain_findings
    from memtui.review.chain import as_mapping
    from memtui.store.models import Memory, StateHistory

    t = time.perf_counter()
    with Session(engine) as s:
        ids = s.exec(select(Memory.memory_id).order_by(Memory.memory_id).limit(sample)).all()
        for mid in ids:
            m = s.get(Memory, mid)
            evs = [as_mapping(e) for e in s.exec(select(StateHistory).where(StateHistory.memory_id == mid)
                                                   .order_by(StateHistory.event_id))]
            chain_findings(mid, m.state, m.content_hash, as_mapping(m), evs)
    return (time.perf_counter() - t) / max(1, len(ids))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--memories", type=int, default=100_000)
    ap.add_argument("--naive", type=int, default=5000, help="memories the naive baseline checks (extrapolated)")
    ap.add_argument("--store", type=Path, help="keep the generated store here (default: a temporary folder)")
    args = ap.parse_args()
    from memtui.governance.integrity import check_store

    with tempfile.TemporaryDirectory() as tmp:
        path = args.store or Path(tmp) / "check.db"
        t = time.perf_counter()
        engine = build_store(path, args.memories)
        print(f"built {args.memories} memories in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        t = time.perf_counter()
        result = check_store(engine)
        seconds = time.perf_counter() - t
        per = naive(engine, args.naive)
        engine.dispose()
    out = {"memories": result.memories, "events": result.events, "seconds": round(seconds, 2),
           "findings": len(result.findings), "naive_seconds_estimate": round(per * args.memories, 2),
           "speedup_vs_naive": round(per * args.memories / seconds, 1),
           "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
