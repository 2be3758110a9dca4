"""Quality of duplicate and conflict detection on labelled statement pairs (issue 10, items 3 and 5),
measured through the code ``memtui maintain`` runs.

``tests/data/labelled_pairs.yaml`` holds 1,531 pairs over 12+ stacks (451 hand-written for issue 4, 1,080
written blind by sessions that never saw memtui's rules), labelled duplicate / conflict / related /
unrelated. The blind split (``memtui.similarity.pairs.is_blind``, ~30%, a fixed hash of the pair) was
frozen before the scorer was trained; the scorer is trained on the rest (``make train-scorer``).

:func:`memtui.maintenance.pair_eval.evaluate` imports every blind pair as two memories of their own
repository into a real SQLite store and runs the dedupe and conflict jobs; a pair is a predicted
duplicate when one open cluster holds both, a conflict when a conflict record links them. First run
(the figures in the YAML header): duplicates P 0.889 / R 0.276, conflicts P 0.863 / R 0.331 -- far
below the issue's targets (P 0.95 / R 0.90, P 0.90 / R 0.80). Stop 18's scorer: duplicates P 0.864 /
R 0.352, conflicts P 0.940 / R 0.353, still far below them. The floors below are what is reached,
so a regression fails; they are not the targets.
"""

from __future__ import annotations

from collections import Counter

import pytest

from memtui.maintenance.pair_eval import evaluate
from memtui.similarity import pairs as labelled
from memtui.store.engine import make_engine, upgrade

KINDS = ("duplicate", "conflict", "related", "unrelated")


def test_labelled_pairs_are_well_formed():
    pairs = labelled.load()
    assert len(pairs) >= 1000
    for pair in pairs:
        assert {"a", "b", "label", "stack", "source"} <= set(pair) <= {"a", "b", "label", "stack", "source", "note"}, pair
        assert pair["label"] in KINDS, pair
        assert pair["a"].strip() and pair["b"].strip() and pair["a"] != pair["b"], pair
    seen = Counter(frozenset((p["a"], p["b"])) for p in pairs)
    assert not [k for k, n in seen.items() if n > 1], "a pair is labelled twice"
    stacks = {p["stack"] for p in pairs} - {"general"}
    assert len(stacks) >= 12, stacks
    blind = labelled.load(split="blind")
    assert 0.27 <= len(blind) / len(pairs) <= 0.33


def test_blind_split_rule_is_the_frozen_hash():
    # worked out by hand from the rule: sha256("x\ny") mod 10
    import hashlib

    v = int(hashlib.sha256(b"x\ny").hexdigest(), 16) % 10
    assert labelled.is_blind("x", "y") == (v < 3)


@pytest.fixture(scope="module")
def blind_figures(tmp_path_factory):
    d = tmp_path_factory.mktemp("blind")
    engine = make_engine(f"sqlite:///{d}/pairs.db")
    upgrade(engine)
    out = evaluate(engine, labelled.load(split="blind"), d, grouped=True)
    engine.dispose()
    return out


def test_blind_split_quality_through_the_maintenance_jobs(blind_figures):
    f = blind_figures
    print("\nblind split through import + dedupe + conflicts:", f)
    assert f["n"] == len(labelled.load(split="blind"))
    # issue 20: only likely verdicts act, so their precision is what must hold (measured 0.875 / 0.976
    # with every pair of a stack in one scope, bench/README.md: the duplicate bar stays at 0.70 so the
    # demo's cluster holds); the possible tier adds recall
    assert f["likely_duplicate_precision"] >= 0.85, f
    assert f["likely_conflict_precision"] >= 0.95, f
    assert f["likely_duplicate_recall"] >= 0.3, f
    assert f["likely_conflict_recall"] >= 0.28, f
    assert f["possible_duplicate_recall"] >= f["likely_duplicate_recall"] + 0.3, f
    assert f["possible_conflict_recall"] >= f["likely_conflict_recall"] + 0.3, f
    assert f["possible_per_memory"] <= 3, f
