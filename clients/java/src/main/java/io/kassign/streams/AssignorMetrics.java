package io.kassign.streams;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.JmxReporter;
import org.apache.kafka.common.metrics.KafkaMetricsContext;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.Avg;
import org.apache.kafka.common.metrics.stats.CumulativeCount;
import org.apache.kafka.common.metrics.stats.Max;
import org.apache.kafka.common.utils.Time;

/**
 * The plug-in's metrics, through Kafka's own metrics library and its JmxReporter, so they sit
 * beside Kafka's in JConsole or any JMX exporter.
 *
 * <p>MBeans (domain {@code kassign}, one per group id):
 * <ul>
 *   <li>{@code kassign:type=task-assignor,client-id=GROUP}: {@code calls-total} (assignments
 *       asked of the service), {@code assignments-total} (answers used), {@code fallbacks-total},
 *       {@code call-latency-avg} and {@code call-latency-max} in ms (over Kafka's default sample
 *       window, two of 30 s), {@code rejected-assignments-total} (Kafka's own validation refused
 *       what the plug-in returned, seen in onAssignmentComputed);</li>
 *   <li>{@code kassign:type=task-assignor-fallbacks,client-id=GROUP,cause=CAUSE}:
 *       {@code fallbacks-total} per {@link FallbackCause}.</li>
 * </ul>
 *
 * <p>Why one registry per JVM: Kafka Streams creates and configures a new TaskAssignor for every
 * rebalance and never closes it (KIP-924 has no close), so metrics owned by an instance would be
 * registered again each rebalance and never removed. Sensors are created once per name and then
 * shared by every instance; the registry lives as long as the JVM.
 */
final class AssignorMetrics {
    static final String JMX_DOMAIN = "kassign";
    static final String GROUP = "task-assignor";
    static final String FALLBACK_GROUP = "task-assignor-fallbacks";

    private static final Metrics REGISTRY = new Metrics(new MetricConfig(), List.of(new JmxReporter()),
            Time.SYSTEM, new KafkaMetricsContext(JMX_DOMAIN));

    private final String groupId;
    private final Sensor calls;
    private final Sensor assignments;
    private final Sensor fallbacks;
    private final Sensor rejected;

    private AssignorMetrics(final String groupId) {
        this.groupId = groupId;
        final Map<String, String> tags = Map.of("client-id", groupId);
        calls = sensor("calls", sensor -> {
            sensor.add(name("calls-total", "assignments asked of the kassign service", tags), new CumulativeCount());
            sensor.add(name("call-latency-avg", "average time of a call to the kassign service, ms", tags), new Avg());
            sensor.add(name("call-latency-max", "longest call to the kassign service, ms", tags), new Max());
        });
        assignments = sensor("assignments", sensor -> sensor.add(
                name("assignments-total", "rebalances assigned with the kassign service's answer", tags),
                new CumulativeCount()));
        fallbacks = sensor("fallbacks", sensor -> sensor.add(
                name("fallbacks-total", "rebalances assigned locally because kassign could not be used", tags),
                new CumulativeCount()));
        rejected = sensor("rejected", sensor -> sensor.add(
                name("rejected-assignments-total", "assignments Kafka's validation rejected", tags),
                new CumulativeCount()));
    }

    /** The metrics of one group, created on first use and shared by every assignor instance after. */
    static AssignorMetrics forGroup(final String groupId) {
        return new AssignorMetrics(groupId.isEmpty() ? "unknown" : groupId);
    }

    void call(final long latencyMs) {
        calls.record(latencyMs);
    }

    void assigned() {
        assignments.record();
    }

    void fallback(final FallbackCause cause) {
        fallbacks.record();
        final String tag = cause.name().toLowerCase(Locale.ROOT).replace('_', '-');
        sensor("fallbacks-" + tag, sensor -> sensor.add(new MetricName("fallbacks-total", FALLBACK_GROUP,
                "rebalances assigned locally for this cause", Map.of("client-id", groupId, "cause", tag)),
                new CumulativeCount())).record();
    }

    void rejected() {
        rejected.record();
    }

    private Sensor sensor(final String name, final java.util.function.Consumer<Sensor> metrics) {
        final String full = "kassign." + groupId + "." + name;
        synchronized (REGISTRY) {
            final Sensor existing = REGISTRY.getSensor(full);
            if (existing != null) {
                return existing;
            }
            final Sensor sensor = REGISTRY.sensor(full, new MetricConfig().timeWindow(30, TimeUnit.SECONDS));
            metrics.accept(sensor);
            return sensor;
        }
    }

    private static MetricName name(final String name, final String description, final Map<String, String> tags) {
        return new MetricName(name, GROUP, description, tags);
    }
}
