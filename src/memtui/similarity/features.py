"""Interpretable pair features for the learned scorer (issue 10, item 2).

:func:`profile` ``(text) -> Profile`` analyses a statement once (identifier keys, Snowball stems,
numbers, negated clauses, antonym poles, exclusive-slot words, product names, word vectors);
:func:`pair_features` ``(pa, pb, cosine) -> float32 (len(FEATURES),)`` compares two profiles given
their embedding cosine.
Every feature is a number in about ``[0, 1]``; :data:`FEATURES` names them, :data:`LABELS` says
them in words for the "why" of a proposal, :data:`CONTRADICTIONS` are the ones a conflict needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from rapidfuzz import fuzz

from memtui.domain.statements import _POLAR as POLAR_WORDS
from memtui.domain.statements import Analyzed, analyze, identifiers, negation_count, numbers
from memtui.similarity.embed import word_vectors
from memtui.similarity.text import common_word, identifier_key, word_weight, joined_word_pairs, key_of_normalized, normalize, stem

_EXCLUSIVE = re.compile(r"\b(only|always|never|replaced|replaces|deprecated|instead|exclusively|sole|solely|"
                        r"no longer|default|must|mandatory|forbidden|required)\b", re.I)
_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9+#-]*")
_CAP = re.compile(r"(?<![\w.`/])([A-Z][a-zA-Z0-9+#]*[a-z0-9][a-zA-Z0-9+#]*)\b")
_OPENERS = frozenset("""a an the this that these those it its all any each every some no never always only
use using run add do don't dont make keep prefer avoid put set call write read new our we you when if
before after once on in for to from with without by tests test code services service api every""".split())
_STOP = frozenset("""a an the is are was were be been being to of in on at by for with via through from as and
or that this these those it its into per each all any should must can will would may might do does did has
have had shall we our you your they their i
every need needs needed until unless cannot also just then when whenever once both either there here which
who what so than too very not no never don doesn isn aren t s""".split())
"""Words without content for stems and alignment: function words, modals and negations (negation is
read from the text by its own features)."""


_CLAUSE = re.compile(r";|:\s|\.\s+|,\s*(?:but|while|whereas|and not|not)\b|\s+but\s+", re.I)
_KEBAB = re.compile(r"\b[a-z0-9]+(?:-[a-z0-9]+)+\b")
_DIGIT_WORD = re.compile(r"\b[A-Za-z]+\d[\w.]*\b")
#: antonym poles by word (the lexical rules' table), without "on"/"off" (too common alone)
_POLES = {w: ap for w, ap in POLAR_WORDS.items() if ap[0] != "power"}


@dataclass
class Profile:
    """A statement analysed for pair features (about 0.1 ms): its identifier keys, stems, numbers,
    negations (and the stems of its negated clauses when only some clauses are negated), antonym poles,
    names and content-word vectors. :meth:`analyzed` gives the lexical rules' full analysis, lazily."""

    text: str
    normalized: str
    key: str
    ids: frozenset[str]
    joined: frozenset[str]
    stems: frozenset[str]
    exclusive: bool
    names: frozenset[str]
    vecs: np.ndarray  # unit vectors of the distinct content words (word_vectors), (k, 256)
    weights: np.ndarray  # float (k,): :func:`~memtui.similarity.text.word_weight` of each content word
    word_stems: tuple[str, ...]  # the Snowball stem of each content word, in vecs' order
    slot: np.ndarray  # bool (k,): the content word is a name, an identifier or holds a digit (a slot filler)
    negations: int
    negated_stems: frozenset[str] | None  # stems of the negated clauses; None: one clause or all negated
    numbers: frozenset[str]
    numerals: frozenset[str]  # the numbers as written, unit-free (:func:`numerals`)
    poles: frozenset[tuple[str, int]]
    _an: Analyzed | None = None

    def analyzed(self) -> Analyzed:
        if self._an is None:
            self._an = analyze(self.text)
        return self._an


def _stems(words) -> frozenset[str]:
    return frozenset(stem(w) for w in words if w not in _STOP)


_NUMERAL = re.compile(r"(?<![\w.$-])\d+(?:\.\d+)*")
_NUMERAL_WORDS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
                  "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "twenty": "20",
                  "thirty": "30", "hundred": "100", "thousand": "1000", "twice": "2", "once": "1"}
_REQUIREMENT = re.compile(r"\b(?:until|unless|without|except|otherwise)\b", re.I)


def numerals(text: str) -> frozenset[str]:
    """The numbers of ``text`` as written, without their units: digits (leading zeros and a trailing
    ``.0`` dropped: ``"02:00"`` -> ``{"2", "0"}``, ``"1.75.0"`` -> ``"1.75"``) and number words
    (``"five"`` -> ``"5"``). Complements :func:`memtui.domain.statements.numbers` (units normalised):
    ``"15 minutes"`` and ``"a 15-min TTL"`` agree here, ``"15 minutes"`` and ``"900 seconds"`` there."""
    out = set()
    for m in _NUMERAL.finditer(text):
        n = m.group(0)
        while n.endswith(".0") and n.count(".") > 1:
            n = n[:-2]
        head, _, tail = n.partition(".")
        out.add((head.lstrip("0") or "0") + ("." + tail if tail else ""))
    for w in _WORDS.findall(text):
        v = _NUMERAL_WORDS.get(w.lower())
        if v:
            out.add(v)
    return frozenset(out)


def _clause_negations(clause: str) -> int:
    """Negation cues of one clause, 0 when they cancel (an even count: "never deploy without a review")
    or state a requirement ("cannot ship until the QA lead approves", "no merge unless CI is green")."""
    n = negation_count(clause)
    if n % 2 == 0 or _REQUIREMENT.search(clause) and n == 1:
        return 0
    return n


_CLAUSE_KEEP = re.compile("(" + _CLAUSE.pattern + ")", re.I)


def _clauses(text: str) -> list[str]:
    """``text`` cut at clause boundaries, each separator kept at the head of the clause it opens
    (``"X, not Y"`` -> ``["X", ", not Y"]``)."""
    parts = _CLAUSE_KEEP.split(text)
    out = [parts[0]] + [sep + rest for sep, rest in zip(parts[1::2], parts[2::2])]
    return [c for c in out if c and c.strip()] or [text]


def profile(text: str) -> Profile:
    """Analyse one statement for :func:`pair_features`."""
    text = text or ""
    normalized = normalize(text)
    ids = frozenset(k for k in (identifier_key(i) for i in identifiers(text)) if k)
    words = [w.lower() for w in _WORDS.findall(text)]
    # capitalised words are names unless they are everyday words ("Sessions are ...", "Network calls ...");
    # CamelCase, inner capitals and digits always make a name (BigQuery, gRPC, S3)
    names = {identifier_key(w) for w in (m.group(1) for m in _CAP.finditer(text))
             if not (w[1:].islower() and w.isalpha() and (w.lower() in _OPENERS or common_word(w.lower())))}
    names |= ids | {m.group(0) for m in _KEBAB.finditer(normalized)} | {
        identifier_key(m.group(0)) for m in _DIGIT_WORD.finditer(text)}
    clauses = _clauses(text)
    per_clause = [_clause_negations(c) for c in clauses]
    negations = sum(per_clause)
    negated_stems = None
    if negations and 0 < sum(1 for n in per_clause if n) < len(clauses):
        negated_stems = _stems(w.lower() for c, n in zip(clauses, per_clause) if n for w in _WORDS.findall(c))
    content = list(dict.fromkeys(w for w in words if w not in _STOP))
    names = frozenset(n for n in names if n)
    slot = np.array([w in names or identifier_key(w) in ids or any(c.isdigit() for c in w) for w in content], bool)
    return Profile(text, normalized, key_of_normalized(normalized), ids, joined_word_pairs(normalized),
                   _stems(words), bool(_EXCLUSIVE.search(text)), names,
                   word_vectors(content), np.array([word_weight(w) for w in content], np.float32),
                   tuple(stem(w) for w in content), slot, negations, negated_stems, frozenset(numbers(text)),
                   numerals(text), frozenset(_POLES[w] for w in words if w in _POLES))


def prime(texts) -> None:
    """Embed the content words of ``texts`` in one batch (:func:`word_vectors` memoises them), so that
    :func:`profile` of many statements does not tokenize word by word."""
    word_vectors([w for t in texts for w in {x.lower() for x in _WORDS.findall(t or "")} if w not in _STOP])


FEATURES = (
    "cosine", "token_set", "token_sort", "stem_jaccard", "shared_identifier", "differing_identifiers",
    "negation_asymmetry", "numbers_differ", "number_one_side", "antonym", "exclusive_slot", "names_differ", "shared_name",
    "length_ratio", "cosine_x_negation", "cosine_x_numbers", "cosine_x_antonym", "cosine_x_names",
    "cosine_x_identifiers", "align_mean", "align_min", "substitution", "unaligned", "cosine_over_60",
    "cosine_over_75", "align_x_substitution", "residual_align", "residual_x_slot", "residual_x_negation",
    "residual_x_antonym", "residual_over_80", "weighted_align", "weighted_unaligned", "weighted_align_x_cosine",
    "identifier_one_side", "prose_cosine", "prose_x_cosine",
)
LABELS = {
    "cosine": "embedding cosine", "token_set": "token set ratio", "token_sort": "token sort ratio",
    "stem_jaccard": "shared word stems",
    "shared_identifier": "shared identifier", "differing_identifiers": "differing identifiers",
    "negation_asymmetry": "negation on one side", "numbers_differ": "different numbers or versions",
    "number_one_side": "a number on one side only", "antonym": "opposite predicates",
    "exclusive_slot": "exclusive wording (only, always, never, instead, replaced)",
    "names_differ": "different tool or product names", "shared_name": "shared tool or product name",
    "length_ratio": "length ratio", "cosine_x_negation": "negation on one side of a close pair",
    "cosine_x_numbers": "different numbers in a close pair", "cosine_x_antonym": "opposite predicates in a close pair",
    "cosine_x_names": "different names in a close pair",
    "cosine_x_identifiers": "different identifiers in a close pair",
    "align_mean": "word alignment (embedding)", "align_min": "worst-aligned word",
    "substitution": "one word swapped for an unrelated one", "unaligned": "share of words without a match",
    "cosine_over_60": "embedding cosine above 0.6", "cosine_over_75": "embedding cosine above 0.75",
    "align_x_substitution": "word swap in an otherwise aligned pair",
    "residual_align": "same wording around names and numbers",
    "residual_x_slot": "one name, number or identifier swapped in the same wording",
    "residual_x_negation": "negation on one side of the same wording",
    "residual_x_antonym": "opposite predicates in the same wording",
    "residual_over_80": "wording around names and numbers aligned above 0.8",
    "weighted_align": "word alignment weighted by rarity", "weighted_unaligned": "rare words without a match",
    "weighted_align_x_cosine": "rare words aligned in a close pair",
    "identifier_one_side": "an identifier on one side only",
    "prose_cosine": "the prose around names and numbers alike (weighted word vectors)",
    "prose_x_cosine": "alike prose in a close pair",
}
ALIGNED = 0.6
"""Word cosine from which a word has a match on the other side."""
CONTRADICTIONS = ("substitution", "negation_asymmetry", "numbers_differ", "antonym", "names_differ",
                  "differing_identifiers")
#: A pair with one of these is never a duplicate (a different number, identifier, negation or pole).
VETOES = ("numbers_differ", "differing_identifiers", "negation_asymmetry", "antonym")
_IDX = {n: i for i, n in enumerate(FEATURES)}
CONTRADICTION_INDEX = np.array([_IDX[n] for n in CONTRADICTIONS])
VETO_INDEX = np.array([_IDX[n] for n in VETOES])


def _ids_unmatched(ids: frozenset[str], other: Profile) -> set[str]:
    """Identifier keys of one side that the other side names in no form: neither as an identifier,
    nor as joined prose words ("user id"), nor as a plain word (its stem among the other's stems)."""
    return {i for i in ids if i not in other.ids and i not in other.joined and stem(i) not in other.stems}


def _names_unmatched(names: frozenset[str], other: Profile) -> set[str]:
    """Names of one side the other side does not use, even as an ordinary word ("Sessions ..." /
    "... session cache" is one word, not two products)."""
    return {n for n in names if n not in other.names and n not in other.joined and stem(n) not in other.stems}


def _align(S: np.ndarray) -> tuple[float, float, int, int]:
    """(mean bidirectional best-match cosine, worst best match, unmatched rows, unmatched columns)."""
    ma, mb = S.max(axis=1), S.max(axis=0)
    return ((float(ma.sum()) / len(ma) + float(mb.sum()) / len(mb)) / 2, float(min(ma.min(), mb.min())),
            int((ma < ALIGNED).sum()), int((mb < ALIGNED).sum()))


def pair_features(pa: Profile, pb: Profile, cosine: float) -> np.ndarray:
    """The feature vector of one pair (float32, ``len(FEATURES)``)."""
    shared_ids = (pa.ids & pb.ids) | (pa.ids & pb.joined) | (pb.ids & pa.joined)
    ids_a, ids_b = _ids_unmatched(pa.ids, pb), _ids_unmatched(pb.ids, pa)
    differing = bool(ids_a and ids_b)
    neg = (pa.negations > 0) != (pb.negations > 0)
    if neg:  # a negated clause counts only when the other side is closer to it than to the rest
        n, o = (pa, pb) if pa.negations else (pb, pa)
        if n.negated_stems is not None:
            neg = len(n.negated_stems & o.stems) > len((n.stems - n.negated_stems) & o.stems)
    na, nb = pa.numbers, pb.numbers
    # a number differs when each side has one the other lacks, with units normalised and as written
    # ("10 seconds" / "10 * time.Second", "15 minutes" / "900 s" agree; "3 replicas" / "5 replicas" do not)
    numbers_differ = bool(na - nb and nb - na and pa.numerals - pb.numerals and pb.numerals - pa.numerals)
    axes_a = {}
    for axis, pole in pa.poles:
        axes_a.setdefault(axis, set()).add(pole)
    antonym = any(axis in axes_a and pole not in axes_a[axis] for axis, pole in pb.poles)
    shared_names = pa.names & pb.names
    # one name swapped for another (a slot filled differently), not two lists of names
    names_differ = len(_names_unmatched(pa.names, pb)) == 1 == len(_names_unmatched(pb.names, pa))
    union = len(pa.stems | pb.stems)
    la, lb = len(pa.text), len(pb.text)
    cos = max(0.0, float(cosine))
    residual = prose = 0.0
    if len(pa.vecs) and len(pb.vecs):
        S = pa.vecs @ pb.vecs.T
        same = np.array([[x == y for y in pb.word_stems] for x in pa.word_stems], bool)
        S[same] = 1.0  # one stem: "session" / "sessions", "cache" / "cached"
        align, worst, ua, ub = _align(S)
        unaligned = (ua + ub) / sum(S.shape)
        substitution = bool(ua and ub and ua + ub <= 4)
        # alignment weighted by how informative each word is (rare words carry the claim)
        wa, wb = pa.weights, pb.weights
        ma, mb = S.max(axis=1), S.max(axis=0)
        walign = (float(ma @ wa) / float(wa.sum()) + float(mb @ wb) / float(wb.sum())) / 2
        wmiss = (float(wa[ma < ALIGNED].sum()) + float(wb[mb < ALIGNED].sum())) / float(wa.sum() + wb.sum())
        ra, rb = ~pa.slot, ~pb.slot
        if ra.any() and rb.any():  # the words around the slots: the same subject and predicate?
            residual = _align(S[ra][:, rb])[0]
            va, vb = (wa[ra] @ pa.vecs[ra]), (wb[rb] @ pb.vecs[rb])
            prose = float(va @ vb) / max(float(np.linalg.norm(va) * np.linalg.norm(vb)), 1e-9)
    else:
        align = worst = unaligned = walign = wmiss = 0.0
        substitution = False
    slot_swap = names_differ or numbers_differ or differing
    f = (
        cos, fuzz.token_set_ratio(pa.key, pb.key) / 100, fuzz.token_sort_ratio(pa.key, pb.key) / 100,
        len(pa.stems & pb.stems) / union if union else 0.0,
        bool(shared_ids), differing, neg, numbers_differ, bool(na) != bool(nb), antonym,
        pa.exclusive or pb.exclusive, names_differ, bool(shared_names),
        min(la, lb) / max(la, lb, 1), cos * neg, cos * numbers_differ, cos * antonym, cos * names_differ,
        cos * differing, align, worst, substitution, unaligned, cos >= 0.6, cos >= 0.75, align * substitution,
        residual, residual * slot_swap, residual * neg, residual * antonym, residual >= 0.8,
        walign, wmiss, walign * cos, bool(ids_a) != bool(ids_b), max(0.0, prose), max(0.0, prose) * cos,
    )
    return np.array(f, np.float32)
