"""Inputs, outputs and configuration of the dedupe engine (:mod:`memtui.maintenance.dedupe_index`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from rapidfuzz import fuzz

from memtui.similarity.statements import Analyzed

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
    """Forked worker processes, used only when no other Python thread runs (1 keeps all in-process): the
    lexical guard when at least ``parallel_min_pairs`` pairs need it and the guard pickles; with the
    learned scorer, the statement profiles of a build (5,000 or more) and scoring batches of at least
    8 x ``parallel_min_pairs`` pairs."""
    parallel_min_pairs: int = 4000
    learned: bool = True
    """Verify pairs with the learned scorer (:mod:`memtui.similarity.scorer`; the score is 100 x
    P(duplicate); a ``threshold`` left at its default becomes the model's, ``cluster_floor`` 0.75 of
    it) and add embedding neighbours to the candidates; False: the lexical score and guard above."""
    embed_top_n: int = 8
    """Embedding neighbours per unit (same block) added to the candidates."""
    embed_min_cosine: float = 0.5
    embed_live_n: int = 16
    """A full embedding list with fewer partners than this scored above 0 (the rest vetoed: the same
    wording about another identifier, number or negation) is asked again, twice as long, up to
    ``embed_live_max`` neighbours."""
    embed_live_max: int = 64
    tfidf_live_n: int = 12
    """The same for TF-IDF neighbour lists (up to ``tfidf_live_max``)."""
    tfidf_live_max: int = 48
    score_min_cosine: float = 0.5
    """A candidate pair is scored by the model only when its embedding cosine or its lexical score
    (``score_min_lexical``) reaches this; others score 0."""
    score_min_lexical: float = 60.0


_DEFAULT_CONFIG = DedupeConfig()


def pair_key(a: str, b: str) -> tuple[str, str]:
    """The ``(smaller, larger)`` id pair used as a key in :attr:`Cluster.scores`."""
    return (a, b) if a <= b else (b, a)
