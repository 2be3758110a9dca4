"""Two tiers of judgement (issue 20, item 3): only confident verdicts act.

A *likely* conflict is opened (both memories held out of default recall, approval blocked until it is
resolved); a *possible* one is a ranked suggestion that acts on nothing. Likewise a likely duplicate
cluster is proposed for a merge and a possible duplicate pair is only shown. :func:`pair_hash` names
the statements a verdict or a dismissal was made on, so a dismissal lasts until either changes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memtui.similarity.scorer import Verdict


def pair_hash(a: str, b: str) -> str:
    """sha256 (hex) of two statements, order-independent."""
    x, y = sorted((a, b))
    return hashlib.sha256(f"{x}\x00{y}".encode()).hexdigest()


#: a likely conflict needs the scorer's conflict verdict (P(conflict) >= the model's threshold) and a
#: subject that is not different; below, a pair with P(conflict) >= POSSIBLE_CONFLICT_P is a suggestion.
#: Picked on the training split of tests/data/labelled_pairs.yaml (bench/README.md, issue 20).
POSSIBLE_CONFLICT_P = 0.1
#: a pair is a likely duplicate at P(duplicate) >= LIKELY_DUPLICATE_P, a possible one from POSSIBLE_DUPLICATE_P.
LIKELY_DUPLICATE_P = 0.7
POSSIBLE_DUPLICATE_P = 0.25
#: P(conflict) from which an explicit contradiction about the same subject is the scorer's support enough.
SUPPORTED_P = 0.6
#: at most this many possible partners of each kind are kept per memory (the strongest first).
POSSIBLE_PER_MEMORY = 3
#: the contradiction explicit enough to open a conflict between lines written together (one side says
#: "never" / "do not" about what the other prescribes; an antonym such as always/never is not enough:
#: "Always use X, never Y" and "Use X; NEVER use Y" say the same)
EXPLICIT = ("negation_asymmetry",)


@dataclass(frozen=True)
class ConflictTier:
    """``tier`` ``likely`` / ``possible`` / None; ``severity`` high / medium / low; ``reason`` in words."""

    tier: str | None
    severity: str
    reason: str


def conflict_tier(v: "Verdict", rule: tuple[str, str] | None, relation: str, siblings: bool,
                  judged: tuple[str, str] | None = None, shared_names: bool = False) -> ConflictTier:
    """The tier of one candidate pair (issue 20, items 1-3).

    ``v``: the scorer's verdict; ``rule``: the lexical rules' ``(severity, reason)`` or None (it never
    opens a conflict by itself: one decision path); ``relation``: :func:`memtui.similarity.subjects.relation`;
    ``siblings``: both lines come from the memory files of one checkout at one commit; ``judged``: the pluggable judge's
    ``(verdict, reason)`` for a pair in the uncertain band, which then decides; ``shared_names``: both
    name one identifier (a code span, a dotted or CamelCase name).

    Likely: the scorer calls it a conflict and the subjects are not different; between siblings the
    subject must be the same and the contradiction explicit (:data:`EXPLICIT`). Possible: the judge or
    the scorer leans that way (P(conflict) >= :data:`POSSIBLE_CONFLICT_P`, or a lexical rule) and the
    pair is not siblings. None otherwise.
    """
    from memtui.similarity.features import FEATURES

    vals = dict(zip(FEATURES, v.features))
    explicit = any(vals[n] > 0 for n in EXPLICIT)
    why = f"learned scorer P(conflict) {v.p_conflict:.2f}; why: {v.explain()}" + (
        f"; lexical rule: {rule[1]}" if rule else "")
    if relation == "different":
        why += "; the two describe different subjects"
    elif siblings:
        why += "; written together (memory files of one commit)"
    severity = (rule[0] if rule else "high" if v.p_conflict >= 0.9 else "medium")
    # the scorer supports it: its conflict verdict, or conflict as its most probable class with an
    # explicit contradiction about one subject ("Never use `pytest -x`" / "Run the tests with `pytest -x`")
    most_likely = v.p_conflict >= max(v.p_duplicate, 1 - v.p_duplicate - v.p_conflict)
    supported = v.kind == "conflict" or (relation == "same" and (
        (v.p_conflict >= SUPPORTED_P and shared_names and vals["negation_asymmetry"] > 0)
        or (rule is not None and most_likely)))
    likely = supported and relation != "different" and (not siblings or (relation == "same" and explicit))
    if judged is not None:
        verdict, reason = judged
        text = f"{reason}; {why}"
        if verdict == "conflict" and relation != "different" and not siblings:
            return ConflictTier("likely", severity, text)
        return ConflictTier("possible" if verdict == "conflict" or likely else None, "low", text)
    if likely:
        return ConflictTier("likely", severity, why)
    if siblings:
        return ConflictTier(None, "low", why)
    if v.p_conflict >= POSSIBLE_CONFLICT_P or rule is not None or v.kind == "conflict":
        return ConflictTier("possible", "low", why)
    return ConflictTier(None, "low", why)


def uncertain(v: "Verdict") -> bool:
    """A pair the pluggable judge is asked about: neither tier is sure (P(conflict) or P(duplicate)
    between the possible and the likely bar)."""
    return (POSSIBLE_CONFLICT_P <= v.p_conflict < 0.9 and v.kind != "duplicate") or (
        POSSIBLE_DUPLICATE_P <= v.p_duplicate < LIKELY_DUPLICATE_P)
