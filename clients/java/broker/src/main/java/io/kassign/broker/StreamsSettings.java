package io.kassign.broker;

import static io.kassign.plugin.ConfigValues.number;
import static io.kassign.plugin.ConfigValues.text;

import io.kassign.plugin.Balancing;
import io.kassign.plugin.Connection;
import io.kassign.plugin.KassignKeys;
import io.kassign.plugin.Mode;
import io.kassign.v1.Balance;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The streams plug-in's settings, read from the broker configuration that the group coordinator
 * hands {@link KassignStreamsTaskAssignor#configure} (its {@code originals()}: every key of
 * server.properties). Every key is optional:
 *
 * <table>
 * <caption>Broker configuration keys</caption>
 * <tr><th>key</th><th>default</th><th>meaning</th></tr>
 * <tr><td>kassign.target</td><td>localhost:50051</td><td>the service, host:port or a gRPC target URI</td></tr>
 * <tr><td>kassign.deadline.ms</td><td>300</td><td>hard bound on one assignment call, retries included</td></tr>
 * <tr><td>kassign.retry.max.attempts, kassign.retry.backoff.ms</td><td>3, 100</td><td>retries while UNAVAILABLE, within the deadline</td></tr>
 * <tr><td>kassign.tls, kassign.tls.ca.file, kassign.tls.client.cert, kassign.tls.client.key</td><td>off</td><td>TLS and mutual TLS</td></tr>
 * <tr><td>kassign.assignment.time.budget.ms</td><td>half the deadline</td><td>the solver's budget; below the deadline</td></tr>
 * <tr><td>kassign.streams.assignor</td><td>(server default: high_availability)</td><td>the service's Streams assignor</td></tr>
 * <tr><td>kassign.streams.group.id</td><td>streams@broker-NODE</td><td>the group id sent (the broker API names no group)</td></tr>
 * <tr><td>group.streams.acceptable.recovery.lag</td><td>(Kafka's: 10000)</td><td>Kafka's own key, read when set: the lag at which a client counts as caught up</td></tr>
 * <tr><td>group.streams.num.warmup.replicas</td><td>(Kafka's: 2)</td><td>Kafka's own key, read when set above 0: warm-ups at a time</td></tr>
 * <tr><td>kassign.streams.balance, else kassign.balance</td><td>count</td><td>count or load (the service's --load-source)</td></tr>
 * <tr><td>kassign.topic.names.bootstrap.servers, kassign.topic.names.*</td><td>unset</td><td>under load, a
 *     listener this broker's plug-in describes the streams groups from (Kafka's Admin client, {@link StreamsSources}),
 *     so each task's source partitions are sent and the load source weighs them</td></tr>
 * <tr><td>kassign.streams.mode, else kassign.mode</td><td>assign</td><td>assign, or shadow: the group gets
 *     Kafka's StickyTaskAssignor's answer and kassign's is only compared, off the coordinator's thread</td></tr>
 * </table>
 *
 * <p>Why 300 ms: {@code assign} runs on the group coordinator's few shared threads, and nothing in
 * Kafka bounds it; a broker must keep serving heartbeats while kassign is slow or gone.
 */
record StreamsSettings(Connection connection, long timeBudgetMs, Optional<String> assignor, String groupId,
                       Optional<Long> acceptableRecoveryLag, Optional<Long> maxWarmupReplicas, Balance balance,
                       Optional<AdminTopicNames> sources, Mode mode) {

    static final long DEFAULT_DEADLINE_MS = 300L;
    static final String ASSIGNOR = "kassign.streams.assignor";
    static final String GROUP_ID = "kassign.streams.group.id";
    static final String ACCEPTABLE_RECOVERY_LAG = "group.streams.acceptable.recovery.lag";
    static final String NUM_WARMUP_REPLICAS = "group.streams.num.warmup.replicas";

    static StreamsSettings defaults() {
        return from(Map.of());
    }

    /**
     * Reads the keys; a malformed one is Kafka's ConfigException naming it, so the broker refuses
     * to start rather than fall back on every rebalance.
     */
    static StreamsSettings from(final Map<String, ?> brokerConfigs) {
        final Map<String, Object> configs = new HashMap<>(brokerConfigs);
        configs.putIfAbsent(Connection.DEADLINE_MS, DEFAULT_DEADLINE_MS);
        final Connection connection = Connection.from(configs);
        final String node = text(configs, "node.id").or(() -> text(configs, "broker.id")).orElse("?");
        final Balance balance = Balancing.forStreams(configs);
        return new StreamsSettings(
                connection,
                connection.timeBudgetMs(configs),
                KassignKeys.assignor(configs, ASSIGNOR, KassignKeys.STREAMS_ASSIGNORS),
                text(configs, GROUP_ID).orElse("streams@broker-" + node),
                number(configs, ACCEPTABLE_RECOVERY_LAG, 0),
                number(configs, NUM_WARMUP_REPLICAS, 0).filter(n -> n > 0),
                balance,
                // sources serve the load source only: a COUNT request stays byte for byte as it was
                balance == Balance.BALANCE_LOAD ? AdminTopicNames.from(configs, node) : Optional.empty(),
                Mode.forStreams(configs));
    }
}
