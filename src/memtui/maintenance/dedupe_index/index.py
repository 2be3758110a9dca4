"""The incremental near-duplicate index (:mod:`memtui.maintenance.dedupe_index`)."""

from __future__ import annotations

import bisect
import gc
import hashlib
import os
import time
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import replace
from typing import Callable, Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from memtui.similarity.statements import Analyzed, analyze, material_difference_analyzed, normalize
from memtui.maintenance.dedupe_index.candidates import BlockedNeighbours, CharNgramTfidf, _unique_inverse
from memtui.maintenance.dedupe_index.model import (DEFAULT_THRESHOLD, Cluster, DedupeConfig, DedupeItem, Guard,
                                                  _no_guard, pair_key)
from memtui.maintenance.dedupe_index.scoring import _can_fork_work, guard_pairs, pair_lexical, pair_scores, score_keys
from memtui.similarity.candidates import knn_lists, knn_pairs
from memtui.similarity.embed import DIM, embed
from memtui.similarity.features import FEATURES, ProfileTable, prime, profiles
from memtui.similarity.scorer import duplicate_scores_of_rows, judge_profiles, verdicts_of_rows
from memtui.similarity.scorer import model as scorer_model
from memtui.similarity.text import fingerprint_of_normalized, key_of_normalized


# ----------------------------------------------------------------------------------------------------
# The index
# ----------------------------------------------------------------------------------------------------


class _Unit:
    """Items of one block with the same normalised text. ``rep`` / ``text``: the representative item and
    its statement, the one the guard analyses -- always the item ranked first by :func:`_rep_rank`, so
    ``add`` and ``remove`` keep the choice a full build would make."""

    __slots__ = ("row", "block", "norm", "items", "rep", "text", "key", "fp", "fpk", "_an")

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
    (default :func:`memtui.similarity.statements.material_difference_analyzed`).
    """

    def __init__(self, config: DedupeConfig | None = None, not_duplicates: Iterable[Iterable[str]] = (),
                 guard: Guard | None = None):
        cfg = config or DedupeConfig()
        if cfg.learned and cfg.threshold == DEFAULT_THRESHOLD:  # the likely bar, as a 0-100 score (issue 20)
            from memtui.similarity.tiers import LIKELY_DUPLICATE_P

            t = 100.0 * max(scorer_model().duplicate_threshold, LIKELY_DUPLICATE_P)
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
        self._table = ProfileTable()  # the representatives' profiles (learned scorer), appended only
        self._trow = np.zeros(0, np.int64)  # table row of each unit row (-1: not profiled yet)
        self._row_block = np.zeros(0, np.int64)  # block id of each row
        self._row_fp = np.zeros(0, np.int64)  # (block, fingerprint) id of each row
        self._admit = np.zeros(0, np.float32)  # cosine a newcomer needs to enter the row's neighbour list
        self._next_row = 0
        self._adj: dict[int, dict[int, float]] = defaultdict(dict)  # verified pairs (edges) -> score
        self._rejected: dict[int, dict[int, str]] = defaultdict(dict)  # scored >= threshold, guard said no
        self._pair_cache: dict[tuple[int, int], tuple[float, str | None | bool]] = {}
        # learned: every scored unit pair's score, as sorted codes (u << 32 | v, u < v) and float32 values
        self._codes = np.zeros(0, np.int64)
        self._vals = np.zeros(0, np.float32)
        self._local: dict[tuple[int, int], float] = {}  # the remembered scores of the component being clustered
        self._explained: dict[tuple[int, int], tuple[np.ndarray, bool]] = {}  # unit pair: (features, refused)
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
            prime([u.text for u in units])
            # every unit that shares its block will be scored: profile them at once, on all processes
            self._trow = np.full(len(units), -1, np.int64)  # profiled when first in a live pair (_score)
            clock.lap("embed")
        if not units:
            self._vec = None  # nothing fitted: the next ``add`` builds
        clock.lap("vectorize")
        pairs, scores = self._candidates(rows, rows)
        self._remember(pairs, scores)
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
                self._trow = np.concatenate([self._trow, np.full(len(fresh), -1, np.int64)])
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
        unit.rep, unit.text, unit._an = item.memory_id, item.statement, None
        if unit.row < len(self._trow):
            self._trow[unit.row] = -1  # profiled again when next scored
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
        self._forget_pairs(rows)
        return rows, affected

    def _forget_pairs(self, rows: set[int]) -> None:
        """Drop the cached scores, guard results and feature rows of every pair touching ``rows`` (their text
        or their items changed); the rest of the cache stays valid."""
        if not rows:
            return
        self._local = {}
        for cache in (self._pair_cache, self._explained):
            for k in [k for k in cache if k[0] in rows or k[1] in rows]:
                del cache[k]
        if len(self._codes):
            r = np.array(sorted(rows), np.int64)
            keep = ~(np.isin(self._codes // _SHIFT, r) | np.isin(self._codes % _SHIFT, r))
            self._codes, self._vals = self._codes[keep], self._vals[keep]

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
        self._forget_pairs(affected)
        return affected

    # -- candidates and verification ---------------------------------------------------------------------

    def _profile_rows(self, rows: np.ndarray) -> np.ndarray:
        """Table rows of the unit ``rows`` (profiling, on all processes when many, those without one)."""
        rows = np.asarray(rows, np.int64)
        missing = np.unique(rows[self._trow[rows] < 0]) if len(rows) else rows
        if len(missing):
            units = self._units
            texts = [units[r].text for r in missing.tolist()]
            prime(texts)  # new words embedded in one batch, word caches filled before any fork
            self._trow[missing] = self._table.extend(profiles(texts, self.config.processes), keep=False)
        return self._trow[rows]

    def _score(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Scores (0-100, float32) of the unit pairs ``(a[i], b[i])``. Learned: 100 x P(duplicate)
        (:func:`~memtui.similarity.scorer.duplicate_scores_of_rows`) for the pairs whose embedding cosine
        reaches ``score_min_cosine`` or whose lexical score (:func:`score_keys`: the mean of the token set
        and token sort ratios of the match keys) reaches ``score_min_lexical``; 0 for the others."""
        units, cfg = self._units, self.config
        if not cfg.learned:
            if len(a) < 64:
                return np.array([score_keys(units[x].key, units[y].key, cfg) for x, y in zip(a.tolist(), b.tolist())],
                                np.float32)
            return pair_scores([units[r].key for r in a.tolist()], [units[r].key for r in b.tolist()], cfg)
        out = np.zeros(len(a), np.float32)
        if not len(a):
            return out
        cos = np.empty(len(a), np.float32)
        for s in range(0, len(a), _CHUNK):  # bounded temporaries: two (chunk, 256) gathers
            cos[s:s + _CHUNK] = np.einsum("ij,ij->i", self._E[a[s:s + _CHUNK]], self._E[b[s:s + _CHUNK]])
        gated = cos >= cfg.score_min_cosine
        low = np.flatnonzero(~gated)
        if len(low):  # below the cosine, the lexical score decides (the match keys' ratios, score_keys)
            tset, tsort = pair_lexical([units[r].key for r in a[low].tolist()], [units[r].key for r in b[low].tolist()],
                                       cfg.workers if len(low) >= 64 else 1)
            gated[low] = (tsort + tset) / np.float32(2) >= cfg.score_min_lexical  # score_keys' float32 arithmetic
        live = np.flatnonzero(gated)
        if not len(live):
            return out
        la, lb = a[live], b[live]
        ta, tb = self._profile_rows(la), self._profile_rows(lb)  # only units in a live pair are profiled
        args = (None, ta, tb, cos[live])
        if _can_fork_work(_learned_chunk, cfg.processes, len(live), 8 * cfg.parallel_min_pairs):
            p, keep, X, refused = self._fork_scores(*args[1:])
        else:
            p, keep, X, refused = _learned_chunk((self, *args[1:]))
        out[live] = 100.0 * p
        # the rows of pairs that may join a cluster, to explain it without scoring again
        rows = self._explained
        for k, x, y in zip(range(len(keep)), la[keep].tolist(), lb[keep].tolist()):
            rows[(x, y) if x < y else (y, x)] = (X[k], bool(refused[k]))
        return out

    def _fork_scores(self, ta: np.ndarray, tb: np.ndarray, cos: np.ndarray):
        """:func:`_learned_chunk` over ``config.processes`` forked workers (they read this index's profile
        table from the parent's memory; only index arrays go in and scores come out)."""
        from memtui.processes import worker_pool

        global _FORKED
        parts = np.array_split(np.arange(len(ta)), self.config.processes * 4)
        _FORKED = self
        try:
            with worker_pool(self.config.processes) as ex:  # the workers end with this process (issue 21 item 7)
                res = list(ex.map(_learned_chunk, [(None, ta[q], tb[q], cos[q]) for q in parts]))
        finally:
            _FORKED = None
        offsets = np.cumsum([0] + [len(q) for q in parts[:-1]])
        p = np.concatenate([r[0] for r in res])
        keep = np.concatenate([r[1] + o for r, o in zip(res, offsets)])
        X = np.concatenate([r[2] for r in res])
        refused = np.concatenate([r[3] for r in res])
        return p, keep, X, refused

    def verdict(self, u: int, v: int):
        """The scorer's :class:`~memtui.similarity.scorer.Verdict` of two units (for explanations), from the
        feature row kept when the pair was scored."""
        hit = self._explained.get((u, v) if u < v else (v, u))
        if hit is not None:
            return verdicts_of_rows(hit[0][None, :], np.array([hit[1]]))[0]
        ta, tb = self._profile_rows(np.array([u, v], np.int64))
        return judge_profiles([self._table.profile(int(ta))], [self._table.profile(int(tb))],
                              [float(self._E[u] @ self._E[v])])[0]

    def _link(self, q_rows: np.ndarray) -> tuple[int, int]:
        """Find, score and guard the pairs of the units ``q_rows`` against their blocks; returns
        (candidate pairs, guarded pairs)."""
        if not len(q_rows):
            return 0, 0
        blocks = {self._units[r].block for r in q_rows.tolist()}
        ref = np.array(sorted(r for b in blocks for r in self._block_units[b]), np.int64)
        pairs, scores = self._candidates(q_rows, ref)
        self._remember(pairs, scores)
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
                grow = (returned >= n) & (passing >= cfg.expand_fraction * n)
                # (learned) a full list with few partners scored above 0 -- mostly vetoed -- is asked again
                more = (returned >= n) & ~grow & (np.bincount(qi[s > 0], minlength=len(rows)) < cfg.tfidf_live_n) \
                    & (n < cfg.tfidf_live_max)
                rows, n = rows[grow | more], min(n * (4 if grow.any() else 2), cfg.max_top_n)
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
            # each unit's list, best first, up to the longest a live expansion may ask for; shorter ones are
            # its prefixes (rank < n)
            kmax = max(cfg.embed_top_n, min(cfg.embed_live_max, cfg.max_top_n) if cfg.embed_live_n else 0)
            qi, nb, _, rank = knn_lists(self._E, q_rows, r_rows, self._row_block, kmax, cfg.embed_min_cosine)
            want = np.full(len(q_rows), cfg.embed_top_n, np.int64)  # list length asked per query row
            done = np.zeros(len(q_rows), np.int64)  # list length already scored
            again = np.zeros(0, np.int64)  # rows whose list must grow past kmax (asked the old way)
            sc_all = np.zeros(len(qi), np.float32)
            while True:
                sel = np.flatnonzero((rank < want[qi]) & (rank >= done[qi]))
                if not len(sel):
                    break
                a, b = q_rows[qi[sel]], nb[sel]
                sc_all[sel] = pool.scores(np.minimum(a, b), np.maximum(a, b))
                done = want.copy()
                # per query row, over its whole list so far: verified and live (scored above 0) partners
                inl = rank < want[qi]
                sc = sc_all[inl]
                got = np.bincount(qi[inl], minlength=len(q_rows))
                passing = np.bincount(qi[inl][sc >= cfg.threshold], minlength=len(q_rows))
                live = np.bincount(qi[inl][sc > 0], minlength=len(q_rows))
                full = got >= want
                # as for TF-IDF: a full list with at least half of it verified is asked again, 4x longer; so is
                # a full list with fewer than ``embed_live_n`` partners scored above 0 (most of it vetoed: the
                # same wording about another identifier, number or negation), 2x longer
                grow = full & (passing >= cfg.expand_fraction * want) & (want < cfg.max_top_n)
                more = full & ~grow & (live < cfg.embed_live_n) & (want < cfg.embed_live_max)
                want = np.where(grow, np.minimum(want * 4, cfg.max_top_n), np.where(more, want * 2, want))
                over = np.flatnonzero(want > kmax)
                if len(over):
                    again = np.union1d(again, over)
                    want[over] = kmax
            if len(again):
                rows, n = q_rows[again], kmax * 4
                while len(rows):
                    a, b, _, got = knn_pairs(self._E, rows, r_rows, self._row_block, n, cfg.embed_min_cosine, True)
                    sc = pool.scores(a, b)
                    if n >= cfg.max_top_n:
                        break
                    full = (got >= n) & (_per_row(rows, a, b, sc >= cfg.threshold) >= cfg.expand_fraction * n)
                    rows, n = rows[full], min(n * 4, cfg.max_top_n)
        return pool.result()

    def _remember(self, pairs: np.ndarray, scores: np.ndarray) -> None:
        """Learned: keep every candidate pair's score (sorted arrays) for the clustering's lookups."""
        if self.config.learned and len(pairs):
            codes = pairs[:, 0].astype(np.int64) * _SHIFT + pairs[:, 1]
            old = ~np.isin(self._codes, codes)
            codes = np.concatenate([self._codes[old], codes])
            order = np.argsort(codes, kind="stable")
            self._codes = codes[order]
            self._vals = np.concatenate([self._vals[old], np.asarray(scores, np.float32)])[order]

    def _cached(self, u: int, v: int) -> float | None:
        """The remembered score of two units (learned), or None."""
        k = (u, v) if u < v else (v, u)
        hit = self._local.get(k)
        if hit is not None:
            return hit
        hit = self._pair_cache.get(k)
        if hit is not None:
            return hit[0]
        code = k[0] * _SHIFT + k[1]
        at = int(np.searchsorted(self._codes, code))
        if at < len(self._codes) and self._codes[at] == code:
            return float(self._vals[at])
        return None

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
        if s is None and self.config.learned:
            s = self._cached(u, v)
            if s is None:
                s = float(self._score(np.array([u]), np.array([v]))[0])
                self._pair_cache[(u, v) if u < v else (v, u)] = (s, True)
        elif s is None:
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
        if self.config.learned:  # the scorer weighed what the guard vetoes
            return not self._cannot_link(self._units[u], self._units[v])
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
        self._local = {}
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
        if self.config.learned:
            self._prescore(comps)
        new: list[Cluster] = []
        for comp in comps:
            if len(comp) == 1 and len(self._units[comp[0]].items) < 2:
                continue  # a lone statement: no cluster
            for group in self._cluster_component(comp):
                c = self._same_cluster(group, seeds, old)
                if c is None:
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

    def _prescore(self, comps: list[list[int]], max_units: int = 40) -> None:
        """Score, in one batch, every unit pair of the components (of 3 to ``max_units`` units) that is
        neither an edge nor cached: the complete-linkage checks and the cluster scores read them (one
        pair at a time, the learned scorer costs ~0.3 ms a pair; in a batch, microseconds)."""
        adj, cache = self._adj, self._pair_cache
        xs: list[int] = []
        ys: list[int] = []
        for comp in comps:
            if not 3 <= len(comp) <= max_units:
                continue
            c = sorted(comp)
            for i, u in enumerate(c):
                nbrs = adj.get(u, {})
                for v in c[i + 1:]:
                    if v not in nbrs and (u, v) not in cache:
                        xs.append(u)
                        ys.append(v)
        if xs:
            a, b = np.array(xs, np.int64), np.array(ys, np.int64)
            codes = a * _SHIFT + b
            at = np.minimum(np.searchsorted(self._codes, codes), max(len(self._codes) - 1, 0))
            new = np.flatnonzero(self._codes[at] != codes) if len(self._codes) else np.arange(len(a))
            a, b = a[new], b[new]
            for uv, sc in zip(zip(a.tolist(), b.tolist()), self._score(a, b).tolist()):
                cache[uv] = (sc, True)

    def _fetch_cross(self, gu: list[int], gv: list[int]) -> bool:
        """Before a merge check: False when a pair already scored between the two groups disagrees (the
        check fails without scoring more); else the unscored cross pairs are scored in one batch."""
        adj, cache, floor = self._adj, self._pair_cache, self.config.cluster_floor
        units = self._units
        xs: list[int] = []
        ys: list[int] = []
        for u in gu:
            nbrs = adj.get(u, {})
            for v in gv:
                if v in nbrs:
                    continue
                sc = self._cached(u, v)
                if sc is None:
                    xs.append(u)
                    ys.append(v)
                elif sc < floor and units[u].fpk != units[v].fpk:
                    return False
        if len(xs) > 1:
            for x, y, sc in zip(xs, ys, self._score(np.array(xs, np.int64), np.array(ys, np.int64)).tolist()):
                cache[(x, y) if x < y else (y, x)] = (sc, True)
        return True

    def _component_scores(self, comp: list[int], max_units: int = 400) -> dict[tuple[int, int], float]:
        """The remembered scores of the unit pairs of a component (of at most ``max_units``), one
        vectorised lookup instead of one search per pair."""
        if not 3 <= len(comp) <= max_units or not len(self._codes):
            return {}
        c = np.array(sorted(comp), np.int64)
        i, j = np.triu_indices(len(c), 1)
        codes = c[i] * _SHIFT + c[j]
        at = np.minimum(np.searchsorted(self._codes, codes), len(self._codes) - 1)
        hit = np.flatnonzero(self._codes[at] == codes)
        return dict(zip(zip(c[i[hit]].tolist(), c[j[hit]].tolist()), self._vals[at[hit]].tolist()))

    def _cluster_component(self, comp: list[int]) -> list[list[int]]:
        """Greedy complete-linkage over one component (see the module docstring). Deterministic: edges in
        order of score (desc), then the units' smallest member ids -- never row ids, which depend on
        insertion order."""
        if len(comp) == 1:
            return [comp]
        cfg, units = self.config, self._units
        self._local = self._component_scores(comp) if cfg.learned else {}
        first = {u: units[u].first for u in comp}
        edges = sorted((-s, *sorted((first[u], first[v])), u, v)
                       for u in comp for v, s in self._adj[u].items() if first[u] < first[v])
        group_of: dict[int, list[int]] = {u: [u] for u in comp}
        for _neg, _a, _b, u, v in edges:
            gu, gv = group_of[u], group_of[v]
            if gu is gv or len(gu) + len(gv) > cfg.max_cluster_units:
                continue
            if cfg.learned and not self._fetch_cross(gu, gv):
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

    def _same_cluster(self, group: list[int], seeds: set[int], old: dict[str, Cluster]) -> Cluster | None:
        """The cluster ``group`` had before this change, when none of its units changed (no seed) and its
        members are the same: its scores, canonical and explanation cannot have changed."""
        if any(u in seeds for u in group):
            return None
        members = sorted(m for u in group for m in self._units[u].items)
        if self._not_dup and any(m in self._not_dup for m in members):
            return None
        scope, typ = self._block_keys[self._units[group[0]].block]
        return old.get(_cluster_id(scope, typ, members))

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
                           f"the canonical and every member and >= {cfg.cluster_floor / 100:.2f} between any two "
                           f"(lowest pair {worst / 100:.2f}, highest {best / 100:.2f}); "
                           f"why: {self.verdict(c, other).explain()}.")
        else:
            method = "fuzzy"
            explanation = (f"{n} memories; content-word similarity (mean of token sort and token set ratio) "
                           f">= {cfg.threshold:g} between the canonical and every member and >= "
                           f"{cfg.cluster_floor:g} between any two (lowest {worst:g}, highest {best:g}); no "
                           f"differing identifier, negation, number or opposite predicate.")
        scope, typ = self._block_keys[units[0].block]
        return Cluster(cluster_id=_cluster_id(scope, typ, members), scope_key=scope, type=typ, members=tuple(members),
                       canonical=canonical, best_score=best, scores=scores, method=method,
                       explanation=explanation, min_score=worst)


# ----------------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------------

_FORKED: "DedupeIndex | None" = None  # the index a forked scoring worker reads (set only around the fork)


_SHIFT = 1 << 32
"""Unit pair codes: ``u << 32 | v``."""
_CHUNK = 32768
"""Pairs scored at a time (bounds the feature matrices and gathers of one step)."""


def _learned_chunk(args: tuple):
    """Learned scores of profile-table row pairs ``(ta[i], tb[i])`` with embedding cosines ``cos``:
    ``(P(duplicate) per pair, positions of the pairs at or above the cluster floor, their feature rows,
    their guard refusals)``, :data:`_CHUNK` pairs at a time. ``args`` is ``(index or None for the forked
    one, ta, tb, cos)``."""
    index, ta, tb, cos = args
    index = index if index is not None else _FORKED
    floor = index.config.cluster_floor
    ps, keeps, Xs, refs = [], [], [], []
    for s in range(0, len(ta), _CHUNK):
        p, X, refused = duplicate_scores_of_rows(index._table, ta[s:s + _CHUNK], tb[s:s + _CHUNK], cos[s:s + _CHUNK])
        keep = np.flatnonzero(p * 100.0 >= floor)
        ps.append(p)
        keeps.append(keep + s)
        Xs.append(X[keep])
        refs.append(refused[keep])
    if not ps:
        return (np.zeros(0, np.float32), np.zeros(0, np.int64), np.zeros((0, len(FEATURES)), np.float32),
                np.zeros(0, bool))
    return np.concatenate(ps), np.concatenate(keeps), np.concatenate(Xs), np.concatenate(refs)


def _cluster_id(scope: str, typ: str, members: Sequence[str]) -> str:
    """``"dup-"`` + 16 hex digits of SHA-1 over the scope, type and sorted member ids."""
    return "dup-" + hashlib.sha1("\x1f".join([scope, typ, *members]).encode("utf-8")).hexdigest()[:16]


def _per_row(rows: np.ndarray, a: np.ndarray, b: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """For each of the sorted unit ``rows``, how many of the pairs ``(a[i], b[i])`` with ``mask[i]``
    involve it."""
    out = np.zeros(len(rows), np.int64)
    for side in (a[mask], b[mask]):
        if len(side) and len(rows):
            at = np.minimum(np.searchsorted(rows, side), len(rows) - 1)
            hit = rows[at] == side
            out += np.bincount(at[hit], minlength=len(rows))
    return out


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
