// Compile-only stand-in for the Kafka 3.8 public API our plug-in uses: same signatures, minimal
// bodies of our own. Test-only source tree: never packaged; at run time Kafka's own classes are used.
package org.apache.kafka.streams.processor;

import java.util.Objects;

public class TaskId implements Comparable<TaskId> {
    private final int subtopology;
    private final int partition;
    private final String namedTopology;

    public TaskId(final int subtopology, final int partition) {
        this(subtopology, partition, null);
    }

    public TaskId(final int subtopology, final int partition, final String namedTopology) {
        this.subtopology = subtopology;
        this.partition = partition;
        this.namedTopology = namedTopology == null || namedTopology.isEmpty() ? null : namedTopology;
    }

    public int subtopology() {
        return subtopology;
    }

    public int partition() {
        return partition;
    }

    public String namedTopology() {
        return namedTopology;
    }

    @Override
    public boolean equals(final Object o) {
        return o instanceof TaskId other && subtopology == other.subtopology && partition == other.partition
                && Objects.equals(namedTopology, other.namedTopology);
    }

    @Override
    public int hashCode() {
        return Objects.hash(subtopology, partition, namedTopology);
    }

    @Override
    public int compareTo(final TaskId other) {
        final int byName = String.valueOf(namedTopology).compareTo(String.valueOf(other.namedTopology));
        if (byName != 0) {
            return byName;
        }
        final int bySubtopology = Integer.compare(subtopology, other.subtopology);
        return bySubtopology != 0 ? bySubtopology : Integer.compare(partition, other.partition);
    }

    @Override
    public String toString() {
        return subtopology + "_" + partition;
    }
}
