package io.kassign.plugin;

import static io.kassign.plugin.ConfigValues.text;

import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.config.ConfigException;

/**
 * What a plug-in does with kassign (issue 26), for all four plug-ins: {@code kassign.mode} =
 * {@code assign} (the default: kassign's answer is the group's) or {@code shadow} (the group gets
 * Kafka's own assignor's answer, the one the plug-in falls back to, at once; kassign is asked off
 * the rebalance's path, Kafka's answer attached, and its comparison logged: {@link ShadowCalls}).
 * As {@link Balancing} does, {@code kassign.consumer.mode} for the two consumer plug-ins and
 * {@code kassign.streams.mode} for the two Streams ones win over it: one broker's
 * server.properties configures both broker plug-ins.
 */
public enum Mode {
    /** kassign assigns; Kafka's assignor only on failure. */
    ASSIGN,
    /** Kafka's assignor assigns; kassign is asked in the background and compared. */
    SHADOW;

    /** Read by every plug-in, when its kind's key below is unset. */
    public static final String KEY = "kassign.mode";
    /** The consumer plug-ins' own (classic and broker-side). */
    public static final String CONSUMER_KEY = "kassign.consumer.mode";
    /** The Streams plug-ins' own (KIP-924 and broker-side). */
    public static final String STREAMS_KEY = "kassign.streams.mode";

    /** A Streams plug-in's mode: {@code kassign.streams.mode}, else {@code kassign.mode}. */
    public static Mode forStreams(final Map<String, ?> configs) {
        return from(configs, STREAMS_KEY, KEY);
    }

    /** A consumer plug-in's mode: {@code kassign.consumer.mode}, else {@code kassign.mode}. */
    public static Mode forConsumers(final Map<String, ?> configs) {
        return from(configs, CONSUMER_KEY, KEY);
    }

    /**
     * The first of {@code keys} that is set, read as assign or shadow (any case); ASSIGN when none is.
     *
     * @throws ConfigException naming the key, for any other value
     */
    static Mode from(final Map<String, ?> configs, final String... keys) {
        for (final String key : keys) {
            final Optional<String> value = text(configs, key);
            if (value.isPresent()) {
                return switch (value.get().trim().toLowerCase(Locale.ROOT)) {
                    case "assign" -> ASSIGN;
                    case "shadow" -> SHADOW;
                    default -> throw new ConfigException(key, value.get(), "must be assign or shadow");
                };
            }
        }
        return ASSIGN;
    }
}
