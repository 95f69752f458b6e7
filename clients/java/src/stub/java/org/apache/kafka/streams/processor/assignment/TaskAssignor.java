// Compile-only stand-in for the Kafka 3.8 public API our plug-in uses: same signatures, minimal
// bodies of our own. Test-only source tree: never packaged; at run time Kafka's own classes are used.
// Kafka's interface also declares AssignmentError and a default onAssignmentComputed(GroupAssignment,
// GroupSubscription, AssignmentError); the plug-in does not override it, so the stub leaves it out.
package org.apache.kafka.streams.processor.assignment;

import java.util.Collection;
import java.util.Map;
import org.apache.kafka.common.Configurable;

public interface TaskAssignor extends Configurable {
    TaskAssignment assign(ApplicationState applicationState);

    @Override
    default void configure(final Map<String, ?> configs) {
    }

    class TaskAssignment {
        private final Collection<KafkaStreamsAssignment> assignment;

        public TaskAssignment(final Collection<KafkaStreamsAssignment> assignment) {
            this.assignment = assignment;
        }

        public Collection<KafkaStreamsAssignment> assignment() {
            return assignment;
        }
    }
}
