package io.kassign.e2e;

import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.processor.StateRestoreListener;

/**
 * What the cluster benchmark (bench/cluster) reads from a Kafka Streams instance, measured by the
 * client itself: once a second one {@code BENCH} line of JSON with the state, the bytes its main
 * and restore consumers received per broker (NodeBytes), the changelog records restored so far
 * (a StateRestoreListener), the changelog partitions restoring now, and the main consumer's
 * records-lag summed over the input's partitions. The restore consumer also keeps standbys up to
 * date, so its bytes are restoration and standby upkeep together.
 */
final class BenchProbe {
    private BenchProbe() {}

    static void attach(KafkaStreams streams, String input, long everyMs) {
        AtomicLong restored = new AtomicLong();
        AtomicInteger restoring = new AtomicInteger();
        streams.setGlobalStateRestoreListener(new StateRestoreListener() {
            @Override
            public void onRestoreStart(TopicPartition p, String store, long start, long end) {
                restoring.incrementAndGet();
            }

            @Override
            public void onBatchRestored(TopicPartition p, String store, long batchEnd, long count) {
                restored.addAndGet(count);
            }

            @Override
            public void onRestoreEnd(TopicPartition p, String store, long total) {
                restoring.decrementAndGet();
            }

            @Override
            public void onRestoreSuspended(TopicPartition p, String store, long total) {
                restoring.decrementAndGet();
            }
        });
        ScheduledExecutorService every = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-probe");
            t.setDaemon(true);
            return t;
        });
        Runnable line = () -> {
            try {
                Map<MetricName, ? extends Metric> metrics = streams.metrics();
                System.out.println("BENCH {\"at\":" + System.currentTimeMillis()
                        + ",\"state\":\"" + streams.state() + "\""
                        + ",\"main\":" + NodeBytes.json(metrics, BenchProbe::main)
                        + ",\"restore\":" + NodeBytes.json(metrics, id -> id.endsWith("-restore-consumer"))
                        + ",\"restored\":" + restored.get()
                        + ",\"restoring\":" + Math.max(0, restoring.get())
                        + ",\"lag\":" + lag(metrics, input) + "}");
                System.out.flush();
            } catch (RuntimeException e) {
                // metrics() while the client closes: the next line will do
            }
        };
        every.scheduleWithFixedDelay(line, everyMs, everyMs, TimeUnit.MILLISECONDS);
        Runtime.getRuntime().addShutdownHook(new Thread(line)); // the last figures on SIGTERM
    }

    private static boolean main(String clientId) {
        return clientId.endsWith("-consumer") && !clientId.endsWith("-restore-consumer")
                && !clientId.endsWith("-global-consumer");
    }

    private static long lag(Map<MetricName, ? extends Metric> metrics, String input) {
        long total = 0;
        for (var entry : metrics.entrySet()) {
            MetricName name = entry.getKey();
            if (name.group().equals("consumer-fetch-manager-metrics") && name.name().equals("records-lag")
                    && input.equals(name.tags().get("topic")) && main(name.tags().getOrDefault("client-id", ""))
                    && entry.getValue().metricValue() instanceof Number n && !Double.isNaN(n.doubleValue())) {
                total += (long) n.doubleValue();
            }
        }
        return total;
    }
}
