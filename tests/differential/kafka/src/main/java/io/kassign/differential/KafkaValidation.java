package io.kassign.differential;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignmentUtils;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.AssignmentError;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * Kafka's own check of an assignment: {@link TaskAssignmentUtils#validateTaskAssignment}, the call
 * {@code StreamsPartitionAssignor} makes on a KIP-924 custom assignor's answer, run on kassign's
 * answers.
 *
 * <p>Reads one JSON line per check, {@code {"request": AssignRequest, "clients": {processId:
 * {"active": ["0_1", ...], "standby": [...]}}}}, and writes {@code {"assignmentError": "NONE"}} (an
 * {@link AssignmentError} name) or {@code {"error": trace}}. The {@code ApplicationState} is Kafka's
 * {@code DefaultApplicationState} over the request's clients and tasks ({@link KafkaGroup}); the
 * answer becomes {@link KafkaStreamsAssignment}s through their public factory.
 */
public final class KafkaValidation {

    private KafkaValidation() {
    }

    public static void main(final String[] args) throws Exception {
        Json.eachLine(KafkaValidation::answer);
    }

    private static ObjectNode answer(final JsonNode line) {
        final KafkaGroup group = new KafkaGroup(line.path("request"));
        final List<KafkaStreamsAssignment> assignments = new ArrayList<>();
        final Iterator<Map.Entry<String, JsonNode>> clients = line.path("clients").fields();
        while (clients.hasNext()) {
            final Map.Entry<String, JsonNode> client = clients.next();
            final Set<AssignedTask> tasks = new HashSet<>();
            addTasks(tasks, client.getValue().path("active"), AssignedTask.Type.ACTIVE);
            addTasks(tasks, client.getValue().path("standby"), AssignedTask.Type.STANDBY);
            assignments.add(KafkaStreamsAssignment.of(new ProcessId(UUID.fromString(client.getKey())), tasks));
        }
        final AssignmentError error = TaskAssignmentUtils.validateTaskAssignment(
            group.applicationState(), new TaskAssignment(assignments));
        return Json.MAPPER.createObjectNode().put("assignmentError", error.name());
    }

    private static void addTasks(final Set<AssignedTask> into, final JsonNode ids, final AssignedTask.Type type) {
        for (final JsonNode id : ids) {
            into.add(new AssignedTask(TaskId.parse(id.asText()), type));
        }
    }
}
