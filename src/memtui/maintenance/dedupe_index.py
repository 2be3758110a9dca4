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
* **TF-IDF candidates (stage 3).** Each unit's *match key* (:func:`match_key`) is turned into an
  L2-normalised TF-IDF vector of character n-grams inside word boundaries (``char_wb``, 3-4 characters,
  ``max_df`` cap on common n-grams; :class:`CharNgramTfidf`). The top ``top_n`` neighbours of every unit
  with cosine ``>= min_cosine`` *in its own block* come from one ``sparse_dot_topn.sp_matmul_topn``
  call: every (block, n-gram) pair is its own column, so vectors of different blocks are orthogonal and a
  large block elsewhere cannot crowd a unit's neighbour list.
* **Verification.** Every candidate pair is scored with rapidfuzz ``fuzz.token_sort_ratio`` on the match
  keys (0-100; batched with ``rapidfuzz.process.cpdist``). A pair is *verified* when the score is
  ``>= threshold`` (default 72) or the fingerprints are equal, the guard (``material_difference``) gives
  no reason, and no member pair of the two units is in ``not_duplicates``.
* **Clusters without chaining.** Inside each connected component of verified pairs, greedy
  complete-linkage: verified pairs are taken best score first and two groups merge only if (a) every
  cross pair *agrees* -- score ``>= cluster_floor`` (default 60) or equal fingerprints, no guard reason,
  not marked "not duplicates" -- and (b) the merged group has a *centre*, a unit verified (``>=
  threshold``) with every other unit. So A~B and B~C give {A, B, C} only if A and C also agree; otherwise
  the stronger pair wins and the third stays out. Groups are capped at ``max_cluster_units`` units.
* **Canonical.** Among the items of centre units, the one with the highest mean score to the other
  members; ties by higher ``weight`` (e.g. evidence count or confidence), then smaller memory id.

Why a match key and ``token_sort_ratio``: on ``tests/data/labelled_pairs.yaml`` the key (stop words
dropped, ordinary words cut to 5 characters so "registered"/"registry"/"register" meet, identifier-like
tokens kept whole) with ``token_sort_ratio >= 72`` plus the guard accepted 108 of 113 labelled
duplicates (the other five are refused by the guard) and no related or unrelated pair; the remaining
false positives are opposite-predicate conflicts ("enabled"/"disabled"), which the guard is meant to
catch. ``token_set_ratio`` scores a statement contained in a longer one as 100 and accepted 12+ related
pairs at any threshold that kept the duplicates.

Shapes and units
----------------
* scores are rapidfuzz similarities in ``[0, 100]`` (float, rounded to 2 decimals in :class:`Cluster`);
  cosines are in ``[0, 1]``.
* the TF-IDF matrix is ``(n_rows, n_features)`` ``float32`` CSR, one row per unit ever inserted (rows of
  removed units stay, unused, until the next :meth:`DedupeIndex.build`).
* ``add`` transforms only the new units with the fitted vocabulary and IDF, and computes
  ``new x (all units of the touched blocks)``; n-grams never seen at ``build`` time are ignored, so
  rebuild once the corpus has grown a lot (:attr:`DedupeIndex.rows_since_build`).

Output is deterministic: members sorted, cluster ids from the sorted member ids, clusters sorted by
(scope_key, type, members).
"""

from __future__ import annotations

import hashlib
import re
import time
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np
import scipy.sparse as sp
from rapidfuzz import fuzz, process
from sklearn.feature_extraction.text import TfidfTransformer
from sparse_dot_topn import sp_matmul_topn

from memtui.domain.statements import Analyzed, analyze, fingerprint, material_difference_analyzed, normalize

__all__ = [
    "DEFAULT_THRESHOLD", "DEFAULT_CLUSTER_FLOOR", "STOPWORDS", "DedupeItem", "DedupeConfig", "Cluster",
    "DedupeIndex", "CharNgramTfidf", "match_key", "exhaustive_pairs", "pair_key",
]

DEFAULT_THRESHOLD = 72.0
"""rapidfuzz ``token_sort_ratio`` on match keys (0-100) from which a candidate pair is a duplicate."""
DEFAULT_CLUSTER_FLOOR = 60.0
"""Lowest score any two members of one fuzzy cluster may have (complete-linkage bound)."""

METHODS = ("exact", "fingerprint", "fuzzy")


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
    * ``best_score`` / ``min_score`` -- highest / lowest score over member pairs (0-100);
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
    scorer: Callable[..., float] = fuzz.token_sort_ratio
    top_n: int = 12
    """TF-IDF neighbours kept per unit (self excluded)."""
    min_cosine: float = 0.2
    """TF-IDF cosine below which a neighbour is not a candidate."""
    ngram_range: tuple[int, int] = (3, 4)
    max_df: float = 0.02
    """N-grams in more than ``max(max_df * n_units, max_df_min_count)`` units are dropped (DESIGN note:
    no cap made the top-n product ~178 s on 100k templated statements, ``max_df`` ~0.02 ~2 s)."""
    max_df_min_count: int = 50
    max_cluster_units: int = 50
    max_fingerprint_group: int = 200
    """A fingerprint group larger than this contributes pairs among its first units (sorted) only."""
    max_reported_pairs_members: int = 25
    workers: int = 2
    """Threads for the top-n product and for rapidfuzz."""


def pair_key(a: str, b: str) -> tuple[str, str]:
    """The ``(smaller, larger)`` id pair used as a key in :attr:`Cluster.scores`."""
    return (a, b) if a <= b else (b, a)


# ----------------------------------------------------------------------------------------------------
# Match key
# ----------------------------------------------------------------------------------------------------

STOPWORDS = frozenset(
    "a an the is are was were be been being to of in on at by for with via through from as and or that "
    "this these those it its into per each all any should must can will would may might do does did has "
    "have had uses use used using".split()
)
"""Dropped from match keys. Negations ("not", "never", "no") are deliberately *not* here."""

_WORD = re.compile(r"\w+")
_PREFIX = 5


def _identifier_like(tok: str) -> bool:
    return (
        any(c.isupper() for c in tok[1:])
        or "_" in tok
        or any(c.isdigit() for c in tok)
        or (len(tok) >= 2 and tok.isupper())
    )


def match_key(text: str) -> str:
    """The string scored by rapidfuzz and vectorised by TF-IDF: NFKC word tokens, casefolded; stop words
    dropped; identifier-like tokens (inner capitals, ``_``, digits, ALLCAPS) kept whole; other words cut
    to their first 5 characters (a crude stemmer: registered/registry/register -> "regis").

    >>> match_key("Rules are registered through RuleRegistry.")
    'rules regis ruleregistry'
    """
    out = []
    for tok in _WORD.findall(unicodedata.normalize("NFKC", text or "")):
        if _identifier_like(tok):
            out.append(tok.casefold())
            continue
        low = tok.casefold()
        if low in STOPWORDS:
            continue
        out.append(low[:_PREFIX])
    return " ".join(out)


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

    ``fit_transform(docs) -> (len(docs), n_features)`` CSR float32; ``transform(docs)`` uses the fitted
    alphabet, vocabulary and IDF (unseen n-grams are ignored).
    """

    def __init__(self, ngram_range: tuple[int, int] = (3, 4), max_df: float = 0.02, max_df_min_count: int = 50):
        lo, hi = ngram_range
        if not (2 <= lo <= hi <= 4):
            raise ValueError("ngram_range must satisfy 2 <= min <= max <= 4")
        self.ngram_range = (lo, hi)
        self.max_df = max_df
        self.max_df_min_count = max_df_min_count
        self.alphabet_: np.ndarray | None = None  # sorted code points (space and NUL excluded)
        self.vocabulary_: np.ndarray | None = None  # sorted int64 n-gram keys, one per column
        self.tfidf_: TfidfTransformer | None = None

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
        codes = np.searchsorted(self.alphabet_, cp).astype(np.int64)
        np.minimum(codes, len(self.alphabet_) - 1 if len(self.alphabet_) else 0, out=codes)
        known = self.alphabet_[codes] == cp if len(self.alphabet_) else np.zeros(len(cp), bool)
        codes = np.where(known, codes + 3, 2)
        is_nul = cp == 0
        is_space = cp == 32
        codes[is_nul] = 0
        codes[is_space] = 1
        n_chars = len(cp)
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
            p = np.arange(m)
            valid = (nul_cum[p + n] - nul_cum[p] == 0) & (sp_cum[p + n - 1] - sp_cum[np.minimum(p + 1, p + n - 1)] == 0)
            p = p[valid]
            key = np.zeros(len(p), np.int64)
            for i in range(n):
                key = key * b + codes[p + i]
            rows.append(doc_of[p])
            keys.append(key + self._offset(n))
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
        cp = np.unique(np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32))
        self.alphabet_ = cp[(cp != 0) & (cp != 32)]
        if self._base ** self.ngram_range[1] * 2 >= 2**62:
            raise ValueError("alphabet too large for 64-bit n-gram keys")
        rows, keys = self._keys(docs)
        vocab, cols = np.unique(keys, return_inverse=True)
        counts = self._counts(docs, rows, cols, len(vocab))
        df = np.bincount(counts.indices, minlength=len(vocab))
        cap = max(self.max_df * len(docs), self.max_df_min_count)
        keep = df <= cap
        self.vocabulary_ = vocab[keep]
        counts = _select_columns(counts, keep)
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


def _select_columns(m: sp.csr_matrix, keep: np.ndarray) -> sp.csr_matrix:
    """``m[:, keep]`` for a boolean mask, without scipy's general fancy indexing."""
    new_index = np.cumsum(keep) - 1
    mask = keep[m.indices]
    row_of = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
    rows = row_of[mask]
    indptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=m.shape[0]))))
    return sp.csr_matrix((m.data[mask], new_index[m.indices[mask]], indptr), shape=(m.shape[0], int(keep.sum())))


def blocked_topn(Q: sp.csr_matrix, q_blocks: np.ndarray, R: sp.csr_matrix, r_blocks: np.ndarray, top_n: int,
                 min_cosine: float, workers: int = 1, max_df: float = 1.0, max_df_min_count: int = 0
                 ) -> sp.coo_matrix:
    """For each row of ``Q`` (``nq x V``), its ``top_n`` most similar rows of ``R`` (``nr x V``) *in the
    same block* with cosine ``>= min_cosine`` (rows are L2-normalised, so the dot product is the cosine
    before the cap below).

    Columns are re-keyed to (block, feature) pairs, which makes rows of different blocks orthogonal, so one
    ``sp_matmul_topn`` call serves every block. ``R`` must hold *every* row of the blocks it touches: an
    n-gram in more than ``max(max_df * block rows, max_df_min_count)`` rows of its block is dropped there
    (the product's cost is the sum over columns of the squared column counts; DESIGN.md: ~178 s uncapped,
    ~2 s with ``max_df`` 0.02 on 100k templated statements in one scope). Small blocks keep every n-gram.
    Returns an ``nq x nr`` COO matrix of cosines.
    """
    nq, nr = Q.shape[0], R.shape[0]
    if nq == 0 or nr == 0 or R.nnz == 0 or Q.nnz == 0:
        return sp.coo_matrix((nq, nr), dtype=np.float32)
    V = np.int64(max(Q.shape[1], 1))
    r_row = np.repeat(np.arange(nr), np.diff(R.indptr))
    rb = r_blocks[r_row].astype(np.int64)
    rkeys = rb * V + R.indices
    uk, rcol = np.unique(rkeys, return_inverse=True)
    if max_df < 1.0:
        df = np.bincount(rcol, minlength=len(uk))
        blocks, block_rows = np.unique(r_blocks, return_counts=True)
        col_block = uk // V
        cap = np.maximum(max_df * block_rows[np.searchsorted(blocks, col_block)], max_df_min_count)
        keep_col = df <= cap
        if not keep_col.all():
            uk = uk[keep_col]
            keep = keep_col[rcol]
            rcol = (np.cumsum(keep_col) - 1)[rcol[keep]]
            r_row = r_row[keep]
            R_data = R.data[keep]
        else:
            R_data = R.data
    else:
        R_data = R.data
    K = len(uk)
    if K == 0:
        return sp.coo_matrix((nq, nr), dtype=np.float32)
    BT = sp.csr_matrix((R_data, (rcol, r_row)), shape=(K, nr))  # (block, feature) x R rows
    q_row = np.repeat(np.arange(nq), np.diff(Q.indptr))
    qkeys = q_blocks[q_row].astype(np.int64) * V + Q.indices
    pos = np.minimum(np.searchsorted(uk, qkeys), K - 1)
    ok = uk[pos] == qkeys
    A = sp.csr_matrix((Q.data[ok], (q_row[ok], pos[ok])), shape=(nq, K))
    threads = workers if workers and workers > 1 else None
    C = sp_matmul_topn(A, BT, top_n=top_n, threshold=float(min_cosine) - 1e-6, n_threads=threads)
    return C.tocoo()


# ----------------------------------------------------------------------------------------------------
# The index
# ----------------------------------------------------------------------------------------------------


class _Unit:
    """Items of one block with the same normalised text."""

    __slots__ = ("row", "block", "norm", "items", "text", "key", "fp", "_an")

    def __init__(self, row: int, block: int, norm: str, text: str):
        self.row = row
        self.block = block
        self.norm = norm
        self.items: list[str] = []
        self.text = text
        self.key = match_key(text)
        self.fp = fingerprint(text)
        self._an: Analyzed | None = None

    @property
    def analyzed(self) -> Analyzed:
        if self._an is None:
            self._an = analyze(self.text)
        return self._an

    @property
    def first(self) -> str:
        return self.items[0]


@dataclass(frozen=True)
class _PairInfo:
    score: float
    fp_equal: bool
    reason: str | None  # guard reason or "marked not duplicates"

    def agrees(self, floor: float) -> bool:
        return self.reason is None and (self.fp_equal or self.score >= floor)


class DedupeIndex:
    """Near-duplicate index over :class:`DedupeItem` rows (see the module docstring for the rule).

    >>> idx = DedupeIndex()
    >>> idx.build(items)                   # full build: vectorizer fitted, all pairs, all clusters
    >>> idx.clusters()                     # list[Cluster], sorted
    >>> idx.add(new_items)                 # incremental: returns new or changed clusters
    >>> idx.remove(["m-17"])               # returns changed clusters; ``last_dropped`` the ids gone
    >>> idx.mark_not_duplicates([frozenset({"m-1", "m-2"})])

    ``guard(x, y) -> str | None`` gives the reason two analysed statements must not be merged
    (default :func:`memtui.domain.statements.material_difference_analyzed`).
    """

    def __init__(self, config: DedupeConfig | None = None, not_duplicates: Iterable[Iterable[str]] = (),
                 guard: Callable[[Analyzed, Analyzed], str | None] | None = None):
        self.config = config or DedupeConfig()
        self.guard = guard or material_difference_analyzed
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
        self._units_by_fp: dict[tuple[int, str], set[int]] = defaultdict(set)
        self._block_ids: dict[tuple[str, str], int] = {}
        self._block_keys: list[tuple[str, str]] = []
        self._block_units: dict[int, set[int]] = defaultdict(set)
        self._vec: CharNgramTfidf | None = None
        self._X: sp.csr_matrix | None = None
        self._row_block = np.zeros(0, np.int64)
        self._next_row = 0
        self._adj: dict[int, dict[int, float]] = defaultdict(dict)
        self._pair_cache: dict[tuple[int, int], _PairInfo] = {}
        self._clusters: dict[str, Cluster] = {}
        self._unit_cluster: dict[int, str] = {}
        self.last_dropped: list[str] = []
        """Cluster ids that ceased to exist in the last build/add/remove/mark call."""
        self.rows_since_build = 0
        """Units transformed by ``add`` with the vocabulary fitted at ``build``."""
        self.stats: dict[str, float] = {}
        """Sizes and phase timings (seconds) of the last ``build``."""

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
        """Index ``items`` from scratch (fits the vectorizer) and return all clusters (sorted)."""
        self._reset()
        t0 = time.perf_counter()
        items = _unique_items(items)
        new_units = self._insert(sorted(items, key=lambda i: (i.scope_key, i.type, normalize(i.statement), i.memory_id)))
        rows = np.array(sorted(new_units), np.int64)
        units = [self._units[r] for r in rows.tolist()]
        cfg = self.config
        self._vec = CharNgramTfidf(cfg.ngram_range, max_df=1.0, max_df_min_count=0)  # capped per block
        t1 = time.perf_counter()
        X = self._vec.fit_transform([u.key for u in units])
        if not units:
            self._vec = None  # nothing fitted: the next ``add`` builds
        self._X = X  # row id == row of X: units are created in this (sorted) order, rows 0..n-1
        self._row_block = np.full(self._next_row, -1, np.int64)
        self._row_block[rows] = [u.block for u in units]
        t2 = time.perf_counter()
        pairs = self._candidates(rows, rows)
        t3 = time.perf_counter()
        self._verify_and_link(pairs)
        t4 = time.perf_counter()
        self._clusters, self._unit_cluster = {}, {}
        self._recluster(set(self._units))
        t5 = time.perf_counter()
        self.last_dropped = []
        self.stats = {"items": len(self._items), "units": len(self._units), "blocks": len(self._block_keys),
                      "features": self._X.shape[1], "candidate_pairs": int(len(pairs)),
                      "verified_unit_pairs": sum(len(v) for v in self._adj.values()) // 2,
                      "seconds_prepare": round(t1 - t0, 3), "seconds_vectorize": round(t2 - t1, 3),
                      "seconds_candidates": round(t3 - t2, 3), "seconds_verify": round(t4 - t3, 3),
                      "seconds_cluster": round(t5 - t4, 3)}
        return self.clusters()

    def add(self, new_items: Iterable[DedupeItem]) -> list[Cluster]:
        """Check ``new_items`` against the index without a rebuild; return the new or changed clusters
        (sorted). An item whose id is already indexed replaces the old version. Needs a prior ``build``
        (an empty index is built from ``new_items``)."""
        new_items = _unique_items(new_items)
        if self._vec is None:  # never built
            before = set(self._clusters)
            self.build([*self._items.values(), *new_items])
            return [c for c in self.clusters() if c.cluster_id not in before]
        affected: set[int] = set()
        replaced = [i.memory_id for i in new_items if i.memory_id in self._items]
        if replaced:
            affected |= self._detach(replaced)
        new_units = self._insert(new_items)
        joined = {self._item_unit[i.memory_id] for i in new_items if i.memory_id in self._item_unit}
        affected |= joined
        fresh = sorted(new_units)
        if fresh:
            Xn = self._vec.transform([self._units[r].key for r in fresh])
            self.rows_since_build += len(fresh)
            # new rows are consecutive ids right after the matrix's last row
            assert fresh[0] == self._X.shape[0] and fresh[-1] == self._next_row - 1
            self._X = sp.vstack([self._X, Xn], format="csr")
            self._row_block = np.concatenate([self._row_block, [self._units[r].block for r in fresh]]).astype(np.int64)
            blocks = {self._units[r].block for r in fresh}
            ref = np.array(sorted(r for b in blocks for r in self._block_units[b]), np.int64)
            pairs = self._candidates(np.array(fresh, np.int64), ref)
            self._verify_and_link(pairs)
        changed, dropped = self._recluster(affected | set(fresh))
        self.last_dropped = dropped
        return changed

    def remove(self, memory_ids: Iterable[str]) -> list[Cluster]:
        """Forget ``memory_ids`` (unknown ids are ignored); return the clusters that changed and still
        exist (sorted). ``last_dropped`` lists the cluster ids that no longer exist."""
        ids = [m for m in dict.fromkeys(memory_ids) if m in self._items]
        affected = self._detach(ids)
        changed, dropped = self._recluster(affected)
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
                        for b in self._units[v].items:
                            out.append((*pair_key(a, b), round(score, 2)))
        out.sort()
        return out

    # -- insertion / removal ---------------------------------------------------------------------------

    def _insert(self, items: Sequence[DedupeItem]) -> set[int]:
        """Record items; return the rows of units created. Stale items are stored, not unitised."""
        created: set[int] = set()
        for it in items:
            self._items[it.memory_id] = it
            if it.stale:
                continue
            block = self._block(it)
            norm = normalize(it.statement)
            k = (block, norm)
            row = self._unit_by_norm.get(k)
            if row is None:
                row = self._next_row
                self._next_row += 1
                unit = self._units[row] = _Unit(row, block, norm, it.statement)
                self._unit_by_norm[k] = row
                self._units_by_fp[(block, unit.fp)].add(row)
                self._block_units[block].add(row)
                created.add(row)
            unit = self._units[row]
            _insort(unit.items, it.memory_id)
            self._item_unit[it.memory_id] = row
        return created

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
                continue
            # the unit is gone: its neighbours' clusters change
            for v in list(self._adj.get(row, {})):
                affected.add(v)
                self._adj[v].pop(row, None)
            self._adj.pop(row, None)
            del self._units[row]
            del self._unit_by_norm[(unit.block, unit.norm)]
            fp_set = self._units_by_fp[(unit.block, unit.fp)]
            fp_set.discard(row)
            if not fp_set:
                del self._units_by_fp[(unit.block, unit.fp)]
            self._block_units[unit.block].discard(row)
        if ids:
            self._pair_cache.clear()
        return affected

    # -- candidates and verification ---------------------------------------------------------------------

    def _candidates(self, q_rows: np.ndarray, r_rows: np.ndarray) -> np.ndarray:
        """Candidate unit pairs ``(u, v)``, ``u < v``, int64 ``(m, 2)``: fingerprint groups touching
        ``q_rows`` and TF-IDF top-n neighbours of ``q_rows`` among ``r_rows`` (same block)."""
        cfg = self.config
        chunks: list[np.ndarray] = []
        q_set = set(q_rows.tolist())
        seen_fp: set[tuple[int, str]] = set()
        fp_pairs: list[tuple[int, int]] = []
        for r in q_rows.tolist():
            u = self._units[r]
            k = (u.block, u.fp)
            if k in seen_fp:
                continue
            seen_fp.add(k)
            group = sorted(self._units_by_fp.get(k, ()), key=lambda x: self._units[x].first)
            if len(group) < 2:
                continue
            group = group[: cfg.max_fingerprint_group] if len(group) > cfg.max_fingerprint_group else group
            for i in range(len(group)):
                for j in range(i + 1, len(group)):
                    if group[i] in q_set or group[j] in q_set:
                        fp_pairs.append((group[i], group[j]))
        if fp_pairs:
            chunks.append(np.array(fp_pairs, np.int64))
        if len(q_rows) and len(r_rows) and self._X is not None and self._X.shape[1]:
            Q = self._X[q_rows]
            R = Q if q_rows is r_rows else self._X[r_rows]
            C = blocked_topn(Q, self._row_block[q_rows], R, self._row_block[r_rows], cfg.top_n + 1,
                             cfg.min_cosine, cfg.workers, cfg.max_df, cfg.max_df_min_count)
            a, b = q_rows[C.row], r_rows[C.col]
            keep = a != b
            chunks.append(np.stack([a[keep], b[keep]], axis=1))
        if not chunks:
            return np.zeros((0, 2), np.int64)
        pairs = np.concatenate(chunks)
        pairs = np.sort(pairs, axis=1)
        return np.unique(pairs, axis=0)

    def _cannot_link(self, u: _Unit, v: _Unit) -> bool:
        nd = self._not_dup
        if not nd:
            return False
        for a in u.items:
            marked = nd.get(a)
            if marked and any(b in marked for b in v.items):
                return True
        return False

    def _verify_and_link(self, pairs: np.ndarray) -> None:
        """Score candidate pairs (batched rapidfuzz), apply the guards, store verified pairs as edges."""
        if not len(pairs):
            return
        cfg = self.config
        units = self._units
        us = [units[r] for r in pairs[:, 0].tolist()]
        vs = [units[r] for r in pairs[:, 1].tolist()]
        scores = process.cpdist([u.key for u in us], [v.key for v in vs], scorer=cfg.scorer,
                                workers=cfg.workers, dtype=np.float32)
        fp_equal = np.fromiter((u.fp == v.fp for u, v in zip(us, vs)), bool, len(us))
        for i in np.flatnonzero((scores >= cfg.threshold) | fp_equal).tolist():
            u, v = us[i], vs[i]
            if self._cannot_link(u, v):
                continue
            if self.guard(u.analyzed, v.analyzed) is not None:
                continue
            s = float(scores[i])
            self._adj[u.row][v.row] = s
            self._adj[v.row][u.row] = s

    def _pair(self, u: int, v: int) -> _PairInfo:
        """Score, fingerprint equality and guard of two units (cached)."""
        k = (u, v) if u < v else (v, u)
        info = self._pair_cache.get(k)
        if info is None:
            a, b = self._units[k[0]], self._units[k[1]]
            if k[1] in self._adj.get(k[0], {}):
                score = self._adj[k[0]][k[1]]
            else:
                score = float(np.float32(self.config.scorer(a.key, b.key)))
            if self._cannot_link(a, b):
                reason = "marked not duplicates"
            else:
                reason = self.guard(a.analyzed, b.analyzed)
            info = self._pair_cache[k] = _PairInfo(score, a.fp == b.fp, reason)
        return info

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
        old_ids = {self._unit_cluster[u] for u in seeds if u in self._unit_cluster}
        comps = self._components(seeds)
        for comp in comps:
            for u in comp:
                cid = self._unit_cluster.get(u)
                if cid:
                    old_ids.add(cid)
        old = {cid: self._clusters[cid] for cid in old_ids if cid in self._clusters}
        for cid, c in old.items():
            del self._clusters[cid]
        for u in [u for u, cid in self._unit_cluster.items() if cid in old]:
            del self._unit_cluster[u]
        new: list[Cluster] = []
        for comp in comps:
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
        order of score (desc), then the units' smallest member ids."""
        cfg = self.config
        units = self._units
        if len(comp) == 1:
            return [comp]
        first = {u: units[u].first for u in comp}
        edges = sorted(
            ((-s, *sorted((first[u], first[v])), u, v) for u in comp for v, s in self._adj[u].items() if u < v),
        )
        group_of: dict[int, list[int]] = {u: [u] for u in comp}
        for _neg, _a, _b, u, v in edges:
            gu, gv = group_of[u], group_of[v]
            if gu is gv or len(gu) + len(gv) > cfg.max_cluster_units:
                continue
            if not all(self._pair(a, b).agrees(cfg.cluster_floor) for a in gu for b in gv):
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

    def _verified(self, u: int, v: int) -> bool:
        info = self._pair(u, v)
        return info.reason is None and (info.fp_equal or info.score >= self.config.threshold)

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
        present = set(members)
        groups_present = sorted({item_unit[m] for m in members})

        def score(a: str, b: str) -> float:
            ua, ub = item_unit[a], item_unit[b]
            return 100.0 if ua == ub else self._pair(ua, ub).score

        centres = {u for u in groups_present if self._is_centre(u, groups_present)}
        n = len(members)
        # mean score of each candidate to the others: a unit's items share their scores
        mean: dict[str, float] = {}
        for m in members:
            if item_unit[m] not in centres:
                continue
            mean[m] = sum(score(m, o) for o in members if o != m) / (n - 1)
        weight = {m: self._items[m].weight for m in members}
        canonical = min(mean, key=lambda m: (-round(mean[m], 6), -weight[m], m))
        if n <= cfg.max_reported_pairs_members:
            pairs = [(members[i], members[j]) for i in range(n) for j in range(i + 1, n)]
        else:
            pairs = [pair_key(canonical, m) for m in members if m != canonical]
        scores = {pair_key(a, b): round(score(a, b), 2) for a, b in pairs}
        all_scores = [score(members[i], members[j]) for i in range(n) for j in range(i + 1, n)] \
            if n <= cfg.max_reported_pairs_members else list(scores.values())
        best, worst = round(max(all_scores), 2), round(min(all_scores), 2)
        fps = {self._units[u].fp for u in groups_present}
        if len(groups_present) == 1:
            method = "exact"
            explanation = f"{n} memories with the same normalised text."
        elif len(fps) == 1:
            method = "fingerprint"
            explanation = (f"{n} memories with the same words ignoring case, punctuation and order "
                           f"(token_sort_ratio {worst:g}-{best:g}).")
        else:
            method = "fuzzy"
            explanation = (f"{n} memories; token_sort_ratio on content words >= {cfg.threshold:g} between the "
                           f"canonical and every member, every pair >= {cfg.cluster_floor:g} (lowest {worst:g}, "
                           f"highest {best:g}); no differing identifier, negation or number.")
        scope, typ = self._block_keys[units[0].block]
        digest = hashlib.sha1("\x1f".join([scope, typ, *members]).encode("utf-8")).hexdigest()[:16]
        return Cluster(cluster_id=f"dup-{digest}", scope_key=scope, type=typ, members=tuple(members),
                       canonical=canonical, best_score=best, scores=scores, method=method,
                       explanation=explanation, min_score=worst)


# ----------------------------------------------------------------------------------------------------
# Exhaustive reference (benchmarks and tests)
# ----------------------------------------------------------------------------------------------------


def exhaustive_pairs(items: Iterable[DedupeItem], config: DedupeConfig | None = None,
                     not_duplicates: Iterable[Iterable[str]] = (),
                     guard: Callable[[Analyzed, Analyzed], str | None] | None = None) -> set[tuple[str, str]]:
    """Every item pair ``(a, b)``, ``a < b``, of the same ``(scope_key, type)``, neither stale, whose
    score (the configured rapidfuzz scorer on match keys, computed with ``rapidfuzz.process.cdist`` per
    block) is ``>= threshold`` or whose normalised texts or fingerprints are equal, and that passes the
    same guard and ``not_duplicates``. ``O(sum of block sizes squared)``: the reference the index's
    recall is measured against.
    """
    cfg = config or DedupeConfig()
    guard = guard or material_difference_analyzed
    nd: set[frozenset[str]] = {frozenset(p) for p in not_duplicates}
    blocks: dict[tuple[str, str], list[DedupeItem]] = defaultdict(list)
    for it in _unique_items(items):
        if not it.stale:
            blocks[(it.scope_key, it.type)].append(it)
    out: set[tuple[str, str]] = set()
    cache: dict[str, Analyzed] = {}

    def an(it: DedupeItem) -> Analyzed:
        a = cache.get(it.memory_id)
        if a is None:
            a = cache[it.memory_id] = analyze(it.statement)
        return a

    for members in blocks.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda i: i.memory_id)
        keys = [match_key(i.statement) for i in members]
        norms = [normalize(i.statement) for i in members]
        fps = [fingerprint(i.statement) for i in members]
        m = process.cdist(keys, keys, scorer=cfg.scorer, score_cutoff=cfg.threshold, dtype=np.float32,
                          workers=cfg.workers)
        hit = m >= cfg.threshold
        by_fp: dict[str, list[int]] = defaultdict(list)
        for i, f in enumerate(fps):
            by_fp[f].append(i)
        for idx in by_fp.values():
            if len(idx) > 1:
                hit[np.ix_(idx, idx)] = True
        ii, jj = np.nonzero(np.triu(hit, 1))
        for i, j in zip(ii.tolist(), jj.tolist()):
            a, b = members[i], members[j]
            if frozenset((a.memory_id, b.memory_id)) in nd:
                continue
            if norms[i] != norms[j] and guard(an(a), an(b)) is not None:
                continue
            out.add(pair_key(a.memory_id, b.memory_id))
    return out


# ----------------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------------


def _unique_items(items: Iterable[DedupeItem]) -> list[DedupeItem]:
    """The items, the last one winning for a repeated memory id (input order otherwise kept)."""
    by_id: dict[str, DedupeItem] = {}
    for it in items:
        by_id.pop(it.memory_id, None)
        by_id[it.memory_id] = it
    return list(by_id.values())


def _insort(lst: list[str], x: str) -> None:
    import bisect

    bisect.insort(lst, x)
