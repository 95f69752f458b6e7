package io.kassign.broker;

import static io.kassign.broker.ConsumerGroups.cluster;
import static io.kassign.broker.ConsumerGroups.group;
import static io.kassign.broker.ConsumerGroups.rotating;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kassign.broker.ConsumerGroups.Cluster;
import io.kassign.broker.ConsumerGroups.Member;
import io.kassign.broker.GroupSpecToConsumerRequest.Topics;
import io.kassign.v1.ConsumerAssignRequest;
import io.kassign.v1.ConsumerAssignResponse;
import io.kassign.v1.ConsumerMemberAssignment;
import io.kassign.v1.ConsumerTopic;
import io.kassign.v1.PartitionRuns;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.junit.jupiter.api.Test;

/**
 * The id to name map of the broker consumer plug-in: never blocks, names an unknown id soon after
 * it is asked for, forgets deleted topics, survives a failed listing, closes its source; and the
 * request it shapes names topics where known while the answer maps back to the same ids.
 */
final class TopicNamesTest {
    private static final Uuid ORDERS = new Uuid(1L, 1L);
    private static final Uuid PAYMENTS = new Uuid(2L, 2L);

    /** A cluster's topics, changed by the test; counts listings, can fail, knows if it was closed. */
    private static final class FakeSource implements TopicNames.Source {
        final Map<Uuid, String> topics = new ConcurrentHashMap<>();
        final AtomicInteger listings = new AtomicInteger();
        volatile boolean failing;
        volatile boolean closed;

        @Override
        public Map<Uuid, String> list() {
            listings.incrementAndGet();
            if (failing) {
                throw new IllegalStateException("broker unreachable");
            }
            return Map.copyOf(topics);
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    private static Map<Uuid, String> eventually(final TopicNames names, final Set<Uuid> ids, final int size)
            throws InterruptedException {
        for (int i = 0; i < 200; i++) {
            final Map<Uuid, String> known = names.known(ids);
            if (known.size() == size) {
                return known;
            }
            Thread.sleep(10);
        }
        return names.known(ids);
    }

    @Test
    void anUnknownIdIsAnsweredAtOnceUnnamedThenNamedByABackgroundListing() throws Exception {
        final FakeSource source = new FakeSource();
        source.topics.put(ORDERS, "orders");
        try (TopicNames names = new TopicNames(source, 3_600_000L, 0L, System::currentTimeMillis)) {
            assertEquals(Map.of(), names.known(Set.of(ORDERS, PAYMENTS)), "nothing listed yet: no wait, no names");
            assertEquals(Map.of(ORDERS, "orders"), eventually(names, Set.of(ORDERS, PAYMENTS), 1));
            source.topics.put(PAYMENTS, "payments");
            assertEquals(Map.of(ORDERS, "orders", PAYMENTS, "payments"), eventually(names, Set.of(ORDERS, PAYMENTS), 2),
                    "an id the cluster lacked is asked for again by the next assignment");
        }
    }

    @Test
    void aListingForgetsDeletedTopicsAndAFailedOneKeepsTheNames() {
        final FakeSource source = new FakeSource();
        source.topics.putAll(Map.of(ORDERS, "orders", PAYMENTS, "payments"));
        final long[] now = {0L};
        try (TopicNames names = new TopicNames(source, 3_600_000L, 3_600_000L, () -> now[0])) {
            names.known(Set.of(ORDERS, PAYMENTS));
            names.refresh();
            assertEquals(2, names.size());
            source.failing = true;
            names.refresh();
            assertEquals(Map.of(ORDERS, "orders", PAYMENTS, "payments"), names.known(Set.of(ORDERS, PAYMENTS)));
            source.failing = false;
            source.topics.remove(PAYMENTS);
            names.refresh();
            assertEquals(Map.of(ORDERS, "orders"), names.known(Set.of(ORDERS, PAYMENTS)));
            assertEquals(1, names.size(), "the deleted topic is forgotten (memory: ids asked for and listed)");
            final int before = source.listings.get();
            names.known(Set.of(PAYMENTS));
            names.known(Set.of(PAYMENTS));
            assertEquals(before, source.listings.get(), "within the gap no listing is made on the caller's thread");
        }
    }

    @Test
    void startListsEveryTopicOnceAndAHugeClusterKeepsOnlyTheWantedIds() throws Exception {
        final FakeSource source = new FakeSource();
        source.topics.put(ORDERS, "orders");
        try (TopicNames names = new TopicNames(source, 3_600_000L, 3_600_000L, () -> 0L)) {
            names.start();
            for (int i = 0; i < 200 && names.size() == 0; i++) {
                Thread.sleep(10);
            }
            assertEquals(1, names.size(), "named before any group asks: its first rebalance goes by name");
            for (long i = 0; i <= TopicNames.MAX_IDS; i++) {
                source.topics.put(new Uuid(7L, i), "t" + i);
            }
            names.known(Set.of(PAYMENTS));
            source.topics.put(PAYMENTS, "payments");
            names.refresh();
            assertEquals(Map.of(PAYMENTS, "payments"), names.known(Set.of(ORDERS, PAYMENTS)),
                    "past " + TopicNames.MAX_IDS + " topics only the ids groups asked for are kept");
        }
    }

    @Test
    void closeStopsTheRefresherAndClosesTheSourceAndLookupsStillAnswer() {
        final FakeSource source = new FakeSource();
        final TopicNames names = new TopicNames(source, 3_600_000L, 0L, System::currentTimeMillis);
        names.close();
        assertTrue(source.closed && names.isClosed());
        assertEquals(Map.of(), names.known(Set.of(ORDERS)), "a closed map names nothing and throws nothing");
    }

    @Test
    void sharedPerSettingCountedByUsersAndClosedWithTheLast() {
        final Map<String, Object> broker = Map.of("kassign.balance", "load",
                "kassign.topic.names.bootstrap.servers", "127.0.0.1:1", "kassign.topic.names.security.protocol",
                "PLAINTEXT", "kassign.topic.names.refresh.ms", "60000", "node.id", "4");
        final AdminTopicNames setting = ConsumerGroupSettings.from(broker).topicNames().orElseThrow();
        assertEquals(Map.of("bootstrap.servers", "127.0.0.1:1", "security.protocol", "PLAINTEXT",
                "client.id", "kassign-topic-names-broker-4", "metadata.recovery.strategy", "none"), setting.admin());
        assertEquals(60_000L, setting.refreshMs());
        assertTrue(ConsumerGroupSettings.from(Map.of("kassign.topic.names.bootstrap.servers", "127.0.0.1:1"))
                .topicNames().isEmpty(), "under count no names are looked up: the request stays as it was");
        final TopicNames first = setting.acquire();
        assertSame(first, setting.acquire());
        setting.release();
        assertTrue(!first.isClosed(), "one user left");
        setting.release();
        assertTrue(first.isClosed());
        final TopicNames again = setting.acquire();
        assertNotSame(first, again);
        setting.release();
        assertThrows(ConfigException.class, () -> AdminTopicNames.from(Map.of(
                "kassign.topic.names.bootstrap.servers", "127.0.0.1:1",
                "kassign.topic.names.security.protocol", "CARRIER_PIGEON"), "1").orElseThrow().acquire());
    }

    @Test
    void theRequestNamesKnownTopicsAndTheAnswerMapsBackToIds() {
        final Cluster cluster = cluster(Map.of("orders", rotating(4), "payments", rotating(2)));
        final Uuid orders = cluster.id("orders");
        final Uuid payments = cluster.id("payments");
        final Map<String, Member> members = new LinkedHashMap<>();
        members.put("a", Member.of("rack-a", orders, payments).owning(Map.of(orders, Set.of(0, 1))));
        final GroupSpecImpl group = group(members);
        final Topics topics = Topics.of(group, cluster.describer(), ids -> Map.of(orders, "orders"));
        assertEquals(1, topics.named());
        assertEquals(Map.of("orders", orders, payments.toString(), payments), topics.ids());
        final ConsumerAssignRequest request = GroupSpecToConsumerRequest.convert(group, cluster.describer(), topics,
                ConsumerGroupSettings.from(Map.of("kassign.balance", "load")));
        assertEquals(Set.of("orders", payments.toString()),
                Set.copyOf(request.getTopicsList().stream().map(ConsumerTopic::getName).toList()));
        assertEquals(Set.of("orders", payments.toString()), Set.copyOf(request.getTopicLists(0).getTopicsList()));
        assertEquals("orders", request.getMembers(0).getSubscription().getOwnedByTopic(0).getTopic());
        final ConsumerAssignResponse answer = ConsumerAssignResponse.newBuilder().addTopics("orders")
                .addTopics(payments.toString()).addMembers(ConsumerMemberAssignment.newBuilder().setMemberId("a")
                        .setAssigned(PartitionRuns.newBuilder().addTopics(0).addCounts(4).addAllPartitions(
                                List.of(0, 1, 2, 3)).addTopics(1).addCounts(2).addAllPartitions(List.of(0, 1))))
                .build();
        assertEquals(Map.of(orders, Set.of(0, 1, 2, 3), payments, Set.of(0, 1)),
                ConsumerResponseToAssignment.convert(answer, group, topics).members().get("a").partitions());
        final Topics clash = Topics.of(group, cluster.describer(), ids -> Map.of(orders, payments.toString()));
        assertEquals(0, clash.named(), "a name equal to another topic's id: every topic by id");
        assertEquals(Map.of(orders.toString(), orders, payments.toString(), payments), clash.ids());
        assertEquals(List.of(), List.copyOf(Topics.of(group(Map.of()), cluster.describer(), ids -> {
            throw new AssertionError("no topics: nothing to name");
        }).ids().keySet()));
    }
}
