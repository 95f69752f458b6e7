package io.kassign.consumer;

import static io.kassign.client.Check.equal;
import static io.kassign.client.Check.isTrue;
import static io.kassign.consumer.ConsumerFallbackTest.metric;
import static io.kassign.consumer.ConsumerPluginTest.assignor;
import static io.kassign.consumer.Groups.cluster;
import static io.kassign.consumer.Groups.member;

import io.kassign.client.LiveServer;
import io.kassign.testlog.CapturingProvider;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The consumer plug-in against a real {@code kassign serve} (the shared {@link LiveServer}): for Kafka's
 * four assignors, the plug-in's answer equals Kafka's own assignor's on the same Cluster and
 * GroupSubscription, over two rounds (a fresh group, then the same group with its owned partitions,
 * one member gone and one new); kassign's rack-optimal gives a valid, balanced answer reading no more
 * partitions across racks than any of Kafka's; with the server stopped, the plug-in assigns exactly as
 * Kafka's CooperativeStickyAssignor and counts the fallback.
 */
final class ConsumerLiveServerTest {
    /** Kafka's assignors by the name kassign serves them under. */
    private static final Map<String, Supplier<ConsumerPartitionAssignor>> KAFKA = new LinkedHashMap<>();

    static {
        KAFKA.put("range", RangeAssignor::new);
        KAFKA.put("roundrobin", RoundRobinAssignor::new);
        KAFKA.put("sticky", StickyAssignor::new);
        KAFKA.put("cooperative-sticky", CooperativeStickyAssignor::new);
    }

    @Test
    @DisplayName("the names configure() accepts are the service's, each exercised against it below")
    void assignorNamesAreTheServicesOwn() {
        final Set<String> exercised = new TreeSet<>(KAFKA.keySet());
        exercised.add("rack-optimal");
        equal(exercised, new TreeSet<>(io.kassign.plugin.KassignKeys.CONSUMER_ASSIGNORS), "kassign's consumer assignors");
    }

    /** A group: its topics and partition counts, and per member (in join order) its rack and topics. */
    private record Shape(String name, Map<String, Integer> topics, List<String> ids, List<String> racks,
                         List<List<String>> subscriptions) {
        Cluster cluster() {
            return Groups.cluster(topics);
        }
    }

    private static final List<Shape> SHAPES = List.of(
            new Shape("three racks, one member each", Map.of("t1", 6, "t2", 4), List.of("c-2", "c-1", "c-3"),
                    List.of("a", "b", "c"), List.of(List.of("t1", "t2"), List.of("t1", "t2"), List.of("t1", "t2"))),
            new Shape("unequal subscriptions, a member without rack, a rack with no replica",
                    Map.of("t1", 7, "t2", 5, "t3", 3), List.of("m-a", "m-b", "m-c", "m-d", "m-e"),
                    Arrays.asList("a", null, "d", "b", "a"),
                    List.of(List.of("t1"), List.of("t1", "t2", "t3"), List.of("t2", "t3"), List.of("t1", "t3"),
                            List.of("t1", "t2", "t3"))),
            new Shape("no racks", Map.of("x", 10, "y", 3), List.of("p", "q", "r", "s"),
                    Arrays.asList(null, null, null, null),
                    List.of(List.of("x", "y"), List.of("x", "y"), List.of("x"), List.of("x", "y"))),
            new Shape("two members, two racks, topics of equal size", Map.of("left", 8, "right", 8),
                    List.of("z", "y"), List.of("c", "a"), List.of(List.of("left", "right"), List.of("left", "right"))));

    @BeforeEach
    void clearLog() {
        CapturingProvider.clear();
    }

    private static KassignConsumerAssignor plugin(final String group, final String target, final String name) {
        return assignor(Map.of("group.id", group, "kassign.target", target, "kassign.consumer.assignor", name,
                "partition.assignment.strategy", KassignConsumerAssignor.class.getName()));
    }

    /** Round one: fresh members, nothing owned. */
    private static GroupSubscription fresh(final Shape shape) {
        final Map<String, Subscription> members = new LinkedHashMap<>();
        for (int i = 0; i < shape.ids().size(); i++) {
            members.put(shape.ids().get(i), member(shape.subscriptions().get(i), shape.racks().get(i), List.of(), -1));
        }
        return new GroupSubscription(members);
    }

    /**
     * Round two after {@code previous} at generation 1: the first member gone, a new one (rack b, the first
     * one's topics) last; each member's owned partitions and generation as its consumer sends them; for
     * Kafka's eager StickyAssignor, which reads them from its user data, that user data as it encodes it.
     */
    private static GroupSubscription next(final Shape shape, final GroupAssignment previous, final String name) {
        final Map<String, Subscription> members = new LinkedHashMap<>();
        for (int i = 1; i < shape.ids().size(); i++) {
            final String id = shape.ids().get(i);
            final List<String> topics = shape.subscriptions().get(i);
            final List<TopicPartition> owned = previous.groupAssignment().get(id).partitions();
            ByteBuffer userData = null;
            if (name.equals("sticky")) {
                final StickyAssignor sticky = new StickyAssignor();
                sticky.onAssignment(previous.groupAssignment().get(id), new ConsumerGroupMetadata("g", 1, id,
                        Optional.empty()));
                userData = sticky.subscriptionUserData(Set.copyOf(topics));
            }
            // an eager consumer revokes everything before it joins: it reports owning nothing
            final boolean eager = KassignConsumerAssignor.EAGER_ONLY.contains(name);
            members.put(id, new Subscription(topics, userData, eager ? List.of() : owned, 1,
                    Optional.ofNullable(shape.racks().get(i))));
        }
        members.put("new", member(shape.subscriptions().get(0), "b", List.of(), -1));
        return new GroupSubscription(members);
    }

    /** Per member, its partitions sorted: the order within one member's list is not part of the answer. */
    private static Map<String, List<String>> sorted(final GroupAssignment assignment) {
        final Map<String, List<String>> out = new TreeMap<>();
        assignment.groupAssignment().forEach((member, a) -> {
            final TreeSet<String> partitions = new TreeSet<>();
            a.partitions().forEach(p -> partitions.add(p.toString()));
            out.put(member, List.copyOf(partitions));
        });
        return out;
    }

    @Test
    @DisplayName("Kafka's four assignors through kassign equal Kafka's own, two rounds on four groups")
    void kafkasAssignorsEqualKafkas() throws Exception {
        final String target = LiveServer.shared().target();
        for (final Map.Entry<String, Supplier<ConsumerPartitionAssignor>> kafka : KAFKA.entrySet()) {
            final String name = kafka.getKey();
            final KassignConsumerAssignor plugin = plugin("live-" + name, target, name);
            for (final Shape shape : SHAPES) {
                final Cluster cluster = shape.cluster();
                final GroupSubscription first = fresh(shape);
                final GroupAssignment kafkas = kafka.getValue().get().assign(cluster, first);
                equal(sorted(kafkas), sorted(plugin.assign(cluster, first)), name + ", " + shape.name() + ", round 1");
                // one copy each: Kafka's StickyAssignor reads the user data buffers, leaving them spent
                equal(sorted(kafka.getValue().get().assign(cluster, next(shape, kafkas, name))),
                        sorted(plugin.assign(cluster, next(shape, kafkas, name))), name + ", " + shape.name() + ", round 2");
            }
            equal(0.0, metric("live-" + name, "", "fallbacks-total"), name + ": no fallback");
            equal(2.0 * SHAPES.size(), metric("live-" + name, "", "assignments-total"), name + ": kassign's answers");
        }
    }

    /** How many partitions {@code assignment} hands a member whose rack holds no replica of them. */
    private static int crossRack(final Cluster cluster, final GroupSubscription group, final GroupAssignment assignment) {
        int crossing = 0;
        for (final Map.Entry<String, Assignment> m : assignment.groupAssignment().entrySet()) {
            final Optional<String> rack = group.groupSubscription().get(m.getKey()).rackId();
            for (final TopicPartition p : m.getValue().partitions()) {
                final PartitionInfo info = cluster.partition(p);
                final boolean local = rack.isPresent() && Arrays.stream(info.replicas())
                        .anyMatch(n -> rack.get().equals(n.rack()));
                crossing += local ? 0 : 1;
            }
        }
        return crossing;
    }

    @Test
    @DisplayName("rack-optimal: every partition once, to a subscriber, balanced, no more cross-rack than Kafka's")
    void rackOptimalIsValid() throws Exception {
        final KassignConsumerAssignor plugin = plugin("live-rack-optimal", LiveServer.shared().target(), "rack-optimal");
        for (final Shape shape : SHAPES) {
            final Cluster cluster = shape.cluster();
            final GroupSubscription group = fresh(shape);
            final GroupAssignment ours = plugin.assign(cluster, group);
            final Map<TopicPartition, String> owner = new HashMap<>();
            for (final Map.Entry<String, Assignment> m : ours.groupAssignment().entrySet()) {
                final List<String> topics = group.groupSubscription().get(m.getKey()).topics();
                for (final TopicPartition p : m.getValue().partitions()) {
                    isTrue(owner.put(p, m.getKey()) == null, shape.name() + ": " + p + " given twice");
                    isTrue(topics.contains(p.topic()), shape.name() + ": " + p + " to a member not subscribed");
                }
            }
            int total = 0;
            for (final Map.Entry<String, Integer> t : shape.topics().entrySet()) {
                total += t.getValue();
            }
            equal(total, owner.size(), shape.name() + ": every partition assigned");
            if (shape.subscriptions().stream().distinct().count() == 1) {
                final List<Integer> counts = new ArrayList<>();
                ours.groupAssignment().values().forEach(a -> counts.add(a.partitions().size()));
                isTrue(counts.stream().max(Integer::compare).get() - counts.stream().min(Integer::compare).get() <= 1,
                        shape.name() + ": balanced " + counts);
            }
            for (final Map.Entry<String, Supplier<ConsumerPartitionAssignor>> kafka : KAFKA.entrySet()) {
                final int theirs = crossRack(cluster, group, kafka.getValue().get().assign(cluster, group));
                final int mine = crossRack(cluster, group, ours);
                isTrue(mine <= theirs, shape.name() + ": " + mine + " cross-rack, " + kafka.getKey() + " " + theirs);
            }
        }
        equal(0.0, metric("live-rack-optimal", "", "fallbacks-total"), "no fallback");
    }

    @Test
    @DisplayName("kassign.balance=load: the service balances by load (its report has load figures), and the INFO "
            + "line says where the loads came from")
    void balanceLoad() throws Exception {
        final Shape shape = SHAPES.get(0);
        final KassignConsumerAssignor plugin = assignor(Map.of("group.id", "live-load", "kassign.target",
                LiveServer.shared().target(), "kassign.consumer.assignor", "sticky", "kassign.balance", "load"));
        final GroupAssignment answer = plugin.assign(shape.cluster(), fresh(shape));
        equal(10, answer.groupAssignment().values().stream().mapToInt(a -> a.partitions().size()).sum(),
                "every partition assigned");
        equal(0.0, metric("live-load", "", "fallbacks-total"), "no fallback");
        // the test server has no --load-source: every partition weighs the same, and the line says so
        final List<String> lines = CapturingProvider.events().stream()
                .map(CapturingProvider.Event::message).filter(m -> m.startsWith("kassign assigned group live-load"))
                .toList();
        equal(1, lines.size(), "one INFO line: " + lines);
        isTrue(lines.get(0).contains("; load asked for, no loads found: balanced by count"), lines.get(0));
    }

    @Test
    @DisplayName("the server stopped: Kafka's CooperativeStickyAssignor's answer, one WARN line, counted")
    void serverStopped() throws Exception {
        final Shape shape = SHAPES.get(1);
        final Cluster cluster = shape.cluster();
        final GroupSubscription group = fresh(shape);
        final KassignConsumerAssignor plugin;
        try (LiveServer server = LiveServer.start(List.of())) {
            // a generous deadline: the first call also connects, which took 1.7 s on a loaded
            // machine; the call after the stop fails fast (UNAVAILABLE), not by the deadline
            plugin = assignor(Map.of("group.id", "live-stopped", "kassign.target", server.target(),
                    "kassign.deadline.ms", 15_000, "kassign.retry.max.attempts", 2));
            plugin.assign(cluster, group);
            equal(1.0, metric("live-stopped", "", "assignments-total"), "answered while up");
        }
        CapturingProvider.clear();
        final GroupAssignment fallback = plugin.assign(cluster, group);
        equal(sorted(new CooperativeStickyAssignor().assign(cluster, group)), sorted(fallback),
                "Kafka's CooperativeStickyAssignor");
        isTrue(CapturingProvider.events().stream().anyMatch(e -> e.level() == org.slf4j.event.Level.WARN
                && e.message().startsWith("kassign fallback: UNAVAILABLE")), "the WARN line");
        equal(1.0, metric("live-stopped", "", "fallbacks-total"), "fallbacks-total");
        equal(1.0, metric("live-stopped", ",cause=unavailable", "fallbacks-total"), "by cause");
    }
}
