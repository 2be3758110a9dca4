"""Interpretable pair features for the learned scorer (issue 10, item 2).

:func:`profile` ``(text) -> Profile`` analyses a statement once (identifier keys, Snowball stems,
numbers as normalised and as written, negated clauses, antonym poles, exclusive-slot words, names,
content words with their rarity weights); :func:`profiles` builds many, on several processes.
:func:`pair_feature_matrix` ``(pa, pb, cosines) -> float32 (n, len(FEATURES))`` compares pairs of
profiles given their embedding cosines, a batch at a time (the word alignments of a batch are one padded
matrix product); :func:`pair_features` is one row of it.
Every feature is a number in about ``[0, 1]``; :data:`FEATURES` names them, :data:`LABELS` says
them in words for the "why" of a proposal, :data:`CONTRADICTIONS` are the ones a conflict needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from rapidfuzz import fuzz, process

from memtui.similarity.statements import (
    POLAR_WORDS, Analyzed, analyze, clause_negations, identifiers, numbers, numerals, polarity_clauses,
    quantities_differ,
)
from memtui.similarity.embed import word_ids, word_table
from memtui.text import without_escapes
from memtui.similarity.text import (
    common_word, identifier_key, joined_word_pairs, key_of_normalized, normalize, stem, word_weight,
)

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
    words: tuple[str, ...]  # the distinct content words (lower case), in order
    weights: np.ndarray  # float (k,): :func:`~memtui.similarity.text.word_weight` of each content word
    word_stems: tuple[str, ...]  # the Snowball stem of each content word
    slot: np.ndarray  # bool (k,): the content word is a name, an identifier or holds a digit (a slot filler)
    negations: int
    negated_stems: frozenset[str] | None  # stems of the negated clauses; None: one clause or all negated
    numbers: frozenset[str]
    numerals: frozenset[str]  # the numbers as written, unit-free (:func:`numerals`)
    poles: frozenset[tuple[str, int]]
    _an: Analyzed | None = None
    _rows: tuple[np.ndarray, np.ndarray] | None = None  # (word table rows, stem ids), in this process

    def rows(self) -> tuple[np.ndarray, np.ndarray]:
        """int32 rows of :attr:`words` in :func:`~memtui.similarity.embed.word_table` and interned ids of
        :attr:`word_stems`, computed in the process that scores (a profile may come from a worker)."""
        if self._rows is None:
            self._rows = (word_ids(self.words), np.fromiter((_stem_id(x) for x in self.word_stems), np.int32,
                                                             len(self.word_stems)))
        return self._rows

    def analyzed(self) -> Analyzed:
        if self._an is None:
            self._an = analyze(self.text)
        return self._an


def _stems(words) -> frozenset[str]:
    return frozenset(stem(w) for w in words if w not in _STOP)


def profile(text: str) -> Profile:
    """Analyse one statement for :func:`pair_features` (terminal escape sequences removed first)."""
    text = without_escapes(text)
    normalized = normalize(text)
    ids = frozenset(k for k in (identifier_key(i) for i in identifiers(text)) if k)
    words = [w.lower() for w in _WORDS.findall(text)]
    # capitalised words are names unless they are everyday words ("Sessions are ...", "Network calls ...");
    # CamelCase, inner capitals and digits always make a name (BigQuery, gRPC, S3)
    names = {identifier_key(w) for w in (m.group(1) for m in _CAP.finditer(text))
             if not (w[1:].islower() and w.isalpha() and (w.lower() in _OPENERS or common_word(w.lower())))}
    names |= ids | {m.group(0) for m in _KEBAB.finditer(normalized)} | {
        identifier_key(m.group(0)) for m in _DIGIT_WORD.finditer(text)}
    clauses = polarity_clauses(text)
    per_clause = [clause_negations(c) for c in clauses]
    negations = sum(per_clause)
    negated_stems = None
    if negations and 0 < sum(1 for n in per_clause if n) < len(clauses):
        negated_stems = _stems(w.lower() for c, n in zip(clauses, per_clause) if n for w in _WORDS.findall(c))
    content = list(dict.fromkeys(w for w in words if w not in _STOP))
    names = frozenset(n for n in names if n)
    slot = np.array([w in names or (ids and identifier_key(w) in ids) or _HAS_DIGIT.search(w) is not None
                     for w in content], bool)
    return Profile(text, normalized, key_of_normalized(normalized), ids, joined_word_pairs(normalized),
                   _stems(words), bool(_EXCLUSIVE.search(text)), names,
                   tuple(content), np.array([word_weight(w) for w in content], np.float32),
                   tuple(stem(w) for w in content), slot, negations, negated_stems, frozenset(numbers(text)),
                   numerals(text), frozenset(_POLES[w] for w in words if w in _POLES))


_HAS_DIGIT = re.compile(r"\d")


def profiles(texts: Sequence[str], processes: int = 1, min_parallel: int = 5000) -> list[Profile]:
    """:func:`profile` of each text; with ``processes > 1`` and at least ``min_parallel`` texts, in forked
    worker processes (only when no other Python thread runs: a fork copies one thread)."""
    import multiprocessing
    import threading

    texts = list(texts)
    if (processes <= 1 or len(texts) < min_parallel or threading.active_count() > 1
            or "fork" not in multiprocessing.get_all_start_methods()):
        return [profile(t) for t in texts]
    from memtui.processes import worker_pool

    step = -(-len(texts) // (processes * 4))
    chunks = [texts[i:i + step] for i in range(0, len(texts), step)]
    with worker_pool(processes) as ex:  # the workers end with this process (issue 21 item 7)
        return [p for chunk in ex.map(_profile_chunk, chunks) for p in chunk]


def _profile_chunk(texts: list[str]) -> list[Profile]:
    return [profile(t) for t in texts]


_STEM_IDS: dict[str, int] = {}


def _stem_id(st: str) -> int:
    """A small integer per distinct stem (so stem equality is an array comparison)."""
    i = _STEM_IDS.get(st)
    if i is None:
        i = _STEM_IDS.setdefault(st, len(_STEM_IDS))
    return i


def prime(texts) -> None:
    """Embed the content words of ``texts`` in one batch (:func:`word_ids` keeps them), so that
    :func:`profile` of many statements does not tokenize word by word."""
    word_ids([w for t in texts for w in {x.lower() for x in _WORDS.findall(t or "")} if w not in _STOP])


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


CHUNK = 2048
"""Pairs per batch of :func:`pair_feature_matrix` (bounds the padded word matrices: CHUNK x K x 256)."""
MAX_WORDS = 48
"""Content words per statement that the alignment features read (the first ones; longer statements are rare)."""


def pair_features(pa: Profile, pb: Profile, cosine: float) -> np.ndarray:
    """The feature vector of one pair (float32, ``len(FEATURES)``): :func:`pair_feature_matrix` of it."""
    return pair_feature_matrix([pa], [pb], [cosine])[0]


def pair_feature_matrix(pa: Sequence[Profile], pb: Sequence[Profile], cosines) -> np.ndarray:
    """Feature rows of the pairs ``(pa[i], pb[i])`` with embedding cosine ``cosines[i]``: float32
    ``(len(pa), len(FEATURES))``. The word alignments of a batch are one padded matrix product
    (``CHUNK`` pairs at a time); the set features are read pair by pair."""
    n = len(pa)
    out = np.zeros((n, len(FEATURES)), np.float32)
    if not n:
        return out
    cos = np.maximum(np.asarray(cosines, np.float32), 0.0)
    out[:, _IDX["cosine"]] = cos
    ka, kb = [p.key for p in pa], [p.key for p in pb]
    out[:, _IDX["token_set"]] = process.cpdist(ka, kb, scorer=fuzz.token_set_ratio, dtype=np.float32) / 100
    out[:, _IDX["token_sort"]] = process.cpdist(ka, kb, scorer=fuzz.token_sort_ratio, dtype=np.float32) / 100
    for i in range(n):
        _set_features(pa[i], pb[i], out[i])
    for s in range(0, n, CHUNK):
        _word_features(pa[s:s + CHUNK], pb[s:s + CHUNK], out[s:s + CHUNK])
    f = out
    neg, num, ant = f[:, _IDX["negation_asymmetry"]], f[:, _IDX["numbers_differ"]], f[:, _IDX["antonym"]]
    names, ids, res = f[:, _IDX["names_differ"]], f[:, _IDX["differing_identifiers"]], f[:, _IDX["residual_align"]]
    sub, align = f[:, _IDX["substitution"]], f[:, _IDX["align_mean"]]
    f[:, _IDX["cosine_x_negation"]] = cos * neg
    f[:, _IDX["cosine_x_numbers"]] = cos * num
    f[:, _IDX["cosine_x_antonym"]] = cos * ant
    f[:, _IDX["cosine_x_names"]] = cos * names
    f[:, _IDX["cosine_x_identifiers"]] = cos * ids
    f[:, _IDX["cosine_over_60"]] = cos >= 0.6
    f[:, _IDX["cosine_over_75"]] = cos >= 0.75
    f[:, _IDX["align_x_substitution"]] = align * sub
    f[:, _IDX["residual_x_slot"]] = res * np.maximum(np.maximum(names, num), ids)
    f[:, _IDX["residual_x_negation"]] = res * neg
    f[:, _IDX["residual_x_antonym"]] = res * ant
    f[:, _IDX["residual_over_80"]] = res >= 0.8
    f[:, _IDX["weighted_align_x_cosine"]] = f[:, _IDX["weighted_align"]] * cos
    f[:, _IDX["prose_x_cosine"]] = f[:, _IDX["prose_cosine"]] * cos
    return out


def _set_features(pa: Profile, pb: Profile, row: np.ndarray) -> None:
    """The features of one pair read from its sets (identifiers, names, numbers, negation, poles)."""
    shared_ids = (pa.ids & pb.ids) | (pa.ids & pb.joined) | (pb.ids & pa.joined)
    ids_a = _ids_unmatched(pa.ids, pb) if pa.ids else ()
    ids_b = _ids_unmatched(pb.ids, pa) if pb.ids else ()
    neg = (pa.negations > 0) != (pb.negations > 0)
    if neg:  # a negated clause counts only when the other side is closer to it than to the rest
        n, o = (pa, pb) if pa.negations else (pb, pa)
        if n.negated_stems is not None:
            neg = len(n.negated_stems & o.stems) > len((n.stems - n.negated_stems) & o.stems)
    na, nb = pa.numbers, pb.numbers
    # a number differs when each side has one the other lacks, with units normalised and as written
    # ("10 seconds" / "10 * time.Second", "15 minutes" / "900 s" agree; "3 replicas" / "5 replicas" do not)
    numbers_differ = bool(quantities_differ(na, nb) and pa.numerals - pb.numerals and pb.numerals - pa.numerals)
    antonym = False
    if pa.poles and pb.poles:
        axes_a: dict[str, set[int]] = {}
        for axis, pole in pa.poles:
            axes_a.setdefault(axis, set()).add(pole)
        antonym = any(axis in axes_a and pole not in axes_a[axis] for axis, pole in pb.poles)
    # one name swapped for another (a slot filled differently), not two lists of names
    names_differ = len(_names_unmatched(pa.names, pb)) == 1 == len(_names_unmatched(pb.names, pa))
    union = len(pa.stems | pb.stems)
    la, lb = len(pa.text), len(pb.text)
    row[_IDX["stem_jaccard"]] = len(pa.stems & pb.stems) / union if union else 0.0
    row[_IDX["shared_identifier"]] = bool(shared_ids)
    row[_IDX["differing_identifiers"]] = bool(ids_a and ids_b)
    row[_IDX["negation_asymmetry"]] = neg
    row[_IDX["numbers_differ"]] = numbers_differ
    row[_IDX["number_one_side"]] = bool(na) != bool(nb)
    row[_IDX["antonym"]] = antonym
    row[_IDX["exclusive_slot"]] = pa.exclusive or pb.exclusive
    row[_IDX["names_differ"]] = names_differ
    row[_IDX["shared_name"]] = bool(pa.names & pb.names)
    row[_IDX["length_ratio"]] = min(la, lb) / max(la, lb, 1)
    row[_IDX["identifier_one_side"]] = bool(ids_a) != bool(ids_b)


def _pad(profiles: Sequence[Profile], K: int):
    """Padded ``(n, K)`` word rows, stem ids (-1 padding), weights (0) and slot flags, and the valid mask."""
    n = len(profiles)
    lens = np.fromiter((min(len(p.words), K) for p in profiles), np.int64, n)
    valid = np.arange(K)[None, :] < lens[:, None]
    words = np.zeros((n, K), np.int32)
    stems = np.full((n, K), -1, np.int32)
    weights = np.zeros((n, K), np.float32)
    slot = np.zeros((n, K), bool)
    live = [p for p in profiles if p.words]
    if live:
        rows = [p.rows() for p in live]
        words[valid] = np.concatenate([r[0][:K] for r in rows])
        stems[valid] = np.concatenate([r[1][:K] for r in rows])
        weights[valid] = np.concatenate([p.weights[:K] for p in live])
        slot[valid] = np.concatenate([p.slot[:K] for p in live])
    return words, stems, weights, slot, valid


def _word_features(pa: Sequence[Profile], pb: Sequence[Profile], out: np.ndarray) -> None:
    """Alignment features of a batch of pairs (rows of ``out``), from one padded matrix product: each
    word's best cosine on the other side (1 for the same stem), plain and weighted by rarity, over all
    words and over the words around the slots (names, identifiers, numbers)."""
    Ka = min(MAX_WORDS, max(len(p.words) for p in pa))
    Kb = min(MAX_WORDS, max(len(p.words) for p in pb))
    if not Ka or not Kb:
        return
    wa, sa, ga, slota, va = _pad(pa, Ka)
    wb, sb, gb, slotb, vb = _pad(pb, Kb)
    table = word_table()
    A, B = table[wa], table[wb]  # (n, K, 256)
    S = np.matmul(A, B.transpose(0, 2, 1))  # (n, Ka, Kb)
    S[(sa[:, :, None] == sb[:, None, :]) & va[:, :, None]] = 1.0  # one stem: "session" / "sessions"
    both = va[:, :, None] & vb[:, None, :]
    S[~both] = -np.inf
    has = va.any(axis=1) & vb.any(axis=1)
    na, nb = va.sum(axis=1), vb.sum(axis=1)
    ma, mb = S.max(axis=2), S.max(axis=1)  # (n, Ka), (n, Kb); -inf on padding
    ma0, mb0 = np.where(va, ma, 0.0), np.where(vb, mb, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        align = (ma0.sum(axis=1) / na + mb0.sum(axis=1) / nb) / 2
        worst = np.minimum(np.where(va, ma, np.inf).min(axis=1), np.where(vb, mb, np.inf).min(axis=1))
        ua, ub = (va & (ma < ALIGNED)).sum(axis=1), (vb & (mb < ALIGNED)).sum(axis=1)
        unaligned = (ua + ub) / (na + nb)
        substitution = (ua > 0) & (ub > 0) & (ua + ub <= 4)
        walign = ((ma0 * ga).sum(axis=1) / ga.sum(axis=1) + (mb0 * gb).sum(axis=1) / gb.sum(axis=1)) / 2
        wmiss = ((ga * (va & (ma < ALIGNED))).sum(axis=1) + (gb * (vb & (mb < ALIGNED))).sum(axis=1)) / (
            ga.sum(axis=1) + gb.sum(axis=1))
        # the words around the slots: the same subject and predicate?
        ra, rb = va & ~slota, vb & ~slotb
        has_r = has & ra.any(axis=1) & rb.any(axis=1)
        Sr = np.where(ra[:, :, None] & rb[:, None, :], S, -np.inf)
        mra, mrb = Sr.max(axis=2), Sr.max(axis=1)
        residual = (np.where(ra, mra, 0.0).sum(axis=1) / ra.sum(axis=1)
                    + np.where(rb, mrb, 0.0).sum(axis=1) / rb.sum(axis=1)) / 2
        pa_vec = np.einsum("nk,nkd->nd", ga * ra, A)
        pb_vec = np.einsum("nk,nkd->nd", gb * rb, B)
        prose = (pa_vec * pb_vec).sum(axis=1) / np.maximum(
            np.linalg.norm(pa_vec, axis=1) * np.linalg.norm(pb_vec, axis=1), 1e-9)
    z = lambda x, ok=has: np.where(ok, x, 0.0)  # noqa: E731  (pairs without words on a side: 0)
    out[:, _IDX["align_mean"]] = z(align)
    out[:, _IDX["align_min"]] = z(worst)
    out[:, _IDX["unaligned"]] = z(unaligned)
    out[:, _IDX["substitution"]] = z(substitution)
    out[:, _IDX["weighted_align"]] = z(walign)
    out[:, _IDX["weighted_unaligned"]] = z(wmiss)
    out[:, _IDX["residual_align"]] = z(residual, has_r)
    out[:, _IDX["prose_cosine"]] = np.maximum(z(prose, has_r), 0.0)
