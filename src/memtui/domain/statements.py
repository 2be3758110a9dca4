"""Statement logic behind near-duplicate and conflict detection (issue 4). Pure: no I/O, no database.

First version (API stable, rules being refined): see the module docstring of the final version.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from rapidfuzz import fuzz

DUPLICATE_THRESHOLD = 85.0
RELATED_THRESHOLD = 55.0
CONFLICT_THRESHOLD = 50.0

_PUNCT = re.compile(r"[^\w\s]+")
_WS = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Exact-duplicate key: NFKC, casefolded, punctuation and backticks to spaces, whitespace collapsed."""
    t = unicodedata.normalize("NFKC", text or "").casefold()
    t = _PUNCT.sub(" ", t)
    return _WS.sub(" ", t).strip()


def fingerprint(text: str) -> str:
    """OpenRefine fingerprint key: normalized tokens, deduplicated, sorted, joined by one space."""
    return " ".join(sorted(set(normalize(text).split())))


_BACKTICK = re.compile(r"`([^`]+)`")
_DOTTED = re.compile(r"(?<![\w/.])(?:[A-Za-z_$][\w$-]*)(?:[./:][\w$-]+)+")
_CAMEL = re.compile(r"\b(?:[A-Z][a-z0-9]+[A-Z]\w*|[a-z]+[A-Z]\w*|[A-Z]{2,}[a-z]+\w*)\b")
_SNAKE = re.compile(r"\b[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+\b")
_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]{1,}(?=s?\b)")
_ABBREV = {"e.g", "i.e", "etc", "vs"}


def identifiers(text: str) -> frozenset[str]:
    """Code identifiers named in prose, case preserved: CamelCase, dotted names and paths,
    snake_case, backticked terms, ALLCAPS acronyms (2+ letters)."""
    text = text or ""
    out: set[str] = set()
    for m in _BACKTICK.finditer(text):
        out.add(m.group(1).strip())
    plain = _BACKTICK.sub(" ", text)
    for rx in (_DOTTED, _CAMEL, _SNAKE, _ACRONYM):
        for m in rx.finditer(plain):
            tok = m.group(0).rstrip(".:-/")
            if tok and tok.casefold() not in _ABBREV and not tok.replace(".", "").isdigit():
                out.add(tok)
    return frozenset(out)


_NUM = re.compile(r"\bv?\d+(?:[.,]\d+)*(?:\s*(?:ms|s|seconds?|minutes?|min|hours?|h|days?|d|%|mb|gb|kb))?\b", re.I)
_UNITS = {"seconds": "s", "second": "s", "minutes": "min", "minute": "min", "hours": "h", "hour": "h",
          "days": "d", "day": "d"}


def numbers(text: str) -> tuple[str, ...]:
    """Numbers and versions with units where present, normalised ("2 seconds" == "2s")."""
    out = []
    for m in _NUM.finditer(text or ""):
        tok = m.group(0).lower().replace(" ", "")
        num = re.match(r"v?[\d.,]+", tok).group(0)
        unit = tok[len(num):]
        out.append(num.lstrip("v") + _UNITS.get(unit, unit))
    return tuple(out)


_NEG = re.compile(r"\b(?:not|never|no|without|cannot|avoid|none|nor)\b|n't\b", re.I)


def negated(text: str) -> bool:
    """True when the claim carries a negation."""
    t = re.sub(r"\bnot (?:only|just)\b", " ", (text or "").lower())
    return bool(_NEG.search(t))


@dataclass(frozen=True)
class Analyzed:
    text: str
    normalized: str
    fingerprint: str
    identifiers: frozenset[str]
    numbers: tuple[str, ...]
    negated: bool
    tokens: tuple[str, ...]


def analyze(text: str) -> Analyzed:
    n = normalize(text)
    return Analyzed(text, n, fingerprint(text), identifiers(text), numbers(text), negated(text), tuple(n.split()))


@dataclass(frozen=True)
class PairJudgement:
    kind: str
    score: float
    reasons: tuple[str, ...]


def material_difference_analyzed(x: Analyzed, y: Analyzed) -> str | None:
    if x.negated != y.negated:
        return "negation on one side only"
    ix = {i.casefold() for i in x.identifiers}
    iy = {i.casefold() for i in y.identifiers}
    if ix - iy and iy - ix:
        return f"different identifiers: {sorted(ix - iy)} vs {sorted(iy - ix)}"
    if x.numbers != y.numbers and x.numbers and y.numbers:
        return f"different numbers: {x.numbers} vs {y.numbers}"
    return None


def material_difference(a: str, b: str) -> str | None:
    return material_difference_analyzed(analyze(a), analyze(b))


def score_analyzed(x: Analyzed, y: Analyzed) -> float:
    return fuzz.token_set_ratio(x.normalized, y.normalized)


def judge_analyzed(x: Analyzed, y: Analyzed) -> PairJudgement:
    score = score_analyzed(x, y)
    diff = material_difference_analyzed(x, y)
    shared = {i.casefold() for i in x.identifiers} & {i.casefold() for i in y.identifiers}
    if diff and shared:
        return PairJudgement("conflict", score, (diff,))
    if score >= DUPLICATE_THRESHOLD and not diff:
        return PairJudgement("duplicate", score, ())
    if score >= RELATED_THRESHOLD or shared:
        return PairJudgement("related", score, (diff,) if diff else ())
    return PairJudgement("unrelated", score, ())


def judge_pair(a: str, b: str) -> PairJudgement:
    return judge_analyzed(analyze(a), analyze(b))


def conflict_reason_analyzed(x: Analyzed, y: Analyzed) -> tuple[str, str] | None:
    j = judge_analyzed(x, y)
    if j.kind != "conflict":
        return None
    sev = "high" if "negation" in j.reasons[0] else "medium"
    return sev, j.reasons[0]


def conflict_reason(a: str, b: str) -> tuple[str, str] | None:
    return conflict_reason_analyzed(analyze(a), analyze(b))
