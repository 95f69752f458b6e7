package io.kassign.plugin;

import static io.kassign.client.Check.equal;
import static io.kassign.client.Check.isTrue;
import static io.kassign.client.Check.raises;

import io.kassign.consumer.KassignConsumerAssignor;
import io.kassign.streams.KassignTaskAssignor;
import io.kassign.testlog.CapturingProvider;
import java.util.List;
import java.util.Map;
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
                "kassign.target", "localhost:1", "kassign.zzz", "1", "group.id", "g");
        new KassignConsumerAssignor().configure(configs);
        new KassignConsumerAssignor().configure(configs);
        final List<String> warned = CapturingProvider.events().stream().filter(e -> e.level() == Level.WARN)
                .map(CapturingProvider.Event::message).toList();
        equal(List.of("kassign: unknown configuration key kassign.deadlin.ms (did you mean kassign.deadline.ms?); "
                        + "it is ignored", "kassign: unknown configuration key kassign.zzz; it is ignored"), warned,
                "once each, a broker-side plug-in's key not among them");
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
