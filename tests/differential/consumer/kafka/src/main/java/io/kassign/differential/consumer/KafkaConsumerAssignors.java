package io.kassign.differential.consumer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Kafka's own consumer assignors (the kafka-clients dependency, unmodified) run on groups the
 * Python test generates, so kassign's reimplementation can be compared with the real thing.
 *
 * <p>Reads one group per JSON line on stdin:
 * {@code {"assignor", "nodes": [{"id", "rack"}], "topics": [{"name", "replicas": [[node ids]]}],
 * "members": [{"memberId", "groupInstanceId", "topics", "ownedPartitions": [[topic, p]],
 * "generation", "rackId", "userData" (base64), "stickyPrevious": {"partitions", "generation"},
 * "cooperativeGeneration"}]}}, and writes one line each: {@code {"members": {memberId:
 * [[topic, p], ...]}}} (partitions sorted), or {@code {"error": "..."}} when Kafka throws, so the
 * batch goes on. One JVM serves the whole batch.
 *
 * <p>The inputs are built as the group leader's {@code ConsumerCoordinator} builds them: a
 * {@link Cluster} of nodes with racks and {@link PartitionInfo}s with replicas; a
 * {@code HashMap} of {@link Subscription}s filled in the order the members are listed (the
 * JoinGroup response's order), each with its group instance id set. A fresh assignor per group,
 * as a fresh leader has: {@code AbstractStickyAssignor} keeps the highest generation it has ever
 * seen in a field that is never reset.
 *
 * <p>UserData: a member with {@code stickyPrevious} (or {@code cooperativeGeneration}) gets the
 * bytes Kafka's own {@code StickyAssignor} (or {@code CooperativeStickyAssignor}) writes after
 * {@code onAssignment} of that assignment in that generation, and those bytes must equal the
 * {@code userData} the test sent (kassign's encoder); any other {@code userData} is passed as is.
 */
public final class KafkaConsumerAssignors {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private KafkaConsumerAssignors() {
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

    private static ObjectNode answer(final String line) {
        try {
            final JsonNode root = MAPPER.readTree(line);
            final String name = root.path("assignor").asText();
            final ConsumerPartitionAssignor assignor = assignor(name);
            final Cluster cluster = cluster(root);
            final Map<String, Subscription> subscriptions = new HashMap<>();
            for (final JsonNode member : root.path("members")) {
                subscriptions.put(member.path("memberId").asText(), subscription(member, name));
            }
            final Map<String, Assignment> assignments =
                assignor.assign(cluster, new GroupSubscription(subscriptions)).groupAssignment();
            return result(assignments);
        } catch (final Exception | Error e) {
            final StringWriter trace = new StringWriter();
            e.printStackTrace(new PrintWriter(trace));
            return MAPPER.createObjectNode().put("error", trace.toString());
        }
    }

    static ConsumerPartitionAssignor assignor(final String name) {
        switch (name) {
            case "range":
                return new RangeAssignor();
            case "roundrobin":
                return new RoundRobinAssignor();
            case "sticky":
                return new StickyAssignor();
            case "cooperative-sticky":
                return new CooperativeStickyAssignor();
            default:
                throw new IllegalArgumentException("unknown assignor " + name);
        }
    }

    static Cluster cluster(final JsonNode root) {
        final Map<Integer, Node> nodes = new TreeMap<>();
        for (final JsonNode n : root.path("nodes")) {
            final int id = n.path("id").asInt();
            final JsonNode rack = n.get("rack");
            nodes.put(id, new Node(id, "broker-" + id, 9092, rack == null || rack.isNull() ? null : rack.asText()));
        }
        final List<PartitionInfo> partitions = new ArrayList<>();
        for (final JsonNode t : root.path("topics")) {
            final String topic = t.path("name").asText();
            int p = 0;
            for (final JsonNode replicaIds : t.path("replicas")) {
                final Node[] replicas = new Node[replicaIds.size()];
                for (int i = 0; i < replicas.length; i++) {
                    replicas[i] = nodes.get(replicaIds.get(i).asInt());
                }
                final Node leader = replicas.length == 0 ? null : replicas[0];
                partitions.add(new PartitionInfo(topic, p++, leader, replicas, replicas));
            }
        }
        return new Cluster("kassign-differential", nodes.values(), partitions,
            Collections.emptySet(), Collections.emptySet());
    }

    static Subscription subscription(final JsonNode member, final String assignor) {
        final String memberId = member.path("memberId").asText();
        final List<String> topics = new ArrayList<>();
        for (final JsonNode t : member.path("topics")) {
            topics.add(t.asText());
        }
        final List<TopicPartition> owned = partitions(member.path("ownedPartitions"));
        final JsonNode rack = member.get("rackId");
        final Optional<String> rackId = rack == null || rack.isNull() ? Optional.empty() : Optional.of(rack.asText());
        final Subscription subscription = new Subscription(
            topics, userData(member, memberId, topics, assignor), owned, member.path("generation").asInt(-1), rackId);
        final JsonNode instance = member.get("groupInstanceId");
        subscription.setGroupInstanceId(instance == null || instance.isNull() ? Optional.empty() : Optional.of(instance.asText()));
        return subscription;
    }

    /** The member's userData: Kafka's own encoding where the test asks for it, checked against ours. */
    @SuppressWarnings("deprecation")
    private static ByteBuffer userData(final JsonNode member, final String memberId, final List<String> topics,
                                       final String assignor) {
        final JsonNode given = member.get("userData");
        final byte[] ours = given == null || given.isNull() ? null : Base64.getDecoder().decode(given.asText());
        ByteBuffer kafka = null;
        final JsonNode previous = member.get("stickyPrevious");
        final JsonNode cooperative = member.get("cooperativeGeneration");
        if (assignor.equals("sticky") && previous != null && !previous.isNull()) {
            final StickyAssignor writer = new StickyAssignor();
            writer.onAssignment(new Assignment(partitions(previous.path("partitions"))),
                new ConsumerGroupMetadata("g", previous.path("generation").asInt(), memberId, Optional.empty()));
            kafka = writer.subscriptionUserData(new HashSet<>(topics));
        } else if (assignor.equals("cooperative-sticky") && cooperative != null && !cooperative.isNull()) {
            final CooperativeStickyAssignor writer = new CooperativeStickyAssignor();
            writer.onAssignment(new Assignment(Collections.emptyList()),
                new ConsumerGroupMetadata("g", cooperative.asInt(), memberId, Optional.empty()));
            kafka = writer.subscriptionUserData(new HashSet<>(topics));
        }
        if (kafka == null) {
            return ours == null ? null : ByteBuffer.wrap(ours);
        }
        final byte[] theirs = new byte[kafka.remaining()];
        kafka.duplicate().get(theirs);
        if (ours == null || !java.util.Arrays.equals(ours, theirs)) {
            throw new IllegalStateException("userData of " + memberId + " differs from Kafka's: ours "
                + (ours == null ? "null" : Base64.getEncoder().encodeToString(ours))
                + ", Kafka's " + Base64.getEncoder().encodeToString(theirs));
        }
        return kafka;
    }

    private static List<TopicPartition> partitions(final JsonNode list) {
        final List<TopicPartition> partitions = new ArrayList<>();
        for (final JsonNode tp : list) {
            partitions.add(new TopicPartition(tp.get(0).asText(), tp.get(1).asInt()));
        }
        return partitions;
    }

    static ObjectNode result(final Map<String, Assignment> assignments) {
        final ObjectNode root = MAPPER.createObjectNode();
        final ObjectNode members = root.putObject("members");
        for (final Map.Entry<String, Assignment> e : new TreeMap<>(assignments).entrySet()) {
            final List<TopicPartition> sorted = new ArrayList<>(e.getValue().partitions());
            sorted.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
            final ArrayNode list = members.putArray(e.getKey());
            for (final TopicPartition tp : sorted) {
                list.addArray().add(tp.topic()).add(tp.partition());
            }
        }
        return root;
    }
}
