package io.kassign.streams;

import io.kassign.plugin.InvalidAnswer;
import io.kassign.client.TaskIds;
import io.kassign.v1.AssignResponse;
import io.kassign.v1.AssignmentError;
import io.kassign.v1.ClientAssignment;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;

/**
 * kassign's {@link AssignResponse} to KIP-924's {@link TaskAssignment}: one KafkaStreamsAssignment
 * per client, with its follow-up deadline. A response Kafka would reject (an error code, a missing
 * or unknown client, an unknown task) is refused here with {@link InvalidResponse}, so the
 * assignor can fall back instead of failing the rebalance.
 */
final class ResponseToAssignment {
    private ResponseToAssignment() {
    }

    /** Thrown for a response that cannot be used as this rebalance's assignment. */
    static final class InvalidResponse extends InvalidAnswer {
        private static final long serialVersionUID = 1L;

        InvalidResponse(final String message) {
            super(message);
        }
    }

    static TaskAssignment convert(final AssignResponse response, final Set<ProcessId> clients,
                                  final Set<TaskId> tasks) {
        if (response.getError() != AssignmentError.ASSIGNMENT_ERROR_NONE) {
            throw new InvalidResponse("the service reported " + response.getError());
        }
        final Map<String, TaskId> known = new HashMap<>();
        for (final TaskId task : tasks) {
            known.put(TaskIds.format(StateToRequest.taskId(task)), task);
        }
        final Map<ProcessId, KafkaStreamsAssignment> result = new TreeMap<>();
        for (final ClientAssignment client : response.getClientsList()) {
            final ProcessId process = processId(client.getProcessId());
            if (!clients.contains(process)) {
                throw new InvalidResponse("the service assigned tasks to unknown client " + client.getProcessId());
            }
            final Set<AssignedTask> assigned = new HashSet<>();
            for (final io.kassign.v1.TaskId task : client.getActiveTasksList()) {
                assigned.add(new AssignedTask(task(known, task), AssignedTask.Type.ACTIVE));
            }
            for (final io.kassign.v1.TaskId task : client.getStandbyTasksList()) {
                assigned.add(new AssignedTask(task(known, task), AssignedTask.Type.STANDBY));
            }
            KafkaStreamsAssignment assignment = KafkaStreamsAssignment.of(process, assigned);
            if (client.getFollowupRebalanceDeadlineMs() > 0) {
                assignment = assignment.withFollowupRebalance(Instant.ofEpochMilli(client.getFollowupRebalanceDeadlineMs()));
            }
            if (result.put(process, assignment) != null) {
                throw new InvalidResponse("the service listed client " + client.getProcessId() + " twice");
            }
        }
        for (final ProcessId process : clients) {
            if (!result.containsKey(process)) {
                throw new InvalidResponse("the service left out client " + process.id());
            }
        }
        return new TaskAssignment(new ArrayList<>(result.values()));
    }

    private static ProcessId processId(final String text) {
        try {
            return new ProcessId(UUID.fromString(text));
        } catch (final IllegalArgumentException e) {
            throw new InvalidResponse("the service returned a malformed process id '" + text + "'");
        }
    }

    private static TaskId task(final Map<String, TaskId> known, final io.kassign.v1.TaskId task) {
        final TaskId id = known.get(TaskIds.format(task));
        if (id == null) {
            throw new InvalidResponse("the service assigned unknown task " + TaskIds.format(task));
        }
        return id;
    }

    /** For logs: how many actives and standbys went where. */
    static String describe(final TaskAssignment assignment) {
        final List<String> parts = new ArrayList<>();
        for (final KafkaStreamsAssignment client : assignment.assignment()) {
            final long actives = client.tasks().values().stream()
                    .filter(t -> t.type() == AssignedTask.Type.ACTIVE).count();
            parts.add(client.processId().id() + "=" + actives + "a/" + (client.tasks().size() - actives) + "s");
        }
        return String.join(" ", parts);
    }
}
