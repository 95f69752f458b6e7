package io.kassign.streams;

import java.util.Map;

/**
 * A Kafka Streams application whose kassign target does not answer: its task assignor falls back
 * once (for {@link io.kassign.consumer.FallbackMain}, which runs under the JMX exporter's agent).
 */
public final class FallingBack {
    private FallingBack() {
    }

    /** One rebalance of {@link PluginTest#sampleApp()} for application {@code group}, refused at {@code port}. */
    public static void once(final String group, final int port) {
        PluginTest.assignor(Map.of("application.id", group, "kassign.target", "127.0.0.1:" + port,
                "kassign.deadline.ms", 60_000, "kassign.retry.max.attempts", 1)).assign(PluginTest.sampleApp());
    }
}
