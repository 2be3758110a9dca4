"""Train the pair scorer (``make train-scorer``): ``python -m memtui.similarity.train [--out PATH]``.

Reads the non-blind pairs of ``tests/data/labelled_pairs.yaml`` only (:func:`memtui.similarity.pairs.load`
``split="train"``), fits ``StandardScaler`` + multinomial ``LogisticRegression`` (lbfgs, C=0.1,
balanced class weights; deterministic), and picks the thresholds on 5-fold out-of-fold probabilities
of the same pairs: the duplicate threshold (vetoes applied) and the P(duplicate) under which the lexical
guard must agree too, with the best F1 among those reaching precision :data:`DUP_PRECISION` (else the best
F1); the conflict threshold and minimum cosine the same way at precision :data:`CONFLICT_PRECISION`. Writes the
model JSON (:data:`memtui.similarity.scorer.MODEL_PATH`) and prints the out-of-fold figures.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from memtui.similarity.statements import material_difference
from memtui.similarity import pairs as labelled
from memtui.similarity.embed import embed
from memtui.similarity.features import CONTRADICTION_INDEX, FEATURES, VETO_INDEX, pair_feature_matrix, prime, profile
from memtui.similarity.scorer import CLASSES, MODEL_PATH

DUP_PRECISION = 0.92
CONFLICT_PRECISION = 0.85


def features_of(rows: list[dict]) -> np.ndarray:
    """Feature rows of labelled pairs (the scorer's own :func:`pair_feature_matrix`)."""
    texts = sorted({t for p in rows for t in (p["a"], p["b"])})
    pos = {t: i for i, t in enumerate(texts)}
    E = embed(texts)
    prime(texts)
    prof = {t: profile(t) for t in texts}
    return pair_feature_matrix([prof[p["a"]] for p in rows], [prof[p["b"]] for p in rows],
                               [float(E[pos[p["a"]]] @ E[pos[p["b"]]]) for p in rows])


def _pick(score: np.ndarray, ok: np.ndarray, gold: np.ndarray, precision: float) -> tuple[float, float, float, float]:
    """(threshold, precision, recall, f1) over candidate thresholds for ``score >= t`` (and ``ok``)."""
    best, best_any = None, None
    for t in np.round(np.arange(0.20, 0.96, 0.01), 2):
        pred = (score >= t) & ok
        tp, n_pred, n_gold = int((pred & gold).sum()), int(pred.sum()), int(gold.sum())
        p = tp / n_pred if n_pred else 0.0
        r = tp / n_gold if n_gold else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        cand = (f, float(t), p, r)
        if best_any is None or cand > best_any:
            best_any = cand
        if p >= precision and (best is None or cand > best):
            best = cand
    f, t, p, r = best or best_any
    return t, p, r, f


def train(out: Path = MODEL_PATH) -> dict:
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold
    from sklearn.preprocessing import StandardScaler

    rows = labelled.load(split="train")
    X = features_of(rows)
    y = np.array([CLASSES.index(labelled.target(p["label"])) for p in rows])

    C = 0.1

    def fit(Xf, yf):
        sc = StandardScaler().fit(Xf)
        sc.scale_[sc.scale_ == 0] = 1.0
        lr = LogisticRegression(C=C, class_weight="balanced", max_iter=5000).fit(sc.transform(Xf), yf)
        return sc, lr

    oof = np.zeros((len(rows), 3))
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
        sc, lr = fit(X[tr], y[tr])
        oof[te] = lr.predict_proba(sc.transform(X[te]))[:, np.argsort(lr.classes_)]
    not_vetoed = ~(X[:, VETO_INDEX] > 0).any(axis=1)
    guard_ok = np.array([material_difference(p["a"], p["b"]) is None for p in rows])
    best_dup = None
    for below in np.round(np.arange(0.0, 1.01, 0.05), 2):  # the lexical guard below P(duplicate) ``below``
        t, p, r, f = _pick(oof[:, 0], not_vetoed & ((oof[:, 0] >= below) | guard_ok), y == 0, DUP_PRECISION)
        cand = (p >= DUP_PRECISION, f, -below, t, p, r)
        if best_dup is None or cand > best_dup:
            best_dup = cand
    _, _, neg_below, dup_t, dp, dr = best_dup
    guard_below = max(dup_t, -neg_below)
    contradiction = (X[:, CONTRADICTION_INDEX] > 0).any(axis=1)
    best = None
    for c in (0.0, 0.2, 0.3, 0.4, 0.5):
        ok = contradiction & (X[:, 0] >= c) & ~(oof[:, 0] >= dup_t)
        t, p, r, f = _pick(oof[:, 1], ok, y == 1, CONFLICT_PRECISION)
        cand = (p >= CONFLICT_PRECISION, f, -c, t, p, r)
        if best is None or cand > best:
            best = cand
    _, _, neg_c, conf_t, cp, cr = best
    sc, lr = fit(X, y)
    order = list(np.argsort(lr.classes_))
    d = {
        "model": "multinomial logistic regression over standardised features (scikit-learn)",
        "trained_on": f"{len(rows)} non-blind pairs of tests/data/labelled_pairs.yaml",
        "features": list(FEATURES), "classes": list(CLASSES),
        "mean": [round(float(v), 6) for v in sc.mean_], "scale": [round(float(v), 6) for v in sc.scale_],
        "coef": [[round(float(v), 6) for v in lr.coef_[k]] for k in order],
        "intercept": [round(float(lr.intercept_[k]), 6) for k in order],
        "duplicate_threshold": dup_t, "duplicate_guard_below": guard_below, "conflict_threshold": conf_t, "conflict_min_cosine": -neg_c,
        "out_of_fold": {"duplicate_precision": round(dp, 3), "duplicate_recall": round(dr, 3),
                        "conflict_precision": round(cp, 3), "conflict_recall": round(cr, 3)},
    }
    out.write_text(json.dumps(d, indent=1) + "\n", encoding="utf-8")
    return d


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=MODEL_PATH)
    d = train(ap.parse_args().out)
    print(json.dumps({k: d[k] for k in ("trained_on", "duplicate_threshold", "duplicate_guard_below", "conflict_threshold",
                                         "conflict_min_cosine", "out_of_fold")}))


if __name__ == "__main__":
    main()
