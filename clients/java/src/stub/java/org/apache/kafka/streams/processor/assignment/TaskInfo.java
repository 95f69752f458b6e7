// Compile-only stand-in for the Kafka 3.8 public API our plug-in uses: same signatures, minimal
// bodies of our own. Test-only source tree: never packaged; at run time Kafka's own classes are used.
package org.apache.kafka.streams.processor.assignment;

import java.util.Set;
import org.apache.kafka.streams.processor.TaskId;

public interface TaskInfo {
    TaskId id();

    boolean isStateful();

    Set<String> stateStoreNames();

    Set<TaskTopicPartition> topicPartitions();
}
