package io.kassign.plugin;

import static io.kassign.plugin.ConfigValues.bool;
import static io.kassign.plugin.ConfigValues.number;
import static io.kassign.plugin.ConfigValues.text;

import io.kassign.client.KassignClient;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.config.ConfigException;

/**
 * How a plug-in reaches the service: the {@code kassign.target}, deadline, retry and TLS keys both
 * plug-ins share. Equal connections can share one channel.
 *
 * @param deadline bound on one call, retries included
 * @param maxAttempts attempts while the service is UNAVAILABLE
 * @param initialBackoff first pause between attempts; doubles, capped at 1 s (or at itself when longer)
 */
public record Connection(String target, Duration deadline, int maxAttempts, Duration initialBackoff, boolean tls,
                         Optional<String> caFile, Optional<String> clientCert, Optional<String> clientKey) {

    public static final String TARGET = "kassign.target";
    public static final String DEADLINE_MS = "kassign.deadline.ms";
    public static final String RETRY_MAX_ATTEMPTS = "kassign.retry.max.attempts";
    public static final String RETRY_BACKOFF_MS = "kassign.retry.backoff.ms";
    public static final String TLS = "kassign.tls";
    public static final String TLS_CA_FILE = "kassign.tls.ca.file";
    public static final String TLS_CLIENT_CERT = "kassign.tls.client.cert";
    public static final String TLS_CLIENT_KEY = "kassign.tls.client.key";

    /** The solver's budget sent with each request; both plug-ins read it. */
    public static final String TIME_BUDGET_MS = "kassign.assignment.time.budget.ms";

    public static final long DEFAULT_DEADLINE_MS = 10_000L;

    /**
     * Reads the connection keys (every one optional).
     *
     * @throws ConfigException naming the key, for a malformed value or a client certificate
     *         without its key (or the reverse)
     */
    public static Connection from(final Map<String, ?> configs) {
        final Optional<String> caFile = text(configs, TLS_CA_FILE);
        final Optional<String> clientCert = text(configs, TLS_CLIENT_CERT);
        final Optional<String> clientKey = text(configs, TLS_CLIENT_KEY);
        if (clientCert.isPresent() != clientKey.isPresent()) {
            final String missing = clientCert.isPresent() ? TLS_CLIENT_KEY : TLS_CLIENT_CERT;
            throw new ConfigException(missing, null, "mutual TLS needs both " + TLS_CLIENT_CERT + " and "
                    + TLS_CLIENT_KEY);
        }
        return new Connection(
                text(configs, TARGET).orElse("localhost:50051"),
                Duration.ofMillis(number(configs, DEADLINE_MS, 1).orElse(DEFAULT_DEADLINE_MS)),
                Math.toIntExact(number(configs, RETRY_MAX_ATTEMPTS, 1).orElse(3L)),
                Duration.ofMillis(number(configs, RETRY_BACKOFF_MS, 1).orElse(100L)),
                caFile.isPresent() || clientCert.isPresent() || bool(configs, TLS),
                caFile, clientCert, clientKey);
    }

    /**
     * {@link #TIME_BUDGET_MS}, by default half the deadline: the server stops optimising when the
     * budget is spent, then still validates and encodes the answer, which crosses the network, so
     * a budget at or above the deadline would expire the call just as the answer was ready.
     *
     * @throws ConfigException for a malformed budget or one not below the deadline
     */
    public long timeBudgetMs(final Map<String, ?> configs) {
        final long deadlineMs = deadline.toMillis();
        final long budgetMs = number(configs, TIME_BUDGET_MS, 1).orElse(deadlineMs / 2);
        if (budgetMs >= deadlineMs) {
            throw new ConfigException(TIME_BUDGET_MS, budgetMs, "must be below " + DEADLINE_MS + " (" + deadlineMs
                    + "), or the call expires while the server still optimises; half the deadline is the default");
        }
        return budgetMs;
    }

    /** A new client (and channel) for this connection; the caller closes it. */
    public KassignClient build() {
        return builder().build();
    }

    /** A client builder set up for this connection, for a caller that sets more (waitForReady). */
    public KassignClient.Builder builder() {
        return KassignClient.builder(target)
                .deadline(deadline)
                .maxAttempts(maxAttempts)
                .initialBackoff(initialBackoff)
                .maxBackoff(initialBackoff.compareTo(Duration.ofSeconds(1)) > 0 ? initialBackoff : Duration.ofSeconds(1))
                .transport(tls, caFile.orElse(null), clientCert.orElse(null), clientKey.orElse(null));
    }
}
