"""Lexical pair scores and the guard in bulk (:mod:`memtui.maintenance.dedupe_index`)."""

from __future__ import annotations

import pickle
import threading
from typing import Sequence

import numpy as np
import scipy.sparse as sp
from rapidfuzz import fuzz, process

from memtui.similarity.statements import Analyzed, analyze, material_difference_analyzed
from memtui.maintenance.dedupe_index.candidates import _unique_inverse
from memtui.maintenance.dedupe_index.model import _DEFAULT_CONFIG, DedupeConfig, Guard


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


def pair_lexical(keys_a: Sequence[str], keys_b: Sequence[str], workers: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``(token_set_ratio, token_sort_ratio)`` of ``keys_a[i]`` and ``keys_b[i]`` (float32 0-100)."""
    return (process.cpdist(keys_a, keys_b, scorer=fuzz.token_set_ratio, dtype=np.float32, workers=workers),
            process.cpdist(keys_a, keys_b, scorer=fuzz.token_sort_ratio, dtype=np.float32, workers=workers))


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
        from memtui.processes import worker_pool

        with worker_pool(processes) as ex:  # the workers end with this process (issue 21 item 7)
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
