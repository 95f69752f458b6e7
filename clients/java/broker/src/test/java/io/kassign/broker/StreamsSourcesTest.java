package io.kassign.broker;

import static io.kassign.broker.StreamsGroups.group;
import static io.kassign.broker.StreamsGroups.topology;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kassign.broker.GroupToStreamsRequest.Topology;
import io.kassign.broker.StreamsGroups.Member;
import io.kassign.broker.StreamsSources.Group;
import io.kassign.broker.StreamsSources.SourceTopic;
import io.kassign.v1.AssignRequest;
import io.kassign.v1.TaskInfo;
import io.kassign.v1.TaskTopicPartition;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupMemberAssignment;
import org.apache.kafka.clients.admin.StreamsGroupMemberDescription;
import org.apache.kafka.clients.admin.StreamsGroupSubtopologyDescription;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.Node;
import org.apache.kafka.coordinator.group.streams.TopologyMetadata;
import org.apache.kafka.coordinator.group.streams.assignor.GroupSpecImpl;
import org.junit.jupiter.api.Test;

/**
 * A KIP-1071 group's tasks tied to their source partitions (issue 25): the assignor's group found
 * among the described ones by its member ids, never waiting; a task (subtopology, p) sent with
 * partition p of each source topic that has it; the description read as Kafka's Admin gives it;
 * and a COUNT request byte for byte as before.
 */
final class StreamsSourcesTest {
    private static final String A = "7c0f3b6e-0000-4000-8000-00000000000a";
    private static final String B = "7c0f3b6e-0000-4000-8000-00000000000b";
    private static final String C = "7c0f3b6e-0000-4000-8000-00000000000c";
    private static final Node NODE = new Node(1, "localhost", 9092);

    private static Group orders(final String... members) {
        return new Group("orders-app", Set.of(members), Map.of(
                "0", List.of(new SourceTopic("clicks", 2), new SourceTopic("orders", 4)),
                "1", List.of(new SourceTopic("orders-app-agg-repartition", 4))));
    }

    /** The cluster's described groups, changed by the test; counts describings, can fail, knows if it was closed. */
    private static final class FakeSource implements StreamsSources.Source {
        final List<Group> groups = new CopyOnWriteArrayList<>();
        final AtomicInteger describings = new AtomicInteger();
        volatile boolean failing;
        volatile boolean closed;

        @Override
        public List<Group> describe(final int maxGroups) {
            describings.incrementAndGet();
            if (failing) {
                throw new IllegalStateException("broker unreachable");
            }
            return List.copyOf(groups);
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    private static Optional<Group> eventually(final StreamsSources sources, final List<String> members,
                                              final Set<String> subtopologies) throws InterruptedException {
        for (int i = 0; i < 200; i++) {
            final Optional<Group> found = sources.find(members, subtopologies);
            if (found.isPresent()) {
                return found;
            }
            Thread.sleep(10);
        }
        return sources.find(members, subtopologies);
    }

    @Test
    void aGroupIsFoundByMostOfItsMembersAndTiesGoToTheLeastId() {
        final Group other = new Group("billing", Set.of(C), Map.of());
        final Map<String, Group> index = StreamsSources.index(List.of(orders(A, B), other));
        assertEquals("orders-app", StreamsSources.match(index, List.of(A, B, C)).orElseThrow().groupId());
        final Group twin = new Group("aaa", Set.of(B), Map.of());
        assertEquals("aaa", StreamsSources.match(StreamsSources.index(List.of(orders(A), twin)), List.of(A, B))
                .orElseThrow().groupId(), "one hit each: the least id");
        assertTrue(StreamsSources.match(index, List.of("new-member")).isEmpty());
    }

    @Test
    void anUnknownGroupIsAnsweredAtOnceWithoutSourcesThenFoundByABackgroundDescribing() throws Exception {
        final FakeSource source = new FakeSource();
        source.groups.add(orders(A, B));
        try (StreamsSources sources = new StreamsSources(source, 3_600_000L, 0L, 0L, System::currentTimeMillis)) {
            assertTrue(sources.find(List.of(A, C), Set.of("0", "1")).isEmpty(), "nothing described yet: no wait");
            assertEquals("orders-app", eventually(sources, List.of(A, C), Set.of("0", "1")).orElseThrow().groupId(),
                    "a member described before, one joined since");
            final int before = source.describings.get();
            assertTrue(sources.find(List.of(A), Set.of("0", "1", "2")).isEmpty(),
                    "a subtopology the description lacks: no sources rather than some tasks weighing 0");
            source.groups.set(0, new Group("orders-app", Set.of(A), Map.of("0", List.of(), "1", List.of(),
                    "2", List.of(new SourceTopic("x", 1)))));
            eventually(sources, List.of(A), Set.of("0", "1", "2")).orElseThrow();
            assertTrue(source.describings.get() > before, "the new topology asked for a describing");
            source.groups.clear();
            sources.refresh();
            assertTrue(sources.find(List.of(A), Set.of("0")).isEmpty(), "a group gone is forgotten");
            assertEquals(0, sources.groups());
        }
        assertTrue(source.closed, "close closes the source");
    }

    @Test
    void aFailedDescribingKeepsTheGroupsKnownAndAsksAreSpacedByTheGap() {
        final FakeSource source = new FakeSource();
        source.groups.add(orders(A));
        final long[] now = {1_000_000L};
        try (StreamsSources sources = new StreamsSources(source, 3_600_000L, 3_600_000L, 0L, () -> now[0])) {
            sources.refresh();
            source.failing = true;
            sources.refresh();
            assertEquals("orders-app", sources.find(List.of(A), Set.of("0", "1")).orElseThrow().groupId());
            final int before = source.describings.get();
            for (int i = 0; i < 50; i++) {
                sources.find(List.of("unknown-" + i), Set.of("0"));
            }
            assertEquals(before, source.describings.get(), "within the gap the asks wait for one describing");
        }
    }

    @Test
    void theSourcesShareTheSettingAndItsUsersWithTheTopicNames() {
        final AdminTopicNames setting = AdminTopicNames.from(Map.of("kassign.topic.names.bootstrap.servers",
                "127.0.0.1:1"), "1").orElseThrow();
        final TopicNames names = setting.acquire();
        final StreamsSources sources = setting.acquireSources();
        assertSame(sources, setting.acquireSources(), "one per setting in the broker");
        setting.release();
        setting.release();
        assertFalse(sources.isClosed() || names.isClosed(), "one user left");
        setting.release();
        assertTrue(sources.isClosed() && names.isClosed(), "the last user closes both, and their Admin client");
    }

    @Test
    void theMemberIndexIsBounded() {
        final List<Group> many = new ArrayList<>();
        for (int g = 0; g < 3; g++) {
            final List<String> members = new ArrayList<>();
            for (int m = 0; m < StreamsSources.MAX_MEMBERS / 2; m++) {
                members.add(g + "-" + m);
            }
            many.add(new Group("g" + g, Set.copyOf(members), Map.of()));
        }
        final Map<String, Group> index = StreamsSources.index(many);
        assertEquals(StreamsSources.MAX_MEMBERS, index.size(), "the third group passes the bound: left out whole");
        assertTrue(StreamsSources.match(index, List.of("2-0")).isEmpty());
    }

    private static GroupSpecImpl members(final String... ids) {
        final Map<String, Member> members = new LinkedHashMap<>();
        for (final String id : ids) {
            members.put(id, new Member("00000000-0000-0000-0000-0000000000" + id.substring(id.length() - 2)));
        }
        return group(members, 0);
    }

    @Test
    void eachTaskCarriesPartitionPOfEverySourceTopicThatHasIt() {
        final TopologyMetadata described = topology(Map.of("0", 4, "1", 4), Set.of("1"));
        final Topology topology = Topology.of(described);
        final StreamsSettings load = StreamsSettings.from(Map.of("kassign.streams.balance", "load"));
        final AssignRequest request = GroupToStreamsRequest.convert(members(A, B), topology, load,
                orders(A, B).subtopologies());
        final Map<String, List<String>> sources = new TreeMap<>();
        for (final TaskInfo task : request.getTasksList()) {
            final List<String> partitions = new ArrayList<>();
            for (final TaskTopicPartition tp : task.getTopicPartitionsList()) {
                assertTrue(tp.getIsSource() && !tp.getIsChangelog() && tp.getRackIdsCount() == 0, tp.toString());
                partitions.add(tp.getTopic() + "-" + tp.getPartition());
            }
            sources.put(task.getId().getSubtopology() + "_" + task.getId().getPartition(), partitions);
        }
        assertEquals(Map.of(
                "0_0", List.of("clicks-0", "orders-0"), "0_1", List.of("clicks-1", "orders-1"),
                "0_2", List.of("orders-2"), "0_3", List.of("orders-3"),
                "1_0", List.of("orders-app-agg-repartition-0"), "1_1", List.of("orders-app-agg-repartition-1"),
                "1_2", List.of("orders-app-agg-repartition-2"), "1_3", List.of("orders-app-agg-repartition-3")),
                sources, "clicks has 2 partitions: tasks 0_2 and 0_3 read orders alone");
    }

    @Test
    void underCountNoAdminIsMadeAndTheRequestIsByteForByteAsBefore() {
        final Map<String, String> broker = Map.of("node.id", "3", "kassign.topic.names.bootstrap.servers",
                "localhost:9092");
        final StreamsSettings count = StreamsSettings.from(broker);
        assertTrue(count.sources().isEmpty(), "COUNT: the bootstrap is not read");
        final Topology topology = Topology.of(topology(Map.of("0", 4, "1", 4), Set.of("1")));
        final byte[] before = GroupToStreamsRequest.convert(members(A, B), topology,
                StreamsSettings.from(Map.of("node.id", "3"))).toByteArray();
        assertArrayEquals(before, GroupToStreamsRequest.convert(members(A, B), topology, count).toByteArray());
        final Map<String, String> load = new TreeMap<>(broker);
        load.put("kassign.balance", "load");
        assertTrue(StreamsSettings.from(load).sources().isPresent(), "LOAD with the bootstrap: described");
        assertTrue(StreamsSettings.from(Map.of("kassign.balance", "load")).sources().isEmpty(),
                "LOAD without the bootstrap: as before");
    }

    @Test
    void aDescriptionGivesEachSubtopologyItsSourceAndRepartitionTopics() {
        final StreamsGroupSubtopologyDescription first = new StreamsGroupSubtopologyDescription("0",
                List.of("orders", "clicks"), List.of("app-agg-repartition"), Map.of(), Map.of());
        final StreamsGroupSubtopologyDescription second = new StreamsGroupSubtopologyDescription("1", List.of(),
                List.of(), Map.of(), Map.of("app-agg-repartition",
                        new StreamsGroupSubtopologyDescription.TopicInfo(6, 1, Map.of())));
        final StreamsGroupDescription group = new StreamsGroupDescription("app", 3, 3, 1, List.of(first, second),
                List.of(member(A), member(B)), GroupState.STABLE, NODE, Set.of());
        final Group read = StreamsGroupDescribing.of(group, Map.of("orders", 6, "clicks", 3)).orElseThrow();
        assertEquals(new Group("app", Set.of(A, B), Map.of(
                "0", List.of(new SourceTopic("clicks", 3), new SourceTopic("orders", 6)),
                "1", List.of(new SourceTopic("app-agg-repartition", 6)))), read);
        assertTrue(StreamsGroupDescribing.of(group, Map.of("orders", 6)).isEmpty(),
                "a source topic not described: the group is left out, not weighed in part");
        final StreamsGroupDescription empty = new StreamsGroupDescription("app", 3, 3, 1, List.of(first, second),
                List.of(), GroupState.EMPTY, NODE, Set.of());
        assertTrue(StreamsGroupDescribing.of(empty, Map.of("orders", 6, "clicks", 3)).isEmpty(), "no members");
    }

    private static StreamsGroupMemberDescription member(final String id) {
        final StreamsGroupMemberAssignment none = new StreamsGroupMemberAssignment(List.of(), List.of(), List.of());
        return new StreamsGroupMemberDescription(id, 1, Optional.empty(), Optional.empty(), "client", "/127.0.0.1",
                1, "process", Optional.empty(), Map.of(), List.of(), List.of(), none, none, false);
    }
}
