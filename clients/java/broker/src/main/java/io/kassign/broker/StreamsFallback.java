package io.kassign.broker;

import io.kassign.broker.GroupToStreamsRequest.Topology;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;
import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;

/**
 * The assignment when kassign cannot be used: the broker's own default, Kafka's
 * {@link StickyTaskAssignor}, run here on the same GroupSpec, so the group is assigned as if kassign
 * were not installed. Should even that fail, every member keeps the tasks it has (those the topology
 * still has): the plug-in never fails an assignment.
 */
final class StreamsFallback {
    /** Which of the two local assignments was used. */
    enum Kind { STICKY, CURRENT }

    record Result(GroupAssignment assignment, Kind kind, Throwable stickyFailure) {
    }

    private StreamsFallback() {
    }

    static Result assign(final GroupSpec group, final TopologyDescriber describer) {
        try {
            return new Result(new StickyTaskAssignor().assign(group, describer), Kind.STICKY, null);
        } catch (final Exception | LinkageError e) {
            return new Result(current(group, describer), Kind.CURRENT, e);
        }
    }

    /** Every member's current actives and standbys, restricted to tasks the topology has. */
    static GroupAssignment current(final GroupSpec group, final TopologyDescriber describer) {
        Topology topology;
        try {
            topology = Topology.of(describer);
        } catch (final RuntimeException e) {
            topology = null;
        }
        final Map<String, MemberAssignment> members = new HashMap<>();
        for (final String member : group.memberIds()) {
            members.put(member, new MemberAssignment(
                    known(group.memberAssignmentState(member).activeTasks(), topology),
                    known(group.memberAssignmentState(member).standbyTasks(), topology)));
        }
        return new GroupAssignment(members);
    }

    private static Map<String, Set<Integer>> known(final Map<String, Set<Integer>> tasks, final Topology topology) {
        final Map<String, Set<Integer>> kept = new TreeMap<>();
        tasks.forEach((subtopology, partitions) -> {
            for (final int partition : partitions) {
                if (topology == null || topology.has(subtopology, partition)) {
                    kept.computeIfAbsent(subtopology, s -> new TreeSet<>()).add(partition);
                }
            }
        });
        return kept;
    }
}
