"""Static sentence embeddings without a network (issue 10, item 1).

WordLlama's ``l2_supercat`` 256-dimension token table and its tokenizer ship inside the
``wordllama`` wheel; they are loaded from the installed package with downloads disabled
(``HF_HUB_OFFLINE`` is set too). WordLlama's loader looks for the tokenizer under ``tokenizer/``
while the wheel has ``tokenizers/``, so the package folder is passed as its cache directory.

:func:`embed` ``(texts) -> float32 (n, 256)``, rows L2-normalised (a zero row for text without
tokens): the mean of the token vectors, as ``WordLlama.embed(norm=True)`` computes it, without
padding (a sparse count matrix times the token table, per batch).
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


_WORD_CACHE: dict[str, np.ndarray] = {}


def word_vectors(words: Sequence[str]) -> np.ndarray:
    """Unit vectors of single words (``(len(words), 256)`` float32; memoised per word, bounded)."""
    missing = [w for w in dict.fromkeys(words) if w not in _WORD_CACHE]
    if missing:
        E = embed(missing)
        if len(_WORD_CACHE) > 200_000:
            _WORD_CACHE.clear()
        _WORD_CACHE.update(zip(missing, E))
    if not words:
        return np.zeros((0, DIM), np.float32)
    return np.stack([_WORD_CACHE[w] for w in words])
