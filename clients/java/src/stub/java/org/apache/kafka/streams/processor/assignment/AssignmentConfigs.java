// Compile-only stand-in for the Kafka 3.8 public API our plug-in uses: same signatures, minimal
// bodies of our own. Test-only source tree: never packaged; at run time Kafka's own classes are used.
package org.apache.kafka.streams.processor.assignment;

import java.util.List;
import java.util.OptionalInt;

public class AssignmentConfigs {
    private final long acceptableRecoveryLag;
    private final int maxWarmupReplicas;
    private final int numStandbyReplicas;
    private final long probingRebalanceIntervalMs;
    private final List<String> rackAwareAssignmentTags;
    private final OptionalInt rackAwareTrafficCost;
    private final OptionalInt rackAwareNonOverlapCost;
    private final String rackAwareAssignmentStrategy;

    public AssignmentConfigs(final long acceptableRecoveryLag,
                             final int maxWarmupReplicas,
                             final int numStandbyReplicas,
                             final long probingRebalanceIntervalMs,
                             final List<String> rackAwareAssignmentTags,
                             final OptionalInt rackAwareTrafficCost,
                             final OptionalInt rackAwareNonOverlapCost,
                             final String rackAwareAssignmentStrategy) {
        this.acceptableRecoveryLag = acceptableRecoveryLag;
        this.maxWarmupReplicas = maxWarmupReplicas;
        this.numStandbyReplicas = numStandbyReplicas;
        this.probingRebalanceIntervalMs = probingRebalanceIntervalMs;
        this.rackAwareAssignmentTags = rackAwareAssignmentTags;
        this.rackAwareTrafficCost = rackAwareTrafficCost;
        this.rackAwareNonOverlapCost = rackAwareNonOverlapCost;
        this.rackAwareAssignmentStrategy = rackAwareAssignmentStrategy;
    }

    public long acceptableRecoveryLag() {
        return acceptableRecoveryLag;
    }

    public int maxWarmupReplicas() {
        return maxWarmupReplicas;
    }

    public int numStandbyReplicas() {
        return numStandbyReplicas;
    }

    public long probingRebalanceIntervalMs() {
        return probingRebalanceIntervalMs;
    }

    public List<String> rackAwareAssignmentTags() {
        return rackAwareAssignmentTags;
    }

    public OptionalInt rackAwareTrafficCost() {
        return rackAwareTrafficCost;
    }

    public OptionalInt rackAwareNonOverlapCost() {
        return rackAwareNonOverlapCost;
    }

    public String rackAwareAssignmentStrategy() {
        return rackAwareAssignmentStrategy;
    }
}
