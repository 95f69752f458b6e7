package io.kassign.differential;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.assignment.ClientState;
import org.apache.kafka.streams.processor.internals.assignment.HighAvailabilityTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.LegacyStickyTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.LegacyTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.RackAwareTaskAssignor;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Kafka Streams' own {@link HighAvailabilityTaskAssignor} or {@link LegacyStickyTaskAssignor} (the
 * kafka-streams dependency, unmodified) run on kassign AssignRequests, so kassign's
 * reimplementation can be compared with the real thing.
 *
 * <p>Reads protobuf JSON requests, one per line, from stdin and writes one JSON line each:
 * {@code {"probing": bool, "clients": {processId: {"active": [...], "standby": [...]}},
 * "rackAware": bool, "millis": n}}, tasks as {@code TaskId.toString()}, {@code rackAware} whether
 * Kafka's rack-aware optimisation ran ({@code canEnableRackAwareAssignor}), {@code millis} the time
 * Kafka took (building its inputs included), or {@code {"error": "..."}} for a request it cannot run. One JVM
 * serves the whole batch because JVM start-up costs more than hundreds of assignments.
 *
 * <p>The inputs are built as {@code StreamsPartitionAssignor.assign} builds them ({@link KafkaGroup}),
 * including a real {@link RackAwareTaskAssignor} over the request's racks ({@link KafkaRackMetadata}):
 * for strategy "none" it never reads them, for "min_traffic" and "balance_subtopology" it optimises
 * with them.
 *
 * <p>The request's {@code configs.assignor} picks Kafka's assignor: {@code "sticky"} runs
 * {@link LegacyStickyTaskAssignor} (public no-argument constructor, the one
 * {@code StreamsPartitionAssignor} instantiates), anything else {@link HighAvailabilityTaskAssignor}.
 * Both get the same five arguments: clients in a {@code HashMap} as {@code StreamsPartitionAssignor}
 * passes them, all and stateful tasks in {@code TreeSet}s (Kafka passes a {@code HashMap} key set
 * and a {@code HashSet}, as for the high-availability assignor before). The legacy sticky
 * assignor walks the task sets it is given and its own {@code HashMap}s and {@code HashSet}s of
 * {@code TaskId} and {@code ProcessId} (previous owners, unassigned tasks, candidate clients):
 * deterministic for a given input, but in hash order, where kassign walks {@code TaskId} and
 * {@code UUID} order. The sticky test therefore passes the task sets sorted and renames process
 * ids so that their hash order is their {@code UUID} order (test_sticky_vs_kafka.py).
 */
public final class KafkaHighAvailability {

    private KafkaHighAvailability() {
    }

    public static void main(final String[] args) throws Exception {
        Json.eachLine(KafkaHighAvailability::answer);
    }

    private static ObjectNode answer(final JsonNode request) {
        final long start = System.nanoTime();
        final KafkaGroup group = new KafkaGroup(request);
        final LegacyTaskAssignor assignor = group.sticky
            ? new LegacyStickyTaskAssignor()
            : new HighAvailabilityTaskAssignor();
        final Map<ProcessId, ClientState> clients = group.clientStates();
        final RackAwareTaskAssignor rackAware = group.rackAwareTaskAssignor();
        final boolean probing = assignor.assign(
            clients, group.allTasks, group.statefulTasks, rackAware, group.configs);
        return result(clients, probing)
            .put("rackAware", rackAware.canEnableRackAwareAssignor())  // memoised: what assign saw
            .put("millis", (System.nanoTime() - start) / 1_000_000);
    }

    private static ObjectNode result(final Map<ProcessId, ClientState> states, final boolean probing) {
        final ObjectNode root = Json.MAPPER.createObjectNode().put("probing", probing);
        final ObjectNode clients = root.putObject("clients");
        for (final Map.Entry<ProcessId, ClientState> e : new TreeMap<>(states).entrySet()) {
            final ObjectNode client = clients.putObject(e.getKey().id().toString());
            taskList(client.putArray("active"), e.getValue().activeTasks());
            taskList(client.putArray("standby"), e.getValue().standbyTasks());
        }
        return root;
    }

    private static void taskList(final ArrayNode into, final Set<TaskId> tasks) {
        for (final TaskId task : new TreeSet<>(tasks)) {
            into.add(task.toString());
        }
    }
}
