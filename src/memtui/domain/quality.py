"""Quality score and retrieval eligibility (seed 000 §15, §17). Pure.

Each factor is in [0, 1]; ``overall`` is their weighted mean minus the conflict penalty,
rounded to 2 decimals so reports are stable.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

#: Weights of the factors in the overall score (they sum to 1).
WEIGHTS: dict[str, float] = {
    "evidenceStrength": 0.25, "specificity": 0.10, "scopeCorrectness": 0.10, "freshness": 0.20,
    "review": 0.15, "usefulness": 0.10, "safety": 0.10,
}
#: Band thresholds on the overall score (seed 000 §17.3): high >= 0.80, medium >= 0.60, low >= 0.40.
BANDS: tuple[tuple[float, str], ...] = ((0.80, "high"), (0.60, "medium"), (0.40, "low"), (0.0, "poor"))
DEFAULT_CONFIDENCE_THRESHOLD = 0.5
STRONG_EVIDENCE = {"file_span": 1.0, "symbol": 1.0, "call_edge": 0.9, "adr": 0.9, "replay": 0.9,
                   "human": 0.8, "doc": 0.6, "ref": 0.3}
STATUS_WEIGHT = {"valid": 1.0, "unchecked": 0.7, "changed": 0.3, "unverifiable": 0.2, "deleted": 0.0,
                 "unresolvable": 0.5, "retired": 0.0}
#: Code identifiers in prose: CamelCase, dotted (Class.method, a/b.py), snake_case.
_IDENTIFIER = re.compile(r"\b(?:[A-Za-z]+[A-Z][A-Za-z0-9]*|\w+\.\w+(?:\.\w+)*|[a-z0-9]+_[a-z0-9_]+)\b")
VAGUE_WORDS = ("sometimes", "maybe", "probably", "usually", "unclear", "unknown", "might", "some ", "various")


@dataclass(frozen=True)
class QualityInput:
    """What the score needs of a memory. ``evidence`` is ((type, status), ...)."""

    memory_id: str
    statement: str
    state: str
    confidence: float
    review_state: str
    conflict_state: str
    repository_id: str | None
    module_path: str | None
    evidence: tuple[tuple[str, str], ...]
    usage_positive: int = 0
    usage_negative: int = 0
    harm_events: int = 0
    blocked: bool = False


@dataclass(frozen=True)
class Quality:
    """The factors (camelCase keys as in seed 000 §17.2), ``overall`` and its ``band``."""

    factors: dict[str, float]
    overall: float
    band: str


def band_of(score: float) -> str:
    """The band name for an overall score in [0, 1]."""
    for threshold, name in BANDS:
        if score >= threshold:
            return name
    return "poor"


def _freshness(evidence: tuple[tuple[str, str], ...]) -> float:
    checkable = [STATUS_WEIGHT.get(s, 0.5) for t, s in evidence if t not in ("human", "ref", "replay")]
    if not checkable:
        return 0.7 if evidence else 0.0
    return min(checkable)


def quality(q: QualityInput) -> Quality:
    """Score ``q`` (seed 000 §17): evidence strength (best evidence kind × its status), specificity
    (code identifiers, no hedging words), scope correctness (a repository, and a module path),
    freshness (the weakest checkable evidence), review, usefulness (usage outcomes), safety,
    minus a conflict penalty (0.3 when a conflict is open)."""
    strength = max((STRONG_EVIDENCE.get(t, 0.3) * STATUS_WEIGHT.get(s, 0.5) for t, s in q.evidence), default=0.0)
    text = q.statement.lower()
    identifiers = len(set(_IDENTIFIER.findall(q.statement)))
    specificity = min(1.0, 0.5 + 0.15 * identifiers) - (0.3 if any(v in text for v in VAGUE_WORDS) else 0.0)
    scope = 1.0 if q.repository_id and q.module_path else 0.85 if q.repository_id else 0.5
    review = {"approved": 1.0, "pending": 0.5, "none": 0.4, "changes_requested": 0.3, "rejected": 0.0}.get(q.review_state, 0.4)
    uses = q.usage_positive + q.usage_negative
    usefulness = 0.5 if uses == 0 else q.usage_positive / uses
    usefulness = max(0.0, usefulness - 0.25 * q.harm_events)
    safety = 0.0 if q.blocked else 1.0
    penalty = 0.3 if q.conflict_state == "open" else 0.0
    factors = {
        "evidenceStrength": round(strength, 2), "specificity": round(max(0.0, specificity), 2),
        "scopeCorrectness": round(scope, 2), "freshness": round(_freshness(q.evidence), 2),
        "review": round(review, 2), "usefulness": round(usefulness, 2), "safety": safety,
        "conflictPenalty": penalty,
    }
    overall = sum(factors[k] * w for k, w in WEIGHTS.items()) - penalty
    overall = round(max(0.0, min(1.0, overall)), 2)
    return Quality(factors, overall, band_of(overall))


@dataclass(frozen=True)
class Eligibility:
    """Retrieval eligibility (seed 000 §15.2–15.3): ``eligible`` and the reasons either way."""

    eligible: bool
    reasons: tuple[str, ...]


def eligibility(q: QualityInput, *, scope_repository: str | None = None, scope_module: str | None = None,
                threshold: float = DEFAULT_CONFIDENCE_THRESHOLD) -> Eligibility:
    """Whether ``q`` may enter a default recall pack (seed 000 §15.1, §25.4).

    Eligible only if active, fresh (no evidence changed, deleted or unverifiable), not in an
    open conflict (invariant 4), permission-safe (not blocked), matching the requested scope
    (when one is given) and with confidence at or above ``threshold``. The reasons list the
    passing checks when eligible, else every failing one (``stale``, ``conflicted`` …).
    """
    ok, bad = [], []
    (ok if q.state == "active" else bad).append("active" if q.state == "active" else f"state_{q.state}")
    stale = any(s in ("changed", "deleted", "unverifiable") for _t, s in q.evidence)
    (bad if stale else ok).append("stale" if stale else "fresh")
    (bad if q.conflict_state == "open" else ok).append("conflicted" if q.conflict_state == "open" else "not_conflicted")
    (bad if q.blocked else ok).append("blocked" if q.blocked else "permission_safe")
    if scope_repository is not None:
        match = q.repository_id in (None, scope_repository) and (
            scope_module is None or q.module_path is None or q.module_path.startswith(scope_module)
            or scope_module.startswith(q.module_path))
        (ok if match else bad).append("scope_match" if match else "out_of_scope")
    low = q.confidence < threshold
    (bad if low else ok).append("low_confidence" if low else "confident")
    if q.review_state == "approved":
        ok.append("approved")
    return Eligibility(not bad, tuple(bad) if bad else tuple(ok))


def quality_input(m, evidence, usage: Counter | None = None, harm: int = 0) -> QualityInput:
    """The :class:`QualityInput` of a memory row and its evidence rows (any objects with those
    attributes; as :func:`memtui.maintenance.assess.quality_inputs` builds it)."""
    usage = usage or Counter()
    return QualityInput(m.memory_id, m.statement, m.state, m.confidence, m.review_state, m.conflict_state,
                        m.repository_id, m.module_path, tuple((e.type, e.status) for e in evidence),
                        usage.get("positive", 0), usage.get("negative", 0), harm, m.state == "blocked")
