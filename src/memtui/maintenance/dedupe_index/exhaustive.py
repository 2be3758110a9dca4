"""The exhaustive reference the index is measured against (tests, bench/dedupe.py)."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import replace
from typing import Iterable

import numpy as np

from memtui.similarity.statements import material_difference_analyzed, normalize
from memtui.maintenance.dedupe_index.index import DedupeIndex, _rep_rank, _unique_items
from memtui.maintenance.dedupe_index.model import _DEFAULT_CONFIG, DedupeConfig, DedupeItem, Guard, pair_key
from memtui.maintenance.dedupe_index.scoring import _block_hits, guard_pairs
from memtui.similarity.text import fingerprint_of_normalized, key_of_normalized


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
