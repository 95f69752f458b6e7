// Compile-only stand-in for the Kafka 3.8 public API our plug-in uses: same signatures, minimal
// bodies of our own. Test-only source tree: never packaged; at run time Kafka's own classes are used.
package org.apache.kafka.streams.processor.assignment;

import java.util.UUID;

public class ProcessId implements Comparable<ProcessId> {
    private final UUID id;

    public ProcessId(final UUID id) {
        this.id = id;
    }

    public UUID id() {
        return id;
    }

    @Override
    public boolean equals(final Object o) {
        return o instanceof ProcessId other && id.equals(other.id);
    }

    @Override
    public int hashCode() {
        return id.hashCode();
    }

    @Override
    public int compareTo(final ProcessId other) {
        return id.compareTo(other.id);
    }

    @Override
    public String toString() {
        return "ProcessId{id=" + id + "}";
    }
}
