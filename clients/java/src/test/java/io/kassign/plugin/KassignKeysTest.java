package io.kassign.plugin;

import static io.kassign.client.Check.equal;
import static io.kassign.client.Check.isTrue;
import static io.kassign.client.Check.raises;

import io.kassign.client.DocProperties;
import io.kassign.consumer.ConsumerSettings;
import io.kassign.consumer.KassignConsumerAssignor;
import io.kassign.streams.AssignorSettings;
import io.kassign.streams.KassignTaskAssignor;
import io.kassign.testlog.CapturingProvider;
import io.kassign.v1.Balance;
import io.kassign.v1.LoadFigures;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

/** Configuration mistakes found when Kafka configures the plug-ins, not at their first rebalance. */
final class KassignKeysTest {
    @Test
    @DisplayName("an unknown assignor name stops configure(), naming the one meant and the known ones")
    void unknownAssignorRefused() {
        final ConfigException other = raises(ConfigException.class, () -> new KassignConsumerAssignor()
                .configure(Map.of("kassign.consumer.assignor", "rack_optimal")));
        isTrue(other.getMessage().contains("kassign.consumer.assignor")
                && other.getMessage().contains("did you mean rack-optimal?"), other.getMessage());
        final ConfigException streams = raises(ConfigException.class, () -> new KassignTaskAssignor()
                .configure(Map.of("kassign.assignor", "high-availability")));
        isTrue(streams.getMessage().contains("did you mean high_availability?"), streams.getMessage());
        final ConfigException far = raises(ConfigException.class, () -> new KassignConsumerAssignor()
                .configure(Map.of("kassign.consumer.assignor", "uniform")));
        isTrue(!far.getMessage().contains("did you mean") && far.getMessage().contains(
                "(known: cooperative-sticky, rack-optimal, range, roundrobin, sticky)"), far.getMessage());
        for (final String name : KassignKeys.CONSUMER_ASSIGNORS) {
            new KassignConsumerAssignor().configure(Map.of("kassign.consumer.assignor", name));
        }
        new KassignTaskAssignor().configure(Map.of("kassign.assignor", "sticky"));
    }

    @Test
    @DisplayName("an unknown kassign.* key is one WARN line per JVM, with the closest known key; others' keys are not")
    void unknownKeyWarnedOnce() {
        CapturingProvider.clear();
        final Map<String, Object> configs = Map.of("kassign.deadlin.ms", "100", "kassign.streams.assignor", "sticky",
                "kassign.target", "localhost:1", "kassign.zzz", "1", "group.id", "g",
                "kassign.topic.names.security.protocol", "SSL"); // an Admin config under the broker plug-in's prefix
        new KassignConsumerAssignor().configure(configs);
        new KassignConsumerAssignor().configure(configs);
        final List<String> warned = CapturingProvider.events().stream().filter(e -> e.level() == Level.WARN)
                .map(CapturingProvider.Event::message).toList();
        equal(List.of("kassign: unknown configuration key kassign.deadlin.ms (did you mean kassign.deadline.ms?); "
                        + "it is ignored", "kassign: unknown configuration key kassign.zzz; it is ignored"), warned,
                "once each, a broker-side plug-in's key not among them");
    }

    @Test
    @DisplayName("kassign.balance: count or load in any case, count when unset; any other value stops configure(), "
            + "naming the key and the value")
    void balance() {
        equal(Balance.BALANCE_COUNT, Balancing.from(Map.of(), Balancing.KEY), "unset: count");
        equal(Balance.BALANCE_LOAD, Balancing.from(Map.of("kassign.balance", " LOAD "), Balancing.KEY), "any case");
        equal(Balance.BALANCE_COUNT, Balancing.from(Map.of("kassign.balance", "count"), Balancing.KEY), "count");
        equal(Balance.BALANCE_COUNT, Balancing.forStreams(Map.of("kassign.streams.balance", "count", "kassign.balance",
                "load")), "the kind's own key wins");
        equal(Balance.BALANCE_LOAD, AssignorSettings.from(Map.of("kassign.streams.balance", "load")).balance(),
                "the Streams plug-in reads kassign.streams.balance");
        equal(Balance.BALANCE_LOAD, ConsumerSettings.from(Map.of("kassign.consumer.balance", "load",
                "kassign.balance", "count")).balance(), "the consumer plug-in reads kassign.consumer.balance first");
        final ConfigException own = raises(ConfigException.class, () -> ConsumerSettings.from(Map.of(
                "kassign.consumer.balance", "load", "kassign.consumer.assignor", "roundrobin")));
        isTrue(own.getMessage().contains("kassign.consumer.balance"), "names the key set: " + own.getMessage());
        final ConfigException streams = raises(ConfigException.class, () -> new KassignTaskAssignor()
                .configure(Map.of("kassign.balance", "weight")));
        isTrue(streams.getMessage().contains("kassign.balance") && streams.getMessage().contains("weight")
                && streams.getMessage().contains("must be count or load"), streams.getMessage());
        final ConfigException consumer = raises(ConfigException.class, () -> new KassignConsumerAssignor()
                .configure(Map.of("kassign.balance", "loads")));
        isTrue(consumer.getMessage().contains("kassign.balance") && consumer.getMessage().contains("loads"),
                consumer.getMessage());
        for (final String name : Balancing.COUNT_ONLY_CONSUMER_ASSIGNORS) {
            final ConfigException refused = raises(ConfigException.class, () -> new KassignConsumerAssignor()
                    .configure(Map.of("kassign.balance", "load", "kassign.consumer.assignor", name)));
            isTrue(refused.getMessage().contains("kassign.balance") && refused.getMessage().contains(name + " assignor")
                    && refused.getMessage().contains("balances by count only"), refused.getMessage());
            new KassignConsumerAssignor().configure(Map.of("kassign.balance", "count", "kassign.consumer.assignor", name));
        }
        for (final String name : List.of("rack-optimal", "sticky", "cooperative-sticky")) {
            new KassignConsumerAssignor().configure(Map.of("kassign.balance", "load", "kassign.consumer.assignor", name));
        }
    }

    @Test
    @DisplayName("docs/load-aware.md's worked example: its Streams and consumer properties configure balance LOAD, "
            + "every key known")
    void docExample() {
        CapturingProvider.clear();
        final Map<String, Object> streams = DocProperties.block("load-aware.md", "streams.properties");
        new KassignTaskAssignor().configure(streams);
        equal(Balance.BALANCE_LOAD, AssignorSettings.from(streams).balance(), "Streams: load");
        final Map<String, Object> consumer = DocProperties.block("load-aware.md", "consumer.properties");
        new KassignConsumerAssignor().configure(consumer);
        equal(Balance.BALANCE_LOAD, ConsumerSettings.from(consumer).balance(), "consumer: load");
        equal(List.of(), CapturingProvider.events().stream().filter(e -> e.level() == Level.WARN)
                .map(CapturingProvider.Event::message).toList(), "no unknown key");
    }

    @Test
    @DisplayName("every key a plug-in reads is known: kassign.balance and kassign.standby.rack.spread draw no WARN")
    void readKeysAreKnown() {
        CapturingProvider.clear();
        new KassignTaskAssignor().configure(Map.of("kassign.balance", "load", "kassign.standby.rack.spread", "true",
                "kassign.consumer.balance", "count", "kassign.streams.balance", "count"));
        equal(List.of(), CapturingProvider.events().stream().filter(e -> e.level() == Level.WARN)
                .map(CapturingProvider.Event::message).toList(), "no unknown key");
    }

    @Test
    @DisplayName("the INFO line's load part: the figures and their source, why there are none, nothing for count")
    void loadLine() {
        final LoadFigures figures = LoadFigures.newBuilder().setBound(118.04).setPeak(120.0).setMean(100.0)
                .setSource("prometheus").build();
        equal("; load peak 120 / bound 118 (x1.017), mean 100, from prometheus",
                Balancing.describe(Balance.BALANCE_LOAD, Optional.of(figures), List.of()), "figures");
        equal("", Balancing.describe(Balance.BALANCE_COUNT, Optional.of(figures), List.of()), "count: nothing added");
        equal("; load asked for, no loads found: balanced by count (no --load-source)",
                Balancing.describe(Balance.BALANCE_LOAD, Optional.of(figures.toBuilder().clearSource().build()),
                        List.of("no --load-source")), "no loads: the notes say why");
        isTrue(Balancing.describe(Balance.BALANCE_LOAD, Optional.empty(), List.of()).contains("no load figures"),
                "a service that did not balance load");
        equal("0.0001235", Balancing.round(0.00012346), "small figures in full");
        equal("1235000", Balancing.round(1_234_567.0), "large ones without an exponent");
    }

    @Test
    @DisplayName("edit distance and the nearest key")
    void nearest() {
        equal(1, KassignKeys.distance("kassign.tls", "kassign.tl"), "one deletion");
        equal(3, KassignKeys.distance("kitten", "sitting"), "the textbook pair");
        equal("kassign.retry.max.attempts", KassignKeys.closest("kassign.retry.max.attempt",
                KassignKeys.KNOWN).orElseThrow(), "nearest");
    }
}
