package io.kassign.differential;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.assignment.ClientState;
import org.apache.kafka.streams.processor.internals.assignment.HighAvailabilityTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.LegacyStickyTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.LegacyTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.RackAwareTaskAssignor;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

/**
 * Kafka Streams' own {@link HighAvailabilityTaskAssignor} (the kafka-streams dependency,
 * unmodified) run on kassign AssignRequests, so kassign's reimplementation can be compared with
 * the real thing.
 *
 * <p>Reads protobuf JSON requests, one per line, from stdin and writes one JSON line each:
 * {@code {"probing": bool, "clients": {processId: {"active": [...], "standby": [...]}}}}, tasks as
 * {@code TaskId.toString()}, or {@code {"error": "..."}} for a request it cannot run. One JVM
 * serves the whole batch because JVM start-up costs more than hundreds of assignments.
 *
 * <p>The {@link ClientState}s are built as {@code StreamsPartitionAssignor.assign} builds them, with
 * the public methods of the real class only: per consumer {@code incrementCapacity},
 * {@code addOwnedPartitions} and {@code addPreviousTasksAndOffsetSums}; then per client
 * {@code initializePrevTasks} (previous actives from owned source partitions, then offset sums of
 * -2; every other reported task a previous standby) and {@code computeTaskLags} with the request's
 * changelog end offset sums, where Kafka's leader would fetch them. Only rack-aware strategy
 * "none" is supported: the rack-aware assignor then never reads its (empty) cluster metadata.
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

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private KafkaHighAvailability() {
    }

    /** What one request becomes: Kafka's inputs to {@code HighAvailabilityTaskAssignor.assign}. */
    private static final class Input {
        final Map<ProcessId, ClientState> clients = new HashMap<>();
        final Set<TaskId> allTasks = new TreeSet<>();
        final Set<TaskId> statefulTasks = new TreeSet<>();
        final Map<TaskId, Long> endOffsetSums = new TreeMap<>();
        final Map<TopicPartition, TaskId> taskForPartition = new HashMap<>();
        AssignmentConfigs configs;
        boolean sticky;
    }

    public static void main(final String[] args) throws Exception {
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        final PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8)));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            out.println(MAPPER.writeValueAsString(answer(line)));
        }
        out.flush();
    }

    /** One request's answer; a failure is reported on its own line so the batch goes on. */
    private static ObjectNode answer(final String line) {
        try {
            final Input input = parse(MAPPER.readTree(line));
            final LegacyTaskAssignor assignor = input.sticky
                ? new LegacyStickyTaskAssignor()
                : new HighAvailabilityTaskAssignor();
            final boolean probing = assignor.assign(
                input.clients, input.allTasks, input.statefulTasks, rackAwareNone(input), input.configs);
            return result(input, probing);
        } catch (final Exception | Error e) {
            final StringWriter trace = new StringWriter();
            e.printStackTrace(new PrintWriter(trace));
            return MAPPER.createObjectNode().put("error", trace.toString());
        }
    }

    private static ObjectNode result(final Input input, final boolean probing) {
        final ObjectNode root = MAPPER.createObjectNode().put("probing", probing);
        final ObjectNode clients = root.putObject("clients");
        for (final Map.Entry<ProcessId, ClientState> e : new TreeMap<>(input.clients).entrySet()) {
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

    private static Input parse(final JsonNode root) {
        final Input input = new Input();
        for (final JsonNode t : root.path("tasks")) {
            final TaskId id = taskId(t.path("id"));
            input.allTasks.add(id);
            if (t.path("stateful").asBoolean(false)) {
                input.statefulTasks.add(id);
                input.endOffsetSums.put(id, asLong(t.get("changelogEndOffsetSum"), 0));
            }
            for (final JsonNode p : t.path("topicPartitions")) {
                if (p.path("isSource").asBoolean(false)) {  // Kafka maps input partitions only
                    input.taskForPartition.put(topicPartition(p), id);
                }
            }
        }
        input.configs = configs(root.path("configs"));
        input.sticky = root.path("configs").path("assignor").asText("").equals("sticky");
        for (final JsonNode member : root.path("members")) {
            addConsumer(input, member);
        }
        // StreamsPartitionAssignor.populateClientStatesMap
        for (final Map.Entry<ProcessId, ClientState> e : input.clients.entrySet()) {
            e.getValue().initializePrevTasks(input.taskForPartition, false);
            e.getValue().computeTaskLags(e.getKey(), input.endOffsetSums);
        }
        return input;
    }

    /** ClientMetadata.addConsumer and addPreviousTasksAndOffsetSums, one consumer (thread). */
    private static void addConsumer(final Input input, final JsonNode member) {
        final String consumerId = member.path("memberId").asText();
        final JsonNode subscription = member.path("subscription");
        final JsonNode info = subscription.path("info");
        if (info.isMissingNode()) {
            throw new IllegalArgumentException("only structured subscriptions are supported: " + consumerId);
        }
        final ProcessId pid = new ProcessId(UUID.fromString(info.path("processId").asText()));
        final ClientState state = input.clients.computeIfAbsent(pid, p -> new ClientState(p, clientTags(info)));
        final List<TopicPartition> owned = new ArrayList<>();
        for (final JsonNode p : subscription.path("ownedPartitions")) {
            owned.add(topicPartition(p));
        }
        state.incrementCapacity();
        state.addOwnedPartitions(owned, consumerId);
        final Map<TaskId, Long> offsetSums = new HashMap<>();
        for (final JsonNode e : info.path("taskOffsetSums")) {
            offsetSums.put(taskId(e.path("task")), asLong(e.get("offsetSum"), 0));
        }
        state.addPreviousTasksAndOffsetSums(consumerId, offsetSums);
    }

    private static Map<String, String> clientTags(final JsonNode info) {
        final Map<String, String> tags = new HashMap<>();
        for (final JsonNode kv : info.path("clientTags")) {
            tags.put(kv.path("key").asText(), kv.path("value").asText(""));
        }
        return tags;
    }

    /** Unset fields take Kafka's defaults, as kassign's decoder does. */
    private static AssignmentConfigs configs(final JsonNode c) {
        final String strategy = c.path("rackAwareStrategy").asText("RACK_AWARE_STRATEGY_NONE");
        if (!strategy.equals("RACK_AWARE_STRATEGY_NONE") && !strategy.isEmpty()) {
            throw new IllegalArgumentException("only rack-aware strategy none is supported, got " + strategy);
        }
        final List<String> tags = new ArrayList<>();
        for (final JsonNode tag : c.path("rackAwareAssignmentTags")) {
            tags.add(tag.asText());
        }
        return new AssignmentConfigs(
            asLong(c.get("acceptableRecoveryLag"), 10_000L),
            (int) asLong(c.get("maxWarmupReplicas"), 2),
            (int) asLong(c.get("numStandbyReplicas"), 0),
            asLong(c.get("probingRebalanceIntervalMs"), 600_000L),
            tags,
            optionalInt(c.get("trafficCost")),
            optionalInt(c.get("nonOverlapCost")),
            StreamsConfig.RACK_AWARE_ASSIGNMENT_STRATEGY_NONE);
    }

    /** The real RackAwareTaskAssignor with no rack data: strategy "none" never reads it. */
    private static RackAwareTaskAssignor rackAwareNone(final Input input) {
        return new RackAwareTaskAssignor(
            Cluster.empty(),
            Collections.emptyMap(),
            Collections.emptyMap(),
            Collections.emptyMap(),
            new HashMap<>(),
            null,
            input.configs,
            Time.SYSTEM);
    }

    private static TaskId taskId(final JsonNode id) {
        final int subtopology = (int) asLong(id.get("subtopology"), 0);
        final int partition = (int) asLong(id.get("partition"), 0);
        final String topology = id.path("namedTopology").asText("");
        return topology.isEmpty() ? new TaskId(subtopology, partition) : new TaskId(subtopology, partition, topology);
    }

    private static TopicPartition topicPartition(final JsonNode p) {
        return new TopicPartition(p.path("topic").asText(), (int) asLong(p.get("partition"), 0));
    }

    private static OptionalInt optionalInt(final JsonNode n) {
        return n == null || n.isNull() ? OptionalInt.empty() : OptionalInt.of((int) asLong(n, 0));
    }

    /** Protobuf JSON writes int64 as a string and omits zero values. */
    private static long asLong(final JsonNode n, final long dflt) {
        if (n == null || n.isNull() || n.isMissingNode()) {
            return dflt;
        }
        return n.isTextual() ? Long.parseLong(n.asText()) : n.asLong();
    }
}
