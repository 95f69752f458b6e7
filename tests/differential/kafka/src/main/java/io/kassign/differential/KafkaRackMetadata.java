package io.kassign.differential;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.kafka.clients.admin.MockAdminClient;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.InternalTopicManager;
import org.apache.kafka.streams.processor.internals.TopologyMetadata.Subtopology;
import org.apache.kafka.streams.processor.internals.assignment.RackAwareTaskAssignor;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;

/**
 * The rack metadata of one kassign request as Kafka Streams' leader would hold it, and the real
 * {@link RackAwareTaskAssignor} built on it with the arguments {@code StreamsPartitionAssignor}
 * passes.
 *
 * <ul>
 *   <li>Brokers: one {@link Node} per rack and replica position: a partition whose
 *       {@code rack_ids} are {@code [a, a, b]} has its replicas on brokers {@code (a, 0)},
 *       {@code (a, 1)} and {@code (b, 0)}, so replicas of one partition are distinct brokers even
 *       when two share a rack. A partition with no known rack gets one replica on a broker with no
 *       rack, which makes Kafka disable rack awareness as kassign does.</li>
 *   <li>{@link Cluster} metadata: the source partitions only, as the leader's consumer metadata
 *       has the input topics and not the changelogs.</li>
 *   <li>Changelog topics: described through Kafka's real {@link InternalTopicManager} (its public
 *       {@code getTopicPartitionInfo(Set)}, the call {@code RackAwareTaskAssignor} makes), over
 *       Kafka's own {@link MockAdminClient} (the kafka-clients test jar) that holds every changelog
 *       topic with its partitions' replicas. The manager's retries, its handling of
 *       {@code DescribeTopicsResult} and the assignor's reading of the answer all run unchanged.
 *       Chosen over overriding {@code getTopicPartitionInfo} (it is not final), which would
 *       bypass the manager's own code.</li>
 *   <li>{@code partitionsForTask}: each task's source partitions (what the partition grouper
 *       gives); {@code changelogPartitionsForTask}: its changelog partitions, for tasks that have
 *       some (Kafka's {@code ChangelogTopics} keys stateful tasks only); {@code tasksForTopicGroup}:
 *       tasks by {@link Subtopology}; {@code racksForProcessConsumer}: each consumer member's
 *       {@code rack_id}, empty as {@link Optional#empty()} (filled by the caller).</li>
 * </ul>
 */
final class KafkaRackMetadata {

    /** Enough for {@link InternalTopicManager}'s constructor; nothing connects anywhere. */
    private static final StreamsConfig STREAMS_CONFIG = streamsConfig();

    private final Map<String, Node> brokers = new TreeMap<>();
    private final Map<TopicPartition, PartitionInfo> sourcePartitions = new HashMap<>();
    private final Map<String, List<TopicPartitionInfo>> changelogTopics = new TreeMap<>();
    final Map<TaskId, Set<TopicPartition>> partitionsForTask = new HashMap<>();
    final Map<TaskId, Set<TopicPartition>> changelogPartitionsForTask = new HashMap<>();
    final Map<Subtopology, Set<TaskId>> tasksForTopicGroup = new HashMap<>();

    /** The request's tasks: their partitions, replicas and sub-topologies. */
    KafkaRackMetadata(final JsonNode tasks) {
        for (final JsonNode t : tasks) {
            final TaskId id = Json.taskId(t.path("id"));
            tasksForTopicGroup.computeIfAbsent(new Subtopology(id.subtopology(), id.topologyName()), s -> new HashSet<>()).add(id);
            partitionsForTask.computeIfAbsent(id, k -> new HashSet<>());
            for (final JsonNode p : t.path("topicPartitions")) {
                final TopicPartition tp = Json.topicPartition(p);
                final List<Node> replicas = replicas(p.path("rackIds"));
                if (p.path("isSource").asBoolean(false)) {
                    partitionsForTask.get(id).add(tp);
                    final Node[] nodes = replicas.toArray(new Node[0]);
                    sourcePartitions.put(tp, new PartitionInfo(tp.topic(), tp.partition(), nodes[0], nodes, nodes));
                }
                if (p.path("isChangelog").asBoolean(false)) {
                    changelogPartitionsForTask.computeIfAbsent(id, k -> new HashSet<>()).add(tp);
                    changelogTopics.computeIfAbsent(tp.topic(), k -> new ArrayList<>())
                        .add(new TopicPartitionInfo(tp.partition(), replicas.get(0), replicas, replicas));
                }
            }
        }
    }

    RackAwareTaskAssignor rackAwareTaskAssignor(final Map<ProcessId, Map<String, Optional<String>>> racksForProcessConsumer,
                                                final AssignmentConfigs configs) {
        return new RackAwareTaskAssignor(
            cluster(),
            partitionsForTask,
            changelogPartitionsForTask,
            tasksForTopicGroup,
            racksForProcessConsumer,
            internalTopicManager(),
            configs,
            Time.SYSTEM);
    }

    Cluster cluster() {
        return new Cluster("kassign-differential", new ArrayList<>(brokers.values()),
            new ArrayList<>(sourcePartitions.values()), Collections.emptySet(), Collections.emptySet());
    }

    /** Kafka's topic manager over an admin client that knows the changelog topics. */
    InternalTopicManager internalTopicManager() {
        final List<Node> nodes = new ArrayList<>(brokers.values());
        nodes.sort((a, b) -> Integer.compare(a.id(), b.id()));  // MockAdminClient indexes brokers by id
        if (nodes.isEmpty()) {
            nodes.add(broker("", 0));
        }
        final MockAdminClient admin = new MockAdminClient(nodes, nodes.get(0));
        for (final Map.Entry<String, List<TopicPartitionInfo>> topic : changelogTopics.entrySet()) {
            final List<TopicPartitionInfo> partitions = new ArrayList<>(topic.getValue());
            partitions.sort((a, b) -> Integer.compare(a.partition(), b.partition()));
            admin.addTopic(true, topic.getKey(), partitions, Collections.emptyMap());
        }
        return new InternalTopicManager(Time.SYSTEM, admin, STREAMS_CONFIG);
    }

    /** The brokers holding a partition's replicas, one per rack id in order (module javadoc). */
    private List<Node> replicas(final JsonNode rackIds) {
        final List<Node> replicas = new ArrayList<>();
        final Map<String, Integer> seen = new HashMap<>();
        for (final JsonNode rack : rackIds) {
            final int position = seen.merge(rack.asText(), 1, Integer::sum) - 1;
            replicas.add(brokers.computeIfAbsent(rack.asText() + "#" + position, k -> broker(rack.asText(), brokers.size())));
        }
        if (replicas.isEmpty()) {
            replicas.add(brokers.computeIfAbsent("#no-rack", k -> broker("", brokers.size())));
        }
        return replicas;
    }

    private static Node broker(final String rack, final int id) {
        return new Node(id, "broker-" + id, 9092, rack.isEmpty() ? null : rack);
    }

    private static StreamsConfig streamsConfig() {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "kassign-differential");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092");
        return new StreamsConfig(props);
    }
}
