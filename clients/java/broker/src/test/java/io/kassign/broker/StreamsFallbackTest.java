package io.kassign.broker;

import static io.kassign.broker.StreamsGroups.assertValid;
import static io.kassign.broker.StreamsGroups.group;
import static io.kassign.broker.StreamsGroups.metric;
import static io.kassign.broker.StreamsGroups.topology;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kassign.broker.GroupToStreamsRequest.Topology;
import io.kassign.broker.StreamsGroups.Member;
import io.kassign.client.TaskIds;
import io.kassign.plugin.InvalidAnswer;
import io.kassign.v1.AssignResponse;
import io.kassign.v1.AssignmentError;
import io.kassign.v1.Balance;
import io.kassign.v1.MemberAssignment;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.streams.TopologyMetadata;
import org.apache.kafka.coordinator.group.streams.assignor.GroupSpecImpl;
import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;
import org.junit.jupiter.api.Test;

/**
 * When kassign cannot be used the plug-in answers exactly as Kafka's StickyTaskAssignor would, within
 * the deadline, and counts why; an answer the coordinator must not apply is refused; the broker keys
 * are read with their defaults.
 */
final class StreamsFallbackTest {
    private static final TopologyMetadata TOPOLOGY = topology(Map.of("0", 4, "1", 2), Set.of("0"));

    private static GroupSpecImpl group2() {
        final Map<String, Member> members = new LinkedHashMap<>();
        members.put("a", new Member("00000000-0000-0000-0000-00000000000a").active("0", 0, 1).tag("zone", "x"));
        members.put("b", new Member("00000000-0000-0000-0000-00000000000b").standby("0", 0).tag("zone", "y"));
        return group(members, 1, "zone");
    }

    private static KassignStreamsTaskAssignor assignor(final String group, final String target, final String deadlineMs) {
        final KassignStreamsTaskAssignor assignor = new KassignStreamsTaskAssignor();
        assignor.configure(Map.of("node.id", "7", "kassign.target", target, "kassign.streams.group.id", group,
                "kassign.deadline.ms", deadlineMs));
        return assignor;
    }

    @Test
    void anUnreachableServiceFallsBackToKafkasStickyAssignor() throws IOException {
        final GroupSpecImpl group = group2();
        final GroupAssignment answer = assignor("down", "127.0.0.1:" + SilentServer.closedPort(), "300").assign(group, TOPOLOGY);
        assertValid(answer, group, TOPOLOGY);
        assertEquals(new StickyTaskAssignor().assign(group, TOPOLOGY), answer);
        assertEquals(1.0, metric("down", "fallbacks-total"));
        assertEquals(0.0, metric("down", "assignments-total"));
    }

    @Test
    void aServiceThatNeverAnswersCostsTheDeadlineAndNoMore() throws Exception {
        try (SilentServer silent = new SilentServer()) {
            final GroupSpecImpl group = group2();
            final KassignStreamsTaskAssignor assignor = assignor("silent", silent.target(), "300");
            // Kafka's own assignor once first, so its class loading is not charged to the wait
            new StickyTaskAssignor().assign(group, TOPOLOGY);
            final List<Long> times = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                final long started = System.nanoTime();
                final GroupAssignment answer = assignor.assign(group, TOPOLOGY);
                times.add((System.nanoTime() - started) / 1_000_000L);
                assertEquals(new StickyTaskAssignor().assign(group, TOPOLOGY), answer);
            }
            final long worst = times.stream().mapToLong(Long::longValue).max().orElseThrow();
            System.out.println("silent service: assign() took " + times + " ms with a 300 ms deadline");
            // bounded by the deadline, not by gRPC's or the channel's own timeouts (seconds); the
            // slack covers the local fallback and a loaded machine (514 ms seen under load)
            assertTrue(worst < 300 + 700, "assign() took " + worst + " ms with a 300 ms deadline");
            assertEquals(3.0, metric("silent", "fallbacks-total"));
        }
    }

    @Test
    void answersTheCoordinatorMustNotApplyAreRefused() {
        final GroupSpecImpl group = group2();
        final Topology topology = Topology.of(TOPOLOGY);
        final AssignResponse good = AssignResponse.newBuilder()
                .addMembers(member("a", List.of(task(0, 0), task(0, 1), task(1, 0)), List.of(task(0, 2))))
                .addMembers(member("b", List.of(task(0, 2), task(0, 3), task(1, 1)), List.of(task(0, 0))))
                .build();
        final GroupAssignment converted = StreamsResponseToAssignment.convert(good, group, topology);
        assertValid(converted, group, TOPOLOGY);
        assertEquals(Map.of("0", Set.of(0, 1), "1", Set.of(0)), converted.members().get("a").activeTasks());

        final Map<String, UnaryOperator<AssignResponse.Builder>> bad = new TreeMap<>();
        bad.put("an error", r -> r.setError(AssignmentError.ASSIGNMENT_ERROR_ACTIVE_TASK_UNASSIGNED));
        bad.put("an unknown member", r -> r.addMembers(member("c", List.of(), List.of())));
        bad.put("a member left out", r -> r.removeMembers(1));
        bad.put("a member twice", r -> r.addMembers(member("a", List.of(), List.of())));
        bad.put("an active twice", r -> r.setMembers(1, member("b", List.of(task(0, 0), task(0, 2), task(0, 3),
                task(1, 1)), List.of())));
        bad.put("an active missing", r -> r.setMembers(1, member("b", List.of(task(0, 2), task(0, 3)), List.of())));
        bad.put("an unknown task", r -> r.setMembers(1, member("b", List.of(task(0, 2), task(0, 3), task(1, 1),
                task(0, 9)), List.of())));
        bad.put("a stateless standby", r -> r.setMembers(1, member("b", List.of(task(0, 2), task(0, 3), task(1, 1)),
                List.of(task(1, 0)))));
        bad.put("active and standby on one process", r -> r.setMembers(1, member("b", List.of(task(0, 2), task(0, 3),
                task(1, 1)), List.of(task(0, 3)))));
        bad.forEach((what, change) -> assertThrows(InvalidAnswer.class,
                () -> StreamsResponseToAssignment.convert(change.apply(good.toBuilder()).build(), group, topology), what));
    }

    @Test
    void brokerKeysHaveTheirDefaultsAndMalformedOnesStopTheBroker() {
        final StreamsSettings defaults = StreamsSettings.from(Map.of("node.id", "3"));
        assertEquals(300L, defaults.connection().deadline().toMillis());
        assertEquals(150L, defaults.timeBudgetMs());
        assertEquals("streams@broker-3", defaults.groupId());
        assertEquals("localhost:50051", defaults.connection().target());
        final StreamsSettings set = StreamsSettings.from(Map.of("kassign.deadline.ms", "800",
                "kassign.streams.assignor", "sticky", "group.streams.acceptable.recovery.lag", "0",
                "group.streams.num.warmup.replicas", "0"));
        assertEquals(800L, set.connection().deadline().toMillis());
        assertEquals("sticky", set.assignor().orElseThrow());
        assertEquals(0L, set.acceptableRecoveryLag().orElseThrow());
        assertTrue(set.maxWarmupReplicas().isEmpty(), "0 warm-ups is Kafka's 'none'; kassign keeps its default");
        assertThrows(ConfigException.class, () -> StreamsSettings.from(Map.of("kassign.deadline.ms", "soon")));
        assertThrows(ConfigException.class, () -> StreamsSettings.from(Map.of("kassign.deadline.ms", "100",
                "kassign.assignment.time.budget.ms", "100")));
    }

    @Test
    void balanceLoadIsReadFromEitherKeyAndSent() {
        final Topology topology = Topology.of(TOPOLOGY);
        assertEquals(Balance.BALANCE_UNSPECIFIED, GroupToStreamsRequest.convert(group2(), topology,
                StreamsSettings.from(Map.of("node.id", "3"))).getConfigs().getBalance(), "count: unset");
        final StreamsSettings load = StreamsSettings.from(Map.of("kassign.streams.balance", "Load"));
        assertEquals(Balance.BALANCE_LOAD, load.balance());
        assertEquals(Balance.BALANCE_LOAD, GroupToStreamsRequest.convert(group2(), topology, load).getConfigs()
                .getBalance());
        assertEquals(Balance.BALANCE_LOAD, StreamsSettings.from(Map.of("kassign.balance", "load")).balance(),
                "kassign.balance alone");
        assertEquals(Balance.BALANCE_COUNT, StreamsSettings.from(Map.of("kassign.balance", "load",
                "kassign.streams.balance", "count")).balance(), "the plug-in's own key wins");
        final ConfigException bad = assertThrows(ConfigException.class, () -> new KassignStreamsTaskAssignor()
                .configure(Map.of("kassign.balance", "tasks")));
        assertTrue(bad.getMessage().contains("kassign.balance") && bad.getMessage().contains("tasks"),
                bad.getMessage());
    }

    @Test
    void subtopologyIdsAreNumbersWhenTheyAllAreAndSortedIndexesOtherwise() {
        final SubtopologyIds numeric = SubtopologyIds.of(List.of("10", "2", "0"));
        assertEquals(10, numeric.number("10"));
        assertEquals("2", numeric.name(2));
        final SubtopologyIds named = SubtopologyIds.of(List.of("b", "a", "01"));
        assertEquals(List.of("01", "a", "b"), named.names());
        assertEquals(0, named.number("01"));
        assertEquals("b", named.name(2));
        assertEquals(null, named.name(3));
        final SubtopologyIds huge = SubtopologyIds.of(List.of("2147483648", "1"));
        assertEquals(1, huge.number("2147483648"), "beyond int32: indexes");
    }

    private static io.kassign.v1.TaskId task(final int subtopology, final int partition) {
        return TaskIds.of(subtopology, partition);
    }

    private static MemberAssignment member(final String id, final List<io.kassign.v1.TaskId> active,
                                           final List<io.kassign.v1.TaskId> standby) {
        return MemberAssignment.newBuilder().setMemberId(id).addAllActiveTasks(active).addAllStandbyTasks(standby).build();
    }
}
