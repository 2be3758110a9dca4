"""Static sentence embeddings without a network (issue 10, item 1).

WordLlama's ``l2_supercat`` 256-dimension token table and its tokenizer ship inside the
``wordllama`` wheel; they are loaded from the installed package with downloads disabled
(``HF_HUB_OFFLINE`` is set too). WordLlama's loader looks for the tokenizer under ``tokenizer/``
while the wheel has ``tokenizers/``, so the package folder is passed as its cache directory.

:func:`embed` ``(texts) -> float32 (n, 256)``, rows L2-normalised (a zero row for text without
tokens): the mean of the token vectors, as ``WordLlama.embed(norm=True)`` computes it, without
padding (a sparse count matrix times the token table, per batch). :func:`word_ids` / :func:`word_table`:
the embeddings of single words, one table row per distinct word.
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np
import scipy.sparse as sp

DIM = 256
_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _model():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import wordllama
    from wordllama import WordLlama

    with _LOCK:
        wl = WordLlama.load(config="l2_supercat", dim=DIM, cache_dir=Path(wordllama.__file__).parent,
                            disable_download=True)
    tok = wl.tokenizer
    tok.no_padding()
    tok.no_truncation()
    return tok, np.ascontiguousarray(wl.embedding, dtype=np.float32)


def embed(texts: Sequence[str], batch: int = 8192) -> np.ndarray:
    """Embeddings of ``texts``: float32 ``(len(texts), 256)``, unit rows (zero rows for empty text)."""
    tok, table = _model()
    out = np.zeros((len(texts), table.shape[1]), np.float32)
    top = table.shape[0] - 1
    for s in range(0, len(texts), batch):
        chunk = [t or "" for t in texts[s:s + batch]]
        enc = tok.encode_batch(chunk, add_special_tokens=False)
        lens = np.fromiter((len(e.ids) for e in enc), np.int64, len(enc))
        if not lens.sum():
            continue
        ids = np.clip(np.fromiter((i for e in enc for i in e.ids), np.int64, int(lens.sum())), 0, top)
        indptr = np.concatenate([[0], np.cumsum(lens)])
        counts = sp.csr_matrix((np.ones(len(ids), np.float32), ids, indptr), shape=(len(chunk), top + 1))
        sums = np.asarray(counts @ table, dtype=np.float32)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        out[s:s + len(chunk)] = sums / np.maximum(norms, 1e-12)
    return out


class _WordTable:
    """Unit vectors of single words, one row per distinct word seen (grown by doubling, never shrunk):
    pair features gather the rows of both statements' words in bulk."""

    def __init__(self) -> None:
        self.rows: dict[str, int] = {}
        self.table = np.zeros((1024, DIM), np.float32)
        self.lock = threading.Lock()

    def ids(self, words: Sequence[str]) -> np.ndarray:
        rows = self.rows
        missing = [w for w in dict.fromkeys(words) if w not in rows]
        if missing:
            E = embed(missing)
            with self.lock:
                fresh = [(w, e) for w, e in zip(missing, E) if w not in rows]
                n = len(rows)
                if n + len(fresh) > len(self.table):
                    grown = np.zeros((max(2 * len(self.table), n + len(fresh)), DIM), np.float32)
                    grown[:n] = self.table[:n]
                    self.table = grown
                for k, (w, e) in enumerate(fresh):
                    self.table[n + k] = e
                    rows[w] = n + k
        return np.fromiter((rows[w] for w in words), np.int32, len(words))


_WORDS = _WordTable()


def word_ids(words: Sequence[str]) -> np.ndarray:
    """Rows of :func:`word_table` for ``words`` (int32, ``len(words)``), embedding the words not seen yet."""
    return _WORDS.ids(words)


def word_table() -> np.ndarray:
    """The word vectors (float32, rows of :func:`word_ids`; unit rows, zero for a word without tokens)."""
    return _WORDS.table
