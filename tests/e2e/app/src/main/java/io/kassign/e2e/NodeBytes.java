package io.kassign.e2e;

import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;

/**
 * Bytes a client's consumers received from each broker, read from Kafka's own per-connection
 * metrics ({@code consumer-node-metrics incoming-byte-total}, tags client-id and node-id), so the
 * cluster benchmark (bench/cluster) can set each node against its {@code broker.rack}. Node ids are
 * Kafka's: {@code node-N} for broker N, and for the group coordinator's connection
 * {@code node-(Integer.MAX_VALUE - N)}; the Python side maps both to broker N.
 */
final class NodeBytes {
    private NodeBytes() {}

    /** {"node-1": bytes, ...} summed over the consumers whose client-id {@code clients} accepts. */
    static String json(Map<MetricName, ? extends Metric> metrics, Predicate<String> clients) {
        Map<String, Long> bytes = new TreeMap<>();
        metrics.forEach((name, metric) -> {
            if (name.group().equals("consumer-node-metrics") && name.name().equals("incoming-byte-total")
                    && clients.test(name.tags().getOrDefault("client-id", ""))) {
                Object value = metric.metricValue();
                if (value instanceof Number n) {
                    bytes.merge(name.tags().getOrDefault("node-id", "?"), (long) n.doubleValue(), Long::sum);
                }
            }
        });
        StringBuilder out = new StringBuilder("{");
        bytes.forEach((node, n) -> out.append(out.length() > 1 ? "," : "").append('"').append(node).append("\":").append(n));
        return out.append('}').toString();
    }
}
