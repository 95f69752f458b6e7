package io.kassign.broker;

import io.kassign.client.ClientSpec;
import io.kassign.client.RequestBuilder;
import io.kassign.client.TaskIds;
import io.kassign.client.TaskSpec;
import io.kassign.plugin.Balancing;
import io.kassign.v1.AssignRequest;
import io.kassign.v1.RackAwareStrategy;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Consumer;
import org.apache.kafka.coordinator.group.api.streams.assignor.AssignmentConfigs;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentMetadata;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentState;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;

/**
 * A streams group as the broker's coordinator sees it (KIP-1071: {@link GroupSpec} and
 * {@link TopologyDescriber}) to kassign's {@link AssignRequest}: what a classic group leader would
 * have sent, built from structured values since there is no userData.
 *
 * <ul>
 *   <li>Each member is a consumer of its process (a stream thread), with a version-11
 *       SubscriptionInfo: process id, client tags, rack, and offset sums (KIP-441).</li>
 *   <li>Tasks are (subtopology, partition) for partitions {@code 0 .. maxNumInputPartitions - 1}
 *       ({@link SubtopologyIds} numbers the subtopologies); the broker names no topic partitions and
 *       no replica racks, so tasks carry none (but under balance LOAD their source partitions, from
 *       the group's description: {@link StreamsSources}) and rack-aware optimisation (KIP-925) stays off.</li>
 *   <li>Offset sums, one report per task per process: -2 (a running active) by the member that
 *       owns the task; otherwise the process's largest reported changelog offset sum
 *       ({@code taskOffsets}), by the member holding it as standby or warm-up, else the first that
 *       reported it; -3 (state of unknown size) for a standby or warm-up without reported offsets.
 *       One report per process, because the service merges a process's reports in member order and
 *       a second, stale report must not hide a running active.</li>
 *   <li>A stateful task's changelog end offset sum is the largest any member reported, as an end
 *       offset ({@code taskEndOffsets}) or an offset: reports arrive at different times, and a
 *       state ahead of the end the service knows would read as corrupt. With no reports at all it is
 *       0: every client is caught up, and kassign balances with stickiness alone.</li>
 * </ul>
 * Everything is sorted, so the same group gives the same request bytes (the coordinator may
 * compute the same assignment again).
 */
final class GroupToStreamsRequest {
    /** Kafka's offset sum for a task that runs as an active (Task.LATEST_OFFSET). */
    static final long RUNNING_ACTIVE = ClientSpec.RUNNING_ACTIVE;
    /** Kafka's offset sum for state of unknown size (SubscriptionInfo.UNKNOWN_OFFSET_SUM). */
    static final long UNKNOWN = ClientSpec.UNKNOWN_OFFSET;

    private GroupToStreamsRequest() {
    }

    /** The topology's tasks: partitions per subtopology and whether it is stateful. */
    record Topology(SubtopologyIds ids, Map<String, Integer> partitions, Set<String> stateful) {
        static Topology of(final TopologyDescriber describer) {
            final SubtopologyIds ids = SubtopologyIds.of(describer.subtopologies());
            final Map<String, Integer> partitions = new TreeMap<>();
            final TreeSet<String> stateful = new TreeSet<>();
            for (final String name : ids.names()) {
                partitions.put(name, describer.maxNumInputPartitions(name));
                if (describer.isStateful(name)) {
                    stateful.add(name);
                }
            }
            return new Topology(ids, partitions, stateful);
        }

        boolean has(final String subtopology, final int partition) {
            final Integer count = partitions.get(subtopology);
            return count != null && partition >= 0 && partition < count;
        }

        int tasks() {
            return partitions.values().stream().mapToInt(Integer::intValue).sum();
        }

        io.kassign.v1.TaskId taskId(final String subtopology, final int partition) {
            return TaskIds.of(ids.number(subtopology), partition);
        }
    }

    static AssignRequest convert(final GroupSpec group, final Topology topology, final StreamsSettings settings) {
        return convert(group, topology, settings, Map.of());
    }

    /**
     * The request, each task (subtopology, p) with partition p of every source topic of its
     * subtopology in {@code sources} that has more than p partitions, as Kafka's coordinator and
     * clients map a task to its input ({@link StreamsSources}: balance LOAD only; none: as before).
     */
    static AssignRequest convert(final GroupSpec group, final Topology topology, final StreamsSettings settings,
                                 final Map<String, List<StreamsSources.SourceTopic>> sources) {
        final Map<Task, Long> endOffsetSums = endOffsetSums(group, topology);
        final RequestBuilder request = RequestBuilder.forGroup(settings.groupId());
        configs(request, group.configs(), settings);
        topology.partitions().forEach((name, count) -> {
            for (int p = 0; p < count; p++) {
                final boolean stateful = topology.stateful().contains(name);
                final TaskSpec task = TaskSpec.of(topology.taskId(name, p), stateful);
                for (final StreamsSources.SourceTopic topic : sources.getOrDefault(name, List.of())) {
                    if (p < topic.partitions()) {
                        task.source(topic.name(), p);
                    }
                }
                request.task(stateful ? task.changelogEndOffsetSum(endOffsetSums.getOrDefault(new Task(name, p), 0L)) : task);
            }
        });
        processes(group).forEach((process, members) -> request.client(client(group, topology, process, members)));
        return request.build();
    }

    /** A task by the broker's names: subtopology id and partition. */
    record Task(String subtopology, int partition) implements Comparable<Task> {
        @Override
        public int compareTo(final Task other) {
            final int bySubtopology = subtopology.compareTo(other.subtopology);
            return bySubtopology != 0 ? bySubtopology : Integer.compare(partition, other.partition);
        }
    }

    /** Members by process id, both sorted. */
    static Map<String, List<String>> processes(final GroupSpec group) {
        final Map<String, List<String>> processes = new TreeMap<>();
        for (final String member : new TreeSet<>(group.memberIds())) {
            processes.computeIfAbsent(group.memberMetadata(member).processId(), p -> new ArrayList<>()).add(member);
        }
        return processes;
    }

    /**
     * The service's process id for a KIP-1071 one: the same UUID when it is one (Kafka Streams
     * sends its UUID as text), else a name-based UUID of it, so any string a client sends works.
     */
    static UUID processUuid(final String processId) {
        try {
            final UUID uuid = UUID.fromString(processId);
            if (uuid.toString().equals(processId)) {
                return uuid;
            }
        } catch (final IllegalArgumentException e) {
            // not a UUID: named below
        }
        return UUID.nameUUIDFromBytes(("kassign-process:" + processId).getBytes(StandardCharsets.UTF_8));
    }

    static Map<Task, Long> endOffsetSums(final GroupSpec group, final Topology topology) {
        final Map<Task, Long> sums = new HashMap<>();
        for (final String member : group.memberIds()) {
            final MemberAssignmentState state = group.memberAssignmentState(member);
            for (final Map<String, Map<Integer, Long>> offsets : List.of(state.taskEndOffsets(), state.taskOffsets())) {
                offsets.forEach((subtopology, byPartition) -> byPartition.forEach((partition, offset) -> {
                    if (offset != null && offset >= 0 && topology.has(subtopology, partition)
                            && topology.stateful().contains(subtopology)) {
                        sums.merge(new Task(subtopology, partition), offset, Math::max);
                    }
                }));
            }
        }
        return sums;
    }

    private static ClientSpec client(final GroupSpec group, final Topology topology, final String process,
                                     final List<String> members) {
        final ClientSpec client = ClientSpec.process(processUuid(process)).consumers(members.toArray(String[]::new));
        final MemberAssignmentMetadata first = group.memberMetadata(members.get(0));
        for (final String member : members) {
            group.memberMetadata(member).rackId().filter(r -> !r.isEmpty()).ifPresent(client::rack);
        }
        new TreeMap<>(first.clientTags()).forEach(client::tag);
        reports(group, topology, members).forEach((task, report) ->
                client.offsetSum(report.member(), topology.taskId(task.subtopology(), task.partition()), report.offsetSum()));
        return client;
    }

    /** Who reports what, one report per task of this process (see the class comment). */
    record Report(String member, long offsetSum) {
    }

    static Map<Task, Report> reports(final GroupSpec group, final Topology topology, final List<String> members) {
        final Map<Task, Report> reports = new TreeMap<>();
        for (final String member : members) {  // sorted: the first owner wins
            each(group.memberAssignmentState(member).activeTasks(), topology, task ->
                    reports.putIfAbsent(task, new Report(member, RUNNING_ACTIVE)));
        }
        for (final String member : members) {
            final MemberAssignmentState state = group.memberAssignmentState(member);
            state.taskOffsets().forEach((subtopology, byPartition) -> byPartition.forEach((partition, offset) -> {
                final Task task = new Task(subtopology, partition);
                if (offset == null || offset < 0 || !topology.has(subtopology, partition)
                        || !topology.stateful().contains(subtopology)) {
                    return;
                }
                final Report seen = reports.get(task);
                if (seen == null || (seen.offsetSum() != RUNNING_ACTIVE && seen.offsetSum() < offset)) {
                    reports.put(task, new Report(holder(group, members, task).orElse(member), offset));
                }
            }));
        }
        for (final String member : members) {
            final MemberAssignmentState state = group.memberAssignmentState(member);
            for (final Map<String, Set<Integer>> held : List.of(state.standbyTasks(), state.warmupTasks())) {
                each(held, topology, task -> {
                    if (topology.stateful().contains(task.subtopology())) {
                        reports.putIfAbsent(task, new Report(member, UNKNOWN));
                    }
                });
            }
        }
        return reports;
    }

    /** The first member (by id) of the process holding {@code task} as standby or warm-up. */
    private static Optional<String> holder(final GroupSpec group, final List<String> members, final Task task) {
        for (final String member : members) {
            final MemberAssignmentState state = group.memberAssignmentState(member);
            if (holds(state.standbyTasks(), task) || holds(state.warmupTasks(), task)) {
                return Optional.of(member);
            }
        }
        return Optional.empty();
    }

    private static boolean holds(final Map<String, Set<Integer>> tasks, final Task task) {
        final Set<Integer> partitions = tasks.get(task.subtopology());
        return partitions != null && partitions.contains(task.partition());
    }

    private static void each(final Map<String, Set<Integer>> tasks, final Topology topology,
                             final Consumer<Task> action) {
        for (final Map.Entry<String, Set<Integer>> entry : new TreeMap<>(tasks).entrySet()) {
            for (final int partition : new TreeSet<>(entry.getValue())) {
                if (topology.has(entry.getKey(), partition)) {
                    action.accept(new Task(entry.getKey(), partition));
                }
            }
        }
    }

    private static void configs(final RequestBuilder request, final AssignmentConfigs configs,
                                final StreamsSettings settings) {
        request.numStandbyReplicas(configs.numStandbyReplicas())
                .rackAwareAssignmentTags(configs.rackAwareAssignmentTags().toArray(String[]::new))
                .rackAwareStrategy(RackAwareStrategy.RACK_AWARE_STRATEGY_NONE)
                .assignmentTimeBudgetMs(settings.timeBudgetMs())
                .balance(Balancing.wire(settings.balance()));
        settings.assignor().ifPresent(request::assignor);
        settings.acceptableRecoveryLag().ifPresent(request::acceptableRecoveryLag);
        settings.maxWarmupReplicas().ifPresent(n -> request.maxWarmupReplicas(Math.toIntExact(n)));
    }
}
