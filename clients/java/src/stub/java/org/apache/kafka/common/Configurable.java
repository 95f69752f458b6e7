// Compile-only stand-in for the Kafka 3.8 public API our plug-in uses: same signatures, minimal
// bodies of our own. Test-only source tree: never packaged; at run time Kafka's own classes are used.
package org.apache.kafka.common;

import java.util.Map;

public interface Configurable {
    void configure(Map<String, ?> configs);
}
