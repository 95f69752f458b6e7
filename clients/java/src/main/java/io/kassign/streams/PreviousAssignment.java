package io.kassign.streams;

import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.ArrayList;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;
import org.apache.kafka.streams.processor.assignment.TaskInfo;

/**
 * The fallback when the service cannot answer: every client keeps what it had (the semantics of
 * {@code TaskAssignmentUtils.identityAssignment}) and asks for a follow-up rebalance, so the group
 * tries again soon instead of failing. KIP-924 prescribes the same for a TaskAssignmentException.
 *
 * <p>Unlike a verbatim copy it never hands Kafka what Kafka would reject: tasks no longer in the
 * topology are dropped, an active claimed by two clients stays with the first in process-id order,
 * and a standby is dropped where it is stateless or the client also holds it as active. Tasks nobody
 * had stay unassigned until the follow-up.
 */
final class PreviousAssignment {
    private PreviousAssignment() {
    }

    static TaskAssignment keep(final ApplicationState state, final Instant followupDeadline) {
        final Map<TaskId, TaskInfo> tasks = state.allTasks();
        final Map<ProcessId, KafkaStreamsState> clients = new TreeMap<>(state.kafkaStreamsStates(false));
        final Set<TaskId> claimed = new HashSet<>();
        final List<KafkaStreamsAssignment> result = new ArrayList<>();
        for (final KafkaStreamsState client : clients.values()) {
            final Set<AssignedTask> kept = new HashSet<>();
            final Set<TaskId> actives = new HashSet<>();
            for (final TaskId task : client.previousActiveTasks()) {
                if (tasks.containsKey(task) && claimed.add(task)) {
                    kept.add(new AssignedTask(task, AssignedTask.Type.ACTIVE));
                    actives.add(task);
                }
            }
            for (final TaskId task : client.previousStandbyTasks()) {
                final TaskInfo info = tasks.get(task);
                if (info != null && info.isStateful() && !actives.contains(task)) {
                    kept.add(new AssignedTask(task, AssignedTask.Type.STANDBY));
                }
            }
            result.add(KafkaStreamsAssignment.of(client.processId(), kept).withFollowupRebalance(followupDeadline));
        }
        return new TaskAssignment(result);
    }
}
