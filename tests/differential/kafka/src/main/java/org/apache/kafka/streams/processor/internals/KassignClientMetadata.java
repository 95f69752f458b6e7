package org.apache.kafka.streams.processor.internals;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.StreamsPartitionAssignor.ClientMetadata;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Calls to {@link ClientMetadata}'s package-private constructor and methods, for the differential
 * oracle (io.kassign.differential; not part of Kafka).
 *
 * <p>Why in Kafka's package: {@code ClientMetadata} is what {@code StreamsPartitionAssignor.assign}
 * collects per client (the {@code ClientState} the legacy assignors get, and what
 * {@code DefaultApplicationState} turns into KIP-924 {@code KafkaStreamsState}s), but only its
 * own package may construct or fill it. A class of ours on the classpath in the same package calls
 * the real methods, checked by the compiler, where reflection would not be. The kafka-streams jar is
 * neither sealed nor a named module, so the split package is allowed. Nothing here is Kafka's code.
 */
public final class KassignClientMetadata {

    private KassignClientMetadata() {
    }

    public static ClientMetadata create(final ProcessId processId,
                                        final String endPoint,
                                        final Map<String, String> clientTags,
                                        final Optional<String> rackId) {
        return new ClientMetadata(processId, endPoint, clientTags, rackId);
    }

    /** One consumer (stream thread): capacity, owned partitions, then its task offset sums. */
    public static void addConsumer(final ClientMetadata client,
                                   final String consumerId,
                                   final List<TopicPartition> ownedPartitions,
                                   final Map<TaskId, Long> taskOffsetSums) {
        client.addConsumer(consumerId, ownedPartitions);
        client.addPreviousTasksAndOffsetSums(consumerId, taskOffsetSums);
    }
}
