package io.kassign.consumer;

import static io.kassign.client.Check.equal;
import static io.kassign.client.Check.isTrue;
import static io.kassign.consumer.ConsumerPluginTest.answer;
import static io.kassign.consumer.ConsumerPluginTest.assignor;
import static io.kassign.consumer.ConsumerPluginTest.response;
import static io.kassign.consumer.Groups.cluster;
import static io.kassign.consumer.Groups.group;
import static io.kassign.consumer.Groups.member;
import static io.kassign.consumer.Groups.tp;

import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.kassign.client.ClientTest;
import io.kassign.plugin.Prewarm;
import io.kassign.testlog.CapturingProvider;
import io.kassign.v1.ConsumerAssignRequest;
import io.kassign.v1.ConsumerAssignResponse;
import io.kassign.v1.ConsumerAssignmentServiceGrpc;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import javax.management.ObjectName;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.common.Cluster;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The consumer plug-in's fallback: whatever goes wrong, Kafka's CooperativeStickyAssignor assigns
 * the group, one WARN line says why, and the metrics count it; an answer it can use is used.
 */
final class ConsumerFallbackTest {
    private static final Cluster CLUSTER = cluster(Map.of("t", 4));
    // m1 owns t-0..t-3 and stays; m2 joins: a cooperative assignor may not hand m1's partitions straight over
    private static final GroupSubscription GROUP = group(
            "m1", member(List.of("t"), "a", List.of(tp("t", 0), tp("t", 1), tp("t", 2), tp("t", 3)), 4),
            "m2", member(List.of("t"), "b", List.of(), -1));

    @BeforeEach
    void clearLog() {
        CapturingProvider.clear();
    }

    /** A ConsumerAssignmentService on loopback answering what {@code answer} says (or failing). */
    private static final class Scripted implements AutoCloseable {
        final AtomicReference<ConsumerAssignRequest> seen = new AtomicReference<>();
        final Server server;

        Scripted(final Supplier<Object> answer) throws Exception {
            server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                    .addService(new ConsumerAssignmentServiceGrpc.ConsumerAssignmentServiceImplBase() {
                        @Override
                        public void assign(final ConsumerAssignRequest request,
                                           final StreamObserver<ConsumerAssignResponse> observer) {
                            seen.set(request);
                            final Object next = answer.get();
                            if (next instanceof Status status) {
                                observer.onError(status.asRuntimeException());
                            } else {
                                observer.onNext((ConsumerAssignResponse) next);
                                observer.onCompleted();
                            }
                        }
                    }).build().start();
        }

        String target() {
            return "127.0.0.1:" + server.getPort();
        }

        @Override
        public void close() {
            server.shutdownNow();
        }
    }

    private static String warnLine() {
        final List<CapturingProvider.Event> warns = CapturingProvider.events().stream()
                .filter(e -> e.level() == org.slf4j.event.Level.WARN)
                .filter(e -> e.logger().equals(KassignConsumerAssignor.class.getName())).toList();
        equal(1, warns.size(), "one WARN line per fallback: " + warns);
        return warns.get(0).message();
    }

    static double metric(final String group, final String extra, final String attribute) throws Exception {
        final String type = extra.isEmpty() ? "consumer-assignor" : "consumer-assignor-fallbacks";
        final ObjectName name = new ObjectName("kassign:type=" + type + ",client-id=" + group + extra);
        return ((Number) ManagementFactory.getPlatformMBeanServer().getAttribute(name, attribute)).doubleValue();
    }

    private static void assertCooperativeSticky(final GroupAssignment result) {
        equal(new CooperativeStickyAssignor().assign(CLUSTER, GROUP).groupAssignment().toString(),
                result.groupAssignment().toString(), "exactly Kafka's CooperativeStickyAssignor");
    }

    @Test
    @DisplayName("UNAVAILABLE: CooperativeStickyAssignor assigns, one WARN line, metrics by cause")
    void serverDown() throws Exception {
        // The deadline covers the whole assign(), a first call's channel and class loading included.
        final KassignConsumerAssignor assignor = assignor(Map.of("group.id", "cfb-down", "kassign.target",
                "127.0.0.1:" + ClientTest.freePort(), "kassign.deadline.ms", 5_000, "kassign.retry.max.attempts", 2));
        // The warming configure started, with the service down, left the channel unused: still 2 attempts.
        Prewarm.start(assignor.settings().connection(), () -> {
            throw new AssertionError("configure did not start the warming");
        }).get(60, TimeUnit.SECONDS);
        final long start = System.nanoTime();
        final GroupAssignment result = assignor.assign(CLUSTER, GROUP);
        isTrue(System.nanoTime() - start < 7_000_000_000L, "within the deadline");
        assertCooperativeSticky(result);
        final String line = warnLine();
        isTrue(line.startsWith("kassign fallback: UNAVAILABLE"), line);
        isTrue(line.contains("(after 2 attempts)"), "the call tried, as without the warming: " + line);
        isTrue(line.contains("assigned locally with Kafka's CooperativeStickyAssignor (group cfb-down, target"), line);
        equal(1.0, metric("cfb-down", "", "fallbacks-total"), "fallbacks-total");
        equal(1.0, metric("cfb-down", "", "calls-total"), "calls-total");
        equal(1.0, metric("cfb-down", ",cause=unavailable", "fallbacks-total"), "by cause");
    }

    @Test
    @DisplayName("INVALID_ARGUMENT, then an answer breaking the cooperative protocol: both fall back")
    void errorAndInvalidAnswer() throws Exception {
        final List<Object> answers = new java.util.ArrayList<>(List.of(
                Status.INVALID_ARGUMENT.withDescription("members[0]: bad"),
                response(answer("m1", List.of(tp("t", 0), tp("t", 1)), true),
                        answer("m2", List.of(tp("t", 2), tp("t", 3)), true))));
        try (Scripted server = new Scripted(() -> answers.remove(0))) {
            final KassignConsumerAssignor assignor = assignor(Map.of("group.id", "cfb-bad", "kassign.target",
                    server.target(), "partition.assignment.strategy", KassignConsumerAssignor.class.getName()));
            assertCooperativeSticky(assignor.assign(CLUSTER, GROUP));
            isTrue(warnLine().startsWith("kassign fallback: INVALID_ARGUMENT: members[0]: bad (after 1 attempt)"),
                    "status in the line");
            CapturingProvider.clear();
            assertCooperativeSticky(assignor.assign(CLUSTER, GROUP));
            isTrue(warnLine().startsWith("kassign fallback: invalid answer: under COOPERATIVE"), "cause in the line");
            equal(1.0, metric("cfb-bad", ",cause=error-status", "fallbacks-total"), "error status");
            equal(1.0, metric("cfb-bad", ",cause=invalid-answer", "fallbacks-total"), "invalid answer");
            equal(0.0, metric("cfb-bad", "", "assignments-total"), "no answer used");
        }
    }

    @Test
    @DisplayName("a usable answer is used: no WARN, one INFO line, assignments-total")
    void answerUsed() throws Exception {
        final ConsumerAssignResponse good = response(answer("m1", List.of(tp("t", 0), tp("t", 1)), true),
                answer("m2", List.of(), true));
        try (Scripted server = new Scripted(() -> good)) {
            final KassignConsumerAssignor assignor = assignor(Map.of("group.id", "cfb-good", "kassign.target",
                    server.target(), "kassign.consumer.assignor", "cooperative-sticky"));
            final GroupAssignment result = assignor.assign(CLUSTER, GROUP);
            equal(List.of(tp("t", 0), tp("t", 1)), result.groupAssignment().get("m1").partitions(), "the answer");
            equal("cooperative-sticky", server.seen.get().getAssignor(), "the configured assignor asked for");
            isTrue(CapturingProvider.events().stream().noneMatch(e -> e.level() == org.slf4j.event.Level.WARN),
                    "no WARN");
            isTrue(CapturingProvider.events().stream().anyMatch(e -> e.message().startsWith(
                    "kassign assigned group cfb-good: ")), "INFO line");
            equal(1.0, metric("cfb-good", "", "assignments-total"), "assignments-total");
        }
    }

    /** {@code topics} topics of {@code partitions} each, {@code members} members subscribed to all, fresh. */
    private static GroupSubscription wide(final int topics, final int members) {
        final List<String> names = new java.util.ArrayList<>();
        for (int t = 0; t < topics; t++) {
            names.add("w" + t);
        }
        final Object[] pairs = new Object[2 * members];
        for (int m = 0; m < members; m++) {
            pairs[2 * m] = "m" + m;
            pairs[2 * m + 1] = member(names, null, List.of(), -1);
        }
        return group(pairs);
    }

    /** Kafka's own range answer for the group, as the service answers this plug-in: sorted runs, no bytes. */
    private static ConsumerAssignResponse rangeAnswer(final Cluster cluster, final GroupSubscription group) {
        final List<String> names = new java.util.ArrayList<>(new java.util.TreeSet<>(cluster.topics()));
        final ConsumerAssignResponse.Builder response = ConsumerAssignResponse.newBuilder().addAllTopics(names);
        new java.util.TreeMap<>(new org.apache.kafka.clients.consumer.RangeAssignor().assign(cluster, group)
                .groupAssignment()).forEach((id, assignment) -> {
                    final List<org.apache.kafka.common.TopicPartition> sorted = assignment.partitions().stream()
                            .sorted(java.util.Comparator.comparing(org.apache.kafka.common.TopicPartition::topic)
                                    .thenComparingInt(org.apache.kafka.common.TopicPartition::partition)).toList();
                    response.addMembers(ConsumerPluginTest.runsOf(id, sorted, names));
                });
        return response.build();
    }

    @Test
    @DisplayName("kassign.deadline.ms bounds the whole assign(): an answer arriving just before it, too large to "
            + "check in time, falls back within the deadline (plus the fallback's own time)")
    void deadlineCoversConversion() throws Exception {
        final Map<String, Integer> topics = new java.util.TreeMap<>();
        for (int t = 0; t < 300; t++) {
            topics.put("w" + t, 1_000);
        }
        final Cluster cluster = cluster(topics);
        final GroupSubscription group = wide(300, 100);
        final ConsumerAssignResponse answer = rangeAnswer(cluster, group);
        // what the fallback itself costs on this group (cold, as in the plug-in): it runs after the deadline
        final long fallbackStart = System.nanoTime();
        new CooperativeStickyAssignor().assign(cluster, group);
        final long fallbackMs = (System.nanoTime() - fallbackStart) / 1_000_000L;

        final long deadlineMs = 1_500;
        final java.util.concurrent.atomic.AtomicLong started = new java.util.concurrent.atomic.AtomicLong();
        try (Scripted server = new Scripted(() -> {
            // answer 50 ms before the plug-in's deadline: in time for the call, not for checking 300,000 partitions
            final long wait = started.get() + (deadlineMs - 50) * 1_000_000L - System.nanoTime();
            try {
                java.util.concurrent.TimeUnit.NANOSECONDS.sleep(Math.max(0, wait));
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return answer;
        })) {
            final KassignConsumerAssignor assignor = assignor(Map.of("group.id", "cfb-slow", "kassign.target",
                    server.target(), "kassign.consumer.assignor", "range", "kassign.deadline.ms", deadlineMs));
            started.set(System.nanoTime());
            final GroupAssignment result = assignor.assign(cluster, group);
            final long elapsedMs = (System.nanoTime() - started.get()) / 1_000_000L;
            isTrue(elapsedMs <= deadlineMs + 2 * fallbackMs + 400, "assign() took " + elapsedMs + " ms against a "
                    + deadlineMs + " ms deadline (the fallback alone takes " + fallbackMs + " ms)");
            final boolean fellBack = CapturingProvider.events().stream()
                    .anyMatch(e -> e.level() == org.slf4j.event.Level.WARN
                            && e.logger().equals(KassignConsumerAssignor.class.getName()));
            if (fellBack) {
                // the call's own deadline (what was left of the plug-in's) or the plug-in's, checking the answer
                final String line = warnLine();
                isTrue(line.startsWith("kassign fallback: DEADLINE_EXCEEDED: "), line);
                equal(1.0, metric("cfb-slow", ",cause=deadline-exceeded", "fallbacks-total"), "by cause");
                equal(300_000, result.groupAssignment().values().stream().mapToInt(a -> a.partitions().size()).sum(),
                        "the fallback assigns every partition");
            } else {
                isTrue(elapsedMs <= deadlineMs, "an answer used within the deadline: " + elapsedMs + " ms");
                equal(1.0, metric("cfb-slow", "", "assignments-total"), "the answer used");
            }
        }
    }
}
