package io.kassign.broker;

import io.kassign.broker.GroupToStreamsRequest.Topology;
import io.kassign.client.TaskIds;
import io.kassign.plugin.InvalidAnswer;
import io.kassign.v1.AssignResponse;
import io.kassign.v1.AssignmentError;
import io.kassign.v1.TaskId;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
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
        final Checks checks = new Checks(topology, response.getMembersCount());
        for (final io.kassign.v1.MemberAssignment answer : response.getMembersList()) {
            final String member = answer.getMemberId();
            if (!members.contains(member)) {
                throw new InvalidAnswer("the service assigned tasks to unknown member " + member);
            }
            if (result.containsKey(member)) {
                throw new InvalidAnswer("the service listed member " + member + " twice");
            }
            final Checks.Member given = checks.member(member, group.memberMetadata(member).processId());
            final Map<String, Set<Integer>> active = tasks(answer.getActiveTasksList(), topology, given, false);
            final Map<String, Set<Integer>> standby = tasks(answer.getStandbyTasksList(), topology, given, true);
            result.put(member, new MemberAssignment(active, standby));
        }
        for (final String member : members) {
            if (!result.containsKey(member)) {
                throw new InvalidAnswer("the service left out member " + member);
            }
        }
        if (checks.actives() != topology.tasks()) {
            throw new InvalidAnswer("the service assigned " + checks.actives() + " of " + topology.tasks()
                    + " active tasks");
        }
        return new GroupAssignment(result);
    }

    /**
     * What the checks remember, by task number (a subtopology's first number plus the partition):
     * each active's member, each process's tasks, the tasks the member being read listed. Why
     * arrays and bit sets rather than maps and sets of task records: 10,000 tasks with a standby
     * each over 1,000 members are 20,000 entries, each looked at once.
     */
    private static final class Checks {
        private final Map<String, Integer> first = new HashMap<>();
        private final int[] activeOwner;
        private final int[] listedBy;
        private final String[] answered;
        private final Map<String, BitSet> heldByProcess = new HashMap<>();
        private int actives;
        private int members;

        Checks(final Topology topology, final int members) {
            int total = 0;
            for (final String name : topology.ids().names()) {
                first.put(name, total);
                total += topology.partitions().get(name);
            }
            this.activeOwner = new int[total];
            this.listedBy = new int[total];
            this.answered = new String[members + 1];
        }

        int actives() {
            return actives;
        }

        Member member(final String id, final String process) {
            final int me = ++members;
            answered[me] = id;
            return new Member(id, me, heldByProcess.computeIfAbsent(process, p -> new BitSet()));
        }

        /** One member of the answer as it is read. */
        final class Member {
            final String id;
            final int me;
            final BitSet held;

            Member(final String id, final int me, final BitSet held) {
                this.id = id;
                this.me = me;
                this.held = held;
            }

            /** Records a known task the member was given, or refuses the answer. */
            void take(final String subtopology, final int partition, final TaskId id, final boolean standby) {
                final int task = first.get(subtopology) + partition;
                if (listedBy[task] == me) {
                    throw new InvalidAnswer("the service listed task " + TaskIds.format(id) + " twice for " + this.id);
                }
                listedBy[task] = me;
                if (!standby) {
                    if (activeOwner[task] != 0) {
                        throw new InvalidAnswer("task " + TaskIds.format(id) + " is active on both "
                                + answered[activeOwner[task]] + " and " + this.id);
                    }
                    activeOwner[task] = me;
                    actives++;
                }
                if (held.get(task)) {
                    throw new InvalidAnswer("task " + TaskIds.format(id) + " is given twice to the process of member "
                            + this.id);
                }
                held.set(task);
            }
        }
    }

    private static Map<String, Set<Integer>> tasks(final List<TaskId> ids, final Topology topology,
                                                   final Checks.Member member, final boolean standby) {
        final Map<String, PartitionNumbers.Growing> tasks = new TreeMap<>();
        for (final TaskId id : ids) {
            final String subtopology = id.getNamedTopology().isEmpty() ? topology.ids().name(id.getSubtopology()) : null;
            if (subtopology == null || !topology.has(subtopology, id.getPartition())) {
                throw new InvalidAnswer("the service assigned unknown task " + TaskIds.format(id) + " to " + member.id);
            }
            if (standby && !topology.stateful().contains(subtopology)) {
                throw new InvalidAnswer("the service gave " + member.id + " a standby of stateless task "
                        + TaskIds.format(id));
            }
            member.take(subtopology, id.getPartition(), id, standby);
            tasks.computeIfAbsent(subtopology, s -> new PartitionNumbers.Growing()).add(id.getPartition());
        }
        final Map<String, Set<Integer>> built = new TreeMap<>();
        tasks.forEach((subtopology, partitions) -> built.put(subtopology, partitions.build()));
        return built;
    }

    /** For logs: actives and standbys per process, "PROCESS=2a/2s ...", sorted by process. */
    static String describe(final GroupAssignment assignment, final GroupSpec group) {
        final Map<String, int[]> counts = new TreeMap<>();
        assignment.members().forEach((member, tasks) -> {
            final int[] count = counts.computeIfAbsent(group.memberMetadata(member).processId(), p -> new int[2]);
            count[0] += size(tasks.activeTasks());
            count[1] += size(tasks.standbyTasks());
        });
        final StringBuilder text = new StringBuilder();
        counts.forEach((process, count) -> text.append(text.length() == 0 ? "" : " ").append(process).append('=')
                .append(count[0]).append("a/").append(count[1]).append('s'));
        return text.toString();
    }

    private static int size(final Map<String, Set<Integer>> tasks) {
        return tasks.values().stream().mapToInt(Set::size).sum();
    }
}
