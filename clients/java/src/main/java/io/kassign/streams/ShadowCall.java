package io.kassign.streams;

import io.kassign.client.KassignClient;
import io.kassign.client.TaskIds;
import io.kassign.plugin.Deadline;
import io.kassign.plugin.ShadowLine;
import io.kassign.v1.AssignRequest;
import io.kassign.v1.AssignResponse;
import io.kassign.v1.AssignmentReport;
import io.kassign.v1.ClientAssignment;
import io.kassign.v1.StreamsShadow;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;

/**
 * The KIP-924 plug-in's shadow call (issue 26): the request {@link KassignTaskAssignor} would send,
 * with Kafka's answer attached as {@link StreamsShadow}, built and sent on {@code ShadowCalls}'
 * thread after {@code assign()} has returned Kafka's answer.
 *
 * <p>Why the state can be read then: Kafka Streams' DefaultApplicationState keeps its tasks and
 * clients in final fields filled before the assignor is called (lags included, fetched before),
 * and what it does with the answer afterwards writes other fields of its ClientStates (their
 * assigned tasks), never the previous tasks, tags and lags read here (Kafka 3.8.1 and 4.3.1,
 * read in their bytecode). The one lazily filled part, the cached {@code kafkaStreamsStates}
 * map, is filled on the rebalance's thread before the hand-over ({@code clients}).
 */
final class ShadowCall {
    /** The assignor whose answer the group gets in shadow mode, as the comparison names it. */
    static final String KAFKA_ASSIGNOR = "StickyTaskAssignor";

    private ShadowCall() {
    }

    /** The call ({@code path}: what the rebalance waited, for the line): build, ask (the client made there too, should it be the first), and the line to log. */
    static Callable<String> of(final ApplicationState state, final Map<ProcessId, KafkaStreamsState> clients,
                               final AssignorSettings settings, final Instant now, final TaskAssignment kafka,
                               final Supplier<KassignClient> client,
                               final ShadowLine.Path path) {
        return () -> {
            final long started = System.nanoTime();
            final Deadline deadline = Deadline.after(settings.deadline(), started);
            final AssignRequest request = StateToRequest.convert(state, clients, settings, now, deadline).toBuilder()
                    .setShadow(shadow(kafka)).build();
            deadline.check("before the call");
            final AssignResponse response = client.get().assign(request, deadline.remaining());
            final AssignmentReport report = response.getReport();
            return ShadowLine.describe(settings.groupId(), KAFKA_ASSIGNOR, report.getAssignor(), report.hasShadow(),
                    report.getShadow(), true, (System.nanoTime() - started) / 1_000_000L, path);
        };
    }

    /** Kafka's answer as the contract's clients: process id, actives and standbys, each sorted. */
    static StreamsShadow shadow(final TaskAssignment kafka) {
        final List<KafkaStreamsAssignment> sorted = new ArrayList<>(kafka.assignment());
        sorted.sort(Comparator.comparing(KafkaStreamsAssignment::processId));
        final StreamsShadow.Builder shadow = StreamsShadow.newBuilder().setKafkaAssignor(KAFKA_ASSIGNOR);
        for (final KafkaStreamsAssignment client : sorted) {
            final List<io.kassign.v1.TaskId> actives = new ArrayList<>();
            final List<io.kassign.v1.TaskId> standbys = new ArrayList<>();
            for (final AssignedTask task : client.tasks().values()) {
                (task.type() == AssignedTask.Type.ACTIVE ? actives : standbys).add(taskId(task.id()));
            }
            actives.sort(TaskIds.ORDER);
            standbys.sort(TaskIds.ORDER);
            shadow.addKafka(ClientAssignment.newBuilder().setProcessId(client.processId().id().toString())
                    .addAllActiveTasks(actives).addAllStandbyTasks(standbys));
        }
        return shadow.build();
    }

    private static io.kassign.v1.TaskId taskId(final TaskId task) {
        return TaskIds.of(task.topologyName(), task.subtopology(), task.partition());
    }
}
