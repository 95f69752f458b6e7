package io.kassign.broker;

import io.kassign.broker.GroupToStreamsRequest.Task;
import io.kassign.broker.GroupToStreamsRequest.Topology;
import io.kassign.client.TaskIds;
import io.kassign.plugin.InvalidAnswer;
import io.kassign.v1.AssignResponse;
import io.kassign.v1.AssignmentError;
import io.kassign.v1.TaskId;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;

/**
 * kassign's {@link AssignResponse} (its per-member answer) to the coordinator's
 * {@link GroupAssignment}, checked first: the coordinator applies what it is given, so anything it
 * would choke on, or that Kafka's own assignors never produce, is an {@link InvalidAnswer} and the
 * plug-in falls back. Checked: no error reported; every member of the group once and no other;
 * every task known, and a standby only for a stateful one; every task active exactly once; no
 * process holding one task twice (KIP-1071's rule: a process has one state directory).
 *
 * <p>A warm-up kassign places (KIP-441) arrives as a standby of its target client: the broker's
 * assignment has no warm-up field, and a standby is how a Streams client restores a state. Its
 * follow-up rebalance deadline is dropped (the broker API has none); the active moves there at the
 * next assignment the coordinator computes.
 */
final class StreamsResponseToAssignment {
    private StreamsResponseToAssignment() {
    }

    static GroupAssignment convert(final AssignResponse response, final GroupSpec group, final Topology topology) {
        if (response.getError() != AssignmentError.ASSIGNMENT_ERROR_NONE) {
            throw new InvalidAnswer("the service reported " + response.getError());
        }
        final Set<String> members = new HashSet<>(group.memberIds());
        final Map<String, MemberAssignment> result = new HashMap<>();
        final Map<Task, String> activeOwner = new HashMap<>();
        final Map<String, Set<Task>> heldByProcess = new HashMap<>();
        for (final io.kassign.v1.MemberAssignment answer : response.getMembersList()) {
            final String member = answer.getMemberId();
            if (!members.contains(member)) {
                throw new InvalidAnswer("the service assigned tasks to unknown member " + member);
            }
            if (result.containsKey(member)) {
                throw new InvalidAnswer("the service listed member " + member + " twice");
            }
            final Set<Task> held = heldByProcess.computeIfAbsent(group.memberMetadata(member).processId(),
                    p -> new HashSet<>());
            final Map<String, Set<Integer>> active = tasks(answer.getActiveTasksList(), topology, member, false);
            final Map<String, Set<Integer>> standby = tasks(answer.getStandbyTasksList(), topology, member, true);
            for (final Task task : flatten(active)) {
                final String other = activeOwner.putIfAbsent(task, member);
                if (other != null) {
                    throw new InvalidAnswer("task " + name(task) + " is active on both " + other + " and " + member);
                }
                hold(held, task, member);
            }
            for (final Task task : flatten(standby)) {
                hold(held, task, member);
            }
            result.put(member, new MemberAssignment(active, standby));
        }
        for (final String member : members) {
            if (!result.containsKey(member)) {
                throw new InvalidAnswer("the service left out member " + member);
            }
        }
        if (activeOwner.size() != topology.tasks()) {
            throw new InvalidAnswer("the service assigned " + activeOwner.size() + " of " + topology.tasks()
                    + " active tasks");
        }
        return new GroupAssignment(result);
    }

    private static void hold(final Set<Task> held, final Task task, final String member) {
        if (!held.add(task)) {
            throw new InvalidAnswer("task " + name(task) + " is given twice to the process of member " + member);
        }
    }

    private static Map<String, Set<Integer>> tasks(final List<TaskId> ids, final Topology topology, final String member,
                                                   final boolean standby) {
        final Map<String, Set<Integer>> tasks = new TreeMap<>();
        for (final TaskId id : ids) {
            final String subtopology = id.getNamedTopology().isEmpty() ? topology.ids().name(id.getSubtopology()) : null;
            if (subtopology == null || !topology.has(subtopology, id.getPartition())) {
                throw new InvalidAnswer("the service assigned unknown task " + TaskIds.format(id) + " to " + member);
            }
            if (standby && !topology.stateful().contains(subtopology)) {
                throw new InvalidAnswer("the service gave " + member + " a standby of stateless task " + TaskIds.format(id));
            }
            if (!tasks.computeIfAbsent(subtopology, s -> new TreeSet<>()).add(id.getPartition())) {
                throw new InvalidAnswer("the service listed task " + TaskIds.format(id) + " twice for " + member);
            }
        }
        return tasks;
    }

    private static Set<Task> flatten(final Map<String, Set<Integer>> tasks) {
        final Set<Task> flat = new TreeSet<>();
        tasks.forEach((subtopology, partitions) -> partitions.forEach(p -> flat.add(new Task(subtopology, p))));
        return flat;
    }

    private static String name(final Task task) {
        return task.subtopology() + "_" + task.partition();
    }

    /** For logs: actives and standbys per process, "PROCESS=2a/2s ...", sorted by process. */
    static String describe(final GroupAssignment assignment, final GroupSpec group) {
        final Map<String, int[]> counts = new TreeMap<>();
        assignment.members().forEach((member, tasks) -> {
            final int[] count = counts.computeIfAbsent(group.memberMetadata(member).processId(), p -> new int[2]);
            count[0] += flatten(tasks.activeTasks()).size();
            count[1] += flatten(tasks.standbyTasks()).size();
        });
        final StringBuilder text = new StringBuilder();
        counts.forEach((process, count) -> text.append(text.length() == 0 ? "" : " ").append(process).append('=')
                .append(count[0]).append("a/").append(count[1]).append('s'));
        return text.toString();
    }
}
