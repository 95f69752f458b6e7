// Compile-only stand-in for the Kafka 3.8 public API our plug-in uses: same signatures, minimal
// bodies of our own. Test-only source tree: never packaged; at run time Kafka's own classes are used.
package org.apache.kafka.streams.processor.assignment;

import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;

public interface TaskTopicPartition {
    TopicPartition topicPartition();

    boolean isSource();

    boolean isChangelog();

    Optional<Set<String>> rackIds();
}
