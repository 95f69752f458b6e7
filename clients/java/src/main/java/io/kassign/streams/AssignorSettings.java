package io.kassign.streams;

import static io.kassign.plugin.ConfigValues.bool;
import static io.kassign.plugin.ConfigValues.number;
import static io.kassign.plugin.ConfigValues.text;

import io.kassign.plugin.Balancing;
import io.kassign.plugin.Connection;
import io.kassign.plugin.KassignKeys;
import io.kassign.plugin.Mode;
import io.kassign.v1.Balance;
import java.time.Duration;
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
 * <tr><td>kassign.standby.rack.spread</td><td>false</td><td>with no rack.aware.assignment.tags, spread standbys over racks (not Kafka's behaviour)</td></tr>
 * <tr><td>kassign.streams.mode, else kassign.mode</td><td>assign</td><td>assign, or shadow: the group gets Kafka's
 *     StickyTaskAssignor's answer and kassign's is only compared, off the rebalance's path ({@link Mode})</td></tr>
 * <tr><td>kassign.streams.balance, else kassign.balance</td><td>count</td><td>count or load: tasks per thread, or their load from the service's --load-source ({@link Balancing})</td></tr>
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
        String groupId,
        boolean standbyRackSpread,
        Balance balance,
        Mode mode) {

    public static final String TARGET = Connection.TARGET;
    public static final String DEADLINE_MS = Connection.DEADLINE_MS;
    public static final String RETRY_MAX_ATTEMPTS = Connection.RETRY_MAX_ATTEMPTS;
    public static final String RETRY_BACKOFF_MS = Connection.RETRY_BACKOFF_MS;
    public static final String TLS = Connection.TLS;
    public static final String TLS_CA_FILE = Connection.TLS_CA_FILE;
    public static final String TLS_CLIENT_CERT = Connection.TLS_CLIENT_CERT;
    public static final String TLS_CLIENT_KEY = Connection.TLS_CLIENT_KEY;
    public static final String ASSIGNOR = "kassign.assignor";
    public static final String TIME_BUDGET_MS = Connection.TIME_BUDGET_MS;
    public static final String FALLBACK_FOLLOWUP_DELAY_MS = "kassign.fallback.followup.delay.ms";
    public static final String GROUP_ID = "kassign.group.id";
    /** Sent as AssignmentConfigs.standby_rack_spread, and only when true (unset: Kafka's way). */
    public static final String STANDBY_RACK_SPREAD = "kassign.standby.rack.spread";
    /** Kafka Streams' application.id, the consumer group id, used when kassign.group.id is unset. */
    public static final String APPLICATION_ID = "application.id";

    public static final long DEFAULT_DEADLINE_MS = Connection.DEFAULT_DEADLINE_MS;
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
        final Connection connection = Connection.from(configs);
        final long budgetMs = connection.timeBudgetMs(configs);
        return new AssignorSettings(
                connection.target(),
                connection.deadline(),
                connection.maxAttempts(),
                connection.initialBackoff(),
                connection.tls(),
                connection.caFile(),
                connection.clientCert(),
                connection.clientKey(),
                KassignKeys.assignor(configs, ASSIGNOR, KassignKeys.STREAMS_ASSIGNORS),
                budgetMs,
                Duration.ofMillis(number(configs, FALLBACK_FOLLOWUP_DELAY_MS, 0)
                        .orElse(DEFAULT_FALLBACK_FOLLOWUP_DELAY_MS)),
                text(configs, GROUP_ID).or(() -> text(configs, APPLICATION_ID)).orElse(""),
                bool(configs, STANDBY_RACK_SPREAD),
                Balancing.forStreams(configs),
                Mode.forStreams(configs));
    }

    /** The connection part: what the shared channel depends on. */
    public Connection connection() {
        return new Connection(target, deadline, maxAttempts, initialBackoff, tls, caFile, clientCert, clientKey);
    }
}
