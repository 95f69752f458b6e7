package io.kassign.differential;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskInfo;
import org.apache.kafka.streams.processor.assignment.TaskTopicPartition;
import org.apache.kafka.streams.processor.internals.KassignClientMetadata;
import org.apache.kafka.streams.processor.internals.StreamsPartitionAssignor.ClientMetadata;
import org.apache.kafka.streams.processor.internals.assignment.ClientState;
import org.apache.kafka.streams.processor.internals.assignment.DefaultApplicationState;
import org.apache.kafka.streams.processor.internals.assignment.DefaultTaskInfo;
import org.apache.kafka.streams.processor.internals.assignment.DefaultTaskTopicPartition;
import org.apache.kafka.streams.processor.internals.assignment.RackAwareTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.RackUtils;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

/**
 * One kassign AssignRequest as Kafka Streams' group leader holds it in
 * {@code StreamsPartitionAssignor.assign}: a {@link ClientMetadata} per process (its
 * {@link ClientState}, filled consumer by consumer), the consumers' racks, the tasks, the configs,
 * and from those the {@link RackAwareTaskAssignor} ({@link KafkaRackMetadata}) and the KIP-924
 * {@link ApplicationState} a custom assignor would get.
 *
 * <p>Per consumer, as {@code assign} does: {@code addConsumer} (capacity, owned partitions) then
 * {@code addPreviousTasksAndOffsetSums}; per client afterwards, as {@code populateClientStatesMap}:
 * {@code initializePrevTasks} (previous actives from owned source partitions, then offset sums of -2;
 * every other reported task a previous standby) and {@code computeTaskLags} with the request's
 * changelog end offset sums, where Kafka's leader would fetch them.
 */
final class KafkaGroup {

    final Map<ProcessId, ClientMetadata> clients = new HashMap<>();
    final Map<ProcessId, Map<String, Optional<String>>> racksForProcessConsumer = new HashMap<>();
    final Set<TaskId> allTasks = new TreeSet<>();
    final Set<TaskId> statefulTasks = new TreeSet<>();
    private final Map<TaskId, Long> endOffsetSums = new TreeMap<>();
    private final Map<TopicPartition, TaskId> taskForPartition = new HashMap<>();
    private final JsonNode tasks;
    final AssignmentConfigs configs;
    final boolean sticky;
    final KafkaRackMetadata racks;

    KafkaGroup(final JsonNode request) {
        tasks = request.path("tasks");
        for (final JsonNode t : tasks) {
            final TaskId id = Json.taskId(t.path("id"));
            allTasks.add(id);
            if (t.path("stateful").asBoolean(false)) {
                statefulTasks.add(id);
                endOffsetSums.put(id, Json.asLong(t.get("changelogEndOffsetSum"), 0));
            }
            for (final JsonNode p : t.path("topicPartitions")) {
                if (p.path("isSource").asBoolean(false)) {  // Kafka maps input partitions only
                    taskForPartition.put(Json.topicPartition(p), id);
                }
            }
        }
        configs = configs(request.path("configs"));
        sticky = request.path("configs").path("assignor").asText("").equals("sticky");
        for (final JsonNode member : request.path("members")) {
            addConsumer(member);
        }
        for (final Map.Entry<ProcessId, ClientMetadata> e : clients.entrySet()) {
            e.getValue().state().initializePrevTasks(taskForPartition, false);
            e.getValue().state().computeTaskLags(e.getKey(), endOffsetSums);
        }
        racks = new KafkaRackMetadata(tasks);
    }

    /** The legacy assignors' input, in a {@code HashMap} as {@code StreamsPartitionAssignor} passes it. */
    Map<ProcessId, ClientState> clientStates() {
        final Map<ProcessId, ClientState> states = new HashMap<>();
        clients.forEach((pid, metadata) -> states.put(pid, metadata.state()));
        return states;
    }

    RackAwareTaskAssignor rackAwareTaskAssignor() {
        return racks.rackAwareTaskAssignor(racksForProcessConsumer, configs);
    }

    /**
     * Kafka's {@link DefaultApplicationState} over the clients' metadata, with tasks as
     * {@code buildApplicationState} makes them: a {@link DefaultTaskInfo} per task (stateful as the
     * request says), a {@link DefaultTaskTopicPartition} per partition whose racks are fetched on
     * demand by Kafka's {@link RackUtils} from the same cluster and topic manager.
     */
    ApplicationState applicationState() {
        final Set<DefaultTaskTopicPartition> needingRacks = new HashSet<>();
        final boolean[] fetched = {false};
        final Runnable fetchRacks = () -> {
            if (!fetched[0]) {
                RackUtils.annotateTopicPartitionsWithRackInfo(racks.cluster(), racks.internalTopicManager(), needingRacks);
                fetched[0] = true;
            }
        };
        final Map<TaskId, TaskInfo> infos = new HashMap<>();
        for (final JsonNode t : tasks) {
            final TaskId id = Json.taskId(t.path("id"));
            final Set<TaskTopicPartition> partitions = new HashSet<>();
            for (final JsonNode p : t.path("topicPartitions")) {
                final DefaultTaskTopicPartition tp = new DefaultTaskTopicPartition(Json.topicPartition(p),
                    p.path("isSource").asBoolean(false), p.path("isChangelog").asBoolean(false), fetchRacks);
                needingRacks.add(tp);
                partitions.add(tp);
            }
            final Set<String> stores = new HashSet<>();
            t.path("stateStoreNames").forEach(s -> stores.add(s.asText()));
            infos.put(id, new DefaultTaskInfo(id, t.path("stateful").asBoolean(false), stores, partitions));
        }
        return new DefaultApplicationState(configs, infos, clients);
    }

    /** ClientMetadata.addConsumer and addPreviousTasksAndOffsetSums, one consumer (thread). */
    private void addConsumer(final JsonNode member) {
        final String consumerId = member.path("memberId").asText();
        final JsonNode subscription = member.path("subscription");
        final JsonNode info = subscription.path("info");
        if (info.isMissingNode()) {
            throw new IllegalArgumentException("only structured subscriptions are supported: " + consumerId);
        }
        final ProcessId pid = new ProcessId(UUID.fromString(info.path("processId").asText()));
        final String rack = subscription.path("rackId").asText("");
        final Optional<String> rackId = rack.isEmpty() ? Optional.empty() : Optional.of(rack);
        racksForProcessConsumer.computeIfAbsent(pid, p -> new HashMap<>()).put(consumerId, rackId);
        final ClientMetadata client = clients.computeIfAbsent(pid, p -> KassignClientMetadata.create(
            p, info.path("userEndPoint").asText(""), clientTags(info), rackId));
        final List<TopicPartition> owned = new ArrayList<>();
        for (final JsonNode p : subscription.path("ownedPartitions")) {
            owned.add(Json.topicPartition(p));
        }
        final Map<TaskId, Long> offsetSums = new HashMap<>();
        for (final JsonNode e : info.path("taskOffsetSums")) {
            offsetSums.put(Json.taskId(e.path("task")), Json.asLong(e.get("offsetSum"), 0));
        }
        KassignClientMetadata.addConsumer(client, consumerId, owned, offsetSums);
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
        final List<String> tags = new ArrayList<>();
        for (final JsonNode tag : c.path("rackAwareAssignmentTags")) {
            tags.add(tag.asText());
        }
        return new AssignmentConfigs(
            Json.asLong(c.get("acceptableRecoveryLag"), 10_000L),
            (int) Json.asLong(c.get("maxWarmupReplicas"), 2),
            (int) Json.asLong(c.get("numStandbyReplicas"), 0),
            Json.asLong(c.get("probingRebalanceIntervalMs"), 600_000L),
            tags,
            Json.optionalInt(c.get("trafficCost")),
            Json.optionalInt(c.get("nonOverlapCost")),
            strategy(c.path("rackAwareStrategy").asText("")));
    }

    /** The proto enum's name as {@code StreamsConfig}'s strategy constant (unspecified: none). */
    private static String strategy(final String name) {
        switch (name) {
            case "":
            case "RACK_AWARE_STRATEGY_UNSPECIFIED":
            case "RACK_AWARE_STRATEGY_NONE":
                return StreamsConfig.RACK_AWARE_ASSIGNMENT_STRATEGY_NONE;
            case "RACK_AWARE_STRATEGY_MIN_TRAFFIC":
                return StreamsConfig.RACK_AWARE_ASSIGNMENT_STRATEGY_MIN_TRAFFIC;
            case "RACK_AWARE_STRATEGY_BALANCE_SUBTOPOLOGY":
                return StreamsConfig.RACK_AWARE_ASSIGNMENT_STRATEGY_BALANCE_SUBTOPOLOGY;
            default:
                throw new IllegalArgumentException("unknown rack-aware strategy " + name);
        }
    }
}
