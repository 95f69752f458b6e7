package io.kassign.broker;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collection;
import java.util.HexFormat;
import java.util.TreeSet;
import org.apache.kafka.common.Uuid;

/**
 * The group id a broker plug-in sends in shadow mode (issue 26), where Kafka's API gives it none:
 * neither KIP-848's GroupSpec nor KIP-1071's streams GroupSpec and TopologyDescriber name the group
 * (Kafka 4.4.0's group-coordinator-api), so the service's journal could not otherwise tell one
 * group's rebalances from another's on the same broker.
 *
 * <p>A stand-in, stable across brokers and restarts and recognisable by its prefix: the first 12
 * hex digits of the SHA-256 of what the group reads.
 * <ul>
 *   <li>{@code broker-consumer:<hash>}: the sorted ids of the topics its members subscribe to;</li>
 *   <li>{@code broker-streams:<hash>}: its topology's subtopology ids in order, each with its
 *       partition count and whether it is stateful.</li>
 * </ul>
 * Two groups reading the same topics (or with the same topology shape) share a stand-in, and a
 * group whose subscription or topology changes gets a new one: the limits of what the API shows.
 */
final class StandInGroupIds {
    static final String CONSUMER_PREFIX = "broker-consumer:";
    static final String STREAMS_PREFIX = "broker-streams:";

    private StandInGroupIds() {
    }

    /** The consumer group's stand-in: from its subscribed topic ids. */
    static String consumer(final Collection<Uuid> topics) {
        final StringBuilder text = new StringBuilder();
        for (final String id : new TreeSet<>(topics.stream().map(Uuid::toString).toList())) {
            text.append(id).append('\n');
        }
        return CONSUMER_PREFIX + hash(text.toString());
    }

    /** The streams group's stand-in: from its topology's shape. */
    static String streams(final GroupToStreamsRequest.Topology topology) {
        final StringBuilder text = new StringBuilder();
        topology.partitions().forEach((subtopology, count) -> text.append(subtopology).append(' ').append(count)
                .append(topology.stateful().contains(subtopology) ? " stateful" : " stateless").append('\n'));
        return STREAMS_PREFIX + hash(text.toString());
    }

    private static String hash(final String text) {
        try {
            final byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 6);
        } catch (final NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }
}
