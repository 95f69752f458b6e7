package io.kassign.broker;

import static io.kassign.broker.ConsumerGroups.cluster;
import static io.kassign.broker.ConsumerGroups.rotating;
import static io.kassign.broker.ConsumerGroups.sorted;
import static io.kassign.broker.StreamsGroups.topology;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kassign.broker.ConsumerGroups.Cluster;
import io.kassign.broker.ConsumerGroups.Member;
import io.kassign.broker.GroupSpecToConsumerRequest.Topics;
import io.kassign.broker.GroupToStreamsRequest.Topology;
import io.kassign.client.LiveServer;
import io.kassign.client.ProtoJson;
import io.kassign.plugin.ShadowCalls;
import io.kassign.v1.AssignRequest;
import io.kassign.v1.ConsumerAssignRequest;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.streams.TopologyMetadata;
import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;
import org.junit.jupiter.api.Test;

/**
 * Both broker plug-ins' shadow mode (issue 26), on Kafka 4.4's own GroupSpec classes: the
 * coordinator gets exactly Kafka's own assignor's answer (uniform; streams' sticky) at its cost,
 * kassign there or not; the request kassign receives is named by the stand-in group id and
 * carries that answer; mode values are checked at configure().
 */
final class BrokerShadowTest {
    private static final Cluster CLUSTER = cluster(Map.of("orders", rotating(24), "clicks", rotating(12)));
    private static final Uuid ORDERS = CLUSTER.id("orders");
    private static final Uuid CLICKS = CLUSTER.id("clicks");
    private static final TopologyMetadata TOPOLOGY = topology(Map.of("0", 12, "1", 8), Set.of("0"));

    private static String unreachable() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return "127.0.0.1:" + socket.getLocalPort();
        }
    }

    private static GroupSpecImpl consumers(final int members) {
        final Map<String, Member> specs = new LinkedHashMap<>();
        for (int m = 0; m < members; m++) {
            specs.put("m-" + m, Member.of("rack-" + "abc".charAt(m % 3), ORDERS, CLICKS));
        }
        return ConsumerGroups.group(specs);
    }

    private static org.apache.kafka.coordinator.group.streams.assignor.GroupSpecImpl streams() {
        final Map<String, StreamsGroups.Member> members = new LinkedHashMap<>();
        members.put("s1a", new StreamsGroups.Member("00000000-0000-0000-0000-000000000001").rack("r1").active("0", 0, 1));
        members.put("s1b", new StreamsGroups.Member("00000000-0000-0000-0000-000000000001").rack("r1"));
        members.put("s2", new StreamsGroups.Member("00000000-0000-0000-0000-000000000002").rack("r2").active("1", 3));
        members.put("s3", new StreamsGroups.Member("00000000-0000-0000-0000-000000000003").rack("r3"));
        return StreamsGroups.group(members, 1);
    }

    private static KassignStreamsTaskAssignor streamsPlugin(final String group, final String target,
                                                            final String deadlineMs) {
        final KassignStreamsTaskAssignor plugin = new KassignStreamsTaskAssignor();
        plugin.configure(Map.of("node.id", "1", "kassign.target", target, "kassign.deadline.ms", deadlineMs,
                "kassign.streams.group.id", group, "kassign.streams.mode", "shadow", "kassign.retry.max.attempts", "1"));
        return plugin;
    }

    private static void idle(final String type, final String group) throws InterruptedException {
        assertTrue(ShadowCalls.of(type, group).awaitIdle(Duration.ofSeconds(30)), "shadow calls of " + group);
    }

    /** Median milliseconds of {@code rounds} timed runs of each, after ten untimed, alternating. */
    private static double[] medians(final Supplier<?> kafka, final Supplier<?> shadow) {
        final int rounds = 31;
        final long[] k = new long[rounds];
        final long[] s = new long[rounds];
        for (int i = -10; i < rounds; i++) {
            long start = System.nanoTime();
            kafka.get();
            final long kafkaNanos = System.nanoTime() - start;
            start = System.nanoTime();
            shadow.get();
            final long shadowNanos = System.nanoTime() - start;
            if (i >= 0) {
                k[i] = kafkaNanos;
                s[i] = shadowNanos;
            }
        }
        Arrays.sort(k);
        Arrays.sort(s);
        return new double[] {k[rounds / 2] / 1e6, s[rounds / 2] / 1e6};
    }

    @Test
    void consumerShadowIsUniformsAnswerAtItsCostWithKassignUnreachable() throws Exception {
        final KassignConsumerGroupAssignor plugin = ConsumerGroups.assignor("shadow-c-down", unreachable(),
                "kassign.consumer.mode", "shadow", "kassign.retry.max.attempts", "1", "kassign.deadline.ms", "200");
        final GroupSpecImpl group = consumers(30);
        assertEquals(sorted(new UniformAssignor().assign(group, CLUSTER.describer())),
                sorted(plugin.assign(group, CLUSTER.describer())), "exactly Kafka's uniform assignor");
        final double[] ms = medians(() -> new UniformAssignor().assign(group, CLUSTER.describer()),
                () -> plugin.assign(group, CLUSTER.describer()));
        System.out.printf("broker consumer: shadow assign() median %.3f ms, uniform %.3f ms%n", ms[1], ms[0]);
        assertTrue(ms[1] <= 1.5 * ms[0] + 20, "shadow " + ms[1] + " ms against uniform's " + ms[0] + " ms");
        idle(KassignConsumerGroupAssignor.METRICS_TYPE, "shadow-c-down");
        assertEquals(42.0, ConsumerGroups.metric("shadow-c-down", "", "shadow-failed-total")
                + ConsumerGroups.metric("shadow-c-down", "", "shadow-dropped-total"), "every shadow call counted");
        assertEquals(0.0, ConsumerGroups.metric("shadow-c-down", "", "calls-total"), "no assignment call");
        // 42 calls made within milliseconds, each waiting its 200 ms deadline: the queue must drop some
        assertTrue(ConsumerGroups.metric("shadow-c-down", "", "shadow-dropped-total") > 0, "bounded: some dropped");
    }

    @Test
    void streamsShadowIsStickysAnswerAtItsCostWithKassignUnreachable() throws Exception {
        final KassignStreamsTaskAssignor plugin = streamsPlugin("shadow-s-down", unreachable(), "200");
        final org.apache.kafka.coordinator.group.streams.assignor.GroupSpecImpl group = streams();
        assertEquals(new StickyTaskAssignor().assign(group, TOPOLOGY), plugin.assign(group, TOPOLOGY),
                "exactly Kafka's StickyTaskAssignor");
        final double[] ms = medians(() -> new StickyTaskAssignor().assign(group, TOPOLOGY),
                () -> plugin.assign(group, TOPOLOGY));
        System.out.printf("broker streams: shadow assign() median %.3f ms, sticky %.3f ms%n", ms[1], ms[0]);
        assertTrue(ms[1] <= 1.5 * ms[0] + 20, "shadow " + ms[1] + " ms against sticky's " + ms[0] + " ms");
        idle(KassignStreamsTaskAssignor.METRICS_TYPE, "shadow-s-down");
        assertEquals(42.0, StreamsGroups.metric("shadow-s-down", "shadow-failed-total")
                + StreamsGroups.metric("shadow-s-down", "shadow-dropped-total"), "every shadow call counted");
        assertTrue(StreamsGroups.metric("shadow-s-down", "shadow-dropped-total") > 0, "bounded: some dropped");
    }

    @Test
    void againstARealServerTheJournalHoldsKafkasAnswerUnderTheStandInGroupId() throws Exception {
        final LiveServer server = LiveServer.shared();
        final GroupSpecImpl group = consumers(4);
        final GroupAssignment answer = ConsumerGroups.assignor("shadow-c-live", server.target(),
                "kassign.mode", "shadow").assign(group, CLUSTER.describer());
        final org.apache.kafka.coordinator.group.streams.assignor.GroupSpecImpl streamsGroup = streams();
        final org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment streamsAnswer =
                streamsPlugin("shadow-s-live", server.target(), "5000").assign(streamsGroup, TOPOLOGY);
        idle(KassignConsumerGroupAssignor.METRICS_TYPE, "shadow-c-live");
        idle(KassignStreamsTaskAssignor.METRICS_TYPE, "shadow-s-live");
        assertEquals(1.0, ConsumerGroups.metric("shadow-c-live", "", "shadow-ok-total"), server.log());
        assertEquals(1.0, StreamsGroups.metric("shadow-s-live", "shadow-ok-total"), server.log());

        final String consumerId = StandInGroupIds.consumer(Set.of(ORDERS, CLICKS));
        ConsumerAssignRequest sent = null;
        for (final String line : server.journalLines(true)) {
            final ConsumerAssignRequest request = ProtoJson.parseConsumerRequest(line);
            if (request.getGroupId().equals(consumerId)) {
                sent = request;
            }
        }
        assertNotNull(sent, "a consumer request named " + consumerId);
        assertEquals(ConsumerGroupShadow.shadow(answer, Topics.of(group, CLUSTER.describer())),
                sent.getShadow().toBuilder().clearKassign().clearComparison().build());
        assertEquals("uniform", sent.getShadow().getKafkaAssignor());
        assertTrue(sent.getShadow().hasComparison(), "the service compared, in its journal's copy");
        assertEquals(36, sent.getShadow().getKafkaList().stream().mapToInt(m -> m.getPartitionsCount()).sum());

        final Topology topology = Topology.of(TOPOLOGY);
        final String streamsId = StandInGroupIds.streams(topology);
        AssignRequest streamsSent = null;
        for (final String line : server.journalLines(false)) {
            final AssignRequest request = ProtoJson.parseRequest(line);
            if (request.getGroupId().equals(streamsId)) {
                streamsSent = request;
            }
        }
        assertNotNull(streamsSent, "a streams request named " + streamsId);
        assertTrue(streamsSent.getShadow().hasComparison(), "the service compared, in its journal's copy");
        assertEquals(StreamsGroupShadow.shadow(streamsGroup, topology, streamsAnswer),
                streamsSent.getShadow().toBuilder().clearKassign().clearComparison().build());
        assertEquals(List.of(3, 3), List.of(streamsSent.getShadow().getKafkaCount(),
                (int) streamsSent.getShadow().getKafka(0).getMemberIdsCount() + 1), "three processes; P1's two members");
        assertEquals(20, streamsSent.getShadow().getKafkaList().stream().mapToInt(c -> c.getActiveTasksCount()).sum());
        assertEquals(12, streamsSent.getShadow().getKafkaList().stream().mapToInt(c -> c.getStandbyTasksCount()).sum());
    }

    @Test
    void standInGroupIdsAreStableDistinctAndRecognisable() {
        final String both = StandInGroupIds.consumer(List.of(ORDERS, CLICKS));
        assertTrue(both.matches("broker-consumer:[0-9a-f]{12}"), both);
        assertEquals(both, StandInGroupIds.consumer(List.of(CLICKS, ORDERS)), "any order");
        assertNotEquals(both, StandInGroupIds.consumer(List.of(ORDERS)), "other topics, another id");
        final String streams = StandInGroupIds.streams(Topology.of(TOPOLOGY));
        assertTrue(streams.matches("broker-streams:[0-9a-f]{12}"), streams);
        assertNotEquals(streams, StandInGroupIds.streams(Topology.of(topology(Map.of("0", 12, "1", 8), Set.of()))),
                "another topology shape");
        assertEquals(streams, StandInGroupIds.streams(Topology.of(topology(new TreeMap<>(Map.of("1", 8, "0", 12)),
                Set.of("0")))), "the same shape");
    }

    @Test
    void theShadowOnlyPluginsAreShadowUnderTheirOwnNameAndMetrics() throws Exception {
        final KassignShadowConsumerGroupAssignor consumer = new KassignShadowConsumerGroupAssignor();
        consumer.configure(Map.of("node.id", "4", "kassign.target", unreachable(), "kassign.deadline.ms", "200",
                "kassign.consumer.mode", "assign", "kassign.consumer.group.id", "c4"));
        assertEquals("kassign-shadow", consumer.name());
        final GroupSpecImpl group = consumers(3);
        assertEquals(sorted(new UniformAssignor().assign(group, CLUSTER.describer())),
                sorted(consumer.assign(group, CLUSTER.describer())), "Kafka's answer, whatever the mode key says");
        idle(KassignConsumerGroupAssignor.METRICS_TYPE, "c4-shadow");
        assertEquals(1.0, ConsumerGroups.metric("c4-shadow", "", "shadow-failed-total"));
        assertEquals("consumer@broker-4-shadow", ShadowSettings.of(Map.of("node.id", "4"), "kassign.consumer.mode",
                ConsumerGroupSettings.GROUP_ID, "consumer@broker-").get(ConsumerGroupSettings.GROUP_ID));
        final KassignShadowStreamsTaskAssignor streams = new KassignShadowStreamsTaskAssignor();
        streams.configure(Map.of("node.id", "4", "kassign.target", unreachable(), "kassign.deadline.ms", "200",
                "kassign.streams.group.id", "s"));
        assertEquals("kassign-shadow", streams.name());
        assertEquals(new StickyTaskAssignor().assign(streams(), TOPOLOGY), streams.assign(streams(), TOPOLOGY));
        idle(KassignStreamsTaskAssignor.METRICS_TYPE, "s-shadow");
        assertEquals(1.0, StreamsGroups.metric("s-shadow", "shadow-failed-total"));
    }

    @Test
    void modeValuesAreCheckedAtConfigure() {
        final ConfigException consumer = assertThrows(ConfigException.class, () -> new KassignConsumerGroupAssignor()
                .configure(Map.of("kassign.consumer.mode", "shadowed")));
        assertTrue(consumer.getMessage().contains("kassign.consumer.mode") && consumer.getMessage().contains("shadowed"),
                consumer.getMessage());
        final ConfigException streams = assertThrows(ConfigException.class, () -> new KassignStreamsTaskAssignor()
                .configure(Map.of("kassign.mode", "on")));
        assertTrue(streams.getMessage().contains("kassign.mode"), streams.getMessage());
        assertEquals(io.kassign.plugin.Mode.SHADOW, StreamsSettings.from(Map.of("kassign.mode", "shadow",
                "kassign.consumer.mode", "assign")).mode(), "the consumer key is not the streams plug-in's");
    }
}
