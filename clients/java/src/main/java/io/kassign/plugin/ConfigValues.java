package io.kassign.plugin;

import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.config.ConfigException;

/**
 * Reads one {@code kassign.*} key from the map Kafka hands a plug-in's configure(): values may be
 * strings (a properties file) or numbers and booleans (a map built in code); a malformed one is
 * Kafka's ConfigException naming the key, so the application fails at start-up, not mid-rebalance.
 */
public final class ConfigValues {
    private ConfigValues() {
    }

    /** The trimmed value, empty when unset or blank. */
    public static Optional<String> text(final Map<String, ?> configs, final String key) {
        final Object value = configs.get(key);
        if (value == null || value.toString().isBlank()) {
            return Optional.empty();
        }
        return Optional.of(value.toString().trim());
    }

    /** A whole number of at least {@code min}, empty when unset. */
    public static Optional<Long> number(final Map<String, ?> configs, final String key, final long min) {
        final Optional<String> text = text(configs, key);
        if (text.isEmpty()) {
            return Optional.empty();
        }
        final long value;
        try {
            value = Long.parseLong(text.get());
        } catch (final NumberFormatException e) {
            throw new ConfigException(key, text.get(), "must be a whole number");
        }
        if (value < min) {
            throw new ConfigException(key, value, "must be at least " + min);
        }
        return Optional.of(value);
    }

    /** true or false (any case); false when unset. */
    public static boolean bool(final Map<String, ?> configs, final String key) {
        final Optional<String> text = text(configs, key);
        if (text.isEmpty()) {
            return false;
        }
        return switch (text.get().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new ConfigException(key, text.get(), "must be true or false");
        };
    }
}
