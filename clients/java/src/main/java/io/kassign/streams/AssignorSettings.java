package io.kassign.streams;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * The plug-in's settings, read from the Kafka Streams configuration handed to
 * {@link KassignTaskAssignor#configure}. Every key is optional:
 *
 * <table>
 * <caption>Configuration keys</caption>
 * <tr><th>key</th><th>default</th><th>meaning</th></tr>
 * <tr><td>kassign.target</td><td>localhost:50051</td><td>the service, host:port or a gRPC target URI</td></tr>
 * <tr><td>kassign.deadline.ms</td><td>5000</td><td>bound on one assignment call, retries included</td></tr>
 * <tr><td>kassign.retry.max.attempts</td><td>3</td><td>attempts while the service is UNAVAILABLE</td></tr>
 * <tr><td>kassign.retry.backoff.ms</td><td>100</td><td>first pause between attempts; doubles, capped at 1 s</td></tr>
 * <tr><td>kassign.tls</td><td>false</td><td>TLS with the JVM's trusted authorities</td></tr>
 * <tr><td>kassign.tls.ca.file</td><td>(none)</td><td>TLS trusting this PEM file instead (implies kassign.tls)</td></tr>
 * <tr><td>kassign.assignor</td><td>(server default)</td><td>high_availability, sticky or another registered name</td></tr>
 * <tr><td>kassign.assignment.time.budget.ms</td><td>(server default)</td><td>time for rack-aware optimisation</td></tr>
 * <tr><td>kassign.fallback.followup.delay.ms</td><td>0</td><td>when the fallback's follow-up rebalance is due</td></tr>
 * <tr><td>kassign.group.id</td><td>application.id</td><td>the group id sent (metrics and logs on the server)</td></tr>
 * </table>
 */
public record AssignorSettings(
        String target,
        Duration deadline,
        int maxAttempts,
        Duration initialBackoff,
        boolean tls,
        Optional<String> caFile,
        Optional<String> assignor,
        Optional<Long> timeBudgetMs,
        Duration fallbackFollowupDelay,
        String groupId) {

    public static final String TARGET = "kassign.target";
    public static final String DEADLINE_MS = "kassign.deadline.ms";
    public static final String RETRY_MAX_ATTEMPTS = "kassign.retry.max.attempts";
    public static final String RETRY_BACKOFF_MS = "kassign.retry.backoff.ms";
    public static final String TLS = "kassign.tls";
    public static final String TLS_CA_FILE = "kassign.tls.ca.file";
    public static final String ASSIGNOR = "kassign.assignor";
    public static final String TIME_BUDGET_MS = "kassign.assignment.time.budget.ms";
    public static final String FALLBACK_FOLLOWUP_DELAY_MS = "kassign.fallback.followup.delay.ms";
    public static final String GROUP_ID = "kassign.group.id";
    /** Kafka Streams' application.id, the consumer group id, used when kassign.group.id is unset. */
    public static final String APPLICATION_ID = "application.id";

    /** The settings when configure() was never called or sets nothing. */
    public static AssignorSettings defaults() {
        return from(Map.of());
    }

    /** Reads the kassign.* keys; values may be strings (properties files) or numbers/booleans (maps). */
    public static AssignorSettings from(final Map<String, ?> configs) {
        final Optional<String> caFile = text(configs, TLS_CA_FILE);
        return new AssignorSettings(
                text(configs, TARGET).orElse("localhost:50051"),
                Duration.ofMillis(number(configs, DEADLINE_MS, 1).orElse(5_000L)),
                Math.toIntExact(number(configs, RETRY_MAX_ATTEMPTS, 1).orElse(3L)),
                Duration.ofMillis(number(configs, RETRY_BACKOFF_MS, 1).orElse(100L)),
                caFile.isPresent() || bool(configs, TLS),
                caFile,
                text(configs, ASSIGNOR),
                number(configs, TIME_BUDGET_MS, 0),
                Duration.ofMillis(number(configs, FALLBACK_FOLLOWUP_DELAY_MS, 0).orElse(0L)),
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
            throw new IllegalArgumentException(key + " must be a whole number, got '" + text.get() + "'", e);
        }
        if (value < min) {
            throw new IllegalArgumentException(key + " must be at least " + min + ", got " + value);
        }
        return Optional.of(value);
    }

    private static boolean bool(final Map<String, ?> configs, final String key) {
        final Optional<String> text = text(configs, key);
        if (text.isEmpty()) {
            return false;
        }
        return switch (text.get().toLowerCase(java.util.Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException(key + " must be true or false, got '" + text.get() + "'");
        };
    }
}
