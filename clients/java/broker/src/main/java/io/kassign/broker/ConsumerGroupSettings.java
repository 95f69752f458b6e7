package io.kassign.broker;

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
 * The consumer-group plug-in's settings, read from the broker configuration the group coordinator
 * hands {@link KassignConsumerGroupAssignor#configure} (its {@code originals()}: every key of
 * server.properties). Every key is optional:
 *
 * <table>
 * <caption>Broker configuration keys</caption>
 * <tr><th>key</th><th>default</th><th>meaning</th></tr>
 * <tr><td>kassign.target</td><td>localhost:50051</td><td>the service, host:port or a gRPC target URI</td></tr>
 * <tr><td>kassign.deadline.ms</td><td>300</td><td>hard bound on one assignment, conversion and retries included</td></tr>
 * <tr><td>kassign.retry.max.attempts, kassign.retry.backoff.ms</td><td>3, 100</td><td>retries while UNAVAILABLE, within the deadline</td></tr>
 * <tr><td>kassign.tls, kassign.tls.ca.file, kassign.tls.client.cert, kassign.tls.client.key</td><td>off</td><td>TLS and mutual TLS</td></tr>
 * <tr><td>kassign.assignment.time.budget.ms</td><td>half the deadline</td><td>the solver's budget; below the deadline</td></tr>
 * <tr><td>kassign.consumer.assignor</td><td>rack-optimal</td><td>the service's consumer assignor</td></tr>
 * <tr><td>kassign.consumer.group.id</td><td>consumer@broker-NODE</td><td>the group id sent and the metrics'
 *     client-id (the broker API names no group)</td></tr>
 * <tr><td>kassign.consumer.balance, else kassign.balance</td><td>count</td><td>count or load (the service's
 *     --load-source); not with range or roundrobin</td></tr>
 * <tr><td>kassign.topic.names.bootstrap.servers, kassign.topic.names.*</td><td>unset</td><td>under load, a
 *     listener this broker's plug-in lists topics from (Kafka's Admin client, the other keys its configs,
 *     {@link AdminTopicNames}), so topics are sent by name and the load source matches them</td></tr>
 * <tr><td>kassign.consumer.mode, else kassign.mode</td><td>assign</td><td>assign, or shadow: the group gets
 *     Kafka's uniform assignor's answer and kassign's is only compared, off the coordinator's thread</td></tr>
 * </table>
 *
 * <p>Why 300 ms: {@code assign} runs on the group coordinator's few shared threads (or, with
 * {@code group.consumer.assignor.offload.enable}, its two background threads), and nothing in
 * Kafka bounds it.
 */
record ConsumerGroupSettings(Connection connection, String assignor, long timeBudgetMs, String groupId,
                             Balance balance, Optional<AdminTopicNames> topicNames, Mode mode) {

    static final long DEFAULT_DEADLINE_MS = 300L;
    static final String ASSIGNOR = "kassign.consumer.assignor";
    static final String GROUP_ID = "kassign.consumer.group.id";
    static final String DEFAULT_ASSIGNOR = "rack-optimal";

    static ConsumerGroupSettings defaults() {
        return from(Map.of());
    }

    /**
     * Reads the keys; a malformed one is Kafka's ConfigException naming it, so the broker refuses
     * to start rather than fall back on every assignment.
     */
    static ConsumerGroupSettings from(final Map<String, ?> brokerConfigs) {
        final Map<String, Object> configs = new HashMap<>(brokerConfigs);
        configs.putIfAbsent(Connection.DEADLINE_MS, DEFAULT_DEADLINE_MS);
        final Connection connection = Connection.from(configs);
        final String node = text(configs, "node.id").or(() -> text(configs, "broker.id")).orElse("?");
        final String assignor =
                KassignKeys.assignor(configs, ASSIGNOR, KassignKeys.CONSUMER_ASSIGNORS).orElse(DEFAULT_ASSIGNOR);
        final Balance balance = Balancing.forConsumers(configs, ASSIGNOR, assignor);
        return new ConsumerGroupSettings(
                connection,
                assignor,
                connection.timeBudgetMs(configs),
                text(configs, GROUP_ID).orElse("consumer@broker-" + node),
                balance,
                // names serve the load source only: a COUNT request stays byte for byte as it was
                balance == Balance.BALANCE_LOAD ? AdminTopicNames.from(configs, node) : Optional.empty(),
                Mode.forConsumers(configs));
    }
}
