"""Unit tests of the statement logic behind dedupe and conflict detection (issue 4):
memtui.similarity.statements. Expectations are computed by hand."""

from __future__ import annotations

import pytest

from memtui.similarity.statements import (
    CONFLICT_THRESHOLD,
    DUPLICATE_THRESHOLD,
    RELATED_THRESHOLD,
    SCORER,
    Analyzed,
    PairJudgement,
    analyze,
    conflict_reason,
    conflict_reason_analyzed,
    fingerprint,
    identifiers,
    judge_analyzed,
    judge_pair,
    material_difference,
    material_difference_analyzed,
    negated,
    negation_count,
    normalize,
    numbers,
)

# ------------------------------------------------------------------------------------ normalize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Rules are registered through `RuleRegistry`.", "rules are registered through ruleregistry"),
        ("  Rules   are\tregistered\nthrough RuleRegistry!!! ", "rules are registered through ruleregistry"),
        ("ＲｕｌｅＲｅｇｉｓｔｒｙ stores rules", "ruleregistry stores rules"),  # NFKC full-width
        ("Straße — Maße", "strasse masse"),  # casefold, dash dropped
        ("OrderValidator.validate(order)", "ordervalidator validate order"),
        ("", ""),
    ],
)
def test_normalize(text, expected):
    assert normalize(text) == expected


def test_normalize_is_the_exact_duplicate_key():
    assert normalize("Rules are registered through RuleRegistry.") == normalize(
        "rules are registered through `RuleRegistry`"
    )
    assert normalize("Rules are registered through RuleRegistry.") != normalize(
        "RuleRegistry are registered through rules."
    )


# ---------------------------------------------------------------------------------- fingerprint


def test_fingerprint_sorts_and_deduplicates_tokens():
    assert fingerprint("RuleRegistry registers rules, rules!") == "registers ruleregistry rules"


def test_fingerprint_ignores_order_case_and_punctuation():
    assert fingerprint("Validation rules: registered through RuleRegistry") == fingerprint(
        "through RuleRegistry, registered validation RULES"
    )
    assert fingerprint("through RuleRegistry registered validation rules") == (
        "registered ruleregistry rules through validation"
    )


def test_fingerprint_keeps_different_words_apart():
    assert fingerprint("Rules are registered through RuleRegistry") != fingerprint(
        "Rules are registered through RuleEngine"
    )


# ---------------------------------------------------------------------------------- identifiers


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Validation rules are registered through RuleRegistry.", {"RuleRegistry"}),
        ("OrderValidator.validate is the entry point for order validation.", {"OrderValidator.validate"}),
        ("Tests use JUnit 5 and live under src/test/java.", {"JUnit", "src/test/java"}),
        ("Shared pytest fixtures are in tests/conftest.py.", {"tests/conftest.py"}),
        ("The package is com.acme.order.validation.", {"com.acme.order.validation"}),
        ("DiscountCalculator rounds with HALF_EVEN.", {"DiscountCalculator", "HALF_EVEN"}),
        ("load_orders() returns a DataFrame indexed by order_id.", {"load_orders", "DataFrame", "order_id"}),
        ("Access tokens are JWTs signed with RS256.", {"JWT", "RS256"}),
        ("Order events go to SNS, refunds come from SQS.", {"SNS", "SQS"}),
        ("The public API of InventoryService is gRPC, not GraphQL.", {"API", "InventoryService", "gRPC", "GraphQL"}),
        ("Build with `mvn -q verify` before pushing.", {"mvn -q verify"}),
        ("Settings come from `config.toml`.", {"config.toml"}),
        ("See ADR-012 for the decision.", {"ADR-012"}),
        ("The readiness probe checks /health/ready.", {"/health/ready"}),
        ("Redux state is kept in localStorage.", {"localStorage"}),
        ("Rules are added, e.g. when a product is created.", set()),  # e.g. is not an identifier
        ("Release 1.2.3 ships on port 8080.", set()),  # numbers and versions are not identifiers
        ("Rules are registered centrally.", set()),
    ],
)
def test_identifiers(text, expected):
    assert identifiers(text) == frozenset(expected)


def test_identifiers_are_case_preserving():
    assert identifiers("OrderValidator calls RuleRegistry.resolve") == frozenset(
        {"OrderValidator", "RuleRegistry.resolve"}
    )


# -------------------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PaymentClient uses a 2 second timeout.", ("2s",)),
        ("PaymentClient uses a 2s timeout.", ("2s",)),
        ("PaymentClient uses a 2000 ms timeout.", ("2s",)),
        ("Session entries expire after 30 minutes.", ("1800s",)),
        ("Session entries expire after 30 min.", ("1800s",)),
        ("Session entries expire after 1 hour.", ("3600s",)),
        ("Pin the plugin to v1.2.3.", ("1.2.3",)),
        ("The build needs Java 17 and Maven 3.9.", ("17", "3.9")),
        ("The fraud threshold is 0.40.", ("0.4",)),
        ("Totals above 50,000 are rejected.", ("50000",)),
        ("Totals above 50000 are rejected.", ("50000",)),
        ("Monetary columns use NUMERIC(12,2).", ("12", "2")),
        ("Retries failed calls three times.", ("3x",)),
        ("Retries failed calls 3 times.", ("3x",)),
        ("A rule id registered twice throws.", ("2x",)),
        ("Rounds to two decimal places.", ("2",)),
        ("Max upload size is 10 MB.", ("10MB",)),
        ("Pods request 512Mi of memory.", ("512Mi",)),
        ("Terraform state lives in S3 in eu-west-1, hashed with argon2.", ()),  # digits inside names
        ("No numbers here.", ()),
    ],
)
def test_numbers(text, expected):
    assert numbers(text) == expected


def test_numbers_compare_equal_across_unit_spellings():
    assert numbers("a 2 seconds timeout") == numbers("a 2s timeout") == numbers("a 2000 ms timeout")
    assert numbers("every 15 minutes") == numbers("every 15 min")
    assert numbers("after 30 minutes") != numbers("after 1 hour")


# -------------------------------------------------------------------------------------- negated


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("OrderValidator does not cache validation results.", True),
        ("OrderValidator doesn't cache validation results.", True),
        ("OrderValidator doesn\u2019t cache validation results.", True),  # typographic apostrophe
        ("Refresh tokens are never rotated.", True),
        ("Wholesale orders have no total limit.", True),
        ("The nightly import no longer uses RuleEngine.", True),
        ("CI runs mypy without --strict.", True),
        ("Tests cannot run in parallel.", True),
        ("Components must not use CSS modules.", True),
        ("Avoid calling RuleRegistry.resolve from constructors.", True),
        ("Pagination uses opaque cursors instead of offsets.", True),
        ("Neither the API nor the worker retries.", True),
        ("OrderValidator caches validation results per order id.", False),
        ("RuleRegistry not only stores rules but also resolves them.", False),
        ("The migration creates the table if not exists.", False),
        ("Retries happen no matter which client fails.", False),
        ("The default handler is a no-op.", False),
        ("Notifications are sent by NotificationWorker.", False),  # "not" inside a word
        ("Rules are registered through RuleRegistry.", False),
    ],
)
def test_negated(text, expected):
    assert negated(text) is expected


def test_negation_count():
    assert negation_count("The API never returns 404 when a customer is not found.") == 2
    assert negation_count("The API returns 404 when a customer is not found.") == 1
    assert negation_count("Rules are registered through RuleRegistry.") == 0


# --------------------------------------------------------------------------- material difference


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # paraphrase, and a synonym of the identifier ("the registry for rules")
        ("Rules are registered through RuleRegistry.", "Validation uses RuleRegistry as the registry for rules."),
        ("Validation rules are registered through RuleRegistry.", "Rules are registered through the rule registry."),
        # reordering, passive voice, both sides negated
        ("OrderValidator calls RuleRegistry.", "RuleRegistry is called by OrderValidator."),
        ("Pricing does not use RuleRegistry.", "RuleRegistry is not used by pricing."),
        # unit spellings of the same quantity
        ("PaymentClient uses a 2 second timeout.", "PaymentClient uses a 2000 ms timeout."),
        # one side names an identifier the other merely omits
        ("Shipping costs are computed by ShippingCostCalculator.",
         "ShippingService computes shipping costs in ShippingCostCalculator."),
        # a dotted child of the same identifier
        ("OrderValidator is the entry point for validation.", "OrderValidator.validate is the entry point for validation."),
        # Postgres / PostgreSQL are one thing
        ("Integration tests run against Postgres.", "Integration tests run against PostgreSQL."),
    ],
)
def test_no_material_difference(a, b):
    assert material_difference(a, b) is None
    assert material_difference(b, a) is None


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("Rules are registered through RuleRegistry.", "Rules are registered through RuleEngine.",
         "different identifiers: RuleRegistry vs RuleEngine"),
        ("Webhooks are signed as JWS.", "Webhooks are signed as JWT.", "different identifiers: JWS vs JWT"),
        ("Order events go to SNS.", "Order events go to SQS.", "different identifiers: SNS vs SQS"),
        ("OrderValidator caches results.", "OrderValidator does not cache results.",
         "negation on one side only (the second statement)"),
        ("The feature flag is enabled.", "The feature flag is disabled.", "opposite predicates (enable)"),
        ("Emails are sent synchronously.", "Emails are sent asynchronously.", "opposite predicates (sync)"),
        ("The build needs Java 17.", "The build needs Java 21.", "different numbers: 17 vs 21"),
        ("Pin the plugin to v1.28.0.", "Pin the plugin to v1.31.0.", "different numbers: 1.28.0 vs 1.31.0"),
        ("InventoryClient retries failed calls.", "InventoryClient retries failed calls 3 times.",
         "a number on one side only: 3x"),
        ("Feature branches are deleted after merge.", "Feature branches are kept after merge.",
         "one word differs: deleted vs kept"),
        ("Validation rules are configured directly in OrderValidator.", "OrderValidator calls RuleRegistry.",
         "OrderValidator is the subject of one statement only, and RuleRegistry is named by one only"),
    ],
)
def test_material_difference(a, b, expected):
    assert material_difference(a, b) == expected


def test_material_difference_is_symmetric_in_kind():
    a, b = "Rules are registered through RuleRegistry.", "Rules are registered through RuleEngine."
    assert material_difference(b, a) == "different identifiers: RuleEngine vs RuleRegistry"


# -------------------------------------------------------------------------- conflicts, judgement


def test_conflict_reason_severity():
    # different object for the same subject and predicate: medium
    assert conflict_reason(
        "Validation rules are registered through RuleRegistry.",
        "Validation rules are configured directly in OrderValidator.",
    ) == ("medium", "different object: RuleRegistry vs OrderValidator")
    # negation on one side, same subject: high
    severity, reason = conflict_reason(
        "OrderValidator caches validation results per order id.", "OrderValidator does not cache validation results."
    )
    assert severity == "high" and "negation" in reason
    # opposite predicates: high
    severity, reason = conflict_reason("Confirmation emails are sent synchronously.",
                                       "Confirmation emails are sent asynchronously.")
    assert (severity, reason) == ("high", "opposite predicates (sync) about the same subject")
    # different number for the same quantity: medium
    severity, reason = conflict_reason("The order-service listens on port 8080.", "The order-service listens on port 8081.")
    assert severity == "medium" and "8080 vs 8081" in reason


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # different targets, different predicate ("A works at X" / "A administers Y")
        ("Alice maintains the payments module.", "Alice administers the staging cluster."),
        # different subjects with the same predicate
        ("InventoryClient retries failed calls 3 times.", "PaymentClient retries failed calls 5 times."),
        ("OrderRepository extends JpaRepository.", "CustomerRepository extends JpaRepository."),
        # a predicate that takes many objects
        ("OrderValidator calls RuleRegistry.", "OrderValidator calls PaymentClient."),
        # negation about another subject
        ("Pricing does not use RuleRegistry.", "Validation uses RuleRegistry as the registry for rules."),
        # negation in a second clause about something else
        ("Validation rules are registered through RuleRegistry.",
         "Order validation rules are registered centrally through RuleRegistry; OrderValidator must not "
         "construct rules itself."),
        # an adjective qualifying the subject
        ("Public endpoints need an API key.", "Private endpoints need an API key."),
        # paraphrases
        ("Rules are registered through RuleRegistry.", "Validation uses RuleRegistry as the registry for rules."),
    ],
)
def test_not_a_conflict(a, b):
    assert conflict_reason(a, b) is None
    assert conflict_reason(b, a) is None


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [
        ("Rules are registered through RuleRegistry.", "Validation uses RuleRegistry as the registry for rules.",
         "duplicate"),
        ("Validation rules are registered through RuleRegistry.", "Validation rules are registered through RuleRegistry.",
         "duplicate"),
        ("Validation rules are registered through RuleRegistry.",
         "Validation rules are configured directly in OrderValidator.", "conflict"),
        ("Order events are published to the SNS topic order-events.",
         "Order events are published to the SQS queue order-events.", "conflict"),
        ("OrderValidator.validate is the entry point for order validation.",
         "OrderValidator caches validation results per order id.", "related"),
        ("Commit messages in acme repositories use the imperative mood.",
         "DiscountCalculator rounds discounts to 2 decimal places with HALF_EVEN rounding.", "unrelated"),
    ],
)
def test_judge_pair(a, b, kind):
    judgement = judge_pair(a, b)
    assert isinstance(judgement, PairJudgement)
    assert judgement.kind == kind
    assert 0.0 <= judgement.score <= 100.0
    assert judge_pair(b, a).kind == kind


def test_judge_pair_reasons_explain_conflicts_and_differences():
    j = judge_pair("The build needs Java 17.", "The build needs Java 21.")
    assert j.kind == "conflict" and j.reasons == ("medium: different numbers for the same quantity: 17 vs 21",)
    j = judge_pair("InventoryClient retries failed calls 3 times.", "PaymentClient retries failed calls 5 times.")
    assert j.kind == "related" and j.reasons and "different identifiers" in j.reasons[0]


def test_analyzed_variants_agree_with_text_variants_and_are_cacheable():
    a, b = "Rules are registered through RuleRegistry.", "Rules are registered through RuleEngine."
    x, y = analyze(a), analyze(b)
    assert isinstance(x, Analyzed)
    assert hash(x) == hash(analyze(a))  # frozen, hashable: usable as a cache key
    assert x.normalized == normalize(a) and x.fingerprint == fingerprint(a)
    assert x.identifiers == identifiers(a) and x.numbers == numbers(a) and x.negated is negated(a)
    assert x.tokens == tuple(normalize(a).split())
    assert judge_analyzed(x, y) == judge_pair(a, b)
    assert material_difference_analyzed(x, y) == material_difference(a, b)
    assert conflict_reason_analyzed(x, y) == conflict_reason(a, b)


def test_score_is_the_documented_scorer_over_the_keys():
    x = analyze("Validation rules are registered through RuleRegistry.")
    y = analyze("Validation uses RuleRegistry as the registry for rules.")
    assert judge_analyzed(x, y).score == pytest.approx(SCORER(x.key, y.key))
    assert 0 < RELATED_THRESHOLD < DUPLICATE_THRESHOLD <= 100 and 0 < CONFLICT_THRESHOLD <= 100


def test_empty_and_odd_input_do_not_crash():
    for text in ("", "   ", "!!!", "`", "``", "42", "—", "a\x00b"):
        x = analyze(text)
        judge_analyzed(x, analyze("Rules are registered through RuleRegistry."))
        judge_analyzed(x, x)


def test_terminal_escapes_are_not_read_as_words():
    # seen in a user's trial: an escape sequence around a name gave "RuleRegistry vs 0m, 31mRuleStore"
    from memtui.similarity.statements import conflict_reason, identifiers

    red = "Validation rules are registered through \x1b[31mRuleStore\x1b[0m."
    assert identifiers(red) == {"RuleStore"}
    assert conflict_reason("Validation rules are registered through RuleRegistry.", red) == \
        ("medium", "different object: RuleRegistry vs RuleStore")


def test_numbers_of_different_kinds_are_not_one_quantity():
    from memtui.similarity.statements import conflict_reason, quantities_differ, quantity_text

    assert conflict_reason("OrderService keeps 3 worker threads.", "OrderService keeps results for 5 days.") is None
    assert quantities_differ(["3x"], ["5x"]) and not quantities_differ(["3"], ["432000s"])
    assert [quantity_text(q) for q in ("432000s", "90s", "0.25s", "3x", "1.2.3")] == \
        ["5 days", "90 seconds", "250 ms", "3 times", "1.2.3"]


def test_requirements_and_cancelled_negations_are_no_negation():
    from memtui.similarity.statements import polar_negations

    assert polar_negations("A release cannot ship until the QA lead has approved it.") == 0
    assert polar_negations("No merge unless CI is green.") == 0
    assert polar_negations("Never merge without a review.") == 0
    assert polar_negations("Deploys run without manual approval.") == 1
    assert polar_negations("Neither the API nor the worker retries.") == 1
    assert polar_negations("Use pnpm, not npm.") == 1
