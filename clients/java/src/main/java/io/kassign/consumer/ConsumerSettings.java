package io.kassign.consumer;

import static io.kassign.plugin.ConfigValues.text;

import io.kassign.plugin.Balancing;
import io.kassign.plugin.Connection;
import io.kassign.plugin.KassignKeys;
import io.kassign.plugin.Mode;
import io.kassign.v1.Balance;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.RebalanceProtocol;
import org.apache.kafka.common.config.ConfigException;

/**
 * The consumer plug-in's settings, read from the consumer configuration handed to
 * {@link KassignConsumerAssignor#configure}. Every key is optional:
 *
 * <table>
 * <caption>Configuration keys (besides the connection's, {@link Connection})</caption>
 * <tr><th>key</th><th>default</th><th>meaning</th></tr>
 * <tr><td>kassign.consumer.assignor</td><td>rack-optimal</td><td>the server's assignor: rack-optimal, range,
 *     roundrobin, sticky or cooperative-sticky</td></tr>
 * <tr><td>kassign.consumer.rebalance.protocol</td><td>(both)</td><td>eager or cooperative: the only protocol
 *     the plug-in then offers</td></tr>
 * <tr><td>kassign.consumer.co.partitioned</td><td>(none)</td><td>topics assigned together, partition by
 *     partition: {@code a,b;c,d} (rack-optimal only)</td></tr>
 * <tr><td>kassign.assignment.time.budget.ms</td><td>half the deadline</td><td>the solver's budget</td></tr>
 * <tr><td>kassign.group.id</td><td>group.id</td><td>the group id sent (metrics and logs on both sides)</td></tr>
 * <tr><td>kassign.consumer.balance, else kassign.balance</td><td>count</td><td>count or load: what the service
 *     balances; load takes the partitions' loads from the service's --load-source ({@link Balancing}); not with
 *     range or roundrobin</td></tr>
 * <tr><td>kassign.consumer.mode, else kassign.mode</td><td>assign</td><td>assign, or shadow: the group gets
 *     Kafka's CooperativeStickyAssignor's answer and kassign's is only compared, off the rebalance's path
 *     ({@link Mode})</td></tr>
 * </table>
 *
 * @param strategies the consumer's partition.assignment.strategy as configured (class names or classes),
 *        from which the group's rebalance protocol is computed
 */
public record ConsumerSettings(Connection connection, String assignor, Optional<RebalanceProtocol> onlyProtocol,
                               List<List<String>> coPartitioned, long timeBudgetMs, String groupId,
                               Object strategies, Balance balance, Mode mode) {

    public static final String ASSIGNOR = "kassign.consumer.assignor";
    public static final String REBALANCE_PROTOCOL = "kassign.consumer.rebalance.protocol";
    public static final String CO_PARTITIONED = "kassign.consumer.co.partitioned";
    public static final String TIME_BUDGET_MS = Connection.TIME_BUDGET_MS;
    public static final String GROUP_ID = "kassign.group.id";
    public static final String DEFAULT_ASSIGNOR = "rack-optimal";

    /** The settings when configure() was never called. */
    public static ConsumerSettings defaults() {
        return from(Map.of());
    }

    /**
     * Reads the keys.
     *
     * @throws ConfigException naming the key, for a malformed value or a budget not below the deadline
     */
    public static ConsumerSettings from(final Map<String, ?> configs) {
        final Connection connection = Connection.from(configs);
        final String assignor = KassignKeys.assignor(configs, ASSIGNOR, KassignKeys.CONSUMER_ASSIGNORS)
                .orElse(DEFAULT_ASSIGNOR);
        final Optional<RebalanceProtocol> only = protocol(configs);
        if (only.equals(Optional.of(RebalanceProtocol.COOPERATIVE))
                && KassignConsumerAssignor.EAGER_ONLY.contains(assignor)) {
            throw new ConfigException(REBALANCE_PROTOCOL, "cooperative", "Kafka's " + assignor
                    + " assignor supports only eager rebalancing");
        }
        return new ConsumerSettings(connection, assignor, only, coPartitioned(configs), connection.timeBudgetMs(configs),
                text(configs, GROUP_ID).or(() -> text(configs, "group.id")).orElse(""),
                configs.get("partition.assignment.strategy"),
                Balancing.forConsumers(configs, ASSIGNOR, assignor),
                Mode.forConsumers(configs));
    }

    private static Optional<RebalanceProtocol> protocol(final Map<String, ?> configs) {
        return text(configs, REBALANCE_PROTOCOL).map(value -> switch (value.toLowerCase(Locale.ROOT)) {
            case "eager" -> RebalanceProtocol.EAGER;
            case "cooperative" -> RebalanceProtocol.COOPERATIVE;
            default -> throw new ConfigException(REBALANCE_PROTOCOL, value, "must be eager or cooperative");
        });
    }

    private static List<List<String>> coPartitioned(final Map<String, ?> configs) {
        final List<List<String>> sets = new ArrayList<>();
        for (final String set : text(configs, CO_PARTITIONED).orElse("").split(";")) {
            final List<String> topics = Arrays.stream(set.split(",")).map(String::trim).filter(t -> !t.isEmpty())
                    .toList();
            if (topics.size() == 1) {
                throw new ConfigException(CO_PARTITIONED, set, "a co-partitioned set needs two topics or more");
            }
            if (!topics.isEmpty()) {
                sets.add(topics);
            }
        }
        return List.copyOf(sets);
    }
}
