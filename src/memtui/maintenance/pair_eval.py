"""Labelled pairs measured through the production path (issue 10, items 3 and 5; bench/dedupe.py and
tests/test_pair_quality.py): each pair becomes two memories of its own repository in a real store,
imported with :func:`memtui.importers.pipeline.import_paths`, then the dedupe and conflict jobs that
``memtui maintain`` runs (:func:`detect_duplicates`, :func:`detect_conflicts`) judge them.

:func:`evaluate` ``(engine, pairs, workdir) -> dict``: ``duplicate_precision`` / ``_recall``,
``conflict_precision`` / ``_recall`` of the *likely* tier (a pair is predicted ``conflict`` when an open
conflict record links its two memories, else ``duplicate`` when one open cluster holds both, else
``neither``), ``confusion`` ``{gold: {predicted: count}}`` with gold in duplicate / conflict / neither,
and ``n``; for the two tiers (issue 20) ``likely_*`` (the same figures) and ``possible_conflict_recall`` /
``possible_duplicate_recall`` (likely or possible), ``possible_conflict_precision`` /
``possible_duplicate_precision`` (of the possible ones alone) and ``possible_per_memory`` (the mean number
of possible partners, of either kind, a memory shows). ``grouped``: every pair of one ``stack`` shares one
repository, so each memory meets many others (what a reviewer sees); else each pair has its own.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import yaml
from sqlalchemy.engine import Engine

from memtui.maintenance.conflicts import conflict_records, detect_conflicts
from memtui.maintenance.dedupe import cluster_records, detect_duplicates
from memtui.similarity.pairs import KINDS, target

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def evaluate(engine: Engine, pairs: list[dict], workdir: Path, now: datetime = NOW, grouped: bool = False) -> dict:
    """Import ``pairs`` into the (empty, initialised) store ``engine`` and measure the jobs' verdicts."""
    from memtui.governance.reviewers import resolve_actor
    from memtui.importers.pipeline import import_paths

    records = []
    for i, p in enumerate(pairs):
        for side in ("a", "b"):
            records.append({"memoryId": f"pair{i:05d}{side}", "type": "code_fact", "statement": p[side],
                            "scope": {"tenantId": "eval", "repositoryId": f"stack-{p.get('stack') or 'none'}"
                                      if grouped else f"pair-{i:05d}"}})
    path = Path(workdir) / "pairs.yaml"
    path.write_text(yaml.safe_dump({"memories": records}, sort_keys=False, allow_unicode=True), encoding="utf-8")
    import_paths(engine, [path], resolve_actor(engine, "pair-eval", None))
    detect_duplicates(engine, now)
    detect_conflicts(engine, now)
    clusters, conflicts = cluster_records(engine), conflict_records(engine)
    together = {frozenset((a, b)) for c in clusters if c["status"] == "open"
                for a in c["members"] for b in c["members"] if a < b}
    maybe_dup = {frozenset(c["members"]) for c in clusters if c["status"] == "possible"}
    conflicting = {frozenset(c["memories"]) for c in conflicts if c["status"] == "open"}
    maybe_conflict = {frozenset(c["memories"]) for c in conflicts if c["status"] == "possible"}
    cm: Counter = Counter()
    possible: Counter = Counter()
    for i, p in enumerate(pairs):
        key = frozenset((f"pair{i:05d}a", f"pair{i:05d}b"))
        pred = "conflict" if key in conflicting else "duplicate" if key in together else "neither"
        gold = target(p["label"])
        cm[(gold, pred)] += 1
        possible[(gold, "conflict")] += key in maybe_conflict
        possible[(gold, "duplicate")] += key in maybe_dup
    out: dict = {"n": len(pairs)}
    for kind in ("duplicate", "conflict"):
        tp = cm[(kind, kind)]
        predicted = sum(cm[(g, kind)] for g in KINDS)
        actual = sum(cm[(kind, q)] for q in KINDS)
        out[f"{kind}_precision"] = round(tp / predicted, 3) if predicted else 1.0
        out[f"{kind}_recall"] = round(tp / actual, 3) if actual else 1.0
        out[f"likely_{kind}_precision"], out[f"likely_{kind}_recall"] = out[f"{kind}_precision"], out[f"{kind}_recall"]
        shown = sum(possible[(g, kind)] for g in KINDS)
        out[f"possible_{kind}_precision"] = round(possible[(kind, kind)] / shown, 3) if shown else 1.0
        out[f"possible_{kind}_recall"] = round((tp + possible[(kind, kind)]) / actual, 3) if actual else 1.0
    partners = Counter()
    for pair in maybe_dup | maybe_conflict:
        for m in pair:
            partners[m] += 1
    out["possible_per_memory"] = round(sum(partners.values()) / (2 * len(pairs)), 3) if pairs else 0.0
    out["confusion"] = {g: {q: cm[(g, q)] for q in KINDS} for g in KINDS}
    return out
