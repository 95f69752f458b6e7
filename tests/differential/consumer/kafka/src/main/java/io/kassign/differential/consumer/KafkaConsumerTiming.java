package io.kassign.differential.consumer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.common.Cluster;

import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * How long Kafka's own consumer assignors take on one group, for bench/consumer_bench.py.
 *
 * <p>Reads one group on stdin in {@link KafkaConsumerAssignors}' format (built by the same code,
 * so the inputs are those the differential suite checks), plus {@code "repeats"}; times
 * {@code assign()} alone, the inputs ({@link Cluster}, {@link GroupSubscription}) built before
 * the clock starts. The first call is the cold figure: this JVM has run no assignor yet, as a
 * consumer that just became leader. Then {@code repeats} more calls, each with a fresh assignor
 * (a fresh leader's), are the warm figures. Writes one JSON line: {@code {"coldMillis",
 * "warmMillis": [...], "members": {memberId: [[topic, p], ...]}}}, the cold call's assignment
 * as the oracle writes it, so the bench can check kassign's answer at its sizes too. Each call
 * gets the group built anew, and a warm call answering unlike the cold one is an error.
 */
public final class KafkaConsumerTiming {

    private KafkaConsumerTiming() {
    }

    public static void main(final String[] args) throws Exception {
        final ObjectMapper mapper = new ObjectMapper();
        final JsonNode root;
        try (Reader in = new InputStreamReader(System.in, StandardCharsets.UTF_8)) {
            root = mapper.readTree(in);
        }
        final String name = root.path("assignor").asText();
        final Cluster cluster = KafkaConsumerAssignors.cluster(root);
        GroupSubscription group = group(root, name);
        long started = System.nanoTime();
        final GroupAssignment cold = KafkaConsumerAssignors.assignor(name).assign(cluster, group);
        final double coldMillis = (System.nanoTime() - started) / 1e6;
        final ObjectNode out = KafkaConsumerAssignors.result(cold.groupAssignment());
        out.put("coldMillis", coldMillis);
        final ArrayNode warm = out.putArray("warmMillis");
        for (int i = 0; i < root.path("repeats").asInt(0); i++) {
            final ConsumerPartitionAssignor assignor = KafkaConsumerAssignors.assignor(name);
            group = group(root, name);
            started = System.nanoTime();
            final GroupAssignment again = assignor.assign(cluster, group);
            warm.add((System.nanoTime() - started) / 1e6);
            if (!KafkaConsumerAssignors.result(again.groupAssignment()).get("members").equals(out.get("members"))) {
                throw new IllegalStateException("warm call " + i + " of " + name + " answered unlike the cold one:"
                        + " its input was not the same group");
            }
        }
        System.out.println(mapper.writeValueAsString(out));
    }

    /**
     * The group as read, built anew for each call: Kafka's StickyAssignor reads (uses up) the
     * userData buffers it is given, so a second call on the same group would see none and time
     * another rebalance (one without the members' memory).
     */
    private static GroupSubscription group(final JsonNode root, final String name) {
        final Map<String, Subscription> subscriptions = new HashMap<>();
        for (final JsonNode member : root.path("members")) {
            subscriptions.put(member.path("memberId").asText(), KafkaConsumerAssignors.subscription(member, name));
        }
        return new GroupSubscription(subscriptions);
    }
}
