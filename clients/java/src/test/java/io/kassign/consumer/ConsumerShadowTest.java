package io.kassign.consumer;

import static io.kassign.client.Check.equal;
import static io.kassign.client.Check.isTrue;
import static io.kassign.consumer.ConsumerFallbackTest.metric;
import static io.kassign.consumer.ConsumerPluginTest.assignor;
import static io.kassign.consumer.Groups.cluster;
import static io.kassign.consumer.Groups.member;

import io.kassign.client.ClientTest;
import io.kassign.client.LiveServer;
import io.kassign.client.ProtoJson;
import io.kassign.plugin.AssignorMetrics;
import io.kassign.plugin.ShadowCalls;
import io.kassign.testlog.CapturingProvider;
import io.kassign.v1.ConsumerAssignRequest;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.common.Cluster;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

/**
 * The classic consumer plug-in's shadow mode (issue 26): exactly Kafka's CooperativeStickyAssignor's
 * answer at its cost, kassign there or not; the request kassign receives carries that answer.
 */
final class ConsumerShadowTest {
    private static final Cluster CLUSTER = cluster(Map.of("t1", 12, "t2", 6));

    @BeforeEach
    void clearLog() {
        CapturingProvider.clear();
    }

    /** Shadow mode; a 5 s deadline for the live server's first call, 1 s for an unreachable one. */
    private static KassignConsumerAssignor plugin(final String group, final String target, final int deadlineMs) {
        return assignor(Map.of("group.id", group, "kassign.target", target, "kassign.consumer.mode", "shadow",
                "kassign.retry.max.attempts", 1, "kassign.deadline.ms", deadlineMs,
                "partition.assignment.strategy", KassignConsumerAssignor.class.getName()));
    }

    private static GroupSubscription group(final int members) {
        final Map<String, Subscription> subscriptions = new LinkedHashMap<>();
        final String[] racks = {"a", "b", "c"};
        for (int m = 0; m < members; m++) {
            subscriptions.put("m-" + m, member(List.of("t1", "t2"), racks[m % 3], List.of(), -1));
        }
        return new GroupSubscription(subscriptions);
    }

    private static void idle(final String group) throws InterruptedException {
        isTrue(ShadowCalls.of(AssignorMetrics.CONSUMER_ASSIGNOR, group).awaitIdle(Duration.ofSeconds(30)),
                "the shadow calls of " + group + " ended");
    }

    @Test
    @DisplayName("shadow, kassign unreachable: exactly CooperativeStickyAssignor's answer, at its cost; counted")
    void unreachableAndNoWait() throws Exception {
        final KassignConsumerAssignor plugin = plugin("c-shadow-down", "127.0.0.1:" + ClientTest.freePort(), 1_000);
        final int rounds = 21;
        final long[] shadow = new long[rounds];
        final long[] kafka = new long[rounds];
        for (int i = -5; i < rounds; i++) {
            final GroupSubscription group = group(30);
            long start = System.nanoTime();
            final GroupAssignment expected = new CooperativeStickyAssignor().assign(CLUSTER, group);
            final long kafkaNanos = System.nanoTime() - start;
            start = System.nanoTime();
            final GroupAssignment got = plugin.assign(CLUSTER, group);
            final long shadowNanos = System.nanoTime() - start;
            equal(expected.groupAssignment().toString(), got.groupAssignment().toString(), "Kafka's answer");
            if (i >= 0) {
                kafka[i] = kafkaNanos;
                shadow[i] = shadowNanos;
            }
        }
        Arrays.sort(shadow);
        Arrays.sort(kafka);
        final double shadowMs = shadow[rounds / 2] / 1e6;
        final double kafkaMs = kafka[rounds / 2] / 1e6;
        System.out.printf("shadow assign() median %.3f ms, CooperativeStickyAssignor median %.3f ms%n", shadowMs,
                kafkaMs);
        isTrue(shadowMs <= 1.5 * kafkaMs + 20, "shadow median " + shadowMs + " ms against Kafka's " + kafkaMs + " ms");
        idle("c-shadow-down");
        equal(26.0, metric("c-shadow-down", "", "shadow-failed-total")
                + metric("c-shadow-down", "", "shadow-dropped-total"), "every shadow call failed or was dropped");
        equal(0.0, metric("c-shadow-down", "", "calls-total"), "no assignment call");
        isTrue(CapturingProvider.events().stream().filter(e -> e.level() == Level.WARN)
                .filter(e -> e.logger().equals(KassignConsumerAssignor.class.getName()))
                .allMatch(e -> e.message().startsWith("kassign shadow: ")), "only shadow WARN lines");
    }

    @Test
    @DisplayName("shadow against a real server: the journal's request carries Kafka's answer; the INFO line")
    void liveServer() throws Exception {
        final LiveServer server = LiveServer.shared();
        final GroupSubscription group = group(4);
        final GroupAssignment result = plugin("c-shadow-live", server.target(), 5_000).assign(CLUSTER, group);
        idle("c-shadow-live");
        equal(1.0, metric("c-shadow-live", "", "shadow-ok-total"), "shadow-ok-total: " + server.log());
        ConsumerAssignRequest sent = null;
        for (final String line : server.journalLines(true)) {
            final ConsumerAssignRequest request = ProtoJson.parseConsumerRequest(line);
            if (request.getGroupId().equals("c-shadow-live")) {
                sent = request;
            }
        }
        isTrue(sent != null, "the shadow request is in the journal");
        equal(ShadowCall.shadow(result), sent.getShadow().toBuilder().clearKassign().clearComparison().build(),
                "shadow.kafka is the answer the group got");
        equal("cooperative-sticky", sent.getShadow().getKafkaAssignor(), "kafka_assignor");
        equal(List.of("m-0", "m-1", "m-2", "m-3"), sent.getShadow().getKafkaList().stream()
                .map(m -> m.getMemberId()).toList(), "every member, sorted");
        equal(18, sent.getShadow().getKafkaList().stream().mapToInt(m -> m.getPartitionsCount()).sum(),
                "every partition once");
        final List<String> infos = CapturingProvider.events().stream().filter(e -> e.level() == Level.INFO)
                .map(CapturingProvider.Event::message).filter(m -> m.startsWith("kassign shadow: ")).toList();
        equal(1, infos.size(), "one shadow line: " + infos);
        isTrue(infos.get(0).startsWith("kassign shadow: group c-shadow-live: Kafka's cooperative-sticky against "
                + "kassign's rack-optimal: cross-rack "), "the server's comparison, read: " + infos.get(0));
        isTrue(sent.getShadow().hasComparison(), "the journal's copy has the comparison");
    }
}
