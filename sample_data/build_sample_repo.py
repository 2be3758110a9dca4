#!/usr/bin/env python3
"""Build the memtui sample data: a small Java "order-service" git history and its memories.

Writes, next to this script:

* ``order-service.bundle`` -- a git bundle (branch ``main``, tag ``memories-validated``)
* ``memories.yaml``        -- ~30 memory records plus candidates (docs/record-format.md) whose
  evidence points at real spans at the ``memories-validated`` commit

Stdlib only; uses the ``git`` CLI. Deterministic: fixed identities and dates, no user or
system git config, no hooks, so re-running produces the same commit SHAs and the same YAML.
Finally it clones the bundle and re-checks every evidence span hash with ``git show``.

Usage: python3 sample_data/build_sample_repo.py [--out-dir DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

AUTHOR_NAME = "Dana Okafor"
AUTHOR_EMAIL = "dana.okafor@acme.example"
COMMITTER_NAME = "Dana Okafor"
COMMITTER_EMAIL = "dana.okafor@acme.example"

TAG = "memories-validated"

J = "src/main/java/com/acme/order"
T = "src/test/java/com/acme/order"
P_ORDER = f"{J}/Order.java"
P_ORDER_LINE = f"{J}/OrderLine.java"
P_RULE = f"{J}/validation/ValidationRule.java"
P_RESULT = f"{J}/validation/ValidationResult.java"
P_REGISTRY = f"{J}/validation/RuleRegistry.java"
P_VALIDATOR = f"{J}/validation/OrderValidator.java"
P_NON_EMPTY = f"{J}/validation/rules/NonEmptyLinesRule.java"
P_POSITIVE = f"{J}/validation/rules/PositiveQuantityRule.java"
P_MAX_TOTAL = f"{J}/validation/rules/MaxOrderTotalRule.java"
P_ENGINE = f"{J}/legacy/RuleEngine.java"
P_DISCOUNT = f"{J}/pricing/DiscountCalculator.java"
P_CLIENT = f"{J}/client/PaymentClient.java"
P_RETRY = f"{J}/client/RetryPolicy.java"
P_REGISTRY_TEST = f"{T}/validation/RuleRegistryTest.java"
P_VALIDATOR_TEST = f"{T}/validation/OrderValidatorTest.java"
P_APP_PROPS = "src/main/resources/application.properties"
P_RULES_PROPS = "src/main/resources/rules.properties"
P_LEGACY_DOC = "docs/legacy/rule-engine.md"
P_ADR = "docs/adr/ADR-012-rule-registry.md"
P_README = "README.md"
P_POM = "pom.xml"
P_GITIGNORE = ".gitignore"


def replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"expected exactly one occurrence of {old!r}"
    return text.replace(old, new)


# --------------------------------------------------------------------------------------------
# File contents. The *_V2 texts are the ones at the `memories-validated` commit; earlier and
# later versions are derived from them with replace_once so the diffs stay small and explicit.
# --------------------------------------------------------------------------------------------

POM = """\
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
    <modelVersion>4.0.0</modelVersion>

    <groupId>com.acme</groupId>
    <artifactId>order-service</artifactId>
    <version>1.4.0-SNAPSHOT</version>
    <packaging>jar</packaging>

    <properties>
        <maven.compiler.release>17</maven.compiler.release>
        <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
        <junit.version>5.10.2</junit.version>
    </properties>

    <dependencies>
        <dependency>
            <groupId>org.junit.jupiter</groupId>
            <artifactId>junit-jupiter</artifactId>
            <version>${junit.version}</version>
            <scope>test</scope>
        </dependency>
    </dependencies>

    <build>
        <plugins>
            <plugin>
                <groupId>org.apache.maven.plugins</groupId>
                <artifactId>maven-surefire-plugin</artifactId>
                <version>3.2.5</version>
            </plugin>
        </plugins>
    </build>
</project>
"""

README_V2 = """\
# order-service

Order intake for the acme shop: validates incoming orders, prices them and authorizes
the payment.

## Layout

- `com.acme.order.validation` -- `OrderValidator` and the validation rules, which are
  registered in `RuleRegistry` (see `docs/adr/ADR-012-rule-registry.md`).
- `com.acme.order.pricing` -- order-level discounts.
- `com.acme.order.client` -- the payments service client and its retry policy.
- `com.acme.order.legacy` -- the deprecated `RuleEngine` used by the nightly batch import
  (see `docs/legacy/rule-engine.md`).

## Build

    mvn -q verify

The build needs Java 17 and Maven 3.9.
"""
README_V1 = replace_once(
    README_V2,
    "- `com.acme.order.client` -- the payments service client and its retry policy.\n", "")
README_V1 = replace_once(
    README_V1, "registered in `RuleRegistry` (see `docs/adr/ADR-012-rule-registry.md`).",
    "registered in `RuleRegistry`.")
README_V4 = replace_once(
    README_V2,
    "- `com.acme.order.legacy` -- the deprecated `RuleEngine` used by the nightly batch import\n"
    "  (see `docs/legacy/rule-engine.md`).\n", "")
README_V5 = README_V4 + """
## Running locally

Payment calls go to the staging payments service. Export `PAYMENT_API_KEY` before starting
the service; it is never committed.
"""

GITIGNORE = """\
target/
*.iml
.idea/
"""

ORDER = """\
package com.acme.order;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * An order as received from the checkout API or the nightly batch import.
 */
public final class Order {

    public static final String DEFAULT_TYPE = "retail";

    private final String id;
    private final String customerId;
    private final String type;
    private final String currency;
    private final List<OrderLine> lines;

    public Order(String id, String customerId, String type, String currency, List<OrderLine> lines) {
        this.id = Objects.requireNonNull(id, "id");
        this.customerId = customerId;
        this.type = type == null ? DEFAULT_TYPE : type;
        this.currency = Objects.requireNonNull(currency, "currency");
        this.lines = new ArrayList<>(lines == null ? List.of() : lines);
    }

    public String getId() {
        return id;
    }

    public String getCustomerId() {
        return customerId;
    }

    public String getType() {
        return type;
    }

    public String getCurrency() {
        return currency;
    }

    public List<OrderLine> getLines() {
        return Collections.unmodifiableList(lines);
    }

    public boolean isEmpty() {
        return lines.isEmpty();
    }

    public BigDecimal total() {
        return lines.stream()
                .map(OrderLine::lineTotal)
                .reduce(BigDecimal.ZERO, BigDecimal::add);
    }
}
"""

ORDER_LINE = """\
package com.acme.order;

import java.math.BigDecimal;
import java.util.Objects;

/**
 * One line of an order: a SKU, a quantity and the unit price in the order currency.
 */
public record OrderLine(String sku, int quantity, BigDecimal unitPrice) {

    public OrderLine {
        Objects.requireNonNull(sku, "sku");
        Objects.requireNonNull(unitPrice, "unitPrice");
    }

    public BigDecimal lineTotal() {
        return unitPrice.multiply(BigDecimal.valueOf(quantity));
    }
}
"""

VALIDATION_RULE = """\
package com.acme.order.validation;

import com.acme.order.Order;
import java.util.Optional;
import java.util.Set;

/**
 * A single order validation rule.
 *
 * <p>Rules are stateless. They are registered in {@link RuleRegistry}; {@link OrderValidator}
 * asks the registry for the rules of an order type and never constructs rules itself.
 */
public interface ValidationRule {

    /** Stable, dotted, lowercase identifier, e.g. {@code order.lines.non-empty}. */
    String id();

    /** Order types this rule applies to. */
    default Set<String> orderTypes() {
        return Set.of("retail", "wholesale");
    }

    default boolean appliesTo(String orderType) {
        return orderTypes().contains(orderType);
    }

    /**
     * Checks one order.
     *
     * @return a violation message, or empty when the order passes
     */
    Optional<String> check(Order order);
}
"""

VALIDATION_RESULT = """\
package com.acme.order.validation;

import java.util.List;

/**
 * Outcome of {@link OrderValidator#validate}: valid, or a list of violation messages, each
 * prefixed with the id of the rule that produced it.
 */
public final class ValidationResult {

    private static final ValidationResult VALID = new ValidationResult(List.of());

    private final List<String> violations;

    private ValidationResult(List<String> violations) {
        this.violations = List.copyOf(violations);
    }

    public static ValidationResult valid() {
        return VALID;
    }

    public static ValidationResult invalid(List<String> violations) {
        if (violations.isEmpty()) {
            throw new IllegalArgumentException("an invalid result needs at least one violation");
        }
        return new ValidationResult(violations);
    }

    public boolean isValid() {
        return violations.isEmpty();
    }

    public List<String> violations() {
        return violations;
    }
}
"""

RULE_REGISTRY_V2 = """\
package com.acme.order.validation;

import com.acme.order.validation.rules.MaxOrderTotalRule;
import com.acme.order.validation.rules.NonEmptyLinesRule;
import com.acme.order.validation.rules.PositiveQuantityRule;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Central registry of order validation rules.
 *
 * <p>Every validation rule is registered here under its id. {@link OrderValidator} asks the
 * registry for the rules that apply to an order type via {@link #resolve(String)}.
 */
public class RuleRegistry {

    private final Map<String, ValidationRule> rules = new LinkedHashMap<>();

    public static RuleRegistry withDefaultRules() {
        RuleRegistry registry = new RuleRegistry();
        registry.register(new NonEmptyLinesRule());
        registry.register(new PositiveQuantityRule());
        registry.register(new MaxOrderTotalRule(new BigDecimal("50000")));
        return registry;
    }

    public void register(ValidationRule rule) {
        if (rules.putIfAbsent(rule.id(), rule) != null) {
            throw new IllegalArgumentException("Duplicate validation rule: " + rule.id());
        }
    }

    public List<ValidationRule> resolve(String orderType) {
        List<ValidationRule> resolved = new ArrayList<>();
        for (ValidationRule rule : rules.values()) {
            if (rule.appliesTo(orderType)) {
                resolved.add(rule);
            }
        }
        return resolved;
    }

    public int size() {
        return rules.size();
    }
}
"""
RULE_REGISTRY_V1 = replace_once(
    RULE_REGISTRY_V2, "import com.acme.order.validation.rules.MaxOrderTotalRule;\n", "")
RULE_REGISTRY_V1 = replace_once(RULE_REGISTRY_V1, "import java.math.BigDecimal;\n", "")
RULE_REGISTRY_V1 = replace_once(
    RULE_REGISTRY_V1,
    '        registry.register(new MaxOrderTotalRule(new BigDecimal("50000")));\n', "")
# Commit 3: the body of resolve changes (fallback to the default order type, immutable
# result); the new import shifts the rest of the file by one line without changing it.
RULE_REGISTRY_V3 = replace_once(
    RULE_REGISTRY_V2,
    """\
                resolved.add(rule);
            }
        }
        return resolved;
    }
""",
    """\
                resolved.add(rule);
            }
        }
        if (resolved.isEmpty() && !Order.DEFAULT_TYPE.equals(orderType)) {
            // Unknown order types (e.g. marketplace) fall back to the default rule set.
            return resolve(Order.DEFAULT_TYPE);
        }
        return List.copyOf(resolved);
    }
""")
RULE_REGISTRY_V3 = replace_once(
    RULE_REGISTRY_V3, "import com.acme.order.validation.rules.MaxOrderTotalRule;\n",
    "import com.acme.order.Order;\nimport com.acme.order.validation.rules.MaxOrderTotalRule;\n")

ORDER_VALIDATOR_V2 = """\
package com.acme.order.validation;

import com.acme.order.Order;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

public class OrderValidator {

    private final RuleRegistry registry;

    public OrderValidator(RuleRegistry registry) {
        this.registry = registry;
    }

    public OrderValidator() {
        this(RuleRegistry.withDefaultRules());
    }

    public ValidationResult validate(Order order) {
        if (order == null) {
            return ValidationResult.invalid(List.of("order is required"));
        }
        List<String> violations = new ArrayList<>();
        for (ValidationRule rule : registry.resolve(order.getType())) {
            Optional<String> violation = rule.check(order);
            violation.ifPresent(message -> violations.add(rule.id() + ": " + message));
        }
        return violations.isEmpty() ? ValidationResult.valid() : ValidationResult.invalid(violations);
    }
}
"""
ORDER_VALIDATOR_V1 = ORDER_VALIDATOR_V2
# Commit 3: a new import and a class javadoc near the top shift `validate` down; its text is
# unchanged.
ORDER_VALIDATOR_V3 = replace_once(
    ORDER_VALIDATOR_V2, "import java.util.List;\nimport java.util.Optional;\n",
    "import java.util.List;\nimport java.util.Objects;\nimport java.util.Optional;\n")
ORDER_VALIDATOR_V3 = replace_once(
    ORDER_VALIDATOR_V3, "\npublic class OrderValidator {\n",
    """
/**
 * Entry point for order validation.
 *
 * <p>The rules come from {@link RuleRegistry#resolve(String)} for the order's type (ADR-012);
 * the validator itself holds no rules.
 */
public class OrderValidator {
""")
ORDER_VALIDATOR_V3 = replace_once(
    ORDER_VALIDATOR_V3, "        this.registry = registry;\n",
    '        this.registry = Objects.requireNonNull(registry, "registry");\n')

NON_EMPTY_RULE = """\
package com.acme.order.validation.rules;

import com.acme.order.Order;
import com.acme.order.validation.ValidationRule;
import java.util.Optional;

/**
 * Rejects orders without any order line.
 */
public class NonEmptyLinesRule implements ValidationRule {

    @Override
    public String id() {
        return "order.lines.non-empty";
    }

    @Override
    public Optional<String> check(Order order) {
        if (order.isEmpty()) {
            return Optional.of("order has no lines");
        }
        return Optional.empty();
    }
}
"""

POSITIVE_RULE = """\
package com.acme.order.validation.rules;

import com.acme.order.Order;
import com.acme.order.validation.ValidationRule;
import java.util.Optional;

/**
 * Rejects order lines with a zero or negative quantity.
 */
public class PositiveQuantityRule implements ValidationRule {

    @Override
    public String id() {
        return "order.lines.positive-quantity";
    }

    @Override
    public Optional<String> check(Order order) {
        return order.getLines().stream()
                .filter(line -> line.quantity() <= 0)
                .findFirst()
                .map(line -> "line " + line.sku() + " has quantity " + line.quantity());
    }
}
"""

MAX_TOTAL_RULE = """\
package com.acme.order.validation.rules;

import com.acme.order.Order;
import com.acme.order.validation.ValidationRule;
import java.math.BigDecimal;
import java.util.Optional;
import java.util.Set;

/**
 * Rejects retail orders whose total exceeds a limit, in the order currency.
 */
public class MaxOrderTotalRule implements ValidationRule {

    private final BigDecimal limit;

    public MaxOrderTotalRule(BigDecimal limit) {
        this.limit = limit;
    }

    @Override
    public String id() {
        return "order.total.max";
    }

    @Override
    public Set<String> orderTypes() {
        // Wholesale orders are credit-checked by the ERP instead.
        return Set.of("retail");
    }

    @Override
    public Optional<String> check(Order order) {
        BigDecimal total = order.total();
        if (total.compareTo(limit) > 0) {
            return Optional.of("total " + total + " exceeds limit " + limit);
        }
        return Optional.empty();
    }
}
"""

RULE_ENGINE_V2 = """\
package com.acme.order.legacy;

import com.acme.order.Order;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Predicate;

/**
 * Legacy rule engine used by the nightly batch import (see docs/legacy/rule-engine.md).
 *
 * <p>Rules are switched on and off in {@code rules.properties}; each key names a built-in
 * predicate. New rules must not be added here: register them in RuleRegistry (ADR-012).
 */
@Deprecated
public class RuleEngine {

    private static final Map<String, Predicate<Order>> BUILT_INS = Map.of(
            "lines.nonEmpty", order -> !order.isEmpty(),
            "lines.positiveQuantity", order -> order.getLines().stream().allMatch(l -> l.quantity() > 0),
            "customer.present", order -> order.getCustomerId() != null);

    private final Map<String, Predicate<Order>> enabled = new LinkedHashMap<>();

    public static RuleEngine fromClasspath() throws IOException {
        Properties props = new Properties();
        try (InputStream in = RuleEngine.class.getResourceAsStream("/rules.properties")) {
            if (in != null) {
                props.load(in);
            }
        }
        RuleEngine engine = new RuleEngine();
        for (String key : props.stringPropertyNames()) {
            if (Boolean.parseBoolean(props.getProperty(key)) && BUILT_INS.containsKey(key)) {
                engine.enabled.put(key, BUILT_INS.get(key));
            }
        }
        return engine;
    }

    /** Returns the keys of the rules the order fails. */
    public List<String> evaluate(Order order) {
        List<String> failures = new ArrayList<>();
        for (Map.Entry<String, Predicate<Order>> rule : enabled.entrySet()) {
            if (!rule.getValue().test(order)) {
                failures.add(rule.getKey());
            }
        }
        return failures;
    }
}
"""
RULE_ENGINE_V1 = replace_once(
    RULE_ENGINE_V2,
    """\
 * predicate. New rules must not be added here: register them in RuleRegistry (ADR-012).
 */
@Deprecated
""",
    """\
 * predicate.
 */
""")

RULES_PROPERTIES = """\
# Legacy RuleEngine switches (nightly batch import only)
lines.nonEmpty=true
lines.positiveQuantity=true
customer.present=false
"""

DISCOUNT = """\
package com.acme.order.pricing;

import com.acme.order.Order;
import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * Computes order-level discounts.
 *
 * <p>Pricing is deliberately independent of validation: it never consults RuleRegistry and
 * assumes the order has already been validated.
 */
public class DiscountCalculator {

    private static final BigDecimal WHOLESALE_RATE = new BigDecimal("0.08");
    private static final BigDecimal BULK_THRESHOLD = new BigDecimal("1000");
    private static final BigDecimal BULK_RATE = new BigDecimal("0.03");

    public BigDecimal discountFor(Order order) {
        BigDecimal total = order.total();
        BigDecimal rate = BigDecimal.ZERO;
        if ("wholesale".equals(order.getType())) {
            rate = WHOLESALE_RATE;
        } else if (total.compareTo(BULK_THRESHOLD) >= 0) {
            rate = BULK_RATE;
        }
        return total.multiply(rate).setScale(2, RoundingMode.HALF_EVEN);
    }

    public BigDecimal priceAfterDiscount(Order order) {
        return order.total().subtract(discountFor(order));
    }
}
"""

PAYMENT_CLIENT = """\
package com.acme.order.client;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Thin HTTP client for the payments service. Retries are delegated to {@link RetryPolicy}.
 */
public class PaymentClient {

    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(2);

    private final HttpClient http;
    private final URI baseUri;
    private final String apiKey;
    private final RetryPolicy retryPolicy;

    public PaymentClient(URI baseUri, String apiKey, RetryPolicy retryPolicy) {
        this.http = HttpClient.newBuilder().connectTimeout(REQUEST_TIMEOUT).build();
        this.baseUri = baseUri;
        this.apiKey = apiKey;
        this.retryPolicy = retryPolicy;
    }

    /** Authorizes the payment of an order; returns the final HTTP status. */
    public int authorize(String orderId, String amount) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(baseUri.resolve("/v1/authorizations"))
                .timeout(REQUEST_TIMEOUT)
                .header("Authorization", "Bearer " + apiKey)
                .header("Idempotency-Key", orderId)
                .POST(HttpRequest.BodyPublishers.ofString(
                        "{\\"orderId\\":\\"" + orderId + "\\",\\"amount\\":\\"" + amount + "\\"}"))
                .build();
        int attempt = 0;
        while (true) {
            attempt++;
            int status;
            try {
                status = http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
            } catch (IOException e) {
                if (!retryPolicy.shouldRetry(attempt, -1)) {
                    throw e;
                }
                Thread.sleep(retryPolicy.delayBefore(attempt + 1).toMillis());
                continue;
            }
            if (status < 400 || !retryPolicy.shouldRetry(attempt, status)) {
                return status;
            }
            Thread.sleep(retryPolicy.delayBefore(attempt + 1).toMillis());
        }
    }
}
"""

RETRY_POLICY = """\
package com.acme.order.client;

import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Retry policy for calls to the payments service.
 *
 * <p>The payments team has not confirmed whether 409 responses are safe to retry; the
 * idempotency key should make it harmless (ORD-287).
 */
public class RetryPolicy {

    private final int maxAttempts;
    private final Duration baseDelay;
    private final boolean retryConflicts;

    public RetryPolicy(int maxAttempts, Duration baseDelay, boolean retryConflicts) {
        this.maxAttempts = maxAttempts;
        this.baseDelay = baseDelay;
        this.retryConflicts = retryConflicts;
    }

    public static RetryPolicy fromProperties(Properties props) {
        int retries = Integer.parseInt(props.getProperty("payment.retries", "3"));
        // TODO(ORD-287): "retries" is passed as maxAttempts; does that include the first call?
        return new RetryPolicy(retries, Duration.ofMillis(200),
                Boolean.parseBoolean(props.getProperty("payment.retry-conflicts", "false")));
    }

    /**
     * @param attempt 1-based number of the attempt that just failed
     * @param status  HTTP status, or -1 for an I/O error
     */
    public boolean shouldRetry(int attempt, int status) {
        if (attempt > maxAttempts) {
            return false;
        }
        if (status == -1 || status == 429 || status >= 500) {
            return true;
        }
        return retryConflicts && status == 409;
    }

    public Duration delayBefore(int attempt) {
        long exponential = baseDelay.toMillis() * (1L << Math.min(attempt - 1, 6));
        long jitter = ThreadLocalRandom.current().nextLong(0, baseDelay.toMillis() + 1);
        return Duration.ofMillis(exponential + jitter);
    }
}
"""

APP_PROPERTIES = """\
# Payments service (staging values; secrets are injected by the deployment)
payment.base-url=https://payments.staging.acme.internal
payment.api-key=${PAYMENT_API_KEY}
payment.retries=3
payment.retry-conflicts=false
payment.timeout-ms=2000
"""

REGISTRY_TEST_V2 = """\
package com.acme.order.validation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.acme.order.validation.rules.NonEmptyLinesRule;
import java.util.List;
import org.junit.jupiter.api.Test;

class RuleRegistryTest {

    @Test
    void defaultRulesAreRegistered() {
        RuleRegistry registry = RuleRegistry.withDefaultRules();
        assertEquals(3, registry.size());
    }

    @Test
    void resolveReturnsRulesForOrderType() {
        RuleRegistry registry = RuleRegistry.withDefaultRules();
        List<ValidationRule> retail = registry.resolve("retail");
        List<ValidationRule> wholesale = registry.resolve("wholesale");
        assertEquals(3, retail.size());
        assertEquals(2, wholesale.size());
    }

    @Test
    void duplicateRuleIdIsRejected() {
        RuleRegistry registry = new RuleRegistry();
        registry.register(new NonEmptyLinesRule());
        assertThrows(IllegalArgumentException.class, () -> registry.register(new NonEmptyLinesRule()));
    }

    @Test
    void unknownOrderTypeResolvesNoRules() {
        assertTrue(RuleRegistry.withDefaultRules().resolve("marketplace").isEmpty());
    }
}
"""
REGISTRY_TEST_V1 = replace_once(REGISTRY_TEST_V2, "assertEquals(3, registry.size());",
                                "assertEquals(2, registry.size());")
REGISTRY_TEST_V1 = replace_once(REGISTRY_TEST_V1, "assertEquals(3, retail.size());",
                                "assertEquals(2, retail.size());")
REGISTRY_TEST_V3 = replace_once(
    REGISTRY_TEST_V2,
    """\
    void unknownOrderTypeResolvesNoRules() {
        assertTrue(RuleRegistry.withDefaultRules().resolve("marketplace").isEmpty());
    }
""",
    """\
    void unknownOrderTypeFallsBackToDefaultRules() {
        RuleRegistry registry = RuleRegistry.withDefaultRules();
        assertEquals(registry.resolve("retail"), registry.resolve("marketplace"));
    }
""")
REGISTRY_TEST_V3 = replace_once(
    REGISTRY_TEST_V3, "import static org.junit.jupiter.api.Assertions.assertTrue;\n", "")

VALIDATOR_TEST = """\
package com.acme.order.validation;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.acme.order.Order;
import com.acme.order.OrderLine;
import java.math.BigDecimal;
import java.util.List;
import org.junit.jupiter.api.Test;

class OrderValidatorTest {

    private final OrderValidator validator = new OrderValidator();

    @Test
    void validRetailOrderPasses() {
        Order order = new Order("o-1", "c-1", "retail", "EUR",
                List.of(new OrderLine("SKU-1", 2, new BigDecimal("9.99"))));
        assertTrue(validator.validate(order).isValid());
    }

    @Test
    void emptyOrderFails() {
        Order order = new Order("o-2", "c-1", "retail", "EUR", List.of());
        ValidationResult result = validator.validate(order);
        assertFalse(result.isValid());
        assertTrue(result.violations().get(0).startsWith("order.lines.non-empty"));
    }

    @Test
    void nullOrderFails() {
        assertFalse(validator.validate(null).isValid());
    }

    @Test
    void retailOrderAboveLimitFails() {
        Order order = new Order("o-3", "c-1", "retail", "EUR",
                List.of(new OrderLine("SKU-9", 1, new BigDecimal("60000"))));
        assertFalse(validator.validate(order).isValid());
    }
}
"""

LEGACY_DOC = """\
# Legacy RuleEngine

> Describes `com.acme.order.legacy.RuleEngine`, used by the nightly batch import.
> New validation rules go to `RuleRegistry` instead (ADR-012).

## How it works

`RuleEngine.fromClasspath()` reads `rules.properties` from the classpath. Each key names a
built-in predicate and is switched on with `true`:

    lines.nonEmpty=true
    lines.positiveQuantity=true
    customer.present=false

`RuleEngine.evaluate(order)` returns the keys of the rules the order fails.

## Changing a rule

1. Edit `src/main/resources/rules.properties`.
2. Redeploy the batch job; the engine reads the file once at start-up.

Unknown keys are ignored silently.
"""

ADR_012 = """\
# ADR-012: Register validation rules centrally through RuleRegistry

- Status: Accepted
- Date: 2026-06-30
- Deciders: team-order-platform

## Context

Order validation grew in two places: the legacy `RuleEngine`, which switches built-in
predicates on and off from `rules.properties`, and ad-hoc checks that crept into
`OrderValidator`. Nobody could tell which rules applied to which order type, and the
nightly batch import validated orders differently from the API.

## Decision

All order validation rules implement `ValidationRule` and are registered centrally in
`RuleRegistry` (see `RuleRegistry.withDefaultRules()`). `OrderValidator.validate` obtains
the rules for an order type from `RuleRegistry.resolve` and must not hold or construct
rules itself. The legacy `RuleEngine` is deprecated and receives no new rules.

## Consequences

- Adding a rule means: implement `ValidationRule`, register it in `RuleRegistry`, and add
  a case to `RuleRegistryTest`.
- Rule ids are stable, dotted and lowercase so every violation can be traced to its rule.
- The nightly batch import moves to `OrderValidator` before `RuleEngine` is deleted (ORD-311).
"""

# --------------------------------------------------------------------------------------------
# History
# --------------------------------------------------------------------------------------------

COMMITS = [
    {
        "date": "2026-06-01T09:00:00+00:00",
        "message": "Initial order-service: order model, validation rules, legacy RuleEngine\n\n"
                   "Imports the order-service code base: Order, OrderValidator with the\n"
                   "RuleRegistry and two rules, pricing, and the legacy RuleEngine used by\n"
                   "the nightly batch import.\n",
        "write": {
            P_POM: POM, P_README: README_V1, P_ORDER: ORDER, P_ORDER_LINE: ORDER_LINE,
            P_RULE: VALIDATION_RULE, P_RESULT: VALIDATION_RESULT, P_REGISTRY: RULE_REGISTRY_V1,
            P_VALIDATOR: ORDER_VALIDATOR_V1, P_NON_EMPTY: NON_EMPTY_RULE,
            P_POSITIVE: POSITIVE_RULE, P_ENGINE: RULE_ENGINE_V1, P_RULES_PROPS: RULES_PROPERTIES,
            P_DISCOUNT: DISCOUNT, P_REGISTRY_TEST: REGISTRY_TEST_V1, P_LEGACY_DOC: LEGACY_DOC,
        },
    },
    {
        "date": "2026-07-01T15:30:00+00:00",
        "message": "Adopt ADR-012, add order total limit and payments client\n\n"
                   "- ADR-012: validation rules are registered centrally in RuleRegistry;\n"
                   "  the legacy RuleEngine is deprecated.\n"
                   "- MaxOrderTotalRule for retail orders, OrderValidatorTest.\n"
                   "- PaymentClient with a configurable RetryPolicy.\n",
        "write": {
            P_README: README_V2, P_REGISTRY: RULE_REGISTRY_V2, P_MAX_TOTAL: MAX_TOTAL_RULE,
            P_ENGINE: RULE_ENGINE_V2, P_REGISTRY_TEST: REGISTRY_TEST_V2,
            P_VALIDATOR_TEST: VALIDATOR_TEST, P_CLIENT: PAYMENT_CLIENT, P_RETRY: RETRY_POLICY,
            P_APP_PROPS: APP_PROPERTIES, P_ADR: ADR_012,
        },
        "tag": TAG,
    },
    {
        "date": "2026-07-09T11:15:00+00:00",
        "message": "RuleRegistry.resolve: fall back to default rules for unknown order types\n\n"
                   "Marketplace orders resolved no rules at all and passed validation\n"
                   "unchecked. Also document OrderValidator as the validation entry point.\n",
        "write": {
            P_REGISTRY: RULE_REGISTRY_V3, P_VALIDATOR: ORDER_VALIDATOR_V3,
            P_REGISTRY_TEST: REGISTRY_TEST_V3,
        },
    },
    {
        "date": "2026-07-16T10:00:00+00:00",
        "message": "Remove legacy RuleEngine and its documentation (ORD-311)\n\n"
                   "The nightly batch import now validates through OrderValidator.\n",
        "write": {P_README: README_V4},
        "delete": [P_ENGINE, P_LEGACY_DOC, P_RULES_PROPS],
    },
    {
        "date": "2026-07-21T16:45:00+00:00",
        "message": "Add .gitignore and local run notes\n",
        "write": {P_GITIGNORE: GITIGNORE, P_README: README_V5},
    },
]


# --------------------------------------------------------------------------------------------
# git plumbing
# --------------------------------------------------------------------------------------------

def git_env(home: Path, date: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": AUTHOR_NAME,
        "GIT_AUTHOR_EMAIL": AUTHOR_EMAIL,
        "GIT_COMMITTER_NAME": COMMITTER_NAME,
        "GIT_COMMITTER_EMAIL": COMMITTER_EMAIL,
        "LC_ALL": "C",
        "TZ": "UTC",
    })
    if date:
        env["GIT_AUTHOR_DATE"] = date
        env["GIT_COMMITTER_DATE"] = date
    return env


GIT_OPTS = ["-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false",
            "-c", "tag.gpgsign=false", "-c", "core.hooksPath=/dev/null",
            "-c", "core.autocrlf=false", "-c", "pack.threads=1"]


def git(cwd: Path, home: Path, *args: str, date: str | None = None) -> str:
    proc = subprocess.run(["git", *GIT_OPTS, *args], cwd=cwd, env=git_env(home, date),
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed:\n{proc.stderr}")
    return proc.stdout


def git_bytes(cwd: Path, home: Path, *args: str) -> bytes:
    proc = subprocess.run(["git", *GIT_OPTS, *args], cwd=cwd, env=git_env(home),
                          capture_output=True)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed:\n{proc.stderr.decode()}")
    return proc.stdout


def build_repo(work: Path, bundle: Path) -> tuple[list[str], dict[str, str]]:
    """Create the history; return the commit SHAs and the files at the tagged commit."""
    home = work / "home"
    repo = work / "order-service"
    template = work / "empty-template"
    for d in (home, repo, template):
        d.mkdir(parents=True)
    git(repo, home, "init", "-q", f"--template={template}", "-b", "main", ".")
    tree: dict[str, str] = {}
    shas: list[str] = []
    tagged: dict[str, str] = {}
    for commit in COMMITS:
        for path, text in commit.get("write", {}).items():
            assert text.endswith("\n"), path
            target = repo / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode("utf-8"))
            tree[path] = text
        for path in commit.get("delete", []):
            git(repo, home, "rm", "-q", "--", path)
            tree.pop(path)
        git(repo, home, "add", "-A")
        git(repo, home, "commit", "-q", "--no-verify", "-m", commit["message"],
            date=commit["date"])
        shas.append(git(repo, home, "rev-parse", "HEAD").strip())
        if commit.get("tag"):
            git(repo, home, "tag", "-a", commit["tag"], "-m",
                "Memory evidence in sample_data/memories.yaml was validated at this commit.",
                date=commit["date"])
            tagged = dict(tree)
    if bundle.exists():
        bundle.unlink()
    git(repo, home, "bundle", "create", "-q", str(bundle), "--all")
    return shas, tagged


# --------------------------------------------------------------------------------------------
# Span lookup (by marker text, so line numbers are always right)
# --------------------------------------------------------------------------------------------

class Spans:
    def __init__(self, files: dict[str, str], sha: str):
        self.files = files
        self.sha = sha

    def _lines(self, path: str) -> list[str]:
        return self.files[path].splitlines(keepends=True)

    def find(self, path: str, marker: str, after: int = 1) -> int:
        """1-based number of the only line at or after `after` containing `marker`."""
        hits = [i for i, line in enumerate(self._lines(path), 1)
                if i >= after and marker in line]
        assert len(hits) == 1, f"{path}: marker {marker!r} found {len(hits)} times"
        return hits[0]

    def line(self, path: str, marker: str) -> tuple[int, int]:
        n = self.find(path, marker)
        return n, n

    def block(self, path: str, marker: str) -> tuple[int, int]:
        """From the marker line to the brace that closes the block opened on/after it."""
        lines = self._lines(path)
        start = self.find(path, marker)
        depth, opened = 0, False
        for i in range(start - 1, len(lines)):
            for ch in lines[i]:
                if ch == "{":
                    depth, opened = depth + 1, True
                elif ch == "}":
                    depth -= 1
            if opened and depth == 0:
                return start, i + 1
        raise AssertionError(f"{path}: unbalanced block at {marker!r}")

    def between(self, path: str, start_marker: str, end_marker: str) -> tuple[int, int]:
        start = self.find(path, start_marker)
        return start, self.find(path, end_marker, after=start)

    def section(self, path: str, heading: str) -> tuple[int, int]:
        """A Markdown section: the heading line up to the last non-blank line before the next
        heading of any level (or the end of the file)."""
        lines = self._lines(path)
        start = self.find(path, heading)
        end = start
        for i in range(start, len(lines)):
            if lines[i].startswith("#"):
                break
            if lines[i].strip():
                end = i + 1
        return start, end

    def span_hash(self, path: str, span: tuple[int, int]) -> str:
        start, end = span
        lines = self._lines(path)
        assert 1 <= start <= end <= len(lines), (path, span)
        data = "".join(lines[start - 1:end]).encode("utf-8")
        return "sha256:" + hashlib.sha256(data).hexdigest()

    def ev(self, type_: str, path: str, span: tuple[int, int], *, symbol: str | None = None,
           target: str | None = None, ref: str | None = None,
           status: str | None = None) -> dict:
        item: dict = {"type": type_, "path": path, "commitSha": self.sha,
                      "lines": [span[0], span[1]]}
        if symbol:
            item["symbol"] = symbol
        if target:
            item["target"] = target
        item["spanHash"] = self.span_hash(path, span)
        if ref:
            item["ref"] = ref
        if status:
            item["status"] = status
        return item


class Ts(str):
    """A timestamp, written as a plain YAML scalar like the examples in record-format.md."""


# --------------------------------------------------------------------------------------------
# The memory records
# --------------------------------------------------------------------------------------------

VAL_MODULE = "src/main/java/com/acme/order/validation"
VAL_TEST_MODULE = "src/test/java/com/acme/order/validation"
CLIENT_MODULE = "src/main/java/com/acme/order/client"
LEGACY_MODULE = "src/main/java/com/acme/order/legacy"
PRICING_MODULE = "src/main/java/com/acme/order/pricing"

VALIDATED_AT = Ts("2026-07-02T00:00:00Z")


def scope(module: str | None = None, *, repo: bool = True, applies_to=None,
          does_not_apply_to=None) -> dict:
    s: dict = {"tenantId": "acme"}
    if repo:
        s["repositoryId"] = "order-service"
    if module:
        s["modulePath"] = module
    if applies_to:
        s["appliesTo"] = list(applies_to)
    if does_not_apply_to:
        s["doesNotApplyTo"] = list(does_not_apply_to)
    return s


def memory(memory_id: str, type_: str, statement: str, scope_: dict, evidence: list, *,
           state: str = "candidate", confidence: float = 0.5, review: str | None = None,
           impact: str | None = None, origin: str = "agent", proposed_by: dict | None = None,
           created: str, validated: bool | None = None, **extra) -> dict:
    rec: dict = {"memoryId": memory_id}
    if "logicalMemoryId" in extra:
        rec["logicalMemoryId"] = extra.pop("logicalMemoryId")
    rec.update({"type": type_, "statement": statement, "scope": scope_, "evidence": evidence,
                "state": state, "confidence": confidence})
    if review:
        rec["reviewState"] = review
    rec["conflictState"] = "none"
    if impact:
        rec["impact"] = impact
    rec["origin"] = origin
    if proposed_by:
        rec["proposedBy"] = proposed_by
    rec["createdAt"] = Ts(created)
    if validated is None:
        validated = state in ("active", "needs_review", "superseded")
    if validated:
        rec["lastValidatedAt"] = VALIDATED_AT
    for key in ("expiresAfterDays", "reviewAfterDays", "supersededBy", "tags",
                "invalidationPolicy"):
        if key in extra:
            rec[key] = extra.pop(key)
    assert not extra, extra
    return rec


def agent(run: str) -> dict:
    return {"type": "agent_workflow", "id": run}


def build_records(sp: Spans) -> dict:
    ok = "valid"  # evidence status of memories validated at the tagged commit
    registry_class = sp.block(P_REGISTRY, "public class RuleRegistry")
    resolve = sp.block(P_REGISTRY, "public List<ValidationRule> resolve(")
    register = sp.block(P_REGISTRY, "public void register(")
    defaults = sp.block(P_REGISTRY, "public static RuleRegistry withDefaultRules()")
    rules_field = sp.line(P_REGISTRY, "private final Map<String, ValidationRule> rules")
    validate = sp.block(P_VALIDATOR, "public ValidationResult validate(Order order)")
    call_site = sp.line(P_VALIDATOR, "registry.resolve(order.getType())")
    prefix_line = sp.line(P_VALIDATOR, 'rule.id() + ": " + message')
    constructors = sp.between(P_VALIDATOR, "private final RuleRegistry registry;",
                              "this(RuleRegistry.withDefaultRules());")
    constructors = (constructors[0], constructors[1] + 1)  # include the closing brace
    engine_class = sp.block(P_ENGINE, "public class RuleEngine")
    engine_built_ins = sp.between(P_ENGINE, "BUILT_INS = Map.of(", '"customer.present"')
    legacy_how = sp.section(P_LEGACY_DOC, "## How it works")
    legacy_change = sp.section(P_LEGACY_DOC, "## Changing a rule")
    adr_decision = sp.section(P_ADR, "## Decision")
    adr_ids = sp.line(P_ADR, "Rule ids are stable, dotted and lowercase")
    adr_batch = sp.line(P_ADR, "The nightly batch import moves to `OrderValidator`")
    adr_add_rule = sp.between(P_ADR, "- Adding a rule means:", "a case to `RuleRegistryTest`.")
    test_first_two = (sp.find(P_REGISTRY_TEST, "class RuleRegistryTest {"),
                      sp.block(P_REGISTRY_TEST, "void resolveReturnsRulesForOrderType()")[1])
    test_class_line = sp.line(P_REGISTRY_TEST, "class RuleRegistryTest {")
    test_duplicate = sp.block(P_REGISTRY_TEST, "void duplicateRuleIdIsRejected()")
    test_imports = sp.between(P_REGISTRY_TEST, "Assertions.assertEquals;",
                              "import org.junit.jupiter.api.Test;")
    vtest_empty = (sp.find(P_VALIDATOR_TEST, "void emptyOrderFails()") - 1,
                   sp.block(P_VALIDATOR_TEST, "void emptyOrderFails()")[1])
    should_retry = sp.block(P_RETRY, "public boolean shouldRetry(")
    retry_from_props = sp.block(P_RETRY, "public static RetryPolicy fromProperties(")
    max_check = sp.block(P_MAX_TOTAL, "public Optional<String> check(Order order)")
    max_types = sp.block(P_MAX_TOTAL, "public Set<String> orderTypes()")
    limit_line = sp.line(P_REGISTRY, 'new MaxOrderTotalRule(new BigDecimal("50000"))')
    non_empty_id = sp.block(P_NON_EMPTY, "public String id()")
    non_empty_check = sp.block(P_NON_EMPTY, "public Optional<String> check(Order order)")
    discount = sp.block(P_DISCOUNT, "public BigDecimal discountFor(Order order)")
    discount_doc = sp.between(P_DISCOUNT, "Pricing is deliberately independent", "public class")
    timeout_line = sp.line(P_CLIENT, "REQUEST_TIMEOUT = Duration.ofSeconds(2)")
    timeout_prop = sp.line(P_APP_PROPS, "payment.timeout-ms=")
    api_key_prop = sp.line(P_APP_PROPS, "payment.api-key=")
    build_section = sp.section(P_README, "## Build")
    pom_release = sp.line(P_POM, "<maven.compiler.release>")
    pom_junit = sp.between(P_POM, "<groupId>org.junit.jupiter</groupId>", "<scope>test</scope>")
    rules_props = sp.between(P_RULES_PROPS, "lines.nonEmpty", "customer.present")

    V, VT = VAL_MODULE, VAL_TEST_MODULE
    edge = "OrderValidator.validate CALLS RuleRegistry.resolve"

    memories = [
        # -- the five records of the design's practical exercise (§26) -----------------------
        memory("mem_rule_registry_convention", "repo_convention",
               "Validation rules are registered through RuleRegistry.", scope(V),
               [sp.ev("file_span", P_REGISTRY, registry_class, status=ok),
                sp.ev("symbol", P_REGISTRY, resolve, symbol="RuleRegistry.resolve", status=ok),
                sp.ev("call_edge", P_VALIDATOR, call_site, symbol="OrderValidator.validate",
                      target="RuleRegistry.resolve", status=ok)],
               logicalMemoryId="memlog_rule_registry_convention",
               state="active", confidence=0.84, review="approved", impact="normal",
               proposed_by=agent("wf_01J1RULEREG"), created="2026-06-12T08:30:00Z",
               reviewAfterDays=180, tags=["validation", "rules"],
               invalidationPolicy=[{"symbolChanged": "RuleRegistry"}, {"edgeRemoved": edge}]),
        memory("mem_order_validator_entrypoint", "code_fact",
               "OrderValidator.validate is the entry point for order validation.", scope(V),
               [sp.ev("symbol", P_VALIDATOR, validate, symbol="OrderValidator.validate",
                      status=ok)],
               state="active", confidence=0.9, review="approved",
               proposed_by=agent("wf_01J1RULEREG"), created="2026-06-12T08:30:00Z",
               tags=["validation"],
               invalidationPolicy=[{"symbolChanged": "OrderValidator.validate"}]),
        memory("mem_old_rule_engine", "code_fact",
               "The nightly batch import validates orders with the legacy RuleEngine, which "
               "switches built-in rules on and off in rules.properties.", scope(LEGACY_MODULE),
               [sp.ev("file_span", P_ENGINE, engine_class, status=ok),
                sp.ev("doc", P_LEGACY_DOC, legacy_how, ref="Legacy RuleEngine", status=ok)],
               state="active", confidence=0.7, review="approved",
               proposed_by=agent("wf_01J0DOCGEN"), created="2026-06-03T10:00:00Z",
               tags=["legacy", "validation"],
               invalidationPolicy=[{"docSuperseded": P_LEGACY_DOC}, {"fileChanged": P_ENGINE}]),
        memory("mem_validation_tests", "test_convention",
               "Validation rules are tested in RuleRegistryTest, which builds the registry "
               "with RuleRegistry.withDefaultRules().", scope(VT),
               [sp.ev("file_span", P_REGISTRY_TEST, test_first_two, status=ok)],
               state="active", confidence=0.8, review="approved",
               proposed_by=agent("wf_01J1RULEREG"), created="2026-06-12T08:30:00Z",
               tags=["validation", "tests"],
               invalidationPolicy=[{"fileChanged": P_REGISTRY_TEST}]),
        memory("mem_retry_behavior_unknown", "code_fact",
               "PaymentClient retries failed payment calls a few times, probably only on "
               "server errors.", scope(CLIENT_MODULE),
               [sp.ev("file_span", P_RETRY, should_retry, symbol="RetryPolicy.shouldRetry")],
               confidence=0.35, review="pending", proposed_by=agent("wf_01J2PAYDOC"),
               created="2026-07-01T18:20:00Z", tags=["payments", "retry"]),

        # -- near-duplicates of the RuleRegistry convention (same scope and type) -------------
        memory("mem_rules_registered_via_registry", "repo_convention",
               "Rules are registered through RuleRegistry.", scope(V),
               [sp.ev("symbol", P_REGISTRY, register, symbol="RuleRegistry.register")],
               confidence=0.6, proposed_by=agent("wf_01J3DOCGEN"),
               created="2026-07-03T09:12:00Z", tags=["validation"]),
        memory("mem_registry_for_rules", "repo_convention",
               "Validation uses RuleRegistry as the registry for rules.", scope(V),
               [sp.ev("file_span", P_REGISTRY, rules_field)],
               confidence=0.55, proposed_by=agent("wf_01J3DOCGEN"),
               created="2026-07-03T09:12:30Z", tags=["validation"]),
        memory("mem_new_rules_via_registry", "repo_convention",
               "New validation rules are added via RuleRegistry.", scope(V),
               [sp.ev("symbol", P_REGISTRY, defaults, symbol="RuleRegistry.withDefaultRules")],
               confidence=0.6, proposed_by=agent("wf_01J3REVIEW"),
               created="2026-07-04T14:02:00Z", tags=["validation"]),

        # -- conflicts with mem_rule_registry_convention (same scope) -------------------------
        memory("mem_direct_validator_rules", "repo_convention",
               "Validation rules are configured directly in OrderValidator.", scope(V),
               [sp.ev("file_span", P_VALIDATOR, constructors)],
               confidence=0.45, proposed_by=agent("wf_01J4REFACTOR"),
               created="2026-07-04T16:40:00Z", tags=["validation"]),

        # -- holds a secret (AWS documentation example key) -----------------------------------
        memory("mem_staging_payment_key", "code_fact",
               "The staging payment client authenticates with key AKIAIOSFODNN7EXAMPLE.",
               scope(CLIENT_MODULE), [sp.ev("file_span", P_APP_PROPS, api_key_prop)],
               confidence=0.5, proposed_by=agent("wf_01J5DEBUG"),
               created="2026-07-05T07:55:00Z", tags=["payments", "staging"]),

        # -- evaluation lesson that must expire ------------------------------------------------
        memory("mem_eval_validation_docs_registry_test", "evaluation_lesson",
               "Module docs for validation should include RuleRegistryTest.", scope(V),
               [{"type": "replay", "ref": "eval:module-docs/validation wf_01J2EVAL "
                                          "(doc judge failed without RuleRegistryTest)"},
                sp.ev("file_span", P_REGISTRY_TEST, test_class_line, status=ok)],
               state="active", confidence=0.7, review="approved", origin="system",
               proposed_by={"type": "eval_failure", "id": "wf_01J2EVAL"},
               created="2026-07-02T00:00:00Z", expiresAfterDays=90, tags=["docs", "eval"]),

        # -- approved architecture decision -----------------------------------------------------
        memory("mem_adr_012_rule_registry", "architecture_decision",
               "Order validation rules are registered centrally through RuleRegistry; "
               "OrderValidator must not hold or construct rules itself (ADR-012).", scope(),
               [sp.ev("adr", P_ADR, adr_decision, ref="ADR-012", status=ok)],
               state="active", confidence=0.95, review="approved", impact="high",
               origin="human", proposed_by={"type": "human", "id": "team-order-platform"},
               created="2026-07-01T16:00:00Z", reviewAfterDays=365, tags=["adr", "validation"],
               invalidationPolicy=[{"docSuperseded": P_ADR}]),

        # -- three narrow related facts that could be compacted ------------------------------
        memory("mem_validator_calls_registry", "code_fact", "OrderValidator calls RuleRegistry.",
               scope(V),
               [sp.ev("call_edge", P_VALIDATOR, call_site, symbol="OrderValidator.validate",
                      target="RuleRegistry.resolve", status=ok)],
               state="active", confidence=0.8, review="approved",
               proposed_by=agent("wf_01J1GRAPH"), created="2026-06-20T12:00:00Z",
               tags=["validation"], invalidationPolicy=[{"edgeRemoved": edge}]),
        memory("mem_registry_stores_rules", "code_fact", "RuleRegistry holds every registered ValidationRule in a LinkedHashMap.",
               scope(V),
               [sp.ev("file_span", P_REGISTRY, (rules_field[0], register[1]), status=ok)],
               state="active", confidence=0.8, review="approved",
               proposed_by=agent("wf_01J1GRAPH"), created="2026-06-20T12:00:05Z",
               tags=["validation"], invalidationPolicy=[{"symbolChanged": "RuleRegistry.register"}]),
        memory("mem_new_rules_added_to_registry", "code_fact",
               "New validation rules should be added to RuleRegistry.", scope(V),
               [sp.ev("adr", P_ADR, adr_add_rule, ref="ADR-012"),
                sp.ev("symbol", P_REGISTRY, defaults, symbol="RuleRegistry.withDefaultRules")],
               confidence=0.65, review="pending", proposed_by=agent("wf_01J1GRAPH"),
               created="2026-06-20T12:00:10Z", tags=["validation"]),

        # -- statement with markup-looking text (must be shown literally) --------------------
        memory("mem_rules_markup_statement", "code_fact",
               "Rules are kept in `rules[0..n]` in registration order, see [ADR-012] and "
               "[bold]RuleRegistry[/bold].", scope(V),
               [sp.ev("file_span", P_REGISTRY, rules_field)],
               confidence=0.5, origin="docs_generated", proposed_by=agent("wf_01J3DOCGEN"),
               created="2026-07-03T09:13:00Z", tags=["validation", "docs"]),

        # -- further realistic records ----------------------------------------------------------
        memory("mem_order_total_limit", "code_fact",
               "Retail orders with a total above 50000 in the order currency are rejected by "
               "MaxOrderTotalRule (order.total.max).", scope(V),
               [sp.ev("symbol", P_MAX_TOTAL, max_check, symbol="MaxOrderTotalRule.check",
                      status=ok),
                sp.ev("file_span", P_REGISTRY, limit_line, status=ok)],
               state="active", confidence=0.85, review="approved",
               proposed_by=agent("wf_01J2PRICING"), created="2026-07-01T17:05:00Z",
               tags=["validation", "limits"],
               invalidationPolicy=[{"symbolChanged": "MaxOrderTotalRule"}]),
        memory("mem_rule_ids_dotted", "repo_convention",
               "Validation rule ids are stable, dotted, lowercase strings such as "
               "order.lines.non-empty.", scope(V),
               [sp.ev("symbol", P_NON_EMPTY, non_empty_id, symbol="NonEmptyLinesRule.id",
                      status=ok),
                sp.ev("adr", P_ADR, adr_ids, ref="ADR-012", status=ok)],
               state="active", confidence=0.8, review="approved",
               proposed_by=agent("wf_01J2DOCGEN"), created="2026-07-01T17:10:00Z",
               reviewAfterDays=180, tags=["validation", "naming"]),
        memory("mem_wholesale_skips_total", "code_fact",
               "Wholesale orders are not checked against the order total limit; the ERP "
               "credit-checks them.", scope(V),
               [sp.ev("symbol", P_MAX_TOTAL, max_types, symbol="MaxOrderTotalRule.orderTypes")],
               confidence=0.65, review="pending", proposed_by=agent("wf_01J2PRICING"),
               created="2026-07-01T17:06:00Z", tags=["validation", "wholesale"]),
        memory("mem_register_rejects_duplicates", "code_fact",
               "RuleRegistry.register throws IllegalArgumentException when a rule id is "
               "registered twice.", scope(V),
               [sp.ev("symbol", P_REGISTRY, register, symbol="RuleRegistry.register", status=ok),
                sp.ev("file_span", P_REGISTRY_TEST, test_duplicate, status=ok)],
               state="active", confidence=0.9, review="approved",
               proposed_by=agent("wf_01J1GRAPH"), created="2026-06-20T12:01:00Z",
               tags=["validation"],
               invalidationPolicy=[{"symbolChanged": "RuleRegistry.register"}]),
        memory("mem_build_command", "runbook",
               "Build and run all tests with `mvn -q verify`; the build needs Java 17 and "
               "Maven 3.9.", scope(),
               [sp.ev("doc", P_README, build_section, ref="README: Build", status=ok),
                sp.ev("file_span", P_POM, pom_release, status=ok)],
               state="active", confidence=0.9, review="approved", origin="human",
               proposed_by={"type": "human", "id": "dana.okafor"},
               created="2026-06-05T09:00:00Z", tags=["build"]),
        memory("mem_junit5_tests", "test_convention",
               "Tests use JUnit 5 (org.junit.jupiter) and live under src/test/java in the "
               "package of the class they test.", scope(),
               [sp.ev("file_span", P_POM, pom_junit, status=ok),
                sp.ev("file_span", P_REGISTRY_TEST, test_imports, status=ok)],
               state="active", confidence=0.85, review="approved",
               proposed_by=agent("wf_01J1RULEREG"), created="2026-06-12T08:31:00Z",
               tags=["tests"]),
        memory("mem_validator_test_cases", "test_convention",
               "When a validation rule changes, add a case to OrderValidatorTest that builds an "
               "Order by hand and checks the violation prefix.", scope(VT),
               [sp.ev("file_span", P_VALIDATOR_TEST, vtest_empty)],
               confidence=0.55, proposed_by=agent("wf_01J3REVIEW"),
               created="2026-07-04T14:05:00Z", tags=["validation", "tests"]),
        memory("mem_payment_timeout", "code_fact",
               "PaymentClient uses a 2 second timeout per payment request attempt, set by "
               "payment.timeout-ms.", scope(CLIENT_MODULE),
               [sp.ev("file_span", P_CLIENT, timeout_line, status=ok),
                sp.ev("file_span", P_APP_PROPS, timeout_prop, status=ok)],
               state="needs_review", confidence=0.6, review="pending",
               proposed_by=agent("wf_01J2PAYDOC"), created="2026-07-01T18:22:00Z",
               tags=["payments"], reviewAfterDays=30),
        memory("mem_discount_rounding", "code_fact",
               "DiscountCalculator rounds discounts to 2 decimal places with HALF_EVEN "
               "rounding.", scope(PRICING_MODULE, does_not_apply_to=["validation"]),
               [sp.ev("symbol", P_DISCOUNT, discount, symbol="DiscountCalculator.discountFor",
                      status=ok)],
               state="active", confidence=0.88, review="approved",
               proposed_by=agent("wf_01J1PRICING"), created="2026-06-15T13:00:00Z",
               tags=["pricing"],
               invalidationPolicy=[{"symbolChanged": "DiscountCalculator.discountFor"}]),
        memory("mem_pricing_independent", "repo_convention",
               "Pricing does not use RuleRegistry; discounts are computed only in "
               "DiscountCalculator.",
               scope(PRICING_MODULE, applies_to=["pricing"], does_not_apply_to=["validation"]),
               [sp.ev("file_span", P_DISCOUNT, discount_doc)],
               confidence=0.5, proposed_by=agent("wf_01J1PRICING"),
               created="2026-06-15T13:02:00Z", tags=["pricing"]),
        memory("mem_org_imperative_commits", "repo_convention",
               "Commit messages in acme repositories use the imperative mood.",
               scope(repo=False),
               [{"type": "human", "ref": "reviewer:platform-guild"}],
               confidence=0.6, review="pending", origin="human",
               proposed_by={"type": "human", "id": "platform-guild"},
               created="2026-06-25T10:00:00Z", tags=["git", "org"]),
        memory("mem_legacy_rule_change_runbook", "runbook",
               "To change a legacy batch validation rule, edit "
               "src/main/resources/rules.properties and redeploy the batch job.",
               scope(LEGACY_MODULE),
               [sp.ev("doc", P_LEGACY_DOC, legacy_change, ref="Legacy RuleEngine", status=ok),
                sp.ev("file_span", P_RULES_PROPS, rules_props, status=ok)],
               state="needs_review", confidence=0.55, review="pending", origin="docs_generated",
               proposed_by=agent("wf_01J0DOCGEN"), created="2026-06-03T10:01:00Z",
               tags=["legacy", "runbook"],
               invalidationPolicy=[{"docSuperseded": P_LEGACY_DOC}]),
        memory("mem_task_batch_import_migration", "task",
               "Move the nightly batch import from RuleEngine to OrderValidator before "
               "RuleEngine is deleted (ORD-311).", scope(LEGACY_MODULE),
               [sp.ev("adr", P_ADR, adr_batch, ref="ADR-012", status=ok)],
               state="active", confidence=0.75, review="approved", origin="human",
               proposed_by={"type": "human", "id": "team-order-platform"},
               created="2026-07-01T16:05:00Z", expiresAfterDays=60, tags=["legacy", "ORD-311"]),
        memory("mem_validator_caches_results", "code_fact",
               "OrderValidator caches validation results per order id.", scope(V),
               [sp.ev("symbol", P_VALIDATOR, validate, symbol="OrderValidator.validate")],
               state="rejected", confidence=0.3, review="rejected",
               proposed_by=agent("wf_01J1PERF"), created="2026-06-21T09:30:00Z",
               tags=["validation", "performance"]),
        memory("mem_legacy_rules_in_engine", "repo_convention",
               "Validation rules are added as built-in predicates in the legacy RuleEngine.",
               scope(V),
               [sp.ev("file_span", P_ENGINE, engine_built_ins, status=ok)],
               state="superseded", confidence=0.6, review="approved",
               proposed_by=agent("wf_01J0DOCGEN"), created="2026-06-02T08:00:00Z",
               supersededBy="mem_rule_registry_convention", tags=["legacy", "validation"]),
    ]

    candidates = [
        {   # design §6.3 shape
            "candidateId": "memcand_01J5VIOLATIONPREFIX",
            "proposedType": "code_fact",
            "statement": "Violation messages are prefixed with the rule id, e.g. "
                         "`order.lines.non-empty: order has no lines`.",
            "proposedScope": scope(V),
            "evidence": [sp.ev("file_span", P_VALIDATOR, prefix_line,
                               symbol="OrderValidator.validate"),
                         sp.ev("file_span", P_NON_EMPTY, non_empty_check)],
            "proposedBy": {"type": "agent_workflow", "workflowRunId": "wf_01J5DOCS"},
            "confidence": 0.6,
            "validation": {"status": "pending_review"},
        },
        {   # promotion gate (awtl), environment blocker: must never be auto-promoted
            "schema": "awtl.memory_candidate.v2",
            "candidate_id": "memcand-e2e-browser-binaries",
            "failure_class": "environment_blocker",
            "failure_type": "missing_dependency",
            "source_action_ids": ["action-31", "action-32"],
            "root_cause_summary": "In a recent run, e2e failed due to missing browser binaries "
                                  "on the CI runner image.",
            "proposed_memory": "Before retrying a failed e2e run, check that the browser "
                               "binaries are installed on the runner.",
            "scope": {"applies_to": ["e2e_tests", "ci"],
                      "does_not_apply_to": ["code_change", "unit_tests"]},
            "evidence_refs": ["ci:order-service/run-4411/e2e", "log:playwright-install"],
            "verification_probe_candidate": "browser-dependencies-present",
            "promotion_status": "candidate",
            "requires_human_review": True,
            "repository_id": "order-service",
            "tenant_id": "acme",
        },
        {   # promotion gate (awtl), agent failure
            "schema": "awtl.memory_candidate.v2",
            "candidate_id": "memcand-rule-outside-registry",
            "failure_class": "agent_failure",
            "failure_type": "convention_violation",
            "source_action_ids": ["action-7"],
            "root_cause_summary": "The agent added a quantity check inside "
                                  "OrderValidator.validate instead of registering a rule; "
                                  "review rejected the change.",
            "proposed_memory": "When adding a validation rule, implement ValidationRule, "
                               "register it in RuleRegistry.withDefaultRules and add a case to "
                               "RuleRegistryTest.",
            "scope": {"applies_to": ["validation"], "does_not_apply_to": ["pricing"]},
            "evidence_refs": ["review:order-service#218", "judge:adr-012-check", "ADR-012"],
            "verification_probe_candidate": "rule-registered-in-registry",
            "promotion_status": "candidate",
            "requires_human_review": True,
            "repository_id": "order-service",
            "tenant_id": "acme",
            "module_path": V,
        },
    ]
    return {"memories": memories, "candidates": candidates}


# --------------------------------------------------------------------------------------------
# Minimal YAML writer (stdlib only). Strings are double-quoted JSON-style unless they are
# plain identifiers/paths; timestamps (Ts) are written plain like the format's examples.
# --------------------------------------------------------------------------------------------

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_./-]*$")
_RESERVED = {"true", "false", "yes", "no", "on", "off", "null", "y", "n"}


def _scalar(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, Ts):
        return str(v)
    if isinstance(v, str):
        if _PLAIN.match(v) and v.lower() not in _RESERVED:
            return v
        return json.dumps(v, ensure_ascii=False)
    raise TypeError(type(v))


def _emit_map(d: dict, ind: str) -> list[str]:
    out: list[str] = []
    for k, v in d.items():
        if isinstance(v, dict):
            out.append(f"{ind}{k}:" if v else f"{ind}{k}: {{}}")
            out += _emit_map(v, ind + "  ")
        elif isinstance(v, list):
            if not v:
                out.append(f"{ind}{k}: []")
            elif all(not isinstance(x, (dict, list)) for x in v):
                out.append(f"{ind}{k}: [{', '.join(_scalar(x) for x in v)}]")
            else:
                out.append(f"{ind}{k}:")
                out += _emit_list(v, ind + "  ")
        else:
            out.append(f"{ind}{k}: {_scalar(v)}")
    return out


def _emit_list(items: list, ind: str) -> list[str]:
    out: list[str] = []
    for item in items:
        if isinstance(item, dict):
            sub = _emit_map(item, ind + "  ")
            sub[0] = f"{ind}- " + sub[0][len(ind) + 2:]
            out += sub
        else:
            out.append(f"{ind}- {_scalar(item)}")
    return out


def to_yaml(doc: dict, header: str) -> str:
    lines = [f"# {h}" if h else "#" for h in header.splitlines()]
    for key, items in doc.items():
        lines.append("")
        lines.append(f"{key}:")
        for item in items:
            lines += _emit_list([item], "  ")
            lines.append("")
        lines.pop()
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------

STATES = {"candidate", "approved", "active", "needs_review", "challenged", "invalidated",
          "rejected", "superseded", "expired", "deprecated", "archived", "blocked"}
REQUIRED_IDS = {"mem_rule_registry_convention", "mem_order_validator_entrypoint",
                "mem_old_rule_engine", "mem_validation_tests", "mem_retry_behavior_unknown",
                "mem_direct_validator_rules"}


def check_records(doc: dict) -> None:
    ids = [m["memoryId"] for m in doc["memories"]]
    assert len(ids) == len(set(ids)), "duplicate memoryId"
    assert REQUIRED_IDS <= set(ids), REQUIRED_IDS - set(ids)
    for m in doc["memories"]:
        assert m["state"] in STATES, m["memoryId"]
        if m["state"] == "active":
            assert m["evidence"], f"{m['memoryId']}: active without evidence"
            assert m["scope"].get("repositoryId"), f"{m['memoryId']}: active org-wide"
        if m["type"] == "architecture_decision":
            assert m.get("impact") == "high" and m.get("reviewState") == "approved"


def verify_bundle(bundle: Path, work: Path, doc: dict, shas: list[str]) -> None:
    home = work / "home"
    clone = work / "verify"
    git(work, home, "clone", "-q", str(bundle), str(clone))
    print(git(clone, home, "log", "--oneline", "--all", "--decorate"), end="")
    assert git(clone, home, "rev-parse", "HEAD").strip() == shas[-1]
    assert git(clone, home, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert git(clone, home, "rev-parse", f"{TAG}^{{commit}}").strip() == shas[1]

    # every evidence span re-read from the clone
    records = doc["memories"] + [c for c in doc["candidates"] if "candidateId" in c]
    checked = 0
    cache: dict[tuple[str, str], list[bytes]] = {}
    for rec in records:
        for ev in rec["evidence"]:
            if "lines" not in ev:
                continue
            key = (ev["commitSha"], ev["path"])
            if key not in cache:
                cache[key] = git_bytes(clone, home, "show", f"{key[0]}:{key[1]}").splitlines(
                    keepends=True)
            start, end = ev["lines"]
            data = b"".join(cache[key][start - 1:end])
            assert ev["spanHash"] == "sha256:" + hashlib.sha256(data).hexdigest(), (rec, ev)
            checked += 1

    # the history does what the revalidation scenarios need
    def show(rev: str, path: str) -> str:
        return git_bytes(clone, home, "show", f"{rev}:{path}").decode()

    tag_validator = Spans({P_VALIDATOR: show(TAG, P_VALIDATOR)}, shas[1])
    head_validator = Spans({P_VALIDATOR: show("HEAD", P_VALIDATOR)}, shas[-1])
    marker = "public ValidationResult validate(Order order)"
    a, b = tag_validator.block(P_VALIDATOR, marker), head_validator.block(P_VALIDATOR, marker)
    text = lambda s, sp: "".join(s._lines(P_VALIDATOR)[sp[0] - 1:sp[1]])  # noqa: E731
    assert a != b and text(tag_validator, a) == text(head_validator, b), "validate must shift"
    marker = "public List<ValidationRule> resolve("
    r_tag = Spans({P_REGISTRY: show(TAG, P_REGISTRY)}, shas[1])
    r_head = Spans({P_REGISTRY: show("HEAD", P_REGISTRY)}, shas[-1])
    ra, rb = r_tag.block(P_REGISTRY, marker), r_head.block(P_REGISTRY, marker)
    assert r_tag.span_hash(P_REGISTRY, ra) != r_head.span_hash(P_REGISTRY, rb), "resolve body"
    marker = "public void register("
    ga, gb = r_tag.block(P_REGISTRY, marker), r_head.block(P_REGISTRY, marker)
    assert r_tag.span_hash(P_REGISTRY, ga) == r_head.span_hash(P_REGISTRY, gb), "register same"
    tree = git(clone, home, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert P_ENGINE not in tree and P_LEGACY_DOC not in tree
    print(f"verified {checked} evidence spans at {TAG} ({shas[1]})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", type=Path, default=HERE)
    args = ap.parse_args()
    out = args.out_dir.resolve()
    out.mkdir(parents=True, exist_ok=True)
    bundle = out / "order-service.bundle"

    with tempfile.TemporaryDirectory(prefix="memtui-sample-") as tmp:
        work = Path(tmp)
        shas, tagged = build_repo(work, bundle)
        doc = build_records(Spans(tagged, shas[1]))
        check_records(doc)
        header = (
            "memtui sample memories for the order-service sample repository.\n"
            "GENERATED by sample_data/build_sample_repo.py -- do not edit by hand; re-run it.\n"
            "Format: docs/record-format.md. Evidence spans are at tag memories-validated\n"
            f"({shas[1]}) of sample_data/order-service.bundle.")
        (out / "memories.yaml").write_text(to_yaml(doc, header), encoding="utf-8")
        verify_bundle(bundle, work, doc, shas)

    for sha, commit in zip(shas, COMMITS):
        tag = f"  (tag {commit['tag']})" if commit.get("tag") else ""
        print(f"{sha}  {commit['message'].splitlines()[0]}{tag}")
    print(f"wrote {bundle} and {out / 'memories.yaml'} "
          f"({len(doc['memories'])} memories, {len(doc['candidates'])} candidates)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
