package io.kassign.broker;

import static io.kassign.broker.ConsumerGroups.assertValid;
import static io.kassign.broker.ConsumerGroups.assignor;
import static io.kassign.broker.ConsumerGroups.cluster;
import static io.kassign.broker.ConsumerGroups.group;
import static io.kassign.broker.ConsumerGroups.metric;
import static io.kassign.broker.ConsumerGroups.rotating;
import static io.kassign.broker.ConsumerGroups.sorted;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kassign.broker.ConsumerGroups.Cluster;
import io.kassign.broker.ConsumerGroups.Member;
import io.kassign.broker.GroupSpecToConsumerRequest.Topics;
import io.kassign.client.DocProperties;
import io.kassign.client.LiveServer;
import io.kassign.plugin.InvalidAnswer;
import io.kassign.plugin.KassignKeys;
import io.kassign.v1.Balance;
import io.kassign.v1.ConsumerAssignRequest;
import io.kassign.v1.ConsumerAssignResponse;
import io.kassign.v1.ConsumerMemberAssignment;
import io.kassign.v1.PartitionRuns;
import io.kassign.v1.TopicPartition;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.junit.jupiter.api.Test;

/**
 * When kassign cannot be used the plug-in answers exactly as Kafka's UniformAssignor would, within
 * the deadline, and counts why; an answer the coordinator must not apply is refused; the broker keys
 * are read with their defaults.
 */
final class ConsumerGroupFallbackTest {
    private static final Cluster CLUSTER = cluster(Map.of("orders", rotating(6)));
    private static final Uuid ORDERS = CLUSTER.id("orders");

    private static GroupSpecImpl group2() {
        final Map<String, Member> members = new LinkedHashMap<>();
        members.put("a", Member.of("rack-a", ORDERS).owning(Map.of(ORDERS, Set.of(0, 1, 2, 3))));
        members.put("b", Member.of("rack-b", ORDERS));
        return group(members);
    }

    private static GroupAssignment uniform(final GroupSpecImpl group) {
        return new UniformAssignor().assign(group, CLUSTER.describer());
    }

    @Test
    void anUnreachableServiceFallsBackToKafkasUniformAssignor() throws IOException {
        final GroupSpecImpl group = group2();
        final GroupAssignment answer = assignor("down", "127.0.0.1:" + SilentServer.closedPort(), "kassign.deadline.ms", "300").assign(group, CLUSTER.describer());
        assertValid(answer, group, CLUSTER);
        assertEquals(sorted(uniform(group)), sorted(answer));
        assertEquals(1.0, metric("down", "", "fallbacks-total"));
        // refused at once; in a cold JVM the first call may spend the 300 ms loading gRPC instead
        assertEquals(1.0, metric("down", ",cause=unavailable", "fallbacks-total")
                + metric("down", ",cause=deadline-exceeded", "fallbacks-total"));
        assertEquals(0.0, metric("down", "", "assignments-total"));
    }

    @Test
    void aServiceThatNeverAnswersCostsTheDeadlineAndNoMore() throws Exception {
        try (SilentServer silent = new SilentServer()) {
            final KassignConsumerGroupAssignor plugin = assignor("silent", silent.target(),
                    "kassign.deadline.ms", "300");
            final GroupSpecImpl group = group2();
            for (int round = 1; round <= 3; round++) {
                final long started = System.nanoTime();
                final GroupAssignment answer = plugin.assign(group, CLUSTER.describer());
                final long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                assertEquals(sorted(uniform(group)), sorted(answer), "round " + round);
                assertTrue(tookMs >= 300, "round " + round + " waited " + tookMs + " ms: the deadline first");
                // the bound the coordinator sees: the deadline plus the local fallback and whatever a
                // loaded machine adds (500 ms seen), never gRPC's or TCP's own multi-second timeouts
                assertTrue(tookMs < 1000, "round " + round + " took " + tookMs + " ms");
            }
            assertEquals(3.0, metric("silent", ",cause=deadline-exceeded", "fallbacks-total"));
            assertTrue(metric("silent", "", "call-latency-max") < 1000, "call-latency-max");
        }
    }

    @Test
    void anErrorStatusFallsBack() {
        // a server refusing the group's six partitions (an unknown assignor name no longer gets this far:
        // configure() refuses it)
        try (LiveServer small = LiveServer.start(List.of("--max-partitions", "2"))) {
            final KassignConsumerGroupAssignor plugin = assignor("refused", small.target());
            final GroupSpecImpl group = group2();
            assertEquals(sorted(uniform(group)), sorted(plugin.assign(group, CLUSTER.describer())));
            assertEquals(1.0, metric("refused", ",cause=error-status", "fallbacks-total"));
        }
    }

    @Test
    void answersTheCoordinatorMustNotApplyAreRefused() {
        final GroupSpecImpl group = group2();
        final Topics topics = Topics.of(group, CLUSTER.describer());
        final GroupAssignment good = ConsumerResponseToAssignment.convert(
                runs(Map.of("a", List.of(0, 1, 2), "b", List.of(3, 4, 5))), group, topics);
        assertValid(good, group, CLUSTER);
        final Map<String, Map<String, List<Integer>>> bad = Map.of(
                "unknown member", Map.of("a", List.of(0, 1, 2), "b", List.of(3, 4), "c", List.of(5)),
                "member left out", Map.of("a", List.of(0, 1, 2, 3, 4, 5)),
                "partition twice", Map.of("a", List.of(0, 1, 2), "b", List.of(2, 3, 4, 5)),
                "partition missing", Map.of("a", List.of(0, 1, 2), "b", List.of(3, 4)),
                "partition out of range", Map.of("a", List.of(0, 1, 2), "b", List.of(3, 4, 5, 6)));
        bad.forEach((why, members) -> assertThrows(InvalidAnswer.class,
                () -> ConsumerResponseToAssignment.convert(runs(members), group, topics), why));
    }

    /**
     * A service older than the compact wire reads the compact request's members as subscribed to
     * nothing and answers them, validly for it, with its v1 lists or nothing: refused, so the
     * plug-in falls back rather than hand the group an empty assignment.
     */
    @Test
    void answersOfAServiceOlderThanTheCompactWireAreRefused() {
        final GroupSpecImpl group = group2();
        final Topics topics = Topics.of(group, CLUSTER.describer());
        final ConsumerMemberAssignment.Builder listed = ConsumerMemberAssignment.newBuilder().setMemberId("a");
        List.of(0, 1, 2, 3, 4, 5).forEach(p -> listed.addPartitions(
                TopicPartition.newBuilder().setTopic(ORDERS.toString()).setPartition(p)));
        for (final ConsumerAssignResponse old : List.of(
                ConsumerAssignResponse.newBuilder().addMembers(listed)
                        .addMembers(ConsumerMemberAssignment.newBuilder().setMemberId("b")).build(),
                ConsumerAssignResponse.newBuilder().addMembers(ConsumerMemberAssignment.newBuilder().setMemberId("a"))
                        .addMembers(ConsumerMemberAssignment.newBuilder().setMemberId("b")).build())) {
            final InvalidAnswer refused = assertThrows(InvalidAnswer.class,
                    () -> ConsumerResponseToAssignment.convert(old, group, topics));
            assertTrue(refused.getMessage().contains("predates the compact wire"), refused.getMessage());
        }
    }

    /** The same answer in the compact form (issue 24): one run of orders per member, the topic named once. */
    private static ConsumerAssignResponse runs(final Map<String, List<Integer>> members) {
        final ConsumerAssignResponse.Builder response = ConsumerAssignResponse.newBuilder().addTopics(ORDERS.toString());
        members.forEach((id, partitions) -> response.addMembers(ConsumerMemberAssignment.newBuilder().setMemberId(id)
                .setAssigned(PartitionRuns.newBuilder().addTopics(0).addCounts(partitions.size())
                        .addAllPartitions(partitions))));
        return response.build();
    }

    @Test
    void compactRequestAndAnswer() {
        final GroupSpecImpl group = group2();
        final Topics topics = Topics.of(group, CLUSTER.describer());
        final ConsumerAssignRequest request = GroupSpecToConsumerRequest.convert(group, CLUSTER.describer(), topics,
                ConsumerGroupSettings.from(Map.of("node.id", "3")));
        assertTrue(request.getCompactAnswer() && !request.getAssignmentBytes(), "runs asked for, no Kafka bytes");
        assertEquals(1, request.getTopicListsCount(), "both members read orders: one shared list");
        assertEquals(List.of(ORDERS.toString()), request.getTopicLists(0).getTopicsList());
        assertEquals(0, request.getMembers(1).getSubscription().getTopicList());
        assertEquals(List.of(0, 1, 2, 3), request.getMembers(0).getSubscription().getOwnedByTopic(0).getPartitionsList(),
                "a's target by topic");
        assertEquals(6, request.getTopics(0).getPartitionCount());
        assertEquals(0, request.getTopics(0).getPartitionsCount(), "no message per partition");
        final GroupAssignment good = ConsumerResponseToAssignment.convert(
                runs(Map.of("a", List.of(0, 1, 2), "b", List.of(3, 4, 5))), group, topics);
        assertValid(good, group, CLUSTER);
        assertEquals(Set.of(0, 1, 2), good.members().get("a").partitions().get(ORDERS));
        final Map<String, Map<String, List<Integer>>> bad = Map.of(
                "partition twice", Map.of("a", List.of(0, 1, 2), "b", List.of(2, 3, 4, 5)),
                "partition missing", Map.of("a", List.of(0, 1, 2), "b", List.of(3, 4)),
                "partition out of range", Map.of("a", List.of(0, 1, 2), "b", List.of(3, 4, 5, 6)));
        bad.forEach((why, members) -> assertThrows(InvalidAnswer.class,
                () -> ConsumerResponseToAssignment.convert(runs(members), group, topics), why));
        final ConsumerAssignResponse pastTable = runs(Map.of("a", List.of(0, 1, 2), "b", List.of(3, 4, 5))).toBuilder()
                .setMembers(1, ConsumerMemberAssignment.newBuilder().setMemberId("b").setAssigned(
                        PartitionRuns.newBuilder().addTopics(1).addCounts(3).addAllPartitions(List.of(3, 4, 5)))).build();
        assertThrows(InvalidAnswer.class, () -> ConsumerResponseToAssignment.convert(pastTable, group, topics),
                "a topic index past the answer's table");
        final ConsumerAssignResponse shortCount = runs(Map.of("a", List.of(0, 1, 2), "b", List.of(3, 4, 5))).toBuilder()
                .setMembers(1, ConsumerMemberAssignment.newBuilder().setMemberId("b").setAssigned(
                        PartitionRuns.newBuilder().addTopics(0).addCounts(2).addAllPartitions(List.of(3, 4, 5)))).build();
        assertThrows(InvalidAnswer.class, () -> ConsumerResponseToAssignment.convert(shortCount, group, topics),
                "numbers left over after the runs");
    }

    @Test
    void partitionsTheGroupMarksNotAssignableAreLeftOut() {
        final Map<String, Member> members = new LinkedHashMap<>();
        members.put("a", Member.of("rack-a", ORDERS));
        members.put("b", Member.of("rack-b", ORDERS));
        final GroupSpecImpl group = group(members, Optional.of(Map.of(ORDERS, Set.of(0, 1, 2, 3))));
        final GroupAssignment result = ConsumerResponseToAssignment.convert(
                runs(Map.of("a", List.of(0, 1, 4), "b", List.of(2, 3, 5))), group, Topics.of(group, CLUSTER.describer()));
        assertEquals(Set.of(0, 1), result.members().get("a").partitions().get(ORDERS));
        assertEquals(Set.of(2, 3), result.members().get("b").partitions().get(ORDERS));
        final GroupAssignment none = ConsumerResponseToAssignment.convert(
                runs(Map.of("a", List.of(0, 1, 2, 3), "b", List.of(4, 5))), group, Topics.of(group, CLUSTER.describer()));
        assertEquals(Map.of(), none.members().get("b").partitions(), "a topic with nothing assignable is left out");
    }

    /** Not how the service answers, but read right: one member's topic in two runs is one set. */
    @Test
    void aTopicInTwoRunsOfOneMemberIsJoined() {
        final GroupSpecImpl group = group2();
        final Topics topics = Topics.of(group, CLUSTER.describer());
        final ConsumerMemberAssignment b = ConsumerMemberAssignment.newBuilder().setMemberId("b").setAssigned(
                PartitionRuns.newBuilder().addTopics(0).addCounts(3).addAllPartitions(List.of(3, 4, 5))).build();
        final GroupAssignment joined = ConsumerResponseToAssignment.convert(twoRuns(List.of(2, 0, 1), b), group, topics);
        assertEquals(Map.of(ORDERS, Set.of(0, 1, 2)), joined.members().get("a").partitions());
        assertEquals(List.of(0, 1, 2), new ArrayList<>(joined.members().get("a").partitions().get(ORDERS)), "sorted");
        assertThrows(InvalidAnswer.class, () -> ConsumerResponseToAssignment.convert(
                twoRuns(List.of(2, 0, 2), b), group, topics), "a partition in both runs");
    }

    /**
     * Each member's own subscription is what is checked when the group is HETEROGENEOUS: the answer
     * of a subscriber to both topics comes first, and clicks given to b (orders only) is refused.
     */
    @Test
    void aTopicGivenToAMemberNotSubscribingIsRefused() {
        final Cluster two = cluster(Map.of("orders", rotating(2), "clicks", rotating(2)));
        final Uuid orders = two.id("orders");
        final Uuid clicks = two.id("clicks");
        final Map<String, Member> members = new LinkedHashMap<>();
        members.put("a", Member.of(null, orders, clicks));
        members.put("b", Member.of(null, orders));
        final GroupSpecImpl group = group(members);
        final Topics topics = Topics.of(group, two.describer());
        final GroupAssignment good = ConsumerResponseToAssignment.convert(
                twoTopics(orders, clicks, List.of(0, 0, 1), 2, List.of(1), 0), group, topics);
        assertValid(good, group, two);
        final InvalidAnswer refused = assertThrows(InvalidAnswer.class, () -> ConsumerResponseToAssignment.convert(
                twoTopics(orders, clicks, List.of(0, 0), 1, List.of(1, 1), 1), group, topics));
        assertTrue(refused.getMessage().contains("not of a topic it subscribes to"), refused.getMessage());
    }

    /** a given orders then {@code aClicks} of clicks, b orders then {@code bClicks} of clicks, numbers as listed. */
    private static ConsumerAssignResponse twoTopics(final Uuid orders, final Uuid clicks, final List<Integer> a,
                                                    final int aClicks, final List<Integer> b, final int bClicks) {
        final ConsumerAssignResponse.Builder answer = ConsumerAssignResponse.newBuilder()
                .addTopics(orders.toString()).addTopics(clicks.toString());
        answer.addMembers(ConsumerMemberAssignment.newBuilder().setMemberId("a").setAssigned(PartitionRuns.newBuilder()
                .addTopics(0).addCounts(1).addTopics(1).addCounts(aClicks).addAllPartitions(a)));
        answer.addMembers(ConsumerMemberAssignment.newBuilder().setMemberId("b").setAssigned(PartitionRuns.newBuilder()
                .addTopics(0).addCounts(1).addTopics(1).addCounts(bClicks).addAllPartitions(b)));
        return answer.build();
    }

    /** Member a given orders' first number in one run and the next two in another, then {@code b}. */
    private static ConsumerAssignResponse twoRuns(final List<Integer> numbers, final ConsumerMemberAssignment b) {
        return ConsumerAssignResponse.newBuilder().addTopics(ORDERS.toString())
                .addMembers(ConsumerMemberAssignment.newBuilder().setMemberId("a").setAssigned(PartitionRuns
                        .newBuilder().addTopics(0).addCounts(1).addTopics(0).addCounts(2).addAllPartitions(numbers)))
                .addMembers(b).build();
    }

    @Test
    void brokerKeysAndTheirDefaults() {
        final ConsumerGroupSettings defaults = ConsumerGroupSettings.from(Map.of("node.id", "3"));
        assertEquals(300, defaults.connection().deadline().toMillis());
        assertEquals(150, defaults.timeBudgetMs());
        assertEquals("rack-optimal", defaults.assignor());
        assertEquals("consumer@broker-3", defaults.groupId());
        assertEquals("localhost:50051", defaults.connection().target());
        final ConsumerGroupSettings set = ConsumerGroupSettings.from(Map.of("kassign.deadline.ms", "1000",
                "kassign.consumer.assignor", "range", "kassign.target", "kassign:50051"));
        assertEquals(1000, set.connection().deadline().toMillis());
        assertEquals("range", set.assignor());
        assertThrows(ConfigException.class, () -> ConsumerGroupSettings.from(Map.of("kassign.deadline.ms", "soon")));
        assertThrows(ConfigException.class, () -> ConsumerGroupSettings.from(Map.of("kassign.deadline.ms", "0")));
        assertThrows(ConfigException.class,
                () -> ConsumerGroupSettings.from(Map.of("kassign.assignment.time.budget.ms", "300")));
        assertThrows(ConfigException.class, () -> new KassignConsumerGroupAssignor()
                .configure(Map.of("kassign.retry.max.attempts", "0")));
    }

    @Test
    void docExampleConfiguresConsumerGroupsByLoadAndStreamsGroupsByCount() {
        final Map<String, Object> broker = DocProperties.block("load-aware.md", "server.properties");
        assertEquals(Balance.BALANCE_LOAD, ConsumerGroupSettings.from(broker).balance());
        assertEquals(Balance.BALANCE_COUNT, StreamsSettings.from(broker).balance());
        broker.keySet().stream().filter(k -> k.startsWith("kassign.")).forEach(
                k -> assertTrue(KassignKeys.KNOWN.contains(k) || KassignKeys.KNOWN_PREFIXES.stream().anyMatch(
                        k::startsWith), k + " is read by no plug-in"));
        assertEquals("broker-1:9092", ConsumerGroupSettings.from(broker).topicNames().orElseThrow().admin()
                .get("bootstrap.servers"), "the example names topics from the broker's own listener");
    }

    @Test
    void balanceLoadIsReadFromEitherKeyAndSentRefusedWithRangeNamingTheKey() {
        final GroupSpecImpl group = group2();
        final Topics topics = Topics.of(group, CLUSTER.describer());
        assertEquals(Balance.BALANCE_UNSPECIFIED, GroupSpecToConsumerRequest.convert(group, CLUSTER.describer(), topics,
                ConsumerGroupSettings.from(Map.of("node.id", "3"))).getOptions().getBalance(), "count: unset");
        final ConsumerGroupSettings load = ConsumerGroupSettings.from(Map.of("kassign.balance", "load"));
        assertEquals(Balance.BALANCE_LOAD, load.balance());
        assertEquals(Balance.BALANCE_LOAD, GroupSpecToConsumerRequest.convert(group, CLUSTER.describer(), topics, load)
                .getOptions().getBalance());
        assertEquals(Balance.BALANCE_COUNT, ConsumerGroupSettings.from(Map.of("kassign.balance", "load",
                "kassign.consumer.balance", "count")).balance(), "the plug-in's own key wins over kassign.balance");
        final ConfigException bad = assertThrows(ConfigException.class, () -> new KassignConsumerGroupAssignor()
                .configure(Map.of("kassign.consumer.balance", "heavy")));
        assertTrue(bad.getMessage().contains("kassign.consumer.balance") && bad.getMessage().contains("heavy"),
                bad.getMessage());
        final ConfigException range = assertThrows(ConfigException.class, () -> ConsumerGroupSettings.from(Map.of(
                "kassign.balance", "load", "kassign.consumer.assignor", "range")));
        assertTrue(range.getMessage().contains("kassign.balance") && range.getMessage().contains("range assignor"),
                range.getMessage());
    }
}
