// Compile-only stand-in for the Kafka 3.8 public API our plug-in uses: same signatures, minimal
// bodies of our own. Test-only source tree: never packaged; at run time Kafka's own classes are used.
package org.apache.kafka.streams.processor.assignment;

import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.state.HostInfo;

public interface KafkaStreamsState {
    ProcessId processId();

    int numProcessingThreads();

    SortedSet<String> consumerClientIds();

    SortedSet<TaskId> previousActiveTasks();

    SortedSet<TaskId> previousStandbyTasks();

    long lagFor(TaskId task);

    SortedSet<TaskId> prevTasksByLag(String consumerClientId);

    Map<TaskId, Long> statefulTasksToLagSums();

    Optional<HostInfo> hostInfo();

    Map<String, String> clientTags();

    Optional<String> rackId();
}
