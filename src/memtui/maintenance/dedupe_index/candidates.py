"""Candidate generation: TF-IDF character n-grams and blocked top-n neighbours
(:mod:`memtui.maintenance.dedupe_index`; embedding neighbours: :mod:`memtui.similarity.candidates`)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp


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
