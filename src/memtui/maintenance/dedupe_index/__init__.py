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
negation, a number: :func:`memtui.similarity.statements.material_difference_analyzed`); pairs a reviewer
marked "not duplicates" never again; new memories checked incrementally, without a full rebuild.

How it works
------------
* **Blocks.** Every comparison happens inside one block, ``(scope_key, type)``. Stale items are kept
  (so ``remove`` and updates work) but never compared.
* **Units (stage 1, exact).** Items of one block with the same :func:`~memtui.similarity.statements.normalize`
  text form one *unit*; a unit with two or more items is an ``exact`` cluster. Everything below works on
  units, so a statement copied 500 times costs one row, not 125,000 pairs.
* **Fingerprint (stage 2).** Units of one block with the same
  :func:`~memtui.similarity.statements.fingerprint` are candidate pairs (the same words in another order,
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
  (it needs :func:`~memtui.similarity.statements.analyze`, the costly step), in ``processes`` worker
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
:func:`memtui.similarity.statements.judge_pair`).
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
* guard and scoring workers are forked and read the index copy-on-write.

The learned scorer (``DedupeConfig.learned``, the default; issues 10 and 22)
-------------------------------------------------------------------------------
* **Shortlist.** Candidates are the fingerprint groups, the TF-IDF lists and each unit's embedding list
  (WordLlama cosine ``>= embed_min_cosine``, best first; :func:`memtui.similarity.candidates.knn_lists`
  sorts each list once and a longer list is a prefix). A full list at least half verified is asked
  again 4x longer (as above); a full list with fewer than ``embed_live_n`` (``tfidf_live_n``) partners
  scored above 0 -- most of it vetoed: the same wording about another identifier, number or negation --
  2x longer, up to ``embed_live_max`` (``tfidf_live_max``): in templated blocks a unit's nearest
  neighbours are such hard negatives and its paraphrase comes further down.
* **Score.** Only the shortlist is scored, a batch at a time: cosine and (below ``score_min_cosine``)
  the lexical score gate a pair; the statements' profiles sit in one
  :class:`~memtui.similarity.features.ProfileTable` (rows appended, profiled once, on all processes when
  many); :func:`~memtui.similarity.scorer.duplicate_scores_of_rows` reads the set features first and a
  vetoed pair scores 0 without its word features. Scores are kept in sorted arrays (``u << 32 | v``);
  clustering reads a component's scores in one lookup and scores the pairs it still needs in one batch
  (:meth:`DedupeIndex._prescore`, :meth:`DedupeIndex._fetch_cross`), never one pair at a time in bulk.
* **Incremental.** ``add`` scores the new units' shortlists only; a cluster none of whose units changed
  is kept as it was (same members: same scores, canonical and explanation).

Output is deterministic: members sorted, cluster ids from the sorted member ids, clusters sorted by
(scope_key, type, members).

Package layout (issue 10, item 8): :mod:`.model` (items, clusters, configuration), :mod:`.scoring`
(lexical scores, the guard in bulk), :mod:`.candidates` (TF-IDF n-grams, blocked top-n neighbours),
:mod:`.index` (:class:`DedupeIndex`), :mod:`.exhaustive` (the reference). Text keys live in
:mod:`memtui.similarity.text`, embeddings and the learned scorer in :mod:`memtui.similarity`.
"""

from __future__ import annotations

from memtui.maintenance.dedupe_index.candidates import BlockedNeighbours, CharNgramTfidf
from memtui.maintenance.dedupe_index.exhaustive import exhaustive_pairs
from memtui.maintenance.dedupe_index.index import DedupeIndex
from memtui.maintenance.dedupe_index.model import (DEFAULT_CLUSTER_FLOOR, DEFAULT_THRESHOLD, Cluster, DedupeConfig,
                                                  DedupeItem, pair_key)
from memtui.maintenance.dedupe_index.scoring import guard_pairs, pair_scores, score_keys
from memtui.similarity.text import STOPWORDS, fingerprint_of_normalized, key_of_normalized, match_key

__all__ = [
    "DEFAULT_THRESHOLD", "DEFAULT_CLUSTER_FLOOR", "STOPWORDS", "DedupeItem", "DedupeConfig", "Cluster",
    "DedupeIndex", "CharNgramTfidf", "BlockedNeighbours", "match_key", "key_of_normalized",
    "fingerprint_of_normalized", "score_keys", "pair_scores",
    "exhaustive_pairs", "guard_pairs", "pair_key",
]
