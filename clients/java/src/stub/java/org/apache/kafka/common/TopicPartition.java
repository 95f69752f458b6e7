// Compile-only stand-in for the Kafka 3.8 public API our plug-in uses: same signatures, minimal
// bodies of our own. Test-only source tree: never packaged; at run time Kafka's own classes are used.
package org.apache.kafka.common;

import java.util.Objects;

public final class TopicPartition {
    private final String topic;
    private final int partition;

    public TopicPartition(final String topic, final int partition) {
        this.topic = topic;
        this.partition = partition;
    }

    public String topic() {
        return topic;
    }

    public int partition() {
        return partition;
    }

    @Override
    public boolean equals(final Object o) {
        return o instanceof TopicPartition other && partition == other.partition && Objects.equals(topic, other.topic);
    }

    @Override
    public int hashCode() {
        return Objects.hash(topic, partition);
    }

    @Override
    public String toString() {
        return topic + "-" + partition;
    }
}
