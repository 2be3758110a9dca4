"""Near-duplicate detection engine (issue 4, Detection item 1; DESIGN.md "dedupe" and "Scale targets").

Pure computation: no database, no git. A service feeds it :class:`DedupeItem` rows and turns the
:class:`Cluster` proposals into review items; the reviewer's "not duplicates" decisions come back as
``not_duplicates`` pairs.

Rule (issue 4): near-duplicates only within the same scope and type; strict to lax as OpenRefine's
clustering does -- (1) exact normalised text, (2) a fingerprint key (case, punctuation, token order),
(3) candidates from TF-IDF character n-gram top-k neighbours (a sparse top-n product,
``sparse_dot_topn``), verified and scored with rapidfuzz. Clusters without chaining unrelated members;
a proposed canonical member and the scores that explain it; never across scopes or types, never with a
stale member, never between statements that differ in a way that matters (a different identifier, a
negation, a number: :func:`memtui.domain.statements.material_difference_analyzed`); pairs a reviewer
marked "not duplicates" never again; new memories checked incrementally, without a full rebuild.

How it works
------------
* **Blocks.** Every comparison happens inside one block, ``(scope_key, type)``. Stale items are kept
  (so ``remove`` and updates work) but never compared.
* **Units (stage 1, exact).** Items of one block with the same :func:`~memtui.domain.statements.normalize`
  text form one *unit*; a unit with two or more items is an ``exact`` cluster. Everything below works on
  units, so a statement copied 500 times costs one row, not 125,000 pairs.
* **Fingerprint (stage 2).** Units of one block with the same
  :func:`~memtui.domain.statements.fingerprint` are candidate pairs (the same words in another order,
  case or punctuation).
* **TF-IDF candidates (stage 3).** Each unit's *match key* (:func:`match_key`) becomes an L2-normalised
  TF-IDF vector of character n-grams inside word boundaries (``char_wb``, 3-4 characters;
  :class:`CharNgramTfidf`). The ``top_n`` nearest units of every unit *in its own block* with cosine
  ``>= min_cosine`` come from one ``sparse_dot_topn.sp_matmul_topn`` call (:class:`BlockedNeighbours`:
  every (block, n-gram) pair is its own column, so different blocks are orthogonal and a big block
  elsewhere cannot crowd a unit's list). N-grams in more than ``max(max_df * block size,
  max_df_min_count)`` units of a block are dropped in that block (DESIGN.md's note: no cap made the
  product ~178 s on 100k templated statements in one scope, ``max_df`` ~0.02 ~2 s). A unit whose list came
  back full with at least half of it (``expand_fraction``) scoring above the threshold is asked again with
  4x the neighbours (up to ``max_top_n``), so a dense template family does not lose pairs to the cut.
* **Verification.** Candidate pairs are scored on the match keys with the mean of rapidfuzz
  ``fuzz.token_sort_ratio`` and ``fuzz.token_set_ratio`` (0-100, :func:`score_keys`; batched with
  ``rapidfuzz.process.cpdist``): the sort ratio penalises words only one side has, the set ratio forgives
  an omitted qualifier. A pair is *verified* when the score is ``>= threshold`` (default 82) or the
  fingerprints are equal, no member pair of the two units is in ``not_duplicates``, and the guard
  (``material_difference_analyzed``) gives no reason. The guard runs only on pairs that passed the score
  (it needs :func:`~memtui.domain.statements.analyze`, the costly step), in ``processes`` worker
  processes when there are many.
* **Clusters without chaining.** Inside each connected component of verified pairs, greedy
  complete-linkage: verified pairs are taken best score first and two groups merge only if (a) every
  cross pair *agrees* -- score ``>= cluster_floor`` (default 65) or equal fingerprints, no guard reason,
  not marked "not duplicates" -- and (b) the merged group has a *centre*, a unit verified with every
  other unit. So A~B and B~C give {A, B, C} only if A and C also agree; otherwise the stronger pair wins
  and the third stays out. Groups are capped at ``max_cluster_units`` units.
* **Canonical.** Among the items of centre units, the one with the highest mean score to the other
  members; ties by higher ``weight`` (e.g. evidence count or confidence), then smaller memory id.

Scorer and threshold: on ``tests/data/labelled_pairs.yaml`` (143 duplicates; 308 related, unrelated or
conflicting pairs) two statements alone in an index are verified for 133 duplicates and none of the 308
(match key, mean of ``token_sort_ratio`` and ``token_set_ratio`` >= 82, the guard). ``token_sort_ratio``
alone needed 72 to keep the RuleRegistry paraphrases together and then merged "X redacts scheduled jobs
during nightly runs" with "X logs retry attempts during nightly runs" (pair precision 0.63 on the
benchmark's generated statements, against 0.95 for the mean at 82); ``token_set_ratio`` alone scores a
statement contained in a longer one as 100 (it is the score of
:func:`memtui.domain.statements.judge_pair`).
The key is computed from the normalised text (so exact duplicates share it) and is cheap (~5 us); the
statements module's own ``Analyzed.key`` needs ``analyze`` (~250-350 us a statement), which for 100,000
statements alone would take most of the 30 s target.

Shapes and units
----------------
* scores are rapidfuzz similarities in ``[0, 100]`` (float32 precision, rounded to 2 decimals in
  :class:`Cluster`); cosines are in ``[0, 1]``.
* the TF-IDF matrix is ``(n_rows, n_features)`` ``float32`` CSR, one row per unit ever inserted (rows of
  removed units stay, unused, until the next :meth:`DedupeIndex.build`).
* ``add`` transforms only the new units with the fitted vocabulary and IDF and computes
  ``new x (all units of the touched blocks)``: each new unit's own neighbour list, plus every older unit
  whose stored list it would now enter (its cosine reaches that list's last one) -- the pairs a full build
  would find from either side. Only the pairs of new units are scored and guarded; only the components
  they touch are re-clustered. N-grams never seen at ``build`` time are ignored and the IDF is not
  refitted, so near the top-n and cosine cut-offs a few pairs can differ from a full build (benchmark:
  0.999 of the clusters identical); rebuild once the corpus has grown a lot
  (:attr:`DedupeIndex.rows_since_build`).
* a unit's representative (the text the guard reads; the guard is case-sensitive) is always its item
  ranked first by :func:`_rep_rank`; when ``add`` or ``remove`` changes it, the unit's pairs are guarded
  again.
* memory: ~1 GB peak at 100,000 statements (mostly the statements, units and keys; the matrix is ~6M
  float32 entries); guard workers are forked and share it copy-on-write.

Output is deterministic: members sorted, cluster ids from the sorted member ids, clusters sorted by
(scope_key, type, members).
"""

from __future__ import annotations

import bisect
import gc
import hashlib
import os
import pickle
import threading
import time
from collections import Counter, defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Sequence

import numpy as np
import scipy.sparse as sp
from rapidfuzz import fuzz, process

from memtui.domain.statements import Analyzed, analyze, material_difference_analyzed, normalize
from memtui.similarity.candidates import knn_pairs
from memtui.similarity.text import STOPWORDS, fingerprint_of_normalized, key_of_normalized, match_key
from memtui.similarity.embed import DIM, embed
from memtui.similarity.features import Profile, profile
from memtui.similarity.scorer import judge_profiles
from memtui.similarity.scorer import model as scorer_model

__all__ = [
    "DEFAULT_THRESHOLD", "DEFAULT_CLUSTER_FLOOR", "STOPWORDS", "DedupeItem", "DedupeConfig", "Cluster",
    "DedupeIndex", "CharNgramTfidf", "BlockedNeighbours", "match_key", "key_of_normalized",
    "fingerprint_of_normalized", "score_keys", "pair_scores",
    "exhaustive_pairs", "guard_pairs", "pair_key",
]

DEFAULT_THRESHOLD = 82.0
"""Score (:func:`score_keys`, 0-100) from which a candidate pair is a duplicate."""
DEFAULT_CLUSTER_FLOOR = 65.0
"""Lowest score any two members of one fuzzy cluster may have (complete-linkage bound)."""

Guard = Callable[[Analyzed, Analyzed], "str | None"]


def _no_guard(x: Analyzed, y: Analyzed) -> None:
    """The learned scorer weighs identifiers, negations and numbers itself: no separate veto."""
    return None


# ----------------------------------------------------------------------------------------------------
# Inputs, outputs, configuration
# ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DedupeItem:
    """One memory to check. ``scope_key`` e.g. ``"acme/order-service:src/main/java/..."``; ``type`` the
    memory type; ``stale`` true when its evidence is stale (never proposed); ``weight`` breaks ties when
    proposing the canonical member (higher wins: evidence count, confidence, ...)."""

    memory_id: str
    scope_key: str
    type: str
    statement: str
    stale: bool = False
    weight: float = 0.0


@dataclass(frozen=True)
class Cluster:
    """A proposed group of duplicates in one ``(scope_key, type)``.

    * ``cluster_id`` -- ``"dup-"`` + 16 hex digits of SHA-1 over the scope, type and sorted member ids
      (the same members always give the same id);
    * ``members`` -- memory ids, sorted; ``canonical`` -- the proposed survivor, one of ``members``;
    * ``best_score`` / ``min_score`` -- highest / lowest score over member pairs (0-100; 100 for exact
      duplicates);
    * ``scores`` -- ``{(a, b): score}`` with ``a < b``; every member pair when the cluster has at most
      ``DedupeConfig.max_reported_pairs_members`` members, otherwise the canonical's pairs only;
    * ``method`` -- the laxest stage needed: ``exact`` (same normalised text), ``fingerprint`` (same
      fingerprint key) or ``fuzzy`` (rapidfuzz verified);
    * ``explanation`` -- one sentence for the reviewer.
    """

    cluster_id: str
    scope_key: str
    type: str
    members: tuple[str, ...]
    canonical: str
    best_score: float
    scores: dict[tuple[str, str], float] = field(hash=False)
    method: str
    explanation: str
    min_score: float = 100.0


@dataclass(frozen=True)
class DedupeConfig:
    """Thresholds and sizes. Scores are 0-100 (rapidfuzz), cosines 0-1."""

    threshold: float = DEFAULT_THRESHOLD
    cluster_floor: float = DEFAULT_CLUSTER_FLOOR
    scorers: tuple[Callable[..., float], ...] = (fuzz.token_sort_ratio, fuzz.token_set_ratio)
    """The score is the mean of these rapidfuzz scorers on the match keys (each 0-100)."""
    top_n: int = 12
    """TF-IDF neighbours asked for per unit (self excluded) in the first round."""
    max_top_n: int = 768
    """Neighbour lists of units whose list came back full with at least ``expand_fraction`` of it at or
    above the threshold are asked again with 4x as many, up to this."""
    expand_fraction: float = 0.5
    min_cosine: float = 0.2
    """TF-IDF cosine below which a neighbour is not a candidate."""
    ngram_range: tuple[int, int] = (3, 4)
    max_df: float = 0.02
    """Per block: n-grams in more than ``max(max_df * block units, max_df_min_count)`` units are dropped."""
    max_df_min_count: int = 1000
    max_cluster_units: int = 50
    max_fingerprint_group: int = 200
    """A fingerprint group larger than this contributes pairs among its first units (sorted) only."""
    max_reported_pairs_members: int = 25
    workers: int = 2
    """Threads for the top-n product and for rapidfuzz."""
    processes: int = 2
    """Worker processes for the guard (``analyze`` is pure Python) when at least ``parallel_min_pairs``
    pairs need it, the guard pickles, and no other Python thread runs; 1 keeps it in-process."""
    parallel_min_pairs: int = 4000
    learned: bool = True
    """Verify pairs with the learned scorer (:mod:`memtui.similarity.scorer`; the score is 100 x
    P(duplicate), the thresholds the model's) and add embedding neighbours to the candidates; False:
    the lexical score and guard above."""
    embed_top_n: int = 8
    """Embedding neighbours per unit (same block) added to the candidates."""
    embed_min_cosine: float = 0.55
    score_min_cosine: float = 0.35
    """A candidate pair is scored by the model only when its embedding cosine or its lexical score
    (``score_min_lexical``) reaches this; others score 0."""
    score_min_lexical: float = 55.0


_DEFAULT_CONFIG = DedupeConfig()


def pair_key(a: str, b: str) -> tuple[str, str]:
    """The ``(smaller, larger)`` id pair used as a key in :attr:`Cluster.scores`."""
    return (a, b) if a <= b else (b, a)


# ----------------------------------------------------------------------------------------------------
# Match key and score
# ----------------------------------------------------------------------------------------------------

# STOPWORDS, match_key, key_of_normalized and fingerprint_of_normalized live in memtui.similarity.text
# (issue 10, item 8); imported above and re-exported here.


def score_keys(a: str, b: str, config: DedupeConfig | None = None) -> float:
    """The score of two match keys: the mean of ``config.scorers`` (default rapidfuzz
    ``token_sort_ratio`` and ``token_set_ratio``), 0-100, in float32 arithmetic like :func:`pair_scores`."""
    cfg = config or _DEFAULT_CONFIG
    total = np.float32(0)
    for sc in cfg.scorers:
        total += np.float32(sc(a, b))
    return float(total / np.float32(len(cfg.scorers)))


def pair_scores(keys_a: Sequence[str], keys_b: Sequence[str], config: DedupeConfig | None = None) -> np.ndarray:
    """:func:`score_keys` of ``keys_a[i]`` and ``keys_b[i]`` for every ``i`` (``rapidfuzz.process.cpdist``,
    ``config.workers`` threads): float32 array of ``len(keys_a)``, exact wherever a score can reach
    ``config.threshold``; below that, a pair too far apart gets its first scorer's value (still below the
    threshold)."""
    cfg = config or _DEFAULT_CONFIG
    if not len(keys_a):
        return np.zeros(0, np.float32)
    k = len(cfg.scorers)
    total = process.cpdist(keys_a, keys_b, scorer=cfg.scorers[0], workers=cfg.workers, dtype=np.float32)
    if k > 1:
        # a pair whose first score is below k*T - (k-1)*100 cannot reach the threshold: only the others
        # are computed in full (their mean below the threshold is then not exact, and never needed)
        live = np.flatnonzero(total >= k * cfg.threshold - (k - 1) * 100.0)
        if len(live):
            la = [keys_a[i] for i in live.tolist()]
            lb = [keys_b[i] for i in live.tolist()]
            for sc in cfg.scorers[1:]:
                total[live] += process.cpdist(la, lb, scorer=sc, workers=cfg.workers, dtype=np.float32)
        dead = np.ones(len(total), bool)
        dead[live] = False
        total[dead] *= np.float32(k)  # the first score stands in for the mean where it cannot matter
    return total / np.float32(k)


def _block_hits(keys: Sequence[str], cfg: DedupeConfig) -> np.ndarray:
    """Boolean ``len(keys) x len(keys)`` matrix: :func:`score_keys` ``>= threshold``. Every pair is
    compared with the first scorer (``rapidfuzz.process.cdist``, cut off where the mean can no longer
    reach the threshold); the other scorers run on the pairs still in reach (``cpdist``)."""
    k = len(cfg.scorers)
    cutoff = max(0.0, k * cfg.threshold - (k - 1) * 100.0)
    first = process.cdist(keys, keys, scorer=cfg.scorers[0], score_cutoff=cutoff, dtype=np.float32,
                          workers=cfg.workers)
    if k == 1:
        return first >= cfg.threshold
    ii, jj = np.nonzero(np.triu(first >= cutoff if cutoff > 0 else np.ones(first.shape, bool), 1))
    total = first[ii, jj]
    la, lb = [keys[i] for i in ii.tolist()], [keys[j] for j in jj.tolist()]
    for sc in cfg.scorers[1:]:
        total = total + process.cpdist(la, lb, scorer=sc, workers=cfg.workers, dtype=np.float32)
    ok = total / np.float32(k) >= cfg.threshold
    hit = np.zeros(first.shape, bool)
    hit[ii[ok], jj[ok]] = True
    return hit | hit.T


# ----------------------------------------------------------------------------------------------------
# TF-IDF on character n-grams, vectorised with NumPy
# ----------------------------------------------------------------------------------------------------


class CharNgramTfidf:
    """TF-IDF over character n-grams inside word boundaries, equal (up to column order; ``2 <= n <= 4``) to
    ``sklearn.feature_extraction.text.TfidfVectorizer(analyzer="char_wb", ngram_range=ngram_range,
    lowercase=False, max_df=max(max_df * n_docs, max_df_min_count) / n_docs, dtype=float32)`` on text
    whose words are separated by single spaces (as match keys are).

    scikit-learn's analyzer is pure Python and took about 16 s to count the n-grams of 100,000
    statements here; this counts them with NumPy (each n-gram a base-``B`` integer over the fitted
    alphabet) and weights them with scikit-learn's :class:`~sklearn.feature_extraction.text.TfidfTransformer`
    (smooth IDF, L2 rows).

    ``max_df`` here is a corpus-wide cap (default none): :class:`DedupeIndex` caps common n-grams per
    block instead (:class:`BlockedNeighbours`), so a small block never loses its only n-grams.

    ``fit_transform(docs) -> (len(docs), n_features)`` CSR float32; ``transform(docs)`` uses the fitted
    alphabet, vocabulary and IDF (unseen n-grams are ignored).
    """

    def __init__(self, ngram_range: tuple[int, int] = (3, 4), max_df: float = 1.0, max_df_min_count: int = 0):
        lo, hi = ngram_range
        if not (2 <= lo <= hi <= 4):
            raise ValueError("ngram_range must satisfy 2 <= min <= max <= 4")
        self.ngram_range = (lo, hi)
        self.max_df = max_df
        self.max_df_min_count = max_df_min_count
        self.alphabet_: np.ndarray | None = None  # sorted code points (space and NUL excluded)
        self.vocabulary_: np.ndarray | None = None  # sorted int64 n-gram keys, one per column
        self.tfidf_ = None  # sklearn TfidfTransformer once fitted

    # -- encoding ------------------------------------------------------------------------------------

    @property
    def _base(self) -> int:
        return len(self.alphabet_) + 3  # 0 NUL, 1 space, 2 unknown character, 3.. the alphabet

    def _offset(self, m: int) -> int:
        b = self._base
        return sum(b**k for k in range(1, m))

    def _keys(self, docs: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(doc index, n-gram key) for every n-gram occurrence, both int64."""
        text = "\x00".join(" " + d + " " if d else "" for d in docs)
        cp = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        n_chars = len(cp)
        if n_chars == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        top = int(cp.max())
        if top < 1 << 20:  # a lookup table over the code points present: 0 NUL, 1 space, 2 unknown, 3.. alphabet
            lut = np.full(top + 1, 2, np.int64)
            alpha = self.alphabet_[self.alphabet_ <= top]
            lut[alpha] = np.searchsorted(self.alphabet_, alpha) + 3
            lut[0], lut[32] = 0, 1
            codes = lut[cp]
        else:
            codes = np.searchsorted(self.alphabet_, cp).astype(np.int64)
            np.minimum(codes, len(self.alphabet_) - 1 if len(self.alphabet_) else 0, out=codes)
            known = self.alphabet_[codes] == cp if len(self.alphabet_) else np.zeros(n_chars, bool)
            codes = np.where(known, codes + 3, 2)
            codes[cp == 0] = 0
            codes[cp == 32] = 1
        is_nul = codes == 0
        is_space = codes == 1
        nul_cum = np.concatenate(([0], np.cumsum(is_nul)))
        sp_cum = np.concatenate(([0], np.cumsum(is_space)))
        doc_of = nul_cum[:-1]  # document of each position = NULs before it
        b = self._base
        rows, keys = [], []
        lo, hi = self.ngram_range
        for n in range(lo, hi + 1):
            m = n_chars - n + 1
            if m <= 0:
                continue
            # window [p, p + n): no NUL anywhere, no space inside (positions p+1 .. p+n-2)
            valid = nul_cum[n:n + m] == nul_cum[:m]
            if n > 2:
                valid &= sp_cum[n - 1:n - 1 + m] == sp_cum[1:1 + m]
            key = codes[:m].copy()
            for i in range(1, n):
                key *= b
                key += codes[i:i + m]
            rows.append(doc_of[:m][valid])
            keys.append(key[valid] + self._offset(n))
        # scikit-learn's char_wb emits a padded word shorter than min_n (" a " when min_n = 4) once, as is.
        if lo > 3:
            spaces = np.flatnonzero(is_space)
            if len(spaces) > 1:
                s0, s1 = spaces[:-1], spaces[1:]
                length = s1 - s0 - 1
                ok = (length >= 1) & (nul_cum[s1] - nul_cum[s0] == 0)
                for word_len in range(1, lo - 2):
                    padded = word_len + 2
                    sel = s0[ok & (length == word_len)]
                    key = np.zeros(len(sel), np.int64)
                    for i in range(padded):
                        key = key * b + codes[sel + i]
                    rows.append(doc_of[sel])
                    keys.append(key + self._offset(padded))
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(rows), np.concatenate(keys)

    def _counts(self, docs: Sequence[str], rows: np.ndarray, cols: np.ndarray, n_cols: int) -> sp.csr_matrix:
        m = sp.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)), shape=(len(docs), n_cols))
        m.sum_duplicates()
        return m

    # -- API -----------------------------------------------------------------------------------------

    def fit_transform(self, docs: Sequence[str]) -> sp.csr_matrix:
        docs = list(docs)
        text = "".join(docs)
        cp = _distinct(np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32))
        self.alphabet_ = cp[(cp != 0) & (cp != 32)]
        if self._base ** self.ngram_range[1] * 2 >= 2**62:
            raise ValueError("alphabet too large for 64-bit n-gram keys")
        rows, keys = self._keys(docs)
        key_space = self._offset(self.ngram_range[1] + 1)
        if key_space <= 1 << 24:  # dense: present keys in order, and a key -> column table
            present = np.bincount(keys, minlength=key_space) > 0
            vocab = np.flatnonzero(present)
            col_of = np.cumsum(present) - 1
            cols = col_of[keys]
        else:
            vocab, cols = _unique_inverse(keys)
        counts = self._counts(docs, rows, cols, len(vocab))
        df = np.bincount(counts.indices, minlength=len(vocab))
        cap = max(self.max_df * len(docs), self.max_df_min_count)
        keep = df <= cap
        self.vocabulary_ = vocab[keep]
        counts = _select_columns(counts, keep)
        from sklearn.feature_extraction.text import TfidfTransformer  # slow import: only when fitting

        self.tfidf_ = TfidfTransformer(norm="l2", use_idf=True, smooth_idf=True, sublinear_tf=False)
        if counts.shape[1] == 0 or counts.shape[0] == 0:
            self.tfidf_ = None
            return sp.csr_matrix(counts.shape, dtype=np.float32)
        return self.tfidf_.fit_transform(counts).astype(np.float32).tocsr()

    def transform(self, docs: Sequence[str]) -> sp.csr_matrix:
        if self.vocabulary_ is None:
            raise RuntimeError("CharNgramTfidf is not fitted")
        docs = list(docs)
        V = len(self.vocabulary_)
        if V == 0 or self.tfidf_ is None:
            return sp.csr_matrix((len(docs), V), dtype=np.float32)
        rows, keys = self._keys(docs)
        pos = np.minimum(np.searchsorted(self.vocabulary_, keys), V - 1)
        ok = self.vocabulary_[pos] == keys
        counts = self._counts(docs, rows[ok], pos[ok], V)
        return self.tfidf_.transform(counts).astype(np.float32).tocsr()

    def feature_names(self) -> list[str]:
        """The n-gram string of each column (for tests and explanations)."""
        b = self._base
        alphabet = {i + 3: chr(c) for i, c in enumerate(self.alphabet_)}
        alphabet.update({0: "\x00", 1: " ", 2: "\ufffd"})
        out = []
        for key in self.vocabulary_.tolist():
            m = max(k for k in range(1, 6) if self._offset(k) <= key)
            code = key - self._offset(m)
            chars = []
            for _ in range(m):
                code, d = divmod(code, b)
                chars.append(alphabet[d])
            out.append("".join(reversed(chars)))
        return out

    @property
    def n_features(self) -> int:
        return 0 if self.vocabulary_ is None else len(self.vocabulary_)


def _distinct(a: np.ndarray) -> np.ndarray:
    """Sorted distinct values of a non-negative integer array. (NumPy 2.4's ``np.unique`` without
    ``return_*`` took ~10 s on 5.6M int64 here; a sort, or a bincount for small values, takes ~0.1 s.)"""
    a = np.asarray(a)
    if not len(a):
        return a[:0].astype(np.int64)
    top = int(a.max())
    if top < 1 << 22:
        return np.flatnonzero(np.bincount(a.astype(np.int64, copy=False), minlength=top + 1))
    s = np.sort(a)
    keep = np.empty(len(s), bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep].astype(np.int64, copy=False)


def _unique_inverse(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(a, return_inverse=True)`` for an integer array: sort ``value * n + position`` (one
    plain sort, far faster than the stable argsort ``np.unique`` does) and rank the sorted values."""
    a = np.asarray(a, np.int64)
    n = len(a)
    if n == 0:
        return a[:0], np.zeros(0, np.int64)
    lo = int(a.min())
    span = int(a.max()) - lo + 1
    if span * n >= 1 << 62:
        return np.unique(a, return_inverse=True)
    comb = np.sort((a - lo) * n + np.arange(n, dtype=np.int64))
    vals = comb // n
    order = comb - vals * n
    first = np.empty(n, bool)
    first[0] = True
    np.not_equal(vals[1:], vals[:-1], out=first[1:])
    inv = np.empty(n, np.int64)
    inv[order] = np.cumsum(first) - 1
    return vals[first] + lo, inv


def _select_columns(m: sp.csr_matrix, keep: np.ndarray) -> sp.csr_matrix:
    """``m[:, keep]`` for a boolean mask, without scipy's general fancy indexing."""
    new_index = np.cumsum(keep) - 1
    mask = keep[m.indices]
    row_of = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
    rows = row_of[mask]
    indptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=m.shape[0]))))
    return sp.csr_matrix((m.data[mask], new_index[m.indices[mask]], indptr), shape=(m.shape[0], int(keep.sum())))




class BlockedNeighbours:
    """Reference rows ``R`` (``nr x V``, L2-normalised) for "top-n most similar rows *in the same block*"
    queries. ``R`` must hold *every* row of the blocks it touches (the per-block n-gram cap counts them).

    Columns are re-keyed to (block, feature) pairs, which makes rows of different blocks orthogonal, so one
    ``sp_matmul_topn`` call serves every block. An n-gram in more than ``max(max_df * block rows,
    max_df_min_count)`` rows of its block is dropped there: the product costs the sum over columns of the
    squared column counts, and a template's common n-grams dominate it. Small blocks keep every n-gram.
    """

    def __init__(self, R: sp.csr_matrix, r_blocks: np.ndarray, max_df: float = 1.0, max_df_min_count: int = 0,
                 only: tuple[sp.csr_matrix, np.ndarray] | None = None):
        """``only=(Q, q_blocks)``: keep just the (block, n-gram) columns that rows of ``Q`` use -- the only
        ones a query with those rows can meet (``add`` queries a few new rows against big blocks)."""
        self.nr = R.shape[0]
        self.V = np.int64(max(R.shape[1], 1))
        r_blocks = np.asarray(r_blocks, np.int64)
        r_row = np.repeat(np.arange(self.nr), np.diff(R.indptr))
        r_ind, data = R.indices, R.data
        if only is not None:
            # column counts per block are unaffected: a kept column keeps all of its entries
            Q, q_blocks = only
            blocks = _distinct(r_blocks)
            q_row = np.repeat(np.arange(Q.shape[0]), np.diff(Q.indptr))
            qb = np.asarray(q_blocks, np.int64)[q_row]
            if len(blocks) * int(self.V) <= 32_000_000:  # a dense (block, n-gram) mask: one lookup an entry
                mask = np.zeros((len(blocks), int(self.V)), bool)
                mask[np.searchsorted(blocks, qb), Q.indices] = True
                keep = mask[np.searchsorted(blocks, r_blocks)[r_row], r_ind]
            else:
                keep = np.isin(r_blocks[r_row] * self.V + r_ind, _distinct(qb * self.V + Q.indices))
            r_row, r_ind, data = r_row[keep], r_ind[keep], data[keep]
        rkeys = r_blocks[r_row] * self.V + r_ind
        uk, rcol = _unique_inverse(rkeys)
        if max_df < 1.0 and len(uk):
            df = np.bincount(rcol, minlength=len(uk))
            blocks = _distinct(r_blocks)
            block_rows = np.bincount(r_blocks)[blocks]  # rows per block (all of R)
            cap = np.maximum(max_df * block_rows[np.searchsorted(blocks, uk // self.V)], max_df_min_count)
            keep_col = df <= cap
            if not keep_col.all():
                keep = keep_col[rcol]
                uk = uk[keep_col]
                rcol = (np.cumsum(keep_col) - 1)[rcol[keep]]
                r_row, data = r_row[keep], data[keep]
        self.keys = uk
        self.BT = sp.csr_matrix((data, (rcol, r_row)), shape=(len(uk), self.nr))  # (block, feature) x rows

    def query(self, Q: sp.csr_matrix, q_blocks: np.ndarray, top_n: int, min_cosine: float,
              workers: int = 1) -> sp.coo_matrix:
        """``nq x nr`` COO matrix: for each row of ``Q`` its ``top_n`` best rows of ``R`` in the same block
        with cosine ``>= min_cosine`` (itself included when it is in ``R``)."""
        nq, K = Q.shape[0], len(self.keys)
        if nq == 0 or K == 0 or Q.nnz == 0:
            return sp.coo_matrix((nq, self.nr), dtype=np.float32)
        from sparse_dot_topn import sp_matmul_topn

        q_row = np.repeat(np.arange(nq), np.diff(Q.indptr))
        qkeys = np.asarray(q_blocks, np.int64)[q_row] * self.V + Q.indices
        pos = np.minimum(np.searchsorted(self.keys, qkeys), K - 1)
        ok = self.keys[pos] == qkeys
        A = sp.csr_matrix((Q.data[ok], (q_row[ok], pos[ok])), shape=(nq, K))
        threads = workers if workers and workers > 1 else None
        C = sp_matmul_topn(A, self.BT, top_n=top_n, threshold=float(min_cosine) - 1e-6, n_threads=threads)
        return C.tocoo()


# ----------------------------------------------------------------------------------------------------
# The guard, in bulk
# ----------------------------------------------------------------------------------------------------


def _guard_chunk(args: tuple) -> list:
    """Worker: ``guard`` over index pairs into ``texts``; each text analysed once."""
    guard, texts, ia, ib = args
    cache: dict[int, Analyzed] = {}

    def an(i: int) -> Analyzed:
        a = cache.get(i)
        if a is None:
            a = cache[i] = analyze(texts[i])
        return a

    return [guard(an(i), an(j)) for i, j in zip(ia, ib)]


def _can_fork_work(guard: Guard, processes: int, n: int, min_pairs: int) -> bool:
    """Worker processes are *forked* (spawn would re-import the caller's ``__main__``), so only when no
    other Python thread runs (a fork copies one thread; a TUI worker thread must not be forked)."""
    import multiprocessing

    if processes <= 1 or n < min_pairs or threading.active_count() > 1:
        return False
    if "fork" not in multiprocessing.get_all_start_methods():
        return False
    try:
        pickle.dumps(guard)
    except Exception:  # a lambda or closure: stay in-process
        return False
    return True


def guard_pairs(texts: Sequence[str], ia: Sequence[int], ib: Sequence[int], guard: Guard | None = None,
                processes: int = 1, min_parallel: int = 4000, analyses: list | None = None) -> list:
    """``guard(analyze(texts[i]), analyze(texts[j]))`` for each ``(i, j)`` in ``zip(ia, ib)`` (a reason or
    None), every text analysed at most once per process. With ``processes > 1`` and at least
    ``min_parallel`` pairs, pairs go to forked worker processes: the connected components of the pair
    graph are packed into ``4 * processes`` chunks of about equal size (largest first), so a text is
    analysed in one process only -- unless its component alone exceeds a chunk, which is then split.
    ``analyses``, when given, is a list parallel to ``texts`` used (and filled) as the in-process cache."""
    guard = guard or material_difference_analyzed
    n = len(ia)
    if n == 0:
        return []
    if _can_fork_work(guard, processes, n, min_parallel):
        import heapq
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        from scipy.sparse.csgraph import connected_components

        ia_a, ib_a = np.asarray(ia, np.int64), np.asarray(ib, np.int64)
        graph = sp.coo_matrix((np.ones(n, np.int8), (ia_a, ib_a)), shape=(len(texts), len(texts)))
        _, label = connected_components(graph, directed=False)
        comp = label[ia_a]
        order = np.lexsort((ia_a, comp))  # by component, then first text
        starts = np.flatnonzero(np.concatenate(([True], comp[order][1:] != comp[order][:-1])))
        ends = np.append(starts[1:], n)
        n_bins = processes * 4
        target = max(1, -(-n // n_bins))
        pieces: list[np.ndarray] = []
        for lo, hi in zip(starts.tolist(), ends.tolist()):
            for cut in range(lo, hi, target):  # a component larger than a chunk is split
                pieces.append(order[cut:min(hi, cut + target)])
        pieces.sort(key=len, reverse=True)
        heap = [(0, b) for b in range(n_bins)]
        bins: list[list[np.ndarray]] = [[] for _ in range(n_bins)]
        for piece in pieces:  # longest-processing-time-first packing
            load, b = heapq.heappop(heap)
            bins[b].append(piece)
            heapq.heappush(heap, (load + len(piece), b))
        payloads, index_lists = [], []
        for chunk in bins:
            if not chunk:
                continue
            idx = np.concatenate(chunk)
            used, local = _unique_inverse(np.concatenate([ia_a[idx], ib_a[idx]]))
            m = len(idx)
            payloads.append((guard, [texts[i] for i in used.tolist()], local[:m].tolist(), local[m:].tolist()))
            index_lists.append(idx)
        out: list = [None] * n
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=processes, mp_context=ctx) as ex:
            for idx, res in zip(index_lists, ex.map(_guard_chunk, payloads)):
                for k, r in zip(idx.tolist(), res):
                    out[k] = r
        return out
    cache = analyses if analyses is not None else [None] * len(texts)

    def an(i: int) -> Analyzed:
        a = cache[i]
        if a is None:
            a = cache[i] = analyze(texts[i])
        return a

    return [guard(an(i), an(j)) for i, j in zip(ia, ib)]


# ----------------------------------------------------------------------------------------------------
# The index
# ----------------------------------------------------------------------------------------------------


class _Unit:
    """Items of one block with the same normalised text. ``rep`` / ``text``: the representative item and
    its statement, the one the guard analyses -- always the item ranked first by :func:`_rep_rank`, so
    ``add`` and ``remove`` keep the choice a full build would make."""

    __slots__ = ("row", "block", "norm", "items", "rep", "text", "key", "fp", "fpk", "_an", "_prof")

    def __init__(self, row: int, block: int, norm: str, item: DedupeItem):
        self.row = row
        self.block = block
        self.norm = norm
        self.items: list[str] = []
        self.rep = item.memory_id
        self.text = item.statement
        self.key = key_of_normalized(norm)
        self.fp = fingerprint_of_normalized(norm)
        self.fpk = -1  # id of (block, fingerprint), set by the index
        self._an: Analyzed | None = None
        self._prof: Profile | None = None

    @property
    def profile(self) -> Profile:
        if self._prof is None:
            self._prof = profile(self.text)
            self._an = self._prof.an
        return self._prof

    @property
    def analyzed(self) -> Analyzed:
        if self._an is None:
            self._an = analyze(self.text)
        return self._an

    @property
    def first(self) -> str:
        return self.items[0]


class _ScoredPairs:
    """Unordered unit pairs, each scored once (``score(a, b)`` on arrays), keyed ``min * N + max``."""

    def __init__(self, n_rows: int, score: Callable[[np.ndarray, np.ndarray], np.ndarray]):
        self.N = np.int64(n_rows + 1)
        self.score = score
        self.codes = np.zeros(0, np.int64)  # sorted
        self.values = np.zeros(0, np.float32)

    def scores(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Scores of the pairs ``(a[i], b[i])`` (order within a pair irrelevant), new ones computed."""
        if not len(a):
            return np.zeros(0, np.float32)
        codes = np.minimum(a, b) * self.N + np.maximum(a, b)
        uc, inv = _unique_inverse(codes)
        if len(self.codes):
            pos = np.minimum(np.searchsorted(self.codes, uc), len(self.codes) - 1)
            new = uc[self.codes[pos] != uc]
        else:
            new = uc
        if len(new):
            vals = self.score(new // self.N, new % self.N)
            codes_all = np.concatenate([self.codes, new])
            order = np.argsort(codes_all, kind="stable")
            self.codes, self.values = codes_all[order], np.concatenate([self.values, vals])[order]
        return self.values[np.searchsorted(self.codes, uc)][inv]

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        return np.stack([self.codes // self.N, self.codes % self.N], axis=1), self.values


class DedupeIndex:
    """Near-duplicate index over :class:`DedupeItem` rows (see the module docstring for the rule).

    >>> idx = DedupeIndex(DedupeConfig(), not_duplicates=[frozenset({"m-1", "m-2"})])
    >>> idx.build(items)                   # full build: vectorizer fitted, all pairs, all clusters
    >>> idx.clusters()                     # list[Cluster], sorted
    >>> idx.add(new_items)                 # incremental: returns new or changed clusters
    >>> idx.remove(["m-17"])               # returns changed clusters; ``last_dropped`` the ids gone
    >>> idx.mark_not_duplicates([frozenset({"m-3", "m-4"})])   # returns changed clusters
    >>> idx.cluster_of("m-5"), idx.verified_pairs(), idx.stats

    Not thread-safe: one caller at a time. ``stats`` holds sizes and per-phase wall and CPU seconds of
    the last ``build`` (or ``add``).

    ``guard(x, y) -> str | None`` gives the reason two analysed statements must not be merged
    (default :func:`memtui.domain.statements.material_difference_analyzed`).
    """

    def __init__(self, config: DedupeConfig | None = None, not_duplicates: Iterable[Iterable[str]] = (),
                 guard: Guard | None = None):
        cfg = config or DedupeConfig()
        if cfg.learned and config is None or (cfg.learned and cfg.threshold == DEFAULT_THRESHOLD):
            t = 100.0 * scorer_model().duplicate_threshold
            cfg = replace(cfg, threshold=t, cluster_floor=round(0.75 * t, 2))
        self.config = cfg
        self.guard = guard or (_no_guard if cfg.learned else material_difference_analyzed)
        self._not_dup: dict[str, set[str]] = defaultdict(set)
        for pair in not_duplicates:
            self._add_not_dup(pair)
        self._reset()

    # -- state ---------------------------------------------------------------------------------------

    def _reset(self) -> None:
        self._items: dict[str, DedupeItem] = {}
        self._item_unit: dict[str, int] = {}
        self._units: dict[int, _Unit] = {}
        self._unit_by_norm: dict[tuple[int, str], int] = {}
        self._fp_ids: dict[tuple[int, str], int] = {}
        self._units_by_fp: dict[int, set[int]] = defaultdict(set)
        self._block_ids: dict[tuple[str, str], int] = {}
        self._block_keys: list[tuple[str, str]] = []
        self._block_units: dict[int, set[int]] = defaultdict(set)
        self._vec: CharNgramTfidf | None = None
        self._X: sp.csr_matrix | None = None
        self._E: np.ndarray | None = None  # unit embeddings (learned scorer), one row per unit row
        self._row_block = np.zeros(0, np.int64)  # block id of each row
        self._row_fp = np.zeros(0, np.int64)  # (block, fingerprint) id of each row
        self._admit = np.zeros(0, np.float32)  # cosine a newcomer needs to enter the row's neighbour list
        self._next_row = 0
        self._adj: dict[int, dict[int, float]] = defaultdict(dict)  # verified pairs (edges) -> score
        self._rejected: dict[int, dict[int, str]] = defaultdict(dict)  # scored >= threshold, guard said no
        self._pair_cache: dict[tuple[int, int], tuple[float, str | None | bool]] = {}
        self._rep_changed: set[int] = set()
        self._clusters: dict[str, Cluster] = {}
        self._unit_cluster: dict[int, str] = {}
        self.last_dropped: list[str] = []
        """Cluster ids that ceased to exist in the last add/remove/mark call."""
        self.rows_since_build = 0
        """Units transformed by ``add`` with the vocabulary fitted at ``build``."""
        self.stats: dict[str, float] = {}
        """Sizes and phase timings (seconds) of the last ``build`` or ``add``."""

    def _add_not_dup(self, pair: Iterable[str]) -> tuple[str, str] | None:
        ids = sorted(set(pair))
        if len(ids) != 2:
            return None
        a, b = ids
        self._not_dup[a].add(b)
        self._not_dup[b].add(a)
        return a, b

    def _block(self, item: DedupeItem) -> int:
        key = (item.scope_key, item.type)
        bid = self._block_ids.get(key)
        if bid is None:
            bid = self._block_ids[key] = len(self._block_keys)
            self._block_keys.append(key)
        return bid

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, memory_id: str) -> bool:
        return memory_id in self._items

    # -- public API ----------------------------------------------------------------------------------

    def build(self, items: Iterable[DedupeItem]) -> list[Cluster]:
        """Index ``items`` from scratch (fits the vectorizer) and return all clusters (sorted). A repeated
        memory id keeps its last version."""
        with _gc_paused():
            return self._build(items)

    def _build(self, items: Iterable[DedupeItem]) -> list[Cluster]:
        self._reset()
        clock = _PhaseClock()
        items = _unique_items(items)
        norms = {i.memory_id: normalize(i.statement) for i in items if not i.stale}
        order = sorted(items, key=lambda i: (i.scope_key, i.type, norms.get(i.memory_id, ""), i.memory_id))
        # units are created in this order, so the first item of a unit is its representative (_rep_rank)
        k = 0
        while k < len(order):
            j = k + 1
            head = order[k]
            while j < len(order) and not head.stale and not order[j].stale and order[j].scope_key == head.scope_key \
                    and order[j].type == head.type and norms[order[j].memory_id] == norms[head.memory_id]:
                j += 1
            if j - k > 1:
                order[k:j] = sorted(order[k:j], key=_rep_rank)
            k = j
        self._insert(order, norms)
        self._rep_changed = set()  # items were inserted best representative first
        rows = np.arange(self._next_row, dtype=np.int64)  # units were created in sorted order: rows 0..n-1
        units = [self._units[r] for r in range(self._next_row)]
        cfg = self.config
        clock.lap("prepare")
        self._vec = CharNgramTfidf(cfg.ngram_range)  # the common-n-gram cap is applied per block
        self._X = self._vec.fit_transform([u.key for u in units])
        self._row_block = np.array([u.block for u in units], np.int64)
        self._row_fp = np.array([u.fpk for u in units], np.int64)
        self._admit = np.full(len(units), self.config.min_cosine, np.float32)
        if cfg.learned:
            self._E = embed([u.text for u in units]) if units else np.zeros((0, DIM), np.float32)
            clock.lap("embed")
        if not units:
            self._vec = None  # nothing fitted: the next ``add`` builds
        clock.lap("vectorize")
        pairs, scores = self._candidates(rows, rows)
        clock.lap("candidates")
        n_guard = self._verify_and_link(pairs, scores)
        clock.lap("verify")
        self._recluster(set(self._units))
        clock.lap("cluster")
        self.last_dropped = []
        self.stats = {"items": len(self._items), "units": len(self._units), "blocks": len(self._block_keys),
                      "features": int(self._X.shape[1]), "candidate_pairs": int(len(pairs)),
                      "guarded_pairs": n_guard,
                      "verified_unit_pairs": sum(len(v) for v in self._adj.values()) // 2,
                      **clock.stats()}
        return self.clusters()

    def add(self, new_items: Iterable[DedupeItem]) -> list[Cluster]:
        """Check ``new_items`` against the index without a rebuild; return the new or changed clusters
        (sorted). An item whose id is already indexed replaces the old version. On an index never built
        (or built from nothing comparable) this builds."""
        with _gc_paused():
            return self._add(new_items)

    def _add(self, new_items: Iterable[DedupeItem]) -> list[Cluster]:
        new_items = _unique_items(new_items)
        if self._vec is None:
            before = set(self._clusters)
            self._build([*self._items.values(), *new_items])
            return [c for c in self.clusters() if c.cluster_id not in before]
        t0 = time.perf_counter()
        affected: set[int] = set()
        replaced = [i.memory_id for i in new_items if i.memory_id in self._items]
        if replaced:
            affected |= self._detach(replaced)
        first_new = self._next_row
        self._insert(new_items, {i.memory_id: normalize(i.statement) for i in new_items if not i.stale})
        affected |= {self._item_unit[i.memory_id] for i in new_items if i.memory_id in self._item_unit}
        fresh = np.arange(first_new, self._next_row, dtype=np.int64)
        if len(fresh):
            Xn = self._vec.transform([self._units[r].key for r in fresh.tolist()])
            self.rows_since_build += len(fresh)
            self._X = sp.vstack([self._X, Xn], format="csr")
            self._row_block = np.concatenate([self._row_block, [self._units[r].block for r in fresh.tolist()]])
            self._row_fp = np.concatenate([self._row_fp, [self._units[r].fpk for r in fresh.tolist()]])
            self._admit = np.concatenate([self._admit, np.full(len(fresh), self.config.min_cosine, np.float32)])
            if self.config.learned:
                self._E = np.concatenate([self._E, embed([self._units[r].text for r in fresh.tolist()])])
        again, touched = self._requery()
        affected |= touched
        n_pairs, n_guard = self._link(np.array(sorted(set(fresh.tolist()) | again), np.int64))
        changed, dropped = self._recluster(affected)
        self.last_dropped = dropped
        self.stats = {"items": len(new_items), "new_units": int(len(fresh)), "candidate_pairs": int(n_pairs),
                      "guarded_pairs": n_guard, "seconds": round(time.perf_counter() - t0, 3)}
        return changed

    def remove(self, memory_ids: Iterable[str]) -> list[Cluster]:
        """Forget ``memory_ids`` (unknown ids are ignored); return the clusters that changed and still
        exist (sorted). ``last_dropped`` lists the cluster ids that no longer exist."""
        with _gc_paused():
            ids = [m for m in dict.fromkeys(memory_ids) if m in self._items]
            affected = self._detach(ids)
            again, touched = self._requery()
            self._link(np.array(sorted(again), np.int64))
            changed, dropped = self._recluster(affected | touched)
        self.last_dropped = dropped
        return changed

    def mark_not_duplicates(self, pairs: Iterable[Iterable[str]]) -> list[Cluster]:
        """Remember reviewer decisions; the pairs are never proposed again. Returns changed clusters."""
        affected: set[int] = set()
        for pair in pairs:
            ab = self._add_not_dup(pair)
            if ab is None:
                continue
            ua, ub = self._item_unit.get(ab[0]), self._item_unit.get(ab[1])
            if ua is None or ub is None:
                continue
            affected |= {ua, ub}
            if ua != ub:
                self._adj[ua].pop(ub, None)
                self._adj[ub].pop(ua, None)
            self._pair_cache.pop((min(ua, ub), max(ua, ub)), None)
        changed, dropped = self._recluster(affected)
        self.last_dropped = dropped
        return changed

    def clusters(self) -> list[Cluster]:
        """Every current cluster, sorted by (scope_key, type, members)."""
        return sorted(self._clusters.values(), key=lambda c: (c.scope_key, c.type, c.members))

    def cluster_of(self, memory_id: str) -> Cluster | None:
        u = self._item_unit.get(memory_id)
        cid = self._unit_cluster.get(u) if u is not None else None
        return self._clusters.get(cid) if cid else None

    def verified_pairs(self) -> list[tuple[str, str, float]]:
        """Every verified duplicate pair at item level, ``(a, b, score)`` with ``a < b``, sorted: items of
        one unit (score 100) and the items of two units linked by a verified pair. Pairs are not clusters:
        clustering may keep a verified pair apart to avoid chaining."""
        out: list[tuple[str, str, float]] = []
        for u in self._units.values():
            its = u.items
            for i in range(len(its)):
                for j in range(i + 1, len(its)):
                    if its[j] not in self._not_dup.get(its[i], ()):
                        out.append((its[i], its[j], 100.0))
        for u, nbrs in self._adj.items():
            for v, score in nbrs.items():
                if u < v:
                    for a in self._units[u].items:
                        marked = self._not_dup.get(a, ())
                        for b in self._units[v].items:
                            if b not in marked:
                                out.append((*pair_key(a, b), round(score, 2)))
        out.sort()
        return out

    # -- insertion / removal ---------------------------------------------------------------------------

    def _insert(self, items: Sequence[DedupeItem], norms: dict[str, str]) -> None:
        """Record items; stale ones are stored but get no unit. New units get consecutive row ids."""
        for it in items:
            self._items[it.memory_id] = it
            if it.stale:
                continue
            block = self._block(it)
            norm = norms[it.memory_id]
            k = (block, norm)
            row = self._unit_by_norm.get(k)
            if row is None:
                row = self._next_row
                self._next_row += 1
                unit = self._units[row] = _Unit(row, block, norm, it)
                self._unit_by_norm[k] = row
                unit.fpk = self._fp_ids.setdefault((block, unit.fp), len(self._fp_ids))
                self._units_by_fp[unit.fpk].add(row)
                self._block_units[block].add(row)
            unit = self._units[row]
            if unit.items and _rep_rank(it) < _rep_rank(self._items[unit.rep]):
                self._set_rep(unit, it)
            bisect.insort(unit.items, it.memory_id)
            self._item_unit[it.memory_id] = row

    def _set_rep(self, unit: _Unit, item: DedupeItem) -> None:
        """A better representative: its guard results must be recomputed (:meth:`_requery`)."""
        unit.rep, unit.text, unit._an, unit._prof = item.memory_id, item.statement, None, None
        if self._E is not None and unit.row < len(self._E):
            self._E[unit.row] = embed([item.statement])[0]
        self._rep_changed.add(unit.row)

    def _requery(self) -> tuple[set[int], set[int]]:
        """Units whose representative changed lose their verified and refused pairs; returns (those
        units, to be queried again, and the units whose clusters change)."""
        rows = {r for r in self._rep_changed if r in self._units}
        self._rep_changed = set()
        affected = set(rows)
        for r in rows:
            for v in list(self._adj.get(r, {})):
                affected.add(v)
                self._adj[v].pop(r, None)
            self._adj.pop(r, None)
            for v in list(self._rejected.get(r, {})):
                self._rejected[v].pop(r, None)
            self._rejected.pop(r, None)
        if rows:
            self._pair_cache.clear()
        return rows, affected

    def _detach(self, ids: Sequence[str]) -> set[int]:
        """Remove items; return the units (live or gone) whose clusters must be recomputed."""
        affected: set[int] = set()
        for m in ids:
            self._items.pop(m, None)
            row = self._item_unit.pop(m, None)
            if row is None:
                continue
            unit = self._units[row]
            unit.items.remove(m)
            affected.add(row)
            if unit.items:
                if m == unit.rep:
                    self._set_rep(unit, min((self._items[i] for i in unit.items), key=_rep_rank))
                continue
            # the unit is gone: its neighbours' clusters change
            for v in list(self._adj.get(row, {})):
                affected.add(v)
                self._adj[v].pop(row, None)
            self._adj.pop(row, None)
            for v in list(self._rejected.get(row, {})):
                self._rejected[v].pop(row, None)
            self._rejected.pop(row, None)
            del self._units[row]
            del self._unit_by_norm[(unit.block, unit.norm)]
            fp_set = self._units_by_fp[unit.fpk]
            fp_set.discard(row)
            if not fp_set:
                del self._units_by_fp[unit.fpk]
            self._block_units[unit.block].discard(row)
        if ids:
            self._pair_cache.clear()
        return affected

    # -- candidates and verification ---------------------------------------------------------------------

    def _score(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        units, cfg = self._units, self.config
        lex = pair_scores([units[r].key for r in a.tolist()], [units[r].key for r in b.tolist()], cfg)
        if not cfg.learned:
            return lex
        cos = np.einsum("ij,ij->i", self._E[a], self._E[b])
        out = np.zeros(len(a), np.float32)
        live = np.flatnonzero((cos >= cfg.score_min_cosine) | (lex >= cfg.score_min_lexical))
        if len(live):
            verdicts = judge_profiles([units[r].profile for r in a[live].tolist()],
                                      [units[r].profile for r in b[live].tolist()], cos[live].tolist())
            out[live] = [0.0 if v.kind == "conflict" else 100.0 * v.p_duplicate for v in verdicts]
        return out

    def verdict(self, u: int, v: int):
        """The scorer's :class:`~memtui.similarity.scorer.Verdict` of two units (for explanations)."""
        a, b = self._units[u], self._units[v]
        return judge_profiles([a.profile], [b.profile], [float(self._E[u] @ self._E[v])])[0]

    def _link(self, q_rows: np.ndarray) -> tuple[int, int]:
        """Find, score and guard the pairs of the units ``q_rows`` against their blocks; returns
        (candidate pairs, guarded pairs)."""
        if not len(q_rows):
            return 0, 0
        blocks = {self._units[r].block for r in q_rows.tolist()}
        ref = np.array(sorted(r for b in blocks for r in self._block_units[b]), np.int64)
        pairs, scores = self._candidates(q_rows, ref)
        return len(pairs), self._verify_and_link(pairs, scores)

    def _candidates(self, q_rows: np.ndarray, r_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Candidate unit pairs ``(m, 2)`` (``u < v``, unique, sorted) and their scores ``(m,)``:
        fingerprint groups touching ``q_rows`` and TF-IDF neighbours of ``q_rows`` among ``r_rows``.
        Each pair is scored once, however often it comes up."""
        cfg = self.config
        pool = _ScoredPairs(self._next_row, self._score)
        # stage 2: fingerprint groups
        q_set = set(q_rows.tolist())
        fp_pairs: list[tuple[int, int]] = []
        if len(q_set) == len(self._units):
            groups = [g for g in self._units_by_fp.values() if len(g) > 1]
        else:
            groups = [g for g in (self._units_by_fp.get(k, ()) for k in {self._units[r].fpk for r in q_set})
                      if len(g) > 1]
        for group in groups:
            group = sorted(group, key=lambda x: self._units[x].first)[: cfg.max_fingerprint_group]
            for i in range(len(group)):
                for j in range(i + 1, len(group)):
                    if group[i] in q_set or group[j] in q_set:
                        fp_pairs.append((group[i], group[j]))
        if fp_pairs:
            pool.scores(np.array([p[0] for p in fp_pairs], np.int64), np.array([p[1] for p in fp_pairs], np.int64))
        # stage 3: TF-IDF neighbours, with more neighbours for units whose list is full of good pairs
        if len(q_rows) and len(r_rows) and self._X is not None and self._X.shape[1]:
            Q = self._X[q_rows]
            only = None if len(q_rows) == len(r_rows) else (Q, self._row_block[q_rows])
            ref = BlockedNeighbours(self._X[r_rows], self._row_block[r_rows], cfg.max_df, cfg.max_df_min_count, only)
            rows, n = q_rows, cfg.top_n
            while len(rows):
                C = ref.query(self._X[rows], self._row_block[rows], n + 1, cfg.min_cosine, cfg.workers)
                a, b = rows[C.row], r_rows[C.col]
                keep = a != b
                qi, a, b, cos = C.row[keep], a[keep], b[keep], C.data[keep]
                s = pool.scores(a, b)
                returned = np.bincount(qi, minlength=len(rows))
                # a full list admits a newcomer only above its last cosine (see ``add``)
                last = np.full(len(rows), np.inf, np.float32)
                np.minimum.at(last, qi, cos)
                self._admit[rows] = np.where(returned >= n, last, cfg.min_cosine)
                if n >= cfg.max_top_n:
                    break
                passing = np.bincount(qi[s >= cfg.threshold], minlength=len(rows))
                full = (returned >= n) & (passing >= cfg.expand_fraction * n)
                rows, n = rows[full], min(n * 4, cfg.max_top_n)
            if only is not None:
                # the other direction: a new unit that would now enter an older unit's neighbour list (its
                # cosine reaches that list's last one) -- what a full build would find from the older side
                C = ref.query(Q, self._row_block[q_rows], cfg.max_top_n + 1, cfg.min_cosine, cfg.workers)
                a, b = q_rows[C.row], r_rows[C.col]
                older = ~np.isin(b, q_rows)
                keep = older & (C.data >= self._admit[b] - 1e-6)
                pool.scores(a[keep], b[keep])
        if cfg.learned and self._E is not None and len(q_rows) and len(r_rows):
            # semantic neighbours (issue 10, item 1): paraphrases that share few n-grams
            a, b, _ = knn_pairs(self._E, q_rows, r_rows, self._row_block, cfg.embed_top_n, cfg.embed_min_cosine)
            pool.scores(a, b)
        return pool.result()

    def _cannot_link(self, u: _Unit, v: _Unit) -> bool:
        nd = self._not_dup
        if not nd:
            return False
        for a in u.items:
            marked = nd.get(a)
            if marked and any(b in marked for b in v.items):
                return True
        return False

    def _verify_and_link(self, pairs: np.ndarray, scores: np.ndarray) -> int:
        """Guard the candidate pairs that passed the score (or share a fingerprint) and store the verified
        ones as edges, the refused ones in ``_rejected``. Returns how many pairs were guarded."""
        if not len(pairs):
            return 0
        cfg, units = self.config, self._units
        fp_equal = self._row_fp[pairs[:, 0]] == self._row_fp[pairs[:, 1]]
        todo = []
        for i in np.flatnonzero((scores >= cfg.threshold) | fp_equal).tolist():
            u, v = units[int(pairs[i, 0])], units[int(pairs[i, 1])]
            if not self._cannot_link(u, v):
                todo.append((u, v, float(scores[i])))
        if cfg.learned:  # the scorer weighed what the guard vetoes
            for u, v, s in todo:
                self._adj[u.row][v.row] = s
                self._adj[v.row][u.row] = s
            return len(todo)
        rows = sorted({x.row for u, v, _ in todo for x in (u, v)})
        pos = {r: k for k, r in enumerate(rows)}
        analyses = [units[r]._an for r in rows]
        reasons = guard_pairs([units[r].text for r in rows], [pos[u.row] for u, _, _ in todo],
                              [pos[v.row] for _, v, _ in todo], self.guard, cfg.processes,
                              cfg.parallel_min_pairs, analyses)
        for r, an in zip(rows, analyses):
            if an is not None:
                units[r]._an = an
        for (u, v, s), reason in zip(todo, reasons):
            if reason is None:
                self._adj[u.row][v.row] = s
                self._adj[v.row][u.row] = s
            else:
                self._rejected[u.row][v.row] = reason
                self._rejected[v.row][u.row] = reason
        return len(todo)

    def _pair(self, u: int, v: int) -> tuple[float, bool]:
        """(score, fingerprints equal) of two units; the score from the edge when there is one."""
        s = self._adj.get(u, {}).get(v)
        a, b = self._units[u], self._units[v]
        if s is None:
            k = (u, v) if u < v else (v, u)
            hit = self._pair_cache.get(k)
            if hit is None:
                sc = (float(self._score(np.array([u]), np.array([v]))[0]) if self.config.learned
                      else score_keys(a.key, b.key, self.config))
                hit = self._pair_cache[k] = (sc, True)
            s = hit[0]
        return s, a.fpk == b.fpk

    def _guard_ok(self, u: int, v: int) -> bool:
        """No guard reason and not marked "not duplicates" (cached; analyses units lazily)."""
        if v in self._adj.get(u, {}):
            return True
        if v in self._rejected.get(u, {}):
            return False
        k = (u, v) if u < v else (v, u)
        hit = self._pair_cache.get(k)
        if hit is not None and hit[1] is not True:
            return hit[1] is None
        a, b = self._units[u], self._units[v]
        if self._cannot_link(a, b):
            reason = "marked not duplicates"
        else:
            reason = None if self.config.learned else self.guard(a.analyzed, b.analyzed)
        s, _ = self._pair(u, v)
        self._pair_cache[k] = (s, reason)
        return reason is None

    def _agrees(self, u: int, v: int) -> bool:
        if v in self._adj.get(u, {}):  # an item joining a unit later may carry a "not duplicates" mark
            return not self._cannot_link(self._units[u], self._units[v])
        s, fp_equal = self._pair(u, v)
        return (fp_equal or s >= self.config.cluster_floor) and self._guard_ok(u, v)

    def _verified(self, u: int, v: int) -> bool:
        if v in self._adj.get(u, {}):
            return not self._cannot_link(self._units[u], self._units[v])
        s, fp_equal = self._pair(u, v)
        return (fp_equal or s >= self.config.threshold) and self._guard_ok(u, v)

    # -- clustering -----------------------------------------------------------------------------------

    def _components(self, seeds: set[int]) -> list[list[int]]:
        seen: set[int] = set()
        comps = []
        for s in sorted(seeds):
            if s in seen or s not in self._units:
                continue
            comp, stack = [], [s]
            seen.add(s)
            while stack:
                x = stack.pop()
                comp.append(x)
                for y in self._adj.get(x, ()):
                    if y not in seen:
                        seen.add(y)
                        stack.append(y)
            comps.append(comp)
        return comps

    def _recluster(self, seeds: set[int]) -> tuple[list[Cluster], list[str]]:
        """Recompute the clusters of the components containing ``seeds``; return (new or changed clusters,
        ids of clusters that no longer exist)."""
        comps = self._components(seeds)
        old_ids = {self._unit_cluster[u] for u in seeds if u in self._unit_cluster}
        old_ids |= {self._unit_cluster[u] for comp in comps for u in comp if u in self._unit_cluster}
        old = {cid: self._clusters.pop(cid) for cid in old_ids if cid in self._clusters}
        for c in old.values():
            for m in c.members:
                u = self._item_unit.get(m)
                if u is not None and self._unit_cluster.get(u) == c.cluster_id:
                    del self._unit_cluster[u]
        for u in seeds:  # units that are gone
            if u not in self._units:
                self._unit_cluster.pop(u, None)
        new: list[Cluster] = []
        for comp in comps:
            if len(comp) == 1 and len(self._units[comp[0]].items) < 2:
                continue  # a lone statement: no cluster
            for group in self._cluster_component(comp):
                c = self._make_cluster(group)
                if c is None:
                    continue
                self._clusters[c.cluster_id] = c
                for u in group:
                    self._unit_cluster[u] = c.cluster_id
                new.append(c)
        changed = sorted((c for c in new if old.get(c.cluster_id) != c), key=lambda c: (c.scope_key, c.type, c.members))
        dropped = sorted(set(old) - {c.cluster_id for c in new})
        return changed, dropped

    def _cluster_component(self, comp: list[int]) -> list[list[int]]:
        """Greedy complete-linkage over one component (see the module docstring). Deterministic: edges in
        order of score (desc), then the units' smallest member ids -- never row ids, which depend on
        insertion order."""
        if len(comp) == 1:
            return [comp]
        cfg, units = self.config, self._units
        first = {u: units[u].first for u in comp}
        edges = sorted((-s, *sorted((first[u], first[v])), u, v)
                       for u in comp for v, s in self._adj[u].items() if first[u] < first[v])
        group_of: dict[int, list[int]] = {u: [u] for u in comp}
        for _neg, _a, _b, u, v in edges:
            gu, gv = group_of[u], group_of[v]
            if gu is gv or len(gu) + len(gv) > cfg.max_cluster_units:
                continue
            if not all(self._agrees(a, b) for a in gu for b in gv):
                continue
            merged = gu + gv
            if not any(self._is_centre(c, merged) for c in merged):
                continue
            for w in merged:
                group_of[w] = merged
        out, seen = [], set()
        for g in group_of.values():
            if id(g) not in seen:
                seen.add(id(g))
                out.append(g)
        return out

    def _is_centre(self, c: int, group: list[int]) -> bool:
        return all(self._verified(c, m) for m in group if m != c)

    def _make_cluster(self, group: list[int]) -> Cluster | None:
        cfg = self.config
        units = [self._units[u] for u in group]
        item_unit: dict[str, int] = {m: u.row for u in units for m in u.items}
        members = sorted(item_unit)
        # exact duplicates a reviewer marked "not duplicates": drop the most-marked (then larger) id
        nd = self._not_dup
        while nd:
            marks = {m: sum(1 for o in members if o in nd.get(m, ())) for m in members}
            worst = max(members, key=lambda m: (marks[m], m))
            if marks[worst] == 0:
                break
            members.remove(worst)
        if len(members) < 2:
            return None
        present = sorted({item_unit[m] for m in members}, key=lambda u: self._units[u].first)

        def score(a: str, b: str) -> float:
            ua, ub = item_unit[a], item_unit[b]
            return 100.0 if ua == ub else self._pair(ua, ub)[0]

        centres = {u for u in present if self._is_centre(u, present)} or set(present)
        n = len(members)
        by_unit_mean: dict[int, float] = {}
        for u in centres:
            m0 = next(m for m in members if item_unit[m] == u)
            by_unit_mean[u] = round(sum(score(m0, o) for o in members if o != m0) / (n - 1), 6)
        candidates = [m for m in members if item_unit[m] in centres]
        canonical = min(candidates, key=lambda m: (-by_unit_mean[item_unit[m]], -self._items[m].weight, m))
        if n <= cfg.max_reported_pairs_members:
            pairs = [(members[i], members[j]) for i in range(n) for j in range(i + 1, n)]
        else:
            pairs = [pair_key(canonical, m) for m in members if m != canonical]
        scores = {pair_key(a, b): round(score(a, b), 2) for a, b in pairs}
        unit_scores = [self._pair(present[i], present[j])[0]
                       for i in range(len(present)) for j in range(i + 1, len(present))]
        if len(present) < len(members):
            unit_scores.append(100.0)
        best, worst = round(max(unit_scores), 2), round(min(unit_scores), 2)
        fps = {self._units[u].fp for u in present}
        if len(present) == 1:
            method = "exact"
            explanation = f"{n} memories with the same normalised text."
        elif len(fps) == 1:
            method = "fingerprint"
            explanation = (f"{n} memories with the same words ignoring case, punctuation and order "
                           f"(score {worst:g}-{best:g}).")
        elif cfg.learned:
            method = "fuzzy"
            c = item_unit[canonical]
            other = max((u for u in present if u != c), key=lambda u: self._pair(c, u)[0])
            explanation = (f"{n} memories; learned pair scorer P(duplicate) >= {cfg.threshold / 100:.2f} between "
                           f"the canonical and every member (lowest {worst / 100:.2f}, highest {best / 100:.2f}); "
                           f"why: {self.verdict(c, other).explain()}.")
        else:
            method = "fuzzy"
            explanation = (f"{n} memories; content-word similarity (mean of token sort and token set ratio) "
                           f">= {cfg.threshold:g} between the canonical and every member and >= "
                           f"{cfg.cluster_floor:g} between any two (lowest {worst:g}, highest {best:g}); no "
                           f"differing identifier, negation, number or opposite predicate.")
        scope, typ = self._block_keys[units[0].block]
        digest = hashlib.sha1("\x1f".join([scope, typ, *members]).encode("utf-8")).hexdigest()[:16]
        return Cluster(cluster_id=f"dup-{digest}", scope_key=scope, type=typ, members=tuple(members),
                       canonical=canonical, best_score=best, scores=scores, method=method,
                       explanation=explanation, min_score=worst)


# ----------------------------------------------------------------------------------------------------
# Exhaustive reference (benchmarks and tests)
# ----------------------------------------------------------------------------------------------------


def exhaustive_pairs(items: Iterable[DedupeItem], config: DedupeConfig | None = None,
                     not_duplicates: Iterable[Iterable[str]] = (), guard: Guard | None = None,
                     timings: dict | None = None) -> set[tuple[str, str]]:
    """Every item pair ``(a, b)``, ``a < b``, of the same ``(scope_key, type)``, neither stale, whose
    score (:func:`score_keys` on match keys, ``rapidfuzz.process.cdist`` over each whole block, every
    item against every item) is ``>= threshold`` or whose fingerprints are equal, not in
    ``not_duplicates``, and -- unless their normalised texts are equal -- with no guard reason
    (:func:`guard_pairs`, same processes as the index). As in the index, the guard reads the
    representative text of each group of items with the same normalised text (:func:`_rep_rank`: the
    guard is case-sensitive, so "the invoice tests ... wiremock" and "The invoice tests ... WireMock" must
    not be judged differently). ``O(sum of squared block sizes)``: the reference the index's recall is
    measured against. ``timings``, when given, receives ``compare`` and ``guard`` seconds.
    """
    cfg = config or _DEFAULT_CONFIG
    if cfg.learned:
        # every pair of every block is a candidate, scored by the same learned scorer as the index
        items = list(items)
        big = max(Counter((i.scope_key, i.type) for i in items).values(), default=1)
        full = replace(cfg, top_n=big, max_top_n=big, min_cosine=0.0, embed_top_n=big, embed_min_cosine=-1.0,
                       max_df=1.0, max_df_min_count=10**9)
        t0 = time.perf_counter()
        ref = DedupeIndex(full, not_duplicates=not_duplicates)
        ref.build(items)
        if timings is not None:
            timings["compare"] = round(time.perf_counter() - t0, 3)
        return {(a, b) for a, b, _ in ref.verified_pairs()}
    cfg = config or DedupeConfig()
    guard = guard or material_difference_analyzed
    nd: set[frozenset[str]] = {frozenset(p) for p in not_duplicates}
    blocks: dict[tuple[str, str], list[DedupeItem]] = defaultdict(list)
    for it in _unique_items(items):
        if not it.stale:
            blocks[(it.scope_key, it.type)].append(it)
    t0 = time.perf_counter()
    texts: list[str] = []
    ids: list[str] = []
    ia: list[int] = []
    ib: list[int] = []
    out: set[tuple[str, str]] = set()
    for key in sorted(blocks):
        members = sorted(blocks[key], key=lambda i: i.memory_id)
        if len(members) < 2:
            continue
        base = len(texts)
        norms = [normalize(i.statement) for i in members]
        rep: dict[str, DedupeItem] = {}
        for it, nm in sorted(zip(members, norms), key=lambda x: _rep_rank(x[0])):
            rep.setdefault(nm, it)
        texts.extend(rep[nm].statement for nm in norms)
        ids.extend(i.memory_id for i in members)
        keys = [key_of_normalized(x) for x in norms]
        fps = [fingerprint_of_normalized(x) for x in norms]
        hit = _block_hits(keys, cfg)
        by_fp: dict[str, list[int]] = defaultdict(list)
        for i, f in enumerate(fps):
            by_fp[f].append(i)
        for idx in by_fp.values():
            if len(idx) > 1:
                hit[np.ix_(idx, idx)] = True
        ii, jj = np.nonzero(np.triu(hit, 1))
        for i, j in zip(ii.tolist(), jj.tolist()):
            a, b = members[i].memory_id, members[j].memory_id
            if frozenset((a, b)) in nd:
                continue
            if norms[i] == norms[j]:
                out.add(pair_key(a, b))
            else:
                ia.append(base + i), ib.append(base + j)
    t1 = time.perf_counter()
    reasons = guard_pairs(texts, ia, ib, guard, cfg.processes, cfg.parallel_min_pairs)
    for i, j, r in zip(ia, ib, reasons):
        if r is None:
            out.add(pair_key(ids[i], ids[j]))
    if timings is not None:
        timings["compare"] = round(t1 - t0, 3)
        timings["guard"] = round(time.perf_counter() - t1, 3)
    return out


# ----------------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------------


def _rep_rank(item: DedupeItem) -> tuple[int, str]:
    """Sort key choosing a unit's representative -- the text the guard analyses -- among items with the
    same normalised text: the most capital letters (identifiers stay recognisable: "OrderValidator",
    not "ordervalidator"), then the smallest memory id."""
    return (-sum(1 for c in item.statement if c.isupper()), item.memory_id)


class _PhaseClock:
    """Wall and CPU seconds per phase. CPU is this process's (all its threads: the top-n product and
    rapidfuzz run on ``workers`` threads) plus finished child processes' (the guard workers)."""

    def __init__(self) -> None:
        self.laps: list[tuple[str, float, float]] = []
        self._wall, self._cpu = time.perf_counter(), self._cpu_now()

    @staticmethod
    def _cpu_now() -> float:
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system

    def lap(self, name: str) -> None:
        wall, cpu = time.perf_counter(), self._cpu_now()
        self.laps.append((name, wall - self._wall, cpu - self._cpu))
        self._wall, self._cpu = wall, cpu

    def stats(self) -> dict[str, float]:
        out = {f"seconds_{n}": round(w, 3) for n, w, _ in self.laps}
        out.update({f"cpu_seconds_{n}": round(c, 3) for n, _, c in self.laps})
        return out


@contextmanager
def _gc_paused():
    """Pause the cyclic garbage collector: building the index allocates hundreds of thousands of
    long-lived objects, and the collector's full passes over them cost seconds at 100k statements.
    Nothing here creates reference cycles."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _unique_items(items: Iterable[DedupeItem]) -> list[DedupeItem]:
    """The items, the last one winning for a repeated memory id (input order otherwise kept)."""
    by_id: dict[str, DedupeItem] = {}
    for it in items:
        by_id.pop(it.memory_id, None)
        by_id[it.memory_id] = it
    return list(by_id.values())
