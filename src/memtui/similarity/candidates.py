"""Semantic candidate pairs (issue 10, items 1 and 4): nearest neighbours by embedding cosine within
a block (a scope), bounded per row, by blocked matrix products.

:func:`knn_pairs` ``(E, q_rows, r_rows, blocks, top_n, min_cosine) -> (a, b, cos)``: for each query
row, its ``top_n`` most similar reference rows of the same block (itself excluded) with cosine
``>= min_cosine``; ``E`` holds unit rows (:func:`memtui.similarity.embed.embed`), ``blocks[row]`` the
block id. Pairs come out as ``a < b``, unique; cost ``sum over blocks of |Q_b| x |R_b| x 256``.
``with_query=True`` adds a fourth array: how many neighbours each query row got (``len(q_rows)``).
"""

from __future__ import annotations

import numpy as np

CHUNK = 2048


def knn_pairs(E: np.ndarray, q_rows: np.ndarray, r_rows: np.ndarray, blocks: np.ndarray, top_n: int,
              min_cosine: float, with_query: bool = False):
    q_rows, r_rows = np.asarray(q_rows, np.int64), np.asarray(r_rows, np.int64)
    out_a, out_b, out_c = [], [], []
    got = np.zeros(len(q_rows), np.int64)
    pos = {int(r): i for i, r in enumerate(q_rows.tolist())} if with_query else {}
    if not len(q_rows) or not len(r_rows) or top_n <= 0:
        z = np.zeros(0, np.int64)
        return (z, z, np.zeros(0, np.float32)) + ((got,) if with_query else ())
    qb, rb = blocks[q_rows], blocks[r_rows]
    r_order = np.argsort(rb, kind="stable")
    r_sorted, rb_sorted = r_rows[r_order], rb[r_order]
    for blk in np.unique(qb):
        lo, hi = np.searchsorted(rb_sorted, blk), np.searchsorted(rb_sorted, blk, "right")
        ref = r_sorted[lo:hi]
        if len(ref) < 2 and not (len(ref) == 1 and ref[0] not in q_rows):
            continue
        R = E[ref]
        qs = q_rows[qb == blk]
        k = min(top_n + 1, len(ref))
        for s in range(0, len(qs), CHUNK):
            q = qs[s:s + CHUNK]
            S = E[q] @ R.T
            S[q[:, None] == ref[None, :]] = -1.0
            idx = np.argpartition(-S, k - 1, axis=1)[:, :k] if k < len(ref) else np.tile(np.arange(len(ref)), (len(q), 1))
            cos = np.take_along_axis(S, idx, axis=1)
            keep = cos >= min_cosine
            rows = np.repeat(q, idx.shape[1])[keep.ravel()]
            if with_query:
                got[[pos[int(r)] for r in q.tolist()]] = keep.sum(axis=1)
            cols = ref[idx.ravel()[keep.ravel()]]
            out_a.append(np.minimum(rows, cols))
            out_b.append(np.maximum(rows, cols))
            out_c.append(cos.ravel()[keep.ravel()].astype(np.float32))
    if not out_a:
        z = np.zeros(0, np.int64)
        return (z, z, np.zeros(0, np.float32)) + ((got,) if with_query else ())
    a, b, c = np.concatenate(out_a), np.concatenate(out_b), np.concatenate(out_c)
    ok = a != b
    a, b, c = a[ok], b[ok], c[ok]
    codes = a * (int(max(a.max(initial=0), b.max(initial=0))) + 1) + b
    _, first = np.unique(codes, return_index=True)
    return (a[first], b[first], c[first]) + ((got,) if with_query else ())


def knn_lists(E: np.ndarray, q_rows: np.ndarray, r_rows: np.ndarray, blocks: np.ndarray, top_n: int,
              min_cosine: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each query row's neighbour list, best first: its ``top_n`` most similar reference rows of the same
    block (itself excluded) with cosine ``>= min_cosine``. Returns ``(q, nbr, cos, rank)``, one entry per
    neighbour: the query's position in ``q_rows``, the neighbour's row, the cosine and its rank in the
    query's list (0 = nearest); so a shorter list is a prefix (``rank < n``) without asking again."""
    q_rows, r_rows = np.asarray(q_rows, np.int64), np.asarray(r_rows, np.int64)
    out_q, out_n, out_c, out_r = [], [], [], []
    if len(q_rows) and len(r_rows) and top_n > 0:
        qb, rb = blocks[q_rows], blocks[r_rows]
        r_order = np.argsort(rb, kind="stable")
        r_sorted, rb_sorted = r_rows[r_order], rb[r_order]
        q_order = np.argsort(qb, kind="stable")
        qb_sorted = qb[q_order]
        for blk in np.unique(qb):
            lo, hi = np.searchsorted(rb_sorted, blk), np.searchsorted(rb_sorted, blk, "right")
            ref = r_sorted[lo:hi]
            if not len(ref):
                continue
            R = E[ref]
            qlo, qhi = np.searchsorted(qb_sorted, blk), np.searchsorted(qb_sorted, blk, "right")
            qpos = q_order[qlo:qhi]
            k = min(top_n + 1, len(ref))
            for s in range(0, len(qpos), CHUNK):
                qp = qpos[s:s + CHUNK]
                q = q_rows[qp]
                S = E[q] @ R.T
                S[q[:, None] == ref[None, :]] = -np.inf
                idx = np.argpartition(-S, k - 1, axis=1)[:, :k] if k < len(ref) else \
                    np.broadcast_to(np.arange(len(ref)), (len(q), len(ref)))
                cos = np.take_along_axis(S, idx, axis=1)
                order = np.argsort(-cos, axis=1, kind="stable")
                idx, cos = np.take_along_axis(idx, order, axis=1), np.take_along_axis(cos, order, axis=1)
                keep = (cos >= min_cosine) & np.isfinite(cos)
                keep[:, top_n:] = False
                rank = np.broadcast_to(np.arange(idx.shape[1]), idx.shape)
                out_q.append(np.broadcast_to(qp[:, None], idx.shape)[keep])
                out_n.append(ref[idx[keep]])
                out_c.append(cos[keep].astype(np.float32))
                out_r.append(rank[keep])
    if not out_q:
        z = np.zeros(0, np.int64)
        return z, z, np.zeros(0, np.float32), z
    return (np.concatenate(out_q), np.concatenate(out_n), np.concatenate(out_c),
            np.concatenate(out_r).astype(np.int64))
