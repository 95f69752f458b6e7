package io.kassign.broker;

import static io.kassign.broker.StreamsGroups.assertValid;
import static io.kassign.broker.StreamsGroups.byProcess;
import static io.kassign.broker.StreamsGroups.group;
import static io.kassign.broker.StreamsGroups.metric;
import static io.kassign.broker.StreamsGroups.topology;
import static io.kassign.broker.StreamsGroups.total;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kassign.broker.StreamsGroups.Member;
import io.kassign.client.LiveServer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.streams.TopologyMetadata;
import org.apache.kafka.coordinator.group.streams.assignor.GroupSpecImpl;
import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;
import org.junit.jupiter.api.Test;

/**
 * The streams plug-in against a real {@code kassign serve}, on groups built from Kafka 4.4's own
 * GroupSpec and TopologyDescriber classes: the answers are kassign's (the metrics count them, no
 * fallback), valid for the coordinator, tag-aware for standbys, sticky to caught-up clients by the
 * reported offsets, independent of how subtopologies are named, and the same however often and from
 * however many threads the coordinator asks.
 */
final class StreamsLiveServerTest {
    private static final String P1 = "00000000-0000-0000-0000-000000000001";
    private static final String P2 = "00000000-0000-0000-0000-000000000002";
    private static final String P3 = "00000000-0000-0000-0000-000000000003";
    private static final String P4 = "00000000-0000-0000-0000-000000000004";

    static KassignStreamsTaskAssignor assignor(final String group, final String target) {
        final KassignStreamsTaskAssignor assignor = new KassignStreamsTaskAssignor();
        final Map<String, Object> broker = new TreeMap<>();
        broker.put("node.id", "1");
        broker.put("kassign.target", target);
        broker.put("kassign.deadline.ms", "5000");  // a cold server's first call imports OR-Tools
        broker.put("kassign.streams.group.id", group);
        assignor.configure(broker);
        return assignor;
    }

    /** "0": stateful, 6 tasks; "1": stateless, 4 tasks. */
    private static final TopologyMetadata TOPOLOGY = topology(Map.of("0", 6, "1", 4), Set.of("0"));

    /** P1 zone a with two members, P2 zone b, P3 zone a; nothing assigned yet. */
    private static Map<String, Member> fresh() {
        final Map<String, Member> members = new LinkedHashMap<>();
        members.put("m1a", new Member(P1).tag("zone", "a").rack("r1"));
        members.put("m1b", new Member(P1).tag("zone", "a").rack("r1"));
        members.put("m2", new Member(P2).tag("zone", "b").rack("r2"));
        members.put("m3", new Member(P3).tag("zone", "a").rack("r3"));
        return members;
    }

    private static final Map<String, String> ZONES = Map.of(P1, "a", P2, "b", P3, "a", P4, "b");

    @Test
    void aFreshGroupIsAssignedByKassignWithStandbysInAnotherZone() {
        final String name = "fresh";
        final GroupSpecImpl group = group(fresh(), 1, "zone");
        final GroupAssignment assignment = assignor(name, LiveServer.shared().target()).assign(group, TOPOLOGY);

        assertValid(assignment, group, TOPOLOGY);
        assertEquals(1.0, metric(name, "assignments-total"), LiveServer.shared().log());
        assertEquals(0.0, metric(name, "fallbacks-total"));
        assertEquals(6, total(assignment, true), "one standby per stateful task");
        final Map<String, Set<String>> actives = byProcess(assignment, group, false);
        final Map<String, Set<String>> standbys = byProcess(assignment, group, true);
        standbys.forEach((process, tasks) -> tasks.forEach(task -> {
            final String owner = actives.entrySet().stream().filter(e -> e.getValue().contains(task))
                    .findFirst().orElseThrow().getKey();
            assertNotEquals(ZONES.get(owner), ZONES.get(process), "standby of " + task + " in the active's zone");
        }));
        // balanced per member: 10 actives over 4 members, none with more than 3
        assignment.members().forEach((member, tasks) ->
                assertTrue(StreamsGroups.ids(tasks.activeTasks()).size() <= 3, member + " " + tasks));
    }

    @Test
    void aNewClientWithoutStateGetsWarmUpsNotTheActivesOfCaughtUpClients() {
        final String name = "scale-out";
        final KassignStreamsTaskAssignor assignor = assignor(name, LiveServer.shared().target());
        final GroupSpecImpl first = group(fresh(), 1, "zone");
        final GroupAssignment before = assignor.assign(first, TOPOLOGY);
        assertValid(before, first, TOPOLOGY);

        // Round 2: every member runs what it was given and reports its standbys caught up (lag 0);
        // P4 joins without state. Each stateful task's changelog is at 50,000.
        final Map<String, Member> members = new LinkedHashMap<>(fresh());
        before.members().forEach((id, tasks) -> {
            final Member member = members.get(id);
            tasks.activeTasks().forEach((s, ps) -> ps.forEach(p -> member.active(s, p)));
            tasks.standbyTasks().forEach((s, ps) -> ps.forEach(p -> member.standby(s, p).offsets(s, p, 50_000, 50_000)));
        });
        members.put("m4", new Member(P4).tag("zone", "b").rack("r4"));
        final GroupSpecImpl second = group(members, 1, "zone");
        final GroupAssignment after = assignor.assign(second, TOPOLOGY);
        assertValid(after, second, TOPOLOGY);
        assertEquals(2.0, metric(name, "assignments-total"));

        // Every stateful active goes to a caught-up client: its previous owner or a standby at lag 0.
        final Map<String, Set<String>> was = byProcess(before, first, false);
        final Map<String, Set<String>> wasStandby = byProcess(before, first, true);
        final Map<String, Set<String>> now = byProcess(after, second, false);
        now.forEach((process, tasks) -> tasks.stream().filter(task -> task.startsWith("0_")).forEach(task ->
                assertTrue(was.getOrDefault(process, Set.of()).contains(task)
                                || wasStandby.getOrDefault(process, Set.of()).contains(task),
                        task + " went to " + process + ", which had no state: " + was + " -> " + now)));
        final Set<String> p4Standby = byProcess(after, second, true).getOrDefault(P4, Set.of());
        assertFalse(p4Standby.isEmpty(), "P4 warms up as standby: " + after);

        // Kafka's own sticky assignor, for contrast, hands P4 stateful actives it must restore first.
        final GroupAssignment sticky = new StickyTaskAssignor().assign(second, TOPOLOGY);
        final Set<String> stickyP4 = byProcess(sticky, second, false).getOrDefault(P4, Set.of());
        System.out.println("scale-out: kassign P4 actives " + now.get(P4) + " standbys " + p4Standby
                + "; Kafka's sticky P4 actives " + stickyP4);
    }

    @Test
    void subtopologiesNamedOtherThanByNumbersAreMappedAndBack() {
        final String name = "named";
        final TopologyMetadata topology = topology(Map.of("sub-b", 3, "sub-a", 2, "10", 1), Set.of("sub-b", "10"));
        final Map<String, Member> members = new LinkedHashMap<>();
        members.put("x", new Member("process-x").active("sub-b", 0).tag("zone", "a"));  // not a UUID either
        members.put("y", new Member("process-y").standby("sub-b", 0).offsets("sub-b", 0, 7, 9).tag("zone", "b"));
        final GroupSpecImpl group = group(members, 1, "zone");
        final GroupAssignment assignment = assignor(name, LiveServer.shared().target()).assign(group, topology);

        assertValid(assignment, group, topology);
        assertEquals(1.0, metric(name, "assignments-total"), LiveServer.shared().log());
        assertTrue(assignment.members().get("x").activeTasks().getOrDefault("sub-b", Set.of()).contains(0),
                "sticky by name: " + assignment);
        assertEquals(4, total(assignment, true), "a standby for each of the 4 stateful tasks");
    }

    @Test
    void theSameGroupAskedFromManyThreadsGetsOneAnswer() throws Exception {
        final String name = "threads";
        final KassignStreamsTaskAssignor assignor = assignor(name, LiveServer.shared().target());
        final GroupSpecImpl group = group(fresh(), 1, "zone");
        final ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            final List<Future<GroupAssignment>> answers = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                answers.add(pool.submit(() -> assignor.assign(group, TOPOLOGY)));
            }
            final Map<String, MemberAssignment> first = answers.get(0).get().members();
            for (final Future<GroupAssignment> answer : answers) {
                assertEquals(first, answer.get().members());
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(16.0, metric(name, "assignments-total"));
        assertEquals(0.0, metric(name, "fallbacks-total"));
    }
}
