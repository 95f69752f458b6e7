package io.kassign.streams;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.config.ConfigException;

/**
 * The plug-in's settings, read from the Kafka Streams configuration handed to
 * {@link KassignTaskAssignor#configure}. Every key is optional:
 *
 * <table>
 * <caption>Configuration keys</caption>
 * <tr><th>key</th><th>default</th><th>meaning</th></tr>
 * <tr><td>kassign.target</td><td>localhost:50051</td><td>the service, host:port or a gRPC target URI</td></tr>
 * <tr><td>kassign.deadline.ms</td><td>10000</td><td>bound on one assignment call, retries included</td></tr>
 * <tr><td>kassign.retry.max.attempts</td><td>3</td><td>attempts while the service is UNAVAILABLE</td></tr>
 * <tr><td>kassign.retry.backoff.ms</td><td>100</td><td>first pause between attempts; doubles, capped at 1 s</td></tr>
 * <tr><td>kassign.tls</td><td>false</td><td>TLS with the JVM's trusted authorities</td></tr>
 * <tr><td>kassign.tls.ca.file</td><td>(none)</td><td>TLS trusting this PEM file instead (implies kassign.tls)</td></tr>
 * <tr><td>kassign.tls.client.cert</td><td>(none)</td><td>mutual TLS: this PEM certificate chain (with the key)</td></tr>
 * <tr><td>kassign.tls.client.key</td><td>(none)</td><td>mutual TLS: this PEM PKCS#8 private key (with the cert)</td></tr>
 * <tr><td>kassign.assignor</td><td>(server default)</td><td>high_availability, sticky or another registered name</td></tr>
 * <tr><td>kassign.assignment.time.budget.ms</td><td>half the deadline</td><td>the solver's budget; below the deadline</td></tr>
 * <tr><td>kassign.fallback.followup.delay.ms</td><td>60000</td><td>follow-up rebalance after a fallback</td></tr>
 * <tr><td>kassign.group.id</td><td>application.id</td><td>the group id sent (metrics and logs on both sides)</td></tr>
 * </table>
 *
 * <p>Why the budget defaults to half the deadline: the server stops optimising when the budget is
 * spent, then still has to validate and encode the answer, and the answer has to cross the
 * network. A budget equal to the deadline leaves nothing for that, so the call would expire just
 * as the answer was ready; a budget at or above the deadline is refused.
 */
public record AssignorSettings(
        String target,
        Duration deadline,
        int maxAttempts,
        Duration initialBackoff,
        boolean tls,
        Optional<String> caFile,
        Optional<String> clientCert,
        Optional<String> clientKey,
        Optional<String> assignor,
        long timeBudgetMs,
        Duration fallbackFollowupDelay,
        String groupId) {

    public static final String TARGET = "kassign.target";
    public static final String DEADLINE_MS = "kassign.deadline.ms";
    public static final String RETRY_MAX_ATTEMPTS = "kassign.retry.max.attempts";
    public static final String RETRY_BACKOFF_MS = "kassign.retry.backoff.ms";
    public static final String TLS = "kassign.tls";
    public static final String TLS_CA_FILE = "kassign.tls.ca.file";
    public static final String TLS_CLIENT_CERT = "kassign.tls.client.cert";
    public static final String TLS_CLIENT_KEY = "kassign.tls.client.key";
    public static final String ASSIGNOR = "kassign.assignor";
    public static final String TIME_BUDGET_MS = "kassign.assignment.time.budget.ms";
    public static final String FALLBACK_FOLLOWUP_DELAY_MS = "kassign.fallback.followup.delay.ms";
    public static final String GROUP_ID = "kassign.group.id";
    /** Kafka Streams' application.id, the consumer group id, used when kassign.group.id is unset. */
    public static final String APPLICATION_ID = "application.id";

    public static final long DEFAULT_DEADLINE_MS = 10_000L;
    public static final long DEFAULT_FALLBACK_FOLLOWUP_DELAY_MS = 60_000L;

    /** The settings when configure() was never called or sets nothing. */
    public static AssignorSettings defaults() {
        return from(Map.of());
    }

    /**
     * Reads the kassign.* keys; values may be strings (properties files) or numbers/booleans (maps).
     *
     * @throws ConfigException naming the key, for a malformed value, a client certificate without
     *         its key (or the reverse), or a time budget not below the deadline
     */
    public static AssignorSettings from(final Map<String, ?> configs) {
        final Optional<String> caFile = text(configs, TLS_CA_FILE);
        final Optional<String> clientCert = text(configs, TLS_CLIENT_CERT);
        final Optional<String> clientKey = text(configs, TLS_CLIENT_KEY);
        if (clientCert.isPresent() != clientKey.isPresent()) {
            final String missing = clientCert.isPresent() ? TLS_CLIENT_KEY : TLS_CLIENT_CERT;
            throw new ConfigException(missing, null, "mutual TLS needs both " + TLS_CLIENT_CERT + " and "
                    + TLS_CLIENT_KEY);
        }
        final long deadlineMs = number(configs, DEADLINE_MS, 1).orElse(DEFAULT_DEADLINE_MS);
        final long budgetMs = number(configs, TIME_BUDGET_MS, 1).orElse(deadlineMs / 2);
        if (budgetMs >= deadlineMs) {
            throw new ConfigException(TIME_BUDGET_MS, budgetMs, "must be below " + DEADLINE_MS + " (" + deadlineMs
                    + "), or the call expires while the server still optimises; half the deadline is the default");
        }
        return new AssignorSettings(
                text(configs, TARGET).orElse("localhost:50051"),
                Duration.ofMillis(deadlineMs),
                Math.toIntExact(number(configs, RETRY_MAX_ATTEMPTS, 1).orElse(3L)),
                Duration.ofMillis(number(configs, RETRY_BACKOFF_MS, 1).orElse(100L)),
                caFile.isPresent() || clientCert.isPresent() || bool(configs, TLS),
                caFile,
                clientCert,
                clientKey,
                text(configs, ASSIGNOR),
                budgetMs,
                Duration.ofMillis(number(configs, FALLBACK_FOLLOWUP_DELAY_MS, 0)
                        .orElse(DEFAULT_FALLBACK_FOLLOWUP_DELAY_MS)),
                text(configs, GROUP_ID).or(() -> text(configs, APPLICATION_ID)).orElse(""));
    }

    private static Optional<String> text(final Map<String, ?> configs, final String key) {
        final Object value = configs.get(key);
        if (value == null || value.toString().isBlank()) {
            return Optional.empty();
        }
        return Optional.of(value.toString().trim());
    }

    private static Optional<Long> number(final Map<String, ?> configs, final String key, final long min) {
        final Optional<String> text = text(configs, key);
        if (text.isEmpty()) {
            return Optional.empty();
        }
        final long value;
        try {
            value = Long.parseLong(text.get());
        } catch (final NumberFormatException e) {
            throw new ConfigException(key, text.get(), "must be a whole number");
        }
        if (value < min) {
            throw new ConfigException(key, value, "must be at least " + min);
        }
        return Optional.of(value);
    }

    private static boolean bool(final Map<String, ?> configs, final String key) {
        final Optional<String> text = text(configs, key);
        if (text.isEmpty()) {
            return false;
        }
        return switch (text.get().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new ConfigException(key, text.get(), "must be true or false");
        };
    }
}
