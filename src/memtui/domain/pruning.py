"""Pruning plan (seed 000 §13): archive low-value memory by policy, never protected memory. Pure.

A plan, not a deletion: the reviewer accepts it and the accepted items are archived.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

#: The design's default policy (seed 000 §13.2), plus memory already judged wrong or replaced
#: (invalidated, superseded): archived, never deleted, so its history stays (seed 000 §13.3).
DEFAULT_POLICY: dict[str, Any] = {
    "pruningPolicy": {
        "archiveIf": [{"state": "expired"}, {"state": "invalidated"}, {"state": "superseded"},
                      {"unusedDays": 180}, {"confidenceBelow": 0.40}],
        "neverPruneIf": [{"type": "architecture_decision"}, {"reviewState": "approved"}],
    }
}
ARCHIVE_KEYS = ("state", "unusedDays", "confidenceBelow")
IN_USE_STATES = frozenset({"candidate", "approved", "active", "needs_review", "challenged"})
NEVER_KEYS = ("type", "reviewState", "state")
#: Memory waiting for a reviewer (candidate, needs_review, challenged) is never pruned: the
#: reviewer decides it in the queue; pruning tidies what is in use or already judged.
PRUNABLE_STATES = frozenset({"approved", "active", "invalidated", "rejected", "superseded", "expired",
                             "deprecated"})


class PolicyError(ValueError):
    """The pruning policy is malformed; the message names the rule."""


@dataclass(frozen=True)
class PruningRules:
    """A validated pruning policy."""

    archive_if: tuple[tuple[str, Any], ...]
    never_prune_if: tuple[tuple[str, Any], ...]


def parse_policy(data: Any) -> PruningRules:
    """Validate ``{"pruningPolicy": {"archiveIf": [...], "neverPruneIf": [...]}}``; raises PolicyError."""
    if not isinstance(data, dict) or not isinstance(data.get("pruningPolicy"), dict):
        raise PolicyError("expected a mapping with key 'pruningPolicy'")
    body = data["pruningPolicy"]

    def rules(key: str, allowed: tuple[str, ...]) -> tuple[tuple[str, Any], ...]:
        out = []
        for i, rule in enumerate(body.get(key) or []):
            if not isinstance(rule, dict) or len(rule) != 1:
                raise PolicyError(f"pruningPolicy.{key}[{i}]: each rule is one 'key: value'")
            (k, v), = rule.items()
            if k not in allowed:
                raise PolicyError(f"pruningPolicy.{key}[{i}]: unknown rule {k!r}; expected one of {', '.join(allowed)}")
            if k in ("unusedDays",) and not (isinstance(v, int) and v >= 0):
                raise PolicyError(f"pruningPolicy.{key}[{i}]: {k} needs a whole number of days")
            if k == "confidenceBelow" and not (isinstance(v, (int, float)) and 0 <= v <= 1):
                raise PolicyError(f"pruningPolicy.{key}[{i}]: confidenceBelow needs a number between 0 and 1")
            out.append((k, v))
        return tuple(out)

    return PruningRules(rules("archiveIf", ARCHIVE_KEYS), rules("neverPruneIf", NEVER_KEYS))


@dataclass(frozen=True)
class PruneFacts:
    """What pruning needs of a memory."""

    memory_id: str
    type: str
    state: str
    review_state: str
    confidence: float
    created_at: datetime
    last_used_at: datetime | None


@dataclass(frozen=True)
class PruneItem:
    """One line of the plan: archive or keep, and why."""

    memory_id: str
    action: str  # archive | keep
    reasons: tuple[str, ...] = field(default_factory=tuple)


def plan_item(m: PruneFacts, rules: PruningRules, now: datetime) -> PruneItem | None:
    """Archive or keep ``m`` under ``rules`` at ``now``; None when no archive rule matches at all.

    Protected memories (neverPruneIf) are kept even when a rule matches. A ``type`` protection
    (architecture decisions) is absolute; a ``reviewState``/``state`` protection yields when
    the memory has expired (issue 3: "never prune architecture decisions or approved memories
    unless expired"; seed 000 §27.6: old ADR memory can still be valuable).
    """
    if m.state not in PRUNABLE_STATES:
        return None
    hits: list[str] = []
    for key, value in rules.archive_if:
        if key == "state" and m.state == value:
            hits.append(f"state {value}")
        elif key == "unusedDays":
            last = m.last_used_at or m.created_at
            unused = (now - last).days
            if unused >= value:
                hits.append(f"unused for {unused} days (limit {value})")
        elif key == "confidenceBelow" and m.confidence < value:
            hits.append(f"confidence {m.confidence:.2f} below {value:.2f}")
    if not hits:
        return None
    protected, absolute = [], False
    for key, value in rules.never_prune_if:
        if key == "type" and m.type == value:
            protected.append(f"protected: type {value}")
            absolute = True
        elif key == "reviewState" and m.review_state == value and m.state in IN_USE_STATES:
            # an approval protects memory still in use; once invalidated or replaced it is history
            protected.append(f"protected: {key} {value}")
        elif key == "state" and m.state == value:
            protected.append(f"protected: {key} {value}")
    if protected and (absolute or m.state != "expired"):
        return PruneItem(m.memory_id, "keep", tuple(protected + [f"would archive: {h}" for h in hits]))
    return PruneItem(m.memory_id, "archive", tuple(hits))
