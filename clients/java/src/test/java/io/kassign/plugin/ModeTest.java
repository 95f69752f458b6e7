package io.kassign.plugin;

import static io.kassign.client.Check.equal;
import static io.kassign.client.Check.isTrue;
import static io.kassign.client.Check.raises;

import io.kassign.consumer.KassignConsumerAssignor;
import io.kassign.streams.KassignTaskAssignor;
import io.kassign.v1.ShadowComparison;
import io.kassign.v1.ShadowFigures;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** kassign.mode (issue 26): read as Balancing's keys are, refused naming the key; the shadow line. */
final class ModeTest {
    @Test
    @DisplayName("assign by default; shadow in any case; the kind's own key wins over kassign.mode")
    void values() {
        equal(Mode.ASSIGN, Mode.forStreams(Map.of()), "default");
        equal(Mode.SHADOW, Mode.forStreams(Map.of("kassign.mode", "Shadow")), "any case");
        equal(Mode.ASSIGN, Mode.forConsumers(Map.of("kassign.mode", "shadow", "kassign.consumer.mode", "assign")),
                "kassign.consumer.mode wins");
        equal(Mode.SHADOW, Mode.forConsumers(Map.of("kassign.streams.mode", "assign", "kassign.mode", "shadow")),
                "the Streams key is not the consumer plug-ins'");
        equal(Mode.SHADOW, Mode.forStreams(Map.of("kassign.streams.mode", "shadow")), "kassign.streams.mode");
        final KassignTaskAssignor streams = new KassignTaskAssignor();
        streams.configure(Map.of("kassign.streams.mode", "shadow"));
        equal(Mode.SHADOW, streams.settings().mode(), "the KIP-924 plug-in reads it");
        final KassignConsumerAssignor consumer = new KassignConsumerAssignor();
        consumer.configure(Map.of("kassign.mode", "shadow"));
        equal(Mode.SHADOW, consumer.settings().mode(), "the consumer plug-in reads it");
    }

    @Test
    @DisplayName("another value stops configure(), Kafka's ConfigException naming the key and the value")
    void refused() {
        final ConfigException streams = raises(ConfigException.class,
                () -> new KassignTaskAssignor().configure(Map.of("kassign.streams.mode", "dry-run")));
        isTrue(streams.getMessage().contains("kassign.streams.mode") && streams.getMessage().contains("dry-run")
                && streams.getMessage().contains("must be assign or shadow"), streams.getMessage());
        final ConfigException consumer = raises(ConfigException.class,
                () -> new KassignConsumerAssignor().configure(Map.of("kassign.mode", "off")));
        isTrue(consumer.getMessage().contains("kassign.mode"), consumer.getMessage());
        for (final String key : new String[] {Mode.KEY, Mode.CONSUMER_KEY, Mode.STREAMS_KEY}) {
            isTrue(KassignKeys.KNOWN.contains(key), key + " is a known key (no unknown-key warning)");
        }
    }

    @Test
    @DisplayName("the INFO line: Kafka's figure, then kassign's; or that the server sent no comparison")
    void line() {
        final ShadowComparison comparison = ShadowComparison.newBuilder().setKafkaAssignor("uniform")
                .setKafka(ShadowFigures.newBuilder().setCrossRackPartitions(12).setMoved(4).setMaxPerMember(5)
                        .setMinPerMember(3).setMaxLoad(1.25))
                .setKassign(ShadowFigures.newBuilder().setCrossRackPartitions(3).setMoved(6).setMaxPerMember(4)
                        .setMinPerMember(4).setMaxLoad(1.05))
                .setDifferingMembers(3).build();
        equal("group g: Kafka's uniform against kassign's rack-optimal: cross-rack 12->3, moved 4->6, per member "
                + "max/min 5/3->4/4, max load 1.25->1.05; 3 members differ (45 ms); the rebalance waited 3 ms, 2 of "
                + "them Kafka's assignor",
                ShadowLine.describe("g", "uniform", "rack-optimal", true, comparison, false, 45,
                        new ShadowLine.Path(3, 2)), "consumer line");
        final String streams = ShadowLine.describe("s", "StickyTaskAssignor", "high_availability", true,
                comparison.toBuilder().setSame(true).build(), true, 7, new ShadowLine.Path(1, 1));
        isTrue(streams.contains("standbys moved 0->0") && streams.contains("standbys sharing rack or tag 0->0")
                && streams.contains("; the same answer (7 ms); the rebalance waited 1 ms"), streams);
        final String old = ShadowLine.describe("g", "uniform", "rack-optimal", false,
                ShadowComparison.getDefaultInstance(), false, 9, new ShadowLine.Path(0, 0));
        isTrue(old.contains("no shadow comparison") && !old.contains("cross-rack"), old);
    }
}
