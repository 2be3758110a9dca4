"""Near-duplicate detection engine (issue 4, Detection item 1): memtui.maintenance.dedupe_index.

Strict to lax (exact, fingerprint, TF-IDF candidates verified with rapidfuzz), within one scope and type
only, never with a stale member or across a material difference, "not duplicates" remembered, clusters
without chaining, incremental add equal to a full build, deterministic output.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from memtui.similarity.statements import fingerprint, normalize
from memtui.maintenance.dedupe_index import (
    DEFAULT_CLUSTER_FLOOR,
    DEFAULT_THRESHOLD,
    CharNgramTfidf,
    Cluster,
    DedupeConfig,
    DedupeIndex,
    DedupeItem,
    exhaustive_pairs,
    fingerprint_of_normalized,
    guard_pairs,
    match_key,
    pair_key,
    score_keys,
)

SCOPE = "acme/order-service:src/main/java/com/acme/orders/validation"
OTHER_SCOPE = "acme/order-service:src/main/java/com/acme/billing"
CFG = DedupeConfig(learned=False, processes=1)  # the lexical engine; in-process (the worker path has its own test)

RULES = [
    "Rules are registered through RuleRegistry.",
    "Validation uses RuleRegistry as the registry for rules.",
    "New validation rules are added via RuleRegistry.",
]
CONFLICTING = "Validation rules are configured directly in OrderValidator."


def item(mid: str, statement: str, scope: str = SCOPE, type: str = "convention", stale: bool = False,
         weight: float = 0.0) -> DedupeItem:
    return DedupeItem(mid, scope, type, statement, stale=stale, weight=weight)


def members(clusters: list[Cluster]) -> list[tuple[str, ...]]:
    return [c.members for c in clusters]


def build(items, config: DedupeConfig = CFG, **kw) -> DedupeIndex:
    idx = DedupeIndex(config, **kw)
    idx.build(items)
    return idx


# ------------------------------------------------------------------------------------------------
# the three stages
# ------------------------------------------------------------------------------------------------


def test_exact_duplicates_after_normalisation_form_an_exact_cluster():
    idx = build([item("m1", "Rules are registered through `RuleRegistry`."),
                 item("m2", "rules are registered   through RuleRegistry"),
                 item("m3", "Tests use JUnit 5.")])
    [c] = idx.clusters()
    assert c.members == ("m1", "m2")
    assert c.method == "exact"
    assert c.best_score == c.min_score == 100.0
    assert c.scores == {("m1", "m2"): 100.0}


def test_fingerprint_duplicates_same_words_in_another_order():
    idx = build([item("m1", "OrderValidator calls RuleRegistry before saving."),
                 item("m2", "Before saving, OrderValidator calls RuleRegistry!"),
                 item("m3", "Tests use JUnit 5.")])
    [c] = idx.clusters()
    assert c.members == ("m1", "m2")
    assert c.method == "fingerprint"
    assert fingerprint(idx._items["m1"].statement) == fingerprint(idx._items["m2"].statement)


def test_rule_registry_paraphrases_cluster_and_the_conflicting_statement_does_not():
    items = [item(f"m{i}", s) for i, s in enumerate(RULES, 1)] + [item("m4", CONFLICTING)]
    idx = build(items)
    [c] = idx.clusters()
    assert c.members == ("m1", "m2", "m3")
    assert c.method == "fuzzy"
    assert "m4" not in c.members
    # the canonical is verified with every member, and every pair clears the floor
    for m in c.members:
        if m != c.canonical:
            assert c.scores[pair_key(c.canonical, m)] >= DEFAULT_THRESHOLD
    assert min(c.scores.values()) >= DEFAULT_CLUSTER_FLOOR
    assert c.best_score == max(c.scores.values()) and c.min_score == min(c.scores.values())
    assert c.explanation


def test_cluster_fields_shapes_and_deterministic_id():
    items = [item(f"m{i}", s) for i, s in enumerate(RULES, 1)]
    [c] = build(items).clusters()
    assert c.scope_key == SCOPE and c.type == "convention"
    assert list(c.members) == sorted(c.members)
    assert set(c.scores) == {(a, b) for i, a in enumerate(c.members) for b in c.members[i + 1:]}
    assert all(0.0 <= s <= 100.0 for s in c.scores.values())
    assert c.cluster_id.startswith("dup-") and len(c.cluster_id) == 4 + 16
    [again] = build(list(reversed(items))).clusters()
    assert again == c


# ------------------------------------------------------------------------------------------------
# what must never be merged
# ------------------------------------------------------------------------------------------------


def test_no_merge_across_scopes_or_types():
    s = "Rules are registered through RuleRegistry."
    idx = build([item("m1", s), item("m2", s, scope=OTHER_SCOPE), item("m3", s, type="architecture"),
                 item("m4", RULES[1], scope=OTHER_SCOPE), item("m5", RULES[1], type="gotcha")])
    clusters = idx.clusters()
    assert members(clusters) == [("m2", "m4")]  # same scope and type: the only pair
    assert all(c.scope_key == OTHER_SCOPE for c in clusters)
    assert exhaustive_pairs(idx._items.values(), CFG) == {("m2", "m4")}


def test_no_stale_member():
    idx = build([item("m1", RULES[0]), item("m2", RULES[0], stale=True), item("m3", RULES[1], stale=True),
                 item("m4", RULES[0])])
    assert members(idx.clusters()) == [("m1", "m4")]
    assert all(a not in ("m2", "m3") and b not in ("m2", "m3") for a, b, _ in idx.verified_pairs())


@pytest.mark.parametrize("a, b", [
    ("OrderValidator delegates rule lookups to RuleRegistry before saving an order.",
     "OrderValidator delegates rule lookups to PolicyRegistry before saving an order."),
    ("OrderValidator is thread-safe.", "OrderValidator is not thread-safe."),
    ("The order export job writes CSV files to the reporting bucket every night.",
     "The order export job never writes CSV files to the reporting bucket every night."),
    ("PaymentClient retries failed requests 3 times.", "PaymentClient retries failed requests 5 times."),
    ("PaymentClient uses a 2 second timeout per attempt.", "PaymentClient uses a 20 second timeout per attempt."),
])
def test_identifier_negation_and_number_guards(a, b):
    # close enough to be candidates, refused by the guard
    assert score_keys(match_key(a), match_key(b)) >= DEFAULT_THRESHOLD
    idx = build([item("m1", a), item("m2", b)])
    assert idx.clusters() == []
    assert idx.verified_pairs() == []
    assert exhaustive_pairs(idx._items.values(), CFG) == set()


def test_not_duplicates_are_never_proposed():
    items = [item(f"m{i}", s) for i, s in enumerate(RULES, 1)] + [item("m4", RULES[0])]
    idx = build(items, not_duplicates=[frozenset({"m1", "m2"})])
    for c in idx.clusters():
        assert not {"m1", "m2"} <= set(c.members)
    # marking a pair later changes the clusters at once, and remembers it
    idx2 = build(items)
    assert members(idx2.clusters()) == [("m1", "m2", "m3", "m4")]
    idx2.mark_not_duplicates([frozenset({"m2", "m3"})])
    for c in idx2.clusters():
        assert not {"m2", "m3"} <= set(c.members)
    idx2.add([item("m5", RULES[2])])
    for c in idx2.clusters():
        assert not {"m2", "m3"} <= set(c.members)


def test_not_duplicates_between_exact_copies():
    idx = build([item("m1", RULES[0]), item("m2", RULES[0]), item("m3", RULES[0])],
                not_duplicates=[{"m1", "m3"}])
    [c] = idx.clusters()
    assert not {"m1", "m3"} <= set(c.members)
    assert ("m1", "m3", 100.0) not in idx.verified_pairs()


# ------------------------------------------------------------------------------------------------
# clusters without chaining, canonical
# ------------------------------------------------------------------------------------------------

CHAIN = [  # B says what A says and what C says: A~B, B~C, but A and C are different claims
    "OrderService validates order payloads.",
    "OrderService validates order payloads and writes audit records to the ledger.",
    "OrderService writes audit records to the ledger.",
]


def test_no_chaining():
    ka, kb, kc = (match_key(s) for s in CHAIN)
    assert score_keys(ka, kb) >= DEFAULT_THRESHOLD and score_keys(kb, kc) >= DEFAULT_THRESHOLD
    assert score_keys(ka, kc) < DEFAULT_CLUSTER_FLOOR
    idx = build([item("a", CHAIN[0]), item("b", CHAIN[1]), item("c", CHAIN[2])])
    assert {("a", "b"), ("b", "c")} <= {(x, y) for x, y, _ in idx.verified_pairs()}  # both pairs verified
    [c] = idx.clusters()
    assert c.members == ("b", "c")  # the stronger pair; "a" is not chained in


def test_no_chaining_when_the_far_pair_has_a_material_difference():
    calls = []

    def guard(x, y):  # only "a" and "c" differ in a way that matters
        calls.append((x.text, y.text))
        return "differ" if {x.text, y.text} == {"X uses Y for rules 1.", "X uses Y for rules 3."} else None

    idx = DedupeIndex(CFG, guard=guard)
    idx.build([item("a", "X uses Y for rules 1."), item("b", "X uses Y for rules."),
               item("c", "X uses Y for rules 3.")])
    assert len(idx.clusters()) == 1
    assert len(idx.clusters()[0].members) == 2
    assert calls


def test_canonical_is_the_member_with_highest_mean_similarity_then_weight_then_id():
    [c] = build([item(f"m{i}", s) for i, s in enumerate(RULES, 1)]).clusters()
    means = {m: np.mean([c.scores[pair_key(m, o)] for o in c.members if o != m]) for m in c.members}
    assert c.canonical == max(means, key=means.get) == "m2"
    # exact copies tie on similarity: the higher weight wins, then the smaller id
    [c] = build([item("m1", RULES[0], weight=1), item("m2", RULES[0], weight=3),
                 item("m3", RULES[0], weight=3)]).clusters()
    assert c.canonical == "m2"
    [c] = build([item("m9", RULES[0]), item("m3", RULES[0])]).clusters()
    assert c.canonical == "m3"


# ------------------------------------------------------------------------------------------------
# incremental, remove, determinism, recall
# ------------------------------------------------------------------------------------------------

CLASSES = ["OrderValidator", "RuleRegistry", "PaymentClient", "InvoiceMapper", "CartService", "StockCache"]
TEMPLATES = [
    ("{C} caches {n} lookups for ten minutes.", "{n} lookups are cached by {C} for ten minutes.",
     "{C} keeps {n} lookups in its cache for ten minutes."),
    ("{C} publishes an event after each {n} is saved.", "After each {n} is saved, {C} publishes an event.",
     "An event is published by {C} once a {n} is saved."),
    ("Do not call {C} from inside a transaction when handling {n} updates.",
     "{C} must not be called inside a transaction when handling {n} updates.",
     "Never call {C} within a transaction when handling {n} updates."),
    ("Tests for {C} stub the {n} gateway with WireMock.", "{C} tests stub the {n} gateway with WireMock.",
     "In the tests for {C}, the {n} gateway is stubbed with WireMock."),
]
NOUNS = ["order", "invoice", "payment", "cart"]


def corpus(seed: int = 3) -> list[DedupeItem]:
    """About 150 statements in four scopes and two types, with paraphrased duplicates and near misses."""
    R = random.Random(seed)
    out = []
    k = 0
    for scope in (SCOPE, OTHER_SCOPE, "acme/billing-api", "acme/order-service"):
        for typ in ("convention", "gotcha"):
            for tmpl in TEMPLATES:
                for _ in range(2):
                    c, n = R.choice(CLASSES), R.choice(NOUNS)
                    for _ in range(R.choice([1, 1, 2, 3])):
                        k += 1
                        text = R.choice(tmpl).format(C=c, n=n)
                        if R.random() < 0.2:
                            text = text.lower()
                        out.append(item(f"m{k:04d}", text, scope=scope, type=typ, stale=R.random() < 0.05,
                                        weight=R.randint(0, 3)))
    return out


def signature(idx: DedupeIndex) -> list[tuple]:
    return [(c.cluster_id, c.members, c.canonical, c.method, round(c.best_score, 2)) for c in idx.clusters()]


def test_incremental_add_gives_the_same_clusters_as_a_full_build():
    items = corpus()
    assert len(items) > 100
    full = build(items)
    assert len(full.clusters()) >= 10
    R = random.Random(1)
    shuffled = items[:]
    R.shuffle(shuffled)
    inc = build(shuffled[: len(items) // 2])
    new_or_changed = inc.add(shuffled[len(items) // 2:])
    assert signature(inc) == signature(full)
    assert {c.cluster_id for c in new_or_changed} <= {c.cluster_id for c in inc.clusters()}
    # without a rebuild: the vocabulary fitted on the first half is kept
    assert inc.rows_since_build > 0
    # in small steps too, with the TF-IDF path only (no fingerprint shortcut needed)
    steps = build(shuffled[:40])
    for i in range(40, len(shuffled), 17):
        steps.add(shuffled[i:i + 17])
    assert signature(steps) == signature(full)


def test_add_returns_new_or_changed_clusters_and_remove_reports_dropped_ones():
    idx = build([item("m1", RULES[0]), item("m2", RULES[1]), item("m9", "Tests use JUnit 5.")])
    [before] = idx.clusters()
    changed = idx.add([item("m3", RULES[2])])
    assert members(changed) == [("m1", "m2", "m3")]
    assert idx.last_dropped == [before.cluster_id]
    assert idx.cluster_of("m3") == changed[0]
    assert idx.add([item("m10", "Logs go to stdout.")]) == []
    changed = idx.remove(["m1", "unknown"])
    assert members(changed) == [("m2", "m3")]
    idx.remove(["m2"])
    assert idx.clusters() == [] and idx.cluster_of("m3") is None
    assert len(idx.last_dropped) == 1


def test_add_replaces_an_item_with_the_same_id():
    idx = build([item("m1", RULES[0]), item("m2", RULES[1])])
    assert members(idx.clusters()) == [("m1", "m2")]
    idx.add([item("m2", "Tests use JUnit 5.")])
    assert idx.clusters() == []
    idx.add([item("m2", RULES[1], stale=True)])
    assert idx.clusters() == []
    idx.add([item("m2", RULES[1])])
    assert members(idx.clusters()) == [("m1", "m2")]


def test_add_on_an_empty_index_builds():
    idx = DedupeIndex(CFG)
    assert idx.build([]) == []
    assert members(idx.add([item("m1", RULES[0]), item("m2", RULES[1])])) == [("m1", "m2")]


def test_deterministic_output_whatever_the_input_order():
    items = corpus()
    first = build(items)
    for seed in range(3):
        shuffled = items[:]
        random.Random(seed).shuffle(shuffled)
        again = build(shuffled)
        assert again.clusters() == first.clusters()
        assert again.verified_pairs() == first.verified_pairs()
    assert first.clusters() == sorted(first.clusters(), key=lambda c: (c.scope_key, c.type, c.members))


def test_index_finds_the_pairs_exhaustive_comparison_finds():
    items = corpus()
    idx = build(items)
    ours = {(a, b) for a, b, _ in idx.verified_pairs()}
    exhaustive = exhaustive_pairs(items, CFG)
    assert exhaustive and ours == exhaustive


def test_a_dense_block_gets_more_neighbours_than_top_n():
    # one scope where every statement has many near copies: with top_n=2 the lists come back full of
    # good pairs and are asked again with more neighbours
    texts = [f"{c} validates {n} payloads before saving them." for c in ("OrderValidator",) for n in NOUNS]
    variants = [t.replace("validates", v) for t in texts for v in ("validates", "checks", "always validates")]
    items = [item(f"m{i:02d}", t) for i, t in enumerate(variants + [v.lower() for v in variants])]
    cfg = DedupeConfig(learned=False, processes=1, top_n=2)
    ours = {(a, b) for a, b, _ in build(items, cfg).verified_pairs()}
    assert ours == exhaustive_pairs(items, cfg)
    capped = DedupeConfig(learned=False, processes=1, top_n=2, max_top_n=2)  # no second round: pairs are lost
    assert len({(a, b) for a, b, _ in build(items, capped).verified_pairs()}) < len(ours)


# ------------------------------------------------------------------------------------------------
# building blocks
# ------------------------------------------------------------------------------------------------


def test_match_key_and_fingerprint():
    assert match_key("Rules are registered through `RuleRegistry`.") == "rules regis ruleregi"
    assert match_key("The build needs Java 17 and maven_home.") == "build needs java 17 maven_home"
    assert match_key("ORDERVALIDATOR") == match_key("OrderValidator")  # a function of the normalised text
    for s in RULES + [CONFLICTING, "Ünïcode  text, with — punctuation!", ""]:
        assert fingerprint_of_normalized(normalize(s)) == fingerprint(s)


def test_char_ngram_tfidf_equals_scikit_learn_char_wb():
    from sklearn.feature_extraction.text import TfidfVectorizer

    R = random.Random(0)
    words = ["ab", "abc", "q", "zzzz", "rule", "ordervalidator", "x1", "héllo", "ü"]
    docs = [match_key(s) for s in RULES + [CONFLICTING]] + ["", "x"]
    docs += [" ".join(R.choice(words) for _ in range(R.randint(0, 6))) for _ in range(200)]
    for rng in [(3, 4), (2, 3), (4, 4)]:
        ours = CharNgramTfidf(rng)
        X = ours.fit_transform(docs)
        sk = TfidfVectorizer(analyzer="char_wb", ngram_range=rng, lowercase=False, dtype=np.float32)
        Y = sk.fit_transform(docs)
        names = ours.feature_names()
        assert sorted(names) == sorted(sk.get_feature_names_out())
        cols = [sk.vocabulary_[n] for n in names]
        assert np.abs(X.toarray() - Y.toarray()[:, cols]).max() < 1e-6
        new = docs[:20] + ["unseen çç text"]
        assert np.abs(ours.transform(new).toarray() - sk.transform(new).toarray()[:, cols]).max() < 1e-6
    capped = CharNgramTfidf((3, 4), max_df=0.05).fit_transform(docs)
    sk = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 4), lowercase=False, max_df=0.05).fit(docs)
    assert capped.shape[1] == len(sk.vocabulary_)


def test_guard_pairs_in_worker_processes_equals_in_process():
    texts = RULES + [CONFLICTING, "OrderValidator is thread-safe.", "OrderValidator is not thread-safe."]
    ia, ib = zip(*[(i, j) for i in range(len(texts)) for j in range(i + 1, len(texts))])
    serial = guard_pairs(texts, ia, ib, processes=1)
    forked = guard_pairs(texts, ia, ib, processes=2, min_parallel=1)
    assert serial == forked
    assert any(r is None for r in serial) and any(r for r in serial)


def test_worker_processes_give_the_same_index():
    items = corpus()
    one = build(items, DedupeConfig(learned=False, processes=1))
    two = build(items, DedupeConfig(learned=False, processes=2, parallel_min_pairs=1))
    assert one.clusters() == two.clusters()


def test_not_duplicates_mark_on_an_item_that_joins_an_exact_copy_later():
    idx = build([item("m1", RULES[0]), item("m2", RULES[1])], not_duplicates=[{"m3", "m2"}])
    assert members(idx.clusters()) == [("m1", "m2")]
    idx.add([item("m3", RULES[0])])  # an exact copy of m1, marked "not a duplicate" of m2
    for c in idx.clusters():
        assert not {"m2", "m3"} <= set(c.members)
    assert all({a, b} != {"m2", "m3"} for a, b, _ in idx.verified_pairs())


# ------------------------------------------------------------------------------------------------
# the learned scorer's engine (issue 10): forked scoring and the cache kept across ``add``
# ------------------------------------------------------------------------------------------------

LEARNED = DedupeConfig(processes=1)


def test_learned_scoring_in_worker_processes_gives_the_same_index():
    import threading

    assert threading.active_count() == 1  # else the index would score in-process and this test prove nothing
    items = corpus()
    one = build(items, LEARNED)
    two = build(items, DedupeConfig(processes=2, parallel_min_pairs=1))  # forks once a batch has 8 pairs
    assert one.clusters() == two.clusters()
    assert [c.explanation for c in one.clusters()] == [c.explanation for c in two.clusters()]


def test_learned_incremental_add_with_new_representatives_equals_a_full_build():
    items = corpus()
    full = build(items, LEARNED)
    # every other item later: a copy ranked before a unit's representative may arrive and replace it
    first, later = items[::2], items[1::2]
    inc = build(first, LEARNED)
    inc.add(later)
    assert signature(inc) == signature(full)
    inc.remove([i.memory_id for i in later[:10]])
    again = build([i for i in items if i not in later[:10]], LEARNED)
    assert signature(inc) == signature(again)


def test_learned_index_finds_every_pair_the_exhaustive_reference_finds_in_a_dense_block():
    # one block of two wordings of one claim about 35 durations: each statement's nearest neighbours are the
    # same wording with another number (vetoed: a different number), its duplicate is the other wording with
    # its own number; the index must verify exactly the pairs that scoring every pair verifies
    items = [item(f"a{k:02d}", f"OrderCache keeps order lookups for {k} minutes.", type="gotcha")
             for k in range(5, 40)]
    items += [item(f"b{k:02d}", f"Order lookups are cached by OrderCache for {k} minutes.", type="gotcha")
              for k in range(5, 40)]
    idx = build(items, LEARNED)
    found = {(a, b) for a, b, _ in idx.verified_pairs()}
    assert found == exhaustive_pairs(items, LEARNED)
    assert found == {(f"a{k:02d}", f"b{k:02d}") for k in range(5, 40)}
