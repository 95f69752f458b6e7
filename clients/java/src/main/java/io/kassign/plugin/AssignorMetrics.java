package io.kassign.plugin;

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
 * The plug-ins' metrics, through Kafka's own metrics library and its JmxReporter, so they sit
 * beside Kafka's in JConsole or any JMX exporter.
 *
 * <p>MBeans (domain {@code kassign}, one per plug-in type and group id; TYPE is
 * {@code task-assignor} for Kafka Streams, {@code consumer-assignor} for plain consumers):
 * <ul>
 *   <li>{@code kassign:type=TYPE,client-id=GROUP}: {@code calls-total} (assignments asked of the
 *       service), {@code assignments-total} (answers used), {@code fallbacks-total},
 *       {@code call-latency-avg} and {@code call-latency-max} in ms (over Kafka's default sample
 *       window, two of 30 s), {@code rejected-assignments-total} (Kafka's own validation refused
 *       what the plug-in returned, seen in onAssignmentComputed); in shadow mode (issue 26,
 *       {@link ShadowCalls}) {@code shadow-ok-total}, {@code shadow-failed-total} and
 *       {@code shadow-dropped-total}, the calls made off the rebalance's path;</li>
 *   <li>{@code kassign:type=TYPE-fallbacks,client-id=GROUP,cause=CAUSE}:
 *       {@code fallbacks-total} per {@link FallbackCause}.</li>
 * </ul>
 *
 * <p>Why one registry per JVM: Kafka Streams creates and configures a new TaskAssignor for every
 * rebalance and never closes it (KIP-924 has no close), and a consumer never closes its assignors,
 * so metrics owned by an instance would be registered again and never removed. Sensors are created
 * once per name and then shared by every instance; the registry lives as long as the JVM.
 */
public final class AssignorMetrics {
    static final String JMX_DOMAIN = "kassign";
    /** The Kafka Streams plug-in's MBean type. */
    public static final String TASK_ASSIGNOR = "task-assignor";
    /** The consumer plug-in's MBean type. */
    public static final String CONSUMER_ASSIGNOR = "consumer-assignor";

    private static final Metrics REGISTRY = new Metrics(new MetricConfig(), List.of(new JmxReporter()),
            Time.SYSTEM, new KafkaMetricsContext(JMX_DOMAIN));

    private final String type;
    private final String groupId;
    private final Sensor calls;
    private final Sensor assignments;
    private final Sensor fallbacks;
    private final Sensor rejected;
    private final Sensor shadowOk;
    private final Sensor shadowFailed;
    private final Sensor shadowDropped;

    private AssignorMetrics(final String type, final String groupId) {
        this.type = type;
        this.groupId = groupId;
        final Map<String, String> tags = Map.of("client-id", groupId);
        calls = sensor("calls", sensor -> {
            sensor.add(name("calls-total", "assignments asked of the kassign service", tags), new CumulativeCount());
            sensor.add(name("call-latency-avg", "average time of a call to the kassign service, ms", tags), new Avg());
            sensor.add(name("call-latency-max", "longest call to the kassign service, ms", tags), new Max());
        });
        assignments = count("assignments", "rebalances assigned with the kassign service's answer", tags);
        fallbacks = count("fallbacks", "rebalances assigned locally because kassign could not be used", tags);
        rejected = count("rejected-assignments", "assignments Kafka's validation rejected", tags);
        shadowOk = count("shadow-ok", "shadow mode: kassign answered and its comparison was logged", tags);
        shadowFailed = count("shadow-failed", "shadow mode: calls to kassign that failed (nothing else changes)", tags);
        shadowDropped = count("shadow-dropped", "shadow mode: calls dropped, queued behind a slower one", tags);
    }

    /** A sensor counting into one metric, {@code NAME-total}. */
    private Sensor count(final String name, final String description, final Map<String, String> tags) {
        return sensor(name,
                sensor -> sensor.add(name(name + "-total", description, tags), new CumulativeCount()));
    }

    /** The metrics of one plug-in type and group, created on first use and shared by every instance after. */
    public static AssignorMetrics forGroup(final String type, final String groupId) {
        return new AssignorMetrics(type, groupId.isEmpty() ? "unknown" : groupId);
    }

    public void call(final long latencyMs) {
        calls.record(latencyMs);
    }

    public void assigned() {
        assignments.record();
    }

    public void fallback(final FallbackCause cause) {
        fallbacks.record();
        final String tag = cause.name().toLowerCase(Locale.ROOT).replace('_', '-');
        sensor("fallbacks-" + tag, sensor -> sensor.add(new MetricName("fallbacks-total", type + "-fallbacks",
                "rebalances assigned locally for this cause", Map.of("client-id", groupId, "cause", tag)),
                new CumulativeCount())).record();
    }

    public void rejected() {
        rejected.record();
    }

    public void shadowOk() {
        shadowOk.record();
    }

    public void shadowFailed() {
        shadowFailed.record();
    }

    public void shadowDropped() {
        shadowDropped.record();
    }

    private Sensor sensor(final String name, final java.util.function.Consumer<Sensor> metrics) {
        final String full = "kassign." + type + "." + groupId + "." + name;
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

    private MetricName name(final String name, final String description, final Map<String, String> tags) {
        return new MetricName(name, type, description, tags);
    }
}
