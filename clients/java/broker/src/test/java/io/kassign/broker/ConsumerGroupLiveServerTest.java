package io.kassign.broker;

import static io.kassign.broker.ConsumerGroups.assertValid;
import static io.kassign.broker.ConsumerGroups.assignor;
import static io.kassign.broker.ConsumerGroups.cluster;
import static io.kassign.broker.ConsumerGroups.counts;
import static io.kassign.broker.ConsumerGroups.crossRack;
import static io.kassign.broker.ConsumerGroups.group;
import static io.kassign.broker.ConsumerGroups.metric;
import static io.kassign.broker.ConsumerGroups.rotating;
import static io.kassign.broker.ConsumerGroups.sorted;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kassign.broker.ConsumerGroups.Cluster;
import io.kassign.broker.ConsumerGroups.Member;
import io.kassign.client.LiveServer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.junit.jupiter.api.Test;

/**
 * The consumer-group plug-in against a real {@code kassign serve}, on groups built from Kafka 4.4's
 * own GroupSpecImpl and SubscribedTopicDescriberImpl (over a KRaft metadata image): rack-optimal's
 * answers are valid, balanced, rack-local where Kafka's uniform assignor is not, sticky, the same
 * from any thread, and counted.
 */
final class ConsumerGroupLiveServerTest {
    private static final Cluster CLUSTER = cluster(Map.of("orders", rotating(12), "clicks", rotating(12)));
    private static final Uuid ORDERS = CLUSTER.id("orders");
    private static final Uuid CLICKS = CLUSTER.id("clicks");

    /** Three members, one per rack, all on both topics. */
    private static Map<String, Member> threeRacks() {
        final Map<String, Member> members = new LinkedHashMap<>();
        members.put("m-c", Member.of("rack-c", ORDERS, CLICKS));
        members.put("m-a", Member.of("rack-a", ORDERS, CLICKS));
        members.put("m-b", Member.of("rack-b", ORDERS, CLICKS));
        return members;
    }

    @Test
    void rackOptimalIsValidBalancedAndRackLocalWhereUniformIsNot() {
        final KassignConsumerGroupAssignor plugin = assignor("live-racks", LiveServer.shared().target());
        final GroupSpecImpl group = group(threeRacks());
        final GroupAssignment ours = plugin.assign(group, CLUSTER.describer());
        assertValid(ours, group, CLUSTER);
        assertEquals(List.of(8, 8, 8), counts(ours));
        final GroupAssignment uniform = new UniformAssignor().assign(group, CLUSTER.describer());
        final int theirs = crossRack(uniform, group, CLUSTER);
        // every partition has a replica in two of the three racks, one member per rack: none need cross
        assertEquals(0, crossRack(ours, group, CLUSTER), "kassign's cross-rack partitions; uniform's: " + theirs);
        assertTrue(theirs > 0, "Kafka's uniform assignor ignores racks (KAFKA-19387)");
        assertEquals(1.0, metric("live-racks", "", "assignments-total"));
        assertEquals(0.0, metric("live-racks", "", "fallbacks-total"));
    }

    @Test
    void theCurrentTargetStaysAndTheSameGroupGetsTheSameAnswer() {
        final KassignConsumerGroupAssignor plugin = assignor("live-sticky", LiveServer.shared().target());
        final GroupAssignment first = plugin.assign(group(threeRacks()), CLUSTER.describer());
        assertEquals(sorted(first), sorted(plugin.assign(group(threeRacks()), CLUSTER.describer())), "idempotent");

        // the coordinator recomputes with the answer as every member's current target: nothing moves
        final Map<String, Member> settled = new LinkedHashMap<>();
        threeRacks().forEach((id, m) -> settled.put(id, m.owning(first.members().get(id).partitions())));
        assertEquals(sorted(first), sorted(plugin.assign(group(settled), CLUSTER.describer())), "sticky");

        // a fourth member (rack-a): it takes partitions, the others keep most of theirs
        settled.put("m-a2", Member.of("rack-a", ORDERS, CLICKS));
        final GroupSpecImpl four = group(settled);
        final GroupAssignment next = plugin.assign(four, CLUSTER.describer());
        assertValid(next, four, CLUSTER);
        assertEquals(List.of(6, 6, 6, 6), counts(next).stream().sorted().toList());
        assertEquals(0, crossRack(next, four, CLUSTER));
        int kept = 0;
        for (final String id : threeRacks().keySet()) {
            for (final Map.Entry<Uuid, Set<Integer>> t : first.members().get(id).partitions().entrySet()) {
                kept += (int) t.getValue().stream()
                        .filter(p -> next.members().get(id).partitions().getOrDefault(t.getKey(), Set.of()).contains(p))
                        .count();
            }
        }
        // rack-local first, then the fewest moves: each of the six partitions the newcomer takes moves
        // once, or twice when its owner's rack-a partitions are swapped along through a third member
        assertTrue(kept >= 12, kept + " of 24 partitions kept");
        assertEquals(0.0, metric("live-sticky", "", "fallbacks-total"));
    }

    @Test
    void heterogeneousSubscriptionsARacklessMemberAndAnUnknownTopic() {
        final KassignConsumerGroupAssignor plugin = assignor("live-mixed", LiveServer.shared().target());
        final Uuid unknown = new Uuid(99L, 99L); // subscribed, not (yet) in the metadata
        final Map<String, Member> members = new LinkedHashMap<>();
        members.put("orders-only", Member.of("rack-b", ORDERS));
        members.put("both", Member.of("rack-a", ORDERS, CLICKS, unknown));
        members.put("no-rack", Member.of(null, CLICKS));
        final GroupSpecImpl group = group(members);
        final GroupAssignment ours = plugin.assign(group, CLUSTER.describer());
        assertValid(ours, group, CLUSTER);
        assertEquals(Set.of(ORDERS), nonEmpty(ours.members().get("orders-only")));
        assertEquals(Set.of(CLICKS), nonEmpty(ours.members().get("no-rack")));
        assertEquals(0.0, metric("live-mixed", "", "fallbacks-total"));
        assertEquals(1.0, metric("live-mixed", "", "assignments-total"));
    }

    @Test
    void manyThreadsAtOnceGetTheSameAnswer() throws Exception {
        final KassignConsumerGroupAssignor plugin = assignor("live-threads", LiveServer.shared().target());
        final GroupSpecImpl group = group(threeRacks());
        final ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            final List<Callable<GroupAssignment>> calls =
                    Collections.nCopies(16, () -> plugin.assign(group, CLUSTER.describer()));
            final List<Map<String, Map<Uuid, Set<Integer>>>> answers = new ArrayList<>();
            for (final Future<GroupAssignment> f : pool.invokeAll(calls)) {
                answers.add(sorted(f.get()));
            }
            assertEquals(1, Set.copyOf(answers).size(), "distinct answers");
        } finally {
            pool.shutdownNow();
        }
        assertEquals(16.0, metric("live-threads", "", "assignments-total"));
        assertEquals(0.0, metric("live-threads", "", "fallbacks-total"));
    }

    private static Set<Uuid> nonEmpty(final MemberAssignment assignment) {
        final Set<Uuid> topics = new java.util.TreeSet<>();
        assignment.partitions().forEach((t, ps) -> {
            if (!ps.isEmpty()) {
                topics.add(t);
            }
        });
        return topics;
    }
}
