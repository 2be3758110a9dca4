"""The learned pair scorer (issue 10, item 2): one multinomial logistic regression over
:data:`memtui.similarity.features.FEATURES`, classes duplicate / conflict / neither.

The coefficients live in ``scorer_model.json`` next to this module, written by ``make train-scorer``
(:mod:`memtui.similarity.train`, scikit-learn, trained on the non-blind labelled pairs only).
:func:`decide` applies the model's thresholds: ``duplicate`` when P(duplicate) reaches
``duplicate_threshold`` and no veto fires (:data:`~memtui.similarity.features.VETOES`) -- below
``duplicate_guard_below`` the lexical guard must find no material difference too; ``conflict`` when P(conflict) reaches ``conflict_threshold``, the embedding
cosine reaches ``conflict_min_cosine`` and at least one contradiction feature fires
(:data:`~memtui.similarity.features.CONTRADICTIONS`); otherwise ``neither``. :func:`why` names the
features that pushed a pair towards its class most (coefficient x standardised value).

:func:`judge` ``(a, b) -> Verdict`` is the entry point for one pair; :func:`judge_profiles` scores many
pairs of profiles in one call (the jobs' path).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from memtui.similarity.features import (CONTRADICTION_INDEX, CONTRADICTIONS, FEATURES, LABELS, VETO_INDEX, Profile,
                                        ProfileTable, _combine, profile, table_of)

MODEL_PATH = Path(__file__).with_name("scorer_model.json")
CLASSES = ("duplicate", "conflict", "neither")


@dataclass(frozen=True)
class Model:
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray  # (3, F), rows in CLASSES order
    intercept: np.ndarray  # (3,)
    duplicate_threshold: float
    conflict_threshold: float
    conflict_min_cosine: float
    duplicate_guard_below: float  # P(duplicate) under which the lexical guard must agree too


@lru_cache(maxsize=1)
def model() -> Model:
    """The committed model; ValueError when its feature list differs from :data:`FEATURES`."""
    d = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    if tuple(d["features"]) != FEATURES:
        raise ValueError(f"{MODEL_PATH}: features {d['features']} differ from the code's; run make train-scorer")
    order = [d["classes"].index(c) for c in CLASSES]
    return Model(np.array(d["mean"], np.float64), np.array(d["scale"], np.float64),
                 np.array(d["coef"], np.float64)[order], np.array(d["intercept"], np.float64)[order],
                 float(d["duplicate_threshold"]), float(d["conflict_threshold"]), float(d["conflict_min_cosine"]),
                 float(d.get("duplicate_guard_below", d["duplicate_threshold"])))


def probabilities(X: np.ndarray, m: Model | None = None) -> np.ndarray:
    """``(n, 3)`` class probabilities (CLASSES order) of feature rows ``X`` ``(n, F)``."""
    m = m or model()
    z = ((np.asarray(X, np.float64) - m.mean) / m.scale) @ m.coef.T + m.intercept
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def uncertain_duplicates(P: np.ndarray, m: Model | None = None) -> np.ndarray:
    """Rows whose P(duplicate) lies in ``[duplicate_threshold, duplicate_guard_below)``: a duplicate there
    only when the lexical guard (:func:`memtui.similarity.statements.material_difference_analyzed`) finds no
    material difference either (design: never merge subtly different statements)."""
    m = m or model()
    return (P[:, 0] >= m.duplicate_threshold) & (P[:, 0] < m.duplicate_guard_below)


def guard_refuses(table: ProfileTable, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
    """Bool per pair of table rows: the lexical guard names a material difference between them."""
    from memtui.similarity.statements import material_difference_analyzed

    return np.array([material_difference_analyzed(table.analyzed(a), table.analyzed(b)) is not None
                     for a, b in zip(ia.tolist(), ib.tolist())], bool)


def decide(X: np.ndarray, P: np.ndarray, m: Model | None = None, refused: np.ndarray | None = None) -> np.ndarray:
    """Class index per row (0 duplicate, 1 conflict, 2 neither) under the model's thresholds; ``refused``
    (bool per row, :func:`_refused`) marks the pairs that must not be called duplicates."""
    m = m or model()
    X = np.asarray(X)
    contradiction = (X[:, CONTRADICTION_INDEX] > 0).any(axis=1)
    conflict = (P[:, 1] >= m.conflict_threshold) & contradiction & (X[:, 0] >= m.conflict_min_cosine)
    vetoed = (X[:, VETO_INDEX] > 0).any(axis=1)
    dup = (P[:, 0] >= m.duplicate_threshold) & ~vetoed & ~(conflict & (P[:, 1] > P[:, 0]))
    if refused is not None:
        dup &= ~refused
    return np.where(dup, 0, np.where(conflict, 1, 2))


def why(x: np.ndarray, cls: int, top: int = 3, m: Model | None = None) -> list[tuple[str, float]]:
    """The ``top`` features that pushed row ``x`` towards class ``cls`` rather than ``neither`` most:
    ``[(feature name, contribution in log-odds)]``, strongest first, positive contributions only."""
    m = m or model()
    ref = 2 if cls != 2 else 0
    contrib = (np.asarray(x, np.float64) - m.mean) / m.scale * (m.coef[cls] - m.coef[ref])
    order = np.argsort(-contrib)
    return [(FEATURES[i], round(float(contrib[i]), 2)) for i in order[:top] if contrib[i] > 0]


@dataclass(frozen=True)
class Verdict:
    """``kind`` duplicate / conflict / neither; ``p_duplicate`` / ``p_conflict`` in [0, 1];
    ``why``: [(feature, contribution)], strongest first; ``features``: the raw feature row."""

    kind: str
    p_duplicate: float
    p_conflict: float
    why: tuple[tuple[str, float], ...]
    features: tuple[float, ...]

    def explain(self) -> str:
        """The ``why`` in words, e.g. ``"embedding cosine 0.81 (+1.9), token set ratio 0.88 (+0.7)"``; a
        conflict first names the contradictions that let it be one (``"contradiction: negation on one
        side; ..."``): :func:`decide` calls no pair a conflict without one."""
        vals = dict(zip(FEATURES, self.features))
        text = ", ".join(f"{LABELS[n]} {vals[n]:.2f} ({c:+.1f})" for n, c in self.why) or "no strong feature"
        if self.kind == "conflict":
            fired = [LABELS[n] for n in CONTRADICTIONS if vals[n] > 0]
            if fired:
                text = f"contradiction: {', '.join(fired)}; {text}"
        return text


def judge_profiles(pa: Sequence[Profile], pb: Sequence[Profile], cosines: Sequence[float]) -> list[Verdict]:
    """Verdicts of the pairs ``(pa[i], pb[i])`` whose embedding cosine is ``cosines[i]``."""
    if not len(pa):
        return []
    table, ia, ib = table_of(pa, pb)
    X = table.features(ia, ib, cosines)
    m = model()
    return verdicts_of_rows(X, _refused(table, ia, ib, probabilities(X, m), m), m)


def verdicts_of_rows(X: np.ndarray, refused: np.ndarray, m: Model | None = None) -> list[Verdict]:
    """Verdicts of feature rows ``X`` ``(n, F)`` whose pairs the lexical guard ``refused`` (bool per row)."""
    m = m or model()
    P = probabilities(X, m)
    cls = decide(X, P, m, refused)
    return [Verdict(CLASSES[k], round(float(p[0]), 4), round(float(p[1]), 4), tuple(why(x, int(k), m=m)),
                    tuple(float(v) for v in x)) for x, p, k in zip(X, P, cls)]


def duplicate_scores(pa: Sequence[Profile], pb: Sequence[Profile], cosines: Sequence[float]):
    """:func:`duplicate_scores_of_rows` of the pairs ``(pa[i], pb[i])``."""
    table, ia, ib = table_of(pa, pb)
    return duplicate_scores_of_rows(table, ia, ib, np.asarray(cosines, np.float32))


def duplicate_scores_of_rows(table: ProfileTable, ia: np.ndarray, ib: np.ndarray, cosines: np.ndarray,
                             lexical: tuple[np.ndarray, np.ndarray] | None = None, workers: int = 1):
    """P(duplicate) of each pair of table rows ``(ia[i], ib[i])`` as float32 (0 where :func:`decide` calls
    the pair a conflict, a veto fires or the lexical guard refuses an unsure one) -- the dedupe index's
    score (x 100) -- with the feature rows ``X`` and the guard's refusals (bool per row) beside them, so a
    caller can explain a pair later (:func:`verdicts_of_rows`) without scoring it again. ``lexical``: the
    pairs' ``(token_set, token_sort)`` ratios when already computed.

    A pair a veto fires on (:data:`~memtui.similarity.features.VETOES`, read from the statements' sets
    first) scores 0 whatever its other features: only its set features are computed, the rest of its
    row stays 0 (such rows are never explained)."""
    n = len(ia)
    F = len(FEATURES)
    if not n:
        return np.zeros(0, np.float32), np.zeros((0, F), np.float32), np.zeros(0, bool)
    ia, ib = np.asarray(ia, np.int64), np.asarray(ib, np.int64)
    X = np.zeros((n, F), np.float32)
    cos = np.maximum(np.asarray(cosines, np.float32), 0.0)
    X[:, 0] = cos
    table.set_features(ia, ib, X)
    live = np.flatnonzero(~(X[:, VETO_INDEX] > 0).any(axis=1))
    out = np.zeros(n, np.float32)
    refused = np.zeros(n, bool)
    if not len(live):
        return out, X, refused
    la, lb = ia[live], ib[live]
    tset, tsort = (lexical[0][live], lexical[1][live]) if lexical is not None else table.lexical(la, lb, workers)
    Xl = X[live]
    Xl[:, FEATURES.index("token_set")] = tset / 100
    Xl[:, FEATURES.index("token_sort")] = tsort / 100
    table.word_features(la, lb, Xl)
    _combine(Xl)
    X[live] = Xl
    m = model()
    P = probabilities(Xl, m)
    ref = _refused(table, la, lb, P, m)
    p = np.where(decide(Xl, P, m) == 1, 0.0, P[:, 0])
    p[ref] = 0.0
    out[live] = p
    refused[live] = ref
    return out, X, refused


def _refused(table: ProfileTable, ia: np.ndarray, ib: np.ndarray, P: np.ndarray, m: Model) -> np.ndarray:
    """Bool per pair of table rows: never a duplicate. Uncertain (:func:`uncertain_duplicates`) and refused
    by the lexical guard, or, from the duplicate threshold, about parallel subjects
    (:func:`memtui.similarity.subjects.relation` ``"different"``: ``server/`` and ``mcp_server/``, two
    items of one catalogue; issue 20) -- one rule for the dedupe index, the jobs and proposals."""
    from memtui.similarity.subjects import relation

    out = np.zeros(len(P), bool)
    rows = np.flatnonzero(uncertain_duplicates(P, m))
    if len(rows):
        out[rows] = guard_refuses(table, ia[rows], ib[rows])
    texts = table.texts
    for i in np.flatnonzero((P[:, 0] >= m.duplicate_threshold) & ~out).tolist():
        out[i] = relation(texts[ia[i]], texts[ib[i]]) == "different"
    return out


def judge(a: str, b: str) -> Verdict:
    """:func:`judge_profiles` of one pair of texts (embeds both)."""
    from memtui.similarity.embed import embed

    E = embed([a, b])
    return judge_profiles([profile(a)], [profile(b)], [float(E[0] @ E[1])])[0]
