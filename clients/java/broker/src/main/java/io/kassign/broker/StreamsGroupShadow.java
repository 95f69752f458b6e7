package io.kassign.broker;

import io.kassign.broker.GroupToStreamsRequest.Topology;
import io.kassign.client.TaskIds;
import io.kassign.plugin.SharedClients;
import io.kassign.plugin.ShadowLine;
import io.kassign.v1.AssignRequest;
import io.kassign.v1.AssignResponse;
import io.kassign.v1.AssignmentReport;
import io.kassign.v1.ClientAssignment;
import io.kassign.v1.StreamsShadow;
import io.kassign.v1.TaskId;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;

/**
 * The KIP-1071 plug-in's shadow call (issue 26): the request {@link KassignStreamsTaskAssignor}
 * would send, named by its stand-in group id ({@link StandInGroupIds}) and with Kafka's sticky
 * answer attached by process, built and sent on {@code ShadowCalls}' thread after the coordinator
 * has the answer. Kafka 4.4's streams target assignment builder makes a new map of member specs
 * for each GroupSpec, so reading it then is safe.
 */
final class StreamsGroupShadow {
    /** Kafka's streams StickyTaskAssignor's name. */
    static final String KAFKA_ASSIGNOR = "sticky";

    private StreamsGroupShadow() {
    }

    /** The call ({@code path}: what the rebalance waited, for the line): build, ask, and the line to log. */
    static Callable<String> of(final GroupSpec group, final TopologyDescriber describer, final StreamsSettings settings,
                               final GroupAssignment kafka,
                               final ShadowLine.Path path) {
        return () -> {
            final long started = System.nanoTime();
            final Topology topology = Topology.of(describer);
            final String standIn = StandInGroupIds.streams(topology);
            final AssignRequest request = GroupToStreamsRequest.convert(group, topology, settings).toBuilder()
                    .setGroupId(standIn).setShadow(shadow(group, topology, kafka)).build();
            final AssignResponse response = SharedClients.waitingForReady(settings.connection()).assign(request);
            final AssignmentReport report = response.getReport();
            return ShadowLine.describe(standIn, KAFKA_ASSIGNOR, report.getAssignor(), report.hasShadow(),
                    report.getShadow(), true, (System.nanoTime() - started) / 1_000_000L, path);
        };
    }

    /** Kafka's answer as the contract's clients: one per process, as the request's, tasks sorted. */
    static StreamsShadow shadow(final GroupSpec group, final Topology topology, final GroupAssignment kafka) {
        final StreamsShadow.Builder shadow = StreamsShadow.newBuilder().setKafkaAssignor(KAFKA_ASSIGNOR);
        GroupToStreamsRequest.processes(group).forEach((process, members) -> {
            final Set<TaskId> actives = new TreeSet<>(TaskIds.ORDER);
            final Set<TaskId> standbys = new TreeSet<>(TaskIds.ORDER);
            for (final String member : members) {
                final MemberAssignment assigned = kafka.members().get(member);
                if (assigned != null) {
                    add(assigned.activeTasks(), topology, actives);
                    add(assigned.standbyTasks(), topology, standbys);
                }
            }
            shadow.addKafka(ClientAssignment.newBuilder()
                    .setProcessId(GroupToStreamsRequest.processUuid(process).toString())
                    .addAllMemberIds(members).addAllActiveTasks(actives).addAllStandbyTasks(standbys));
        });
        return shadow.build();
    }

    private static void add(final Map<String, Set<Integer>> tasks, final Topology topology, final Set<TaskId> into) {
        tasks.forEach((subtopology, partitions) -> {
            for (final int partition : partitions) {
                if (topology.has(subtopology, partition)) {
                    into.add(topology.taskId(subtopology, partition));
                }
            }
        });
    }
}
