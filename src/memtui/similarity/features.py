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
from memtui.similarity.embed import DIM, word_ids, word_table
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
    :func:`profile` of many statements does not tokenize word by word; and fill the word caches
    (:func:`~memtui.similarity.text.stem`, :func:`~memtui.similarity.text.zipf`) once, before worker
    processes are forked (they inherit them) and for later profiles in this process."""
    from memtui.similarity.text import zipf

    words = list(dict.fromkeys(w for t in texts for w in {x.lower() for x in _WORDS.findall(t or "")}))
    word_ids([w for w in words if w not in _STOP])
    for w in words:
        stem(w)
        zipf(w)


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


CHUNK_CELLS = 1 << 22
"""Word-pair cells (pairs x words x words) per batch of the alignment features (bounds the gathered
similarity matrices to ~16 MB)."""
MAX_WORDS = 48
"""Content words per statement that the alignment features read (the first ones; longer statements are rare)."""

_SHIFT = np.int64(1 << 32)


def _append(buf: np.ndarray, used: int, new: np.ndarray) -> np.ndarray:
    """``buf`` (its first ``used`` rows valid) with ``new`` written after them, reallocated with twice the
    capacity when full (appends cost amortised O(new))."""
    need = used + len(new)
    if need > len(buf):
        grown = np.zeros((max(need, 2 * len(buf), 16),) + buf.shape[1:], buf.dtype)
        grown[:used] = buf[:used]
        buf = grown
    buf[used:need] = new
    return buf


class _Sets:
    """One set of interned strings (:func:`_stem_id`) per table row, as CSR, with the sorted keys
    ``row << 32 | value`` that membership tests search. Rows are only ever appended, so the keys of new
    rows sort after the old ones. Buffers grow by doubling; ``n`` rows and ``m`` values are valid."""

    __slots__ = ("indptr", "values", "lens", "_keys", "n", "m")

    def __init__(self) -> None:
        self.indptr = np.zeros(1, np.int64)
        self.values = np.zeros(0, np.int64)
        self.lens = np.zeros(0, np.int64)
        self._keys = np.zeros(0, np.int64)
        self.n = self.m = 0

    @property
    def keys(self) -> np.ndarray:
        return self._keys[:self.m]

    def extend(self, lists: list) -> None:
        """Append one row per item of ``lists`` (each a sized iterable of strings, interned here; its
        order kept, so that two families built from one set stay parallel)."""
        first = self.n
        lens = np.fromiter(map(len, lists), np.int64, len(lists))
        flat = [v for x in lists for v in x]
        known = _STEM_IDS
        for v in set(flat).difference(known):
            known[v] = len(known)
        values = np.fromiter(map(known.__getitem__, flat), np.int64, len(flat))
        rows = np.repeat(np.arange(first, first + len(lists), dtype=np.int64), lens)
        self.indptr = _append(self.indptr, self.n + 1, self.m + np.cumsum(lens))
        self.values = _append(self.values, self.m, values)
        self.lens = _append(self.lens, self.n, lens)
        self._keys = _append(self._keys, self.m, np.sort(rows * _SHIFT + values))
        self.n += len(lists)
        self.m += len(values)

    def elements(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(k, flat)``: for every element of the sets of ``rows``, its position ``k`` in ``rows`` and
        its index into :attr:`values`."""
        lens = self.lens[rows]
        ends = np.cumsum(lens)
        k = np.repeat(np.arange(len(rows)), lens)
        return k, np.repeat(self.indptr[rows] - (ends - lens), lens) + np.arange(int(ends[-1]) if len(ends) else 0)

    def contains(self, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Bool per element: ``values[i]`` is in the set of row ``rows[i]``."""
        keys = self.keys
        if not len(keys) or not len(values):
            return np.zeros(len(values), bool)
        q = rows.astype(np.int64) * _SHIFT + values
        at = np.minimum(np.searchsorted(keys, q), len(keys) - 1)
        return keys[at] == q


class _Signatures:
    """Small integer ids of hashable values (0 for an empty one), so that a per-pair function of two
    values is computed once per distinct pair of ids."""

    def __init__(self) -> None:
        self.ids: dict = {}
        self.values: list = [None]
        self.pairs: dict[tuple[int, int], bool] = {}

    def id(self, value) -> int:
        if not value:
            return 0
        i = self.ids.get(value)
        if i is None:
            i = self.ids[value] = len(self.values)
            self.values.append(value)
        return i

    def apply(self, fn, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``fn(value of a[i], value of b[i])`` as bools, 0 ids (empty values) False without a call."""
        out = np.zeros(len(a), bool)
        live = np.flatnonzero((a > 0) & (b > 0))
        if not len(live):
            return out
        codes = a[live].astype(np.int64) * _SHIFT + b[live]
        uc, inv = np.unique(codes, return_inverse=True)
        memo, vals = self.pairs, self.values
        res = np.empty(len(uc), bool)
        for k, c in enumerate(uc.tolist()):
            key = (c >> 32, c & 0xFFFFFFFF)
            r = memo.get(key)
            if r is None:
                r = memo[key] = bool(fn(vals[key[0]], vals[key[1]]))
            res[k] = r
        out[live] = res[inv]
        return out


_NUMBERS = _Signatures()  # (numbers, numerals)
_POLE_SETS = _Signatures()  # poles


def _numbers_differ(x: tuple, y: tuple) -> bool:
    """A number differs when each side has one the other lacks, with units normalised and as written
    ("10 seconds" / "10 * time.Second", "15 minutes" / "900 s" agree; "3 replicas" / "5 replicas" do not)."""
    return bool(quantities_differ(x[0], y[0]) and x[1] - y[1] and y[1] - x[1])


def _antonym(pa: frozenset, pb: frozenset) -> bool:
    """An antonym axis (:data:`POLAR_WORDS`) on which the two sides take different poles."""
    axes_a: dict[str, set[int]] = {}
    for axis, pole in pa:
        axes_a.setdefault(axis, set()).add(pole)
    return any(axis in axes_a and pole not in axes_a[axis] for axis, pole in pb)


class ProfileTable:
    """:class:`Profile` rows as arrays, so that the features of many pairs are computed at once by row
    index (:meth:`features`). Rows are only appended (:meth:`extend`); ``texts[row]`` is the statement.

    Per row: the match key, text length, flags (exclusive wording, negations, numbers); the first
    :data:`MAX_WORDS` content words as :func:`~memtui.similarity.embed.word_table` rows, stem ids,
    rarity weights and slot flags, padded to ``K`` (``nwords`` valid); the weighted prose vector (the
    words around the slots, float32 256) and its norm; and as :class:`_Sets` its identifier keys (with
    their stems), joined word pairs, stems, names (with their stems), negated and other stems.
    """

    def __init__(self, profiles: Sequence[Profile] = ()) -> None:
        self.texts: list[str] = []
        self.keys: list[str] = []
        self._profiles: list[Profile | None] = []
        self._an: dict[int, Analyzed] = {}
        self.length = np.zeros(0, np.int64)
        self.exclusive = np.zeros(0, bool)
        self.negations = np.zeros(0, np.int64)
        self.has_numbers = np.zeros(0, bool)
        self.numsig = np.zeros(0, np.int64)
        self.polesig = np.zeros(0, np.int64)
        self.split_negation = np.zeros(0, bool)  # negated_stems is not None
        self.K = 0
        self.nwords = np.zeros(0, np.int64)
        self.words = np.zeros((0, 0), np.int32)
        self.stems_k = np.zeros((0, 0), np.int32)
        self.weights = np.zeros((0, 0), np.float32)
        self.slot = np.zeros((0, 0), bool)
        self.has_rest = np.zeros(0, bool)  # a valid word that is no slot filler
        self.prose = np.zeros((0, DIM), np.float32)
        self.prose_norm = np.zeros(0, np.float32)
        self.ids, self.ids_stem, self.ids_or_joined = _Sets(), _Sets(), _Sets()
        self.joined, self.stems, self.names, self.names_stem, self.names_or_joined = \
            _Sets(), _Sets(), _Sets(), _Sets(), _Sets()
        self.negated, self.unnegated = _Sets(), _Sets()
        if profiles:
            self.extend(profiles)

    def __len__(self) -> int:
        return len(self.texts)

    def extend(self, profiles: Sequence[Profile], keep: bool = True) -> np.ndarray:
        """Append ``profiles``; returns their rows. ``keep``: hold the profile objects (for
        :meth:`profile`; else it is recomputed from the text when asked)."""
        first = len(self.texts)
        ps = list(profiles)
        n = len(ps)
        self.texts.extend(p.text for p in ps)
        self.keys.extend(p.key for p in ps)
        self._profiles.extend(ps if keep else [None] * n)
        self.length = _append(self.length, first, np.fromiter((len(p.text) for p in ps), np.int64, n))
        self.exclusive = _append(self.exclusive, first, np.fromiter((p.exclusive for p in ps), bool, n))
        self.negations = _append(self.negations, first, np.fromiter((p.negations for p in ps), np.int64, n))
        self.has_numbers = _append(self.has_numbers, first, np.fromiter((bool(p.numbers) for p in ps), bool, n))
        self.numsig = _append(self.numsig, first, np.fromiter(
            (_NUMBERS.id((p.numbers, p.numerals) if p.numbers else None) for p in ps), np.int64, n))
        self.polesig = _append(self.polesig, first, np.fromiter((_POLE_SETS.id(p.poles) for p in ps), np.int64, n))
        self.split_negation = _append(self.split_negation, first, np.fromiter((p.negated_stems is not None for p in ps),
                                                                    bool, n))
        # words
        nw = np.fromiter((min(len(p.words), MAX_WORDS) for p in ps), np.int64, n)
        K = max(self.K, int(nw.max()) if n else 0)
        if K > self.K:
            pad = K - self.K
            self.words = np.pad(self.words, ((0, 0), (0, pad)))
            self.stems_k = np.pad(self.stems_k, ((0, 0), (0, pad)), constant_values=-1)
            self.weights = np.pad(self.weights, ((0, 0), (0, pad)))
            self.slot = np.pad(self.slot, ((0, 0), (0, pad)))
            self.K = K
        valid = np.arange(K)[None, :] < nw[:, None]
        words = np.zeros((n, K), np.int32)
        stems = np.full((n, K), -1, np.int32)
        weights = np.zeros((n, K), np.float32)
        slot = np.zeros((n, K), bool)
        live = [p for p in ps if p.words]
        if live:
            rows = [p.rows() for p in live]
            words[valid] = np.concatenate([r[0][:K] for r in rows])
            stems[valid] = np.concatenate([r[1][:K] for r in rows])
            weights[valid] = np.concatenate([p.weights[:K] for p in live])
            slot[valid] = np.concatenate([p.slot[:K] for p in live])
        self.nwords = _append(self.nwords, first, nw)
        self.words, self.stems_k = _append(self.words, first, words), _append(self.stems_k, first, stems)
        self.weights, self.slot = _append(self.weights, first, weights), _append(self.slot, first, slot)
        rest = valid & ~slot
        self.has_rest = _append(self.has_rest, first, rest.any(axis=1))
        table = word_table()
        prose = np.zeros((n, DIM), np.float32)
        step = max(1, (1 << 20) // max(K * DIM, 1))
        for s in range(0, n, step):
            prose[s:s + step] = np.einsum("nk,nkd->nd", (weights * rest)[s:s + step], table[words[s:s + step]])
        self.prose = _append(self.prose, first, prose)
        self.prose_norm = _append(self.prose_norm, first, np.linalg.norm(prose, axis=1))
        # sets (of strings; interned by _Sets)
        self.ids.extend([p.ids for p in ps])
        self.ids_stem.extend([[stem(i) for i in p.ids] for p in ps])
        self.ids_or_joined.extend([p.ids | p.joined for p in ps])
        self.joined.extend([p.joined for p in ps])
        self.stems.extend([p.stems for p in ps])
        self.names.extend([p.names for p in ps])
        self.names_stem.extend([[stem(x) for x in p.names] for p in ps])
        self.names_or_joined.extend([p.names | p.joined for p in ps])
        self.negated.extend([p.negated_stems if p.negated_stems is not None else () for p in ps])
        self.unnegated.extend([p.stems - p.negated_stems if p.negated_stems is not None else () for p in ps])
        return np.arange(first, first + n, dtype=np.int64)

    def profile(self, row: int) -> Profile:
        p = self._profiles[row]
        if p is None:
            p = profile(self.texts[row])
        return p

    def analyzed(self, row: int) -> Analyzed:
        """The lexical rules' analysis of row ``row`` (cached)."""
        p = self._profiles[row]
        if p is not None:
            return p.analyzed()
        an = self._an.get(row)
        if an is None:
            an = self._an[row] = analyze(self.texts[row])
        return an

    # -- features ----------------------------------------------------------------------------------------

    def lexical(self, ia: np.ndarray, ib: np.ndarray, workers: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """``(token_set, token_sort)`` ratios of the match keys of the pairs, float32 0-100."""
        ka, kb = [self.keys[i] for i in ia.tolist()], [self.keys[i] for i in ib.tolist()]
        if not ka:
            return np.zeros(0, np.float32), np.zeros(0, np.float32)
        return (process.cpdist(ka, kb, scorer=fuzz.token_set_ratio, dtype=np.float32, workers=workers),
                process.cpdist(ka, kb, scorer=fuzz.token_sort_ratio, dtype=np.float32, workers=workers))

    def set_features(self, ia: np.ndarray, ib: np.ndarray, out: np.ndarray) -> None:
        """The features read from the rows' sets (identifiers, names, numbers, negation, poles) and
        lengths, into the columns of ``out`` (rows parallel to ``ia``/``ib``)."""
        n = len(ia)
        if not n:
            return

        def count(fam: _Sets, rows: np.ndarray, others: np.ndarray, hit) -> np.ndarray:
            k, flat = fam.elements(rows)
            return np.bincount(k, weights=hit(others[k], flat), minlength=len(rows))

        def unmatched(fam: _Sets, fam_stem: _Sets, in_other: _Sets, rows, others):
            # elements of one side the other names in no form: not in ``in_other``, stem not among its stems
            return count(fam, rows, others, lambda o, f: ~in_other.contains(o, fam.values[f])
                         & ~self.stems.contains(o, fam_stem.values[f]))

        ids_a = unmatched(self.ids, self.ids_stem, self.ids_or_joined, ia, ib) > 0
        ids_b = unmatched(self.ids, self.ids_stem, self.ids_or_joined, ib, ia) > 0
        shared_ids = (count(self.ids, ia, ib, lambda o, f: self.ids_or_joined.contains(o, self.ids.values[f])) > 0) | (
            count(self.ids, ib, ia, lambda o, f: self.joined.contains(o, self.ids.values[f])) > 0)
        na_, nb_ = self.negations[ia] > 0, self.negations[ib] > 0
        neg = na_ != nb_
        split = np.flatnonzero(neg & self.split_negation[np.where(na_, ia, ib)])
        if len(split):  # a negated clause counts only when the other side is closer to it than to the rest
            nrow = np.where(na_[split], ia[split], ib[split])
            orow = np.where(na_[split], ib[split], ia[split])
            close = count(self.negated, nrow, orow, lambda o, f: self.stems.contains(o, self.negated.values[f]))
            rest = count(self.unnegated, nrow, orow, lambda o, f: self.stems.contains(o, self.unnegated.values[f]))
            neg[split] = close > rest
        numbers_differ = _NUMBERS.apply(_numbers_differ, self.numsig[ia], self.numsig[ib])
        antonym = _POLE_SETS.apply(_antonym, self.polesig[ia], self.polesig[ib])
        names_a = unmatched(self.names, self.names_stem, self.names_or_joined, ia, ib)
        names_b = unmatched(self.names, self.names_stem, self.names_or_joined, ib, ia)
        inter = count(self.stems, ia, ib, lambda o, f: self.stems.contains(o, self.stems.values[f]))
        union = self.stems.lens[ia] + self.stems.lens[ib] - inter
        la, lb = self.length[ia], self.length[ib]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, _IDX["stem_jaccard"]] = np.where(union > 0, inter / np.maximum(union, 1), 0.0)
        out[:, _IDX["shared_identifier"]] = shared_ids
        out[:, _IDX["differing_identifiers"]] = ids_a & ids_b
        out[:, _IDX["negation_asymmetry"]] = neg
        out[:, _IDX["numbers_differ"]] = numbers_differ
        out[:, _IDX["number_one_side"]] = self.has_numbers[ia] != self.has_numbers[ib]
        out[:, _IDX["antonym"]] = antonym
        out[:, _IDX["exclusive_slot"]] = self.exclusive[ia] | self.exclusive[ib]
        # one name swapped for another (a slot filled differently), not two lists of names
        out[:, _IDX["names_differ"]] = (names_a == 1) & (names_b == 1)
        out[:, _IDX["shared_name"]] = count(self.names, ia, ib,
                                            lambda o, f: self.names.contains(o, self.names.values[f])) > 0
        out[:, _IDX["length_ratio"]] = np.minimum(la, lb) / np.maximum(np.maximum(la, lb), 1)
        out[:, _IDX["identifier_one_side"]] = ids_a != ids_b

    def word_features(self, ia: np.ndarray, ib: np.ndarray, out: np.ndarray) -> None:
        """Alignment features (rows of ``out``): each word's best cosine on the other side (1 for the same
        stem), plain and weighted by rarity, over all words and over the words around the slots (names,
        identifiers, numbers); the prose cosine of the weighted word vectors around the slots. A batch's
        distinct words are compared once (one matrix product) and gathered per pair."""
        n = len(ia)
        if not n or not self.K:
            return
        Ka_all, Kb_all = self.nwords[ia], self.nwords[ib]
        s = 0
        while s < n:  # batches of at most CHUNK_CELLS gathered cells (the longest statements set the width)
            e = min(n, s + max(1, CHUNK_CELLS // max(1, int(Ka_all[s:s + 4096].max(initial=1))
                                                       * int(Kb_all[s:s + 4096].max(initial=1)))))
            self._word_chunk(ia[s:e], ib[s:e], out[s:e])
            s = e
        dot = np.einsum("nd,nd->n", self.prose[ia], self.prose[ib])
        has_r = (Ka_all > 0) & (Kb_all > 0) & self.has_rest[ia] & self.has_rest[ib]
        prose = dot / np.maximum(self.prose_norm[ia] * self.prose_norm[ib], 1e-9)
        out[:, _IDX["prose_cosine"]] = np.maximum(np.where(has_r, prose, 0.0), 0.0)

    def _word_chunk(self, ia: np.ndarray, ib: np.ndarray, out: np.ndarray) -> None:
        Ka, Kb = int(self.nwords[ia].max()), int(self.nwords[ib].max())
        if not Ka or not Kb:
            return
        wa, wb = self.words[ia, :Ka], self.words[ib, :Kb]
        sa, sb = self.stems_k[ia, :Ka], self.stems_k[ib, :Kb].copy()
        ga, gb = self.weights[ia, :Ka], self.weights[ib, :Kb]
        slota, slotb = self.slot[ia, :Ka], self.slot[ib, :Kb]
        va = np.arange(Ka)[None, :] < self.nwords[ia][:, None]
        vb = np.arange(Kb)[None, :] < self.nwords[ib][:, None]
        sb[~vb] = -2  # padding on the two sides never shares a stem
        # the batch's distinct words, compared once; padding is the extra last index (cosine -inf)
        table = word_table()
        used = np.zeros(len(table), bool)
        used[wa[va]] = True
        used[wb[vb]] = True
        u = np.flatnonzero(used)
        lut = np.zeros(len(table), np.int64)
        lut[u] = np.arange(len(u))
        U = len(u) + 1
        sim = np.full((U, U), -np.inf, np.float32)
        V = table[u]
        sim[:-1, :-1] = V @ V.T
        la = np.where(va, lut[wa], U - 1)
        lb = np.where(vb, lut[wb], U - 1)
        S = sim.ravel()[la[:, :, None] * U + lb[:, None, :]]  # (n, Ka, Kb); -inf on padding
        np.putmask(S, sa[:, :, None] == sb[:, None, :], np.float32(1.0))  # one stem: "session" / "sessions"
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
        z = lambda x, ok=has: np.where(ok, x, 0.0)  # noqa: E731  (pairs without words on a side: 0)
        out[:, _IDX["align_mean"]] = z(align)
        out[:, _IDX["align_min"]] = z(worst)
        out[:, _IDX["unaligned"]] = z(unaligned)
        out[:, _IDX["substitution"]] = z(substitution)
        out[:, _IDX["weighted_align"]] = z(walign)
        out[:, _IDX["weighted_unaligned"]] = z(wmiss)
        out[:, _IDX["residual_align"]] = z(residual, has_r)

    def features(self, ia, ib, cosines, lexical: tuple[np.ndarray, np.ndarray] | None = None,
                 workers: int = 1) -> np.ndarray:
        """Feature rows of the row pairs ``(ia[i], ib[i])`` with embedding cosines: float32
        ``(len(ia), len(FEATURES))``. ``lexical``: their ``(token_set, token_sort)`` ratios (0-100) when
        already computed (:meth:`lexical`)."""
        ia, ib = np.asarray(ia, np.int64), np.asarray(ib, np.int64)
        out = np.zeros((len(ia), len(FEATURES)), np.float32)
        if not len(ia):
            return out
        cos = np.maximum(np.asarray(cosines, np.float32), 0.0)
        out[:, _IDX["cosine"]] = cos
        tset, tsort = lexical if lexical is not None else self.lexical(ia, ib, workers)
        out[:, _IDX["token_set"]] = tset / 100
        out[:, _IDX["token_sort"]] = tsort / 100
        self.set_features(ia, ib, out)
        self.word_features(ia, ib, out)
        _combine(out)
        return out


def _combine(f: np.ndarray) -> None:
    """The interaction and threshold columns of feature rows ``f`` from their base columns."""
    cos = f[:, _IDX["cosine"]]
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


def table_of(pa: Sequence[Profile], pb: Sequence[Profile]) -> tuple[ProfileTable, np.ndarray, np.ndarray]:
    """A :class:`ProfileTable` of the distinct profiles (by identity) of two parallel lists, and the rows
    of ``pa[i]`` and ``pb[i]`` in it."""
    seen: dict[int, int] = {}
    uniq: list[Profile] = []

    def row(p: Profile) -> int:
        r = seen.get(id(p))
        if r is None:
            r = seen[id(p)] = len(uniq)
            uniq.append(p)
        return r

    ia = np.fromiter((row(p) for p in pa), np.int64, len(pa))
    ib = np.fromiter((row(p) for p in pb), np.int64, len(pb))
    return ProfileTable(uniq), ia, ib


def pair_features(pa: Profile, pb: Profile, cosine: float) -> np.ndarray:
    """The feature vector of one pair (float32, ``len(FEATURES)``): :func:`pair_feature_matrix` of it."""
    return pair_feature_matrix([pa], [pb], [cosine])[0]


def pair_feature_matrix(pa: Sequence[Profile], pb: Sequence[Profile], cosines) -> np.ndarray:
    """Feature rows of the pairs ``(pa[i], pb[i])`` with embedding cosine ``cosines[i]``: float32
    ``(len(pa), len(FEATURES))`` (:meth:`ProfileTable.features` over a table of the distinct profiles)."""
    if not len(pa):
        return np.zeros((0, len(FEATURES)), np.float32)
    table, ia, ib = table_of(pa, pb)
    return table.features(ia, ib, cosines)
