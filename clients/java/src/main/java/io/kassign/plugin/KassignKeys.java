package io.kassign.plugin;

import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.config.ConfigException;
import org.slf4j.Logger;

/**
 * Mistakes in a plug-in's configuration found at configure() time rather than at the first
 * rebalance: an assignor name the service does not know is Kafka's ConfigException (the
 * application or broker does not start); a {@code kassign.*} key no kassign plug-in reads is one
 * WARN line naming the closest known key (a typo would otherwise silently keep the default).
 *
 * <p>Why every plug-in checks against every plug-in's keys: a broker's configuration holds both
 * broker-side plug-ins' keys, and a Streams application's holds its consumer's, so a key is only
 * a mistake when no kassign plug-in reads it.
 */
public final class KassignKeys {
    /** Every key a kassign plug-in reads. */
    public static final Set<String> KNOWN = Set.of(
            Connection.TARGET, Connection.DEADLINE_MS, Connection.RETRY_MAX_ATTEMPTS, Connection.RETRY_BACKOFF_MS,
            Connection.TLS, Connection.TLS_CA_FILE, Connection.TLS_CLIENT_CERT, Connection.TLS_CLIENT_KEY,
            Connection.TIME_BUDGET_MS, "kassign.assignor", "kassign.group.id", "kassign.fallback.followup.delay.ms",
            "kassign.consumer.assignor", "kassign.consumer.rebalance.protocol", "kassign.consumer.co.partitioned",
            "kassign.consumer.group.id", "kassign.streams.assignor", "kassign.streams.group.id",
            "kassign.standby.rack.spread", Balancing.KEY, Balancing.CONSUMER_KEY, Balancing.STREAMS_KEY,
            Mode.KEY, Mode.CONSUMER_KEY, Mode.STREAMS_KEY);
    /**
     * Prefixes of keys a plug-in reads whole: the broker consumer plug-in's Admin client for topic
     * names ({@code kassign.topic.names.bootstrap.servers} and any Admin config after the prefix).
     */
    public static final List<String> KNOWN_PREFIXES = List.of("kassign.topic.names.");
    /** The service's consumer-group assignors (assignor/consumer/api.py), one spelling each. */
    public static final List<String> CONSUMER_ASSIGNORS =
            List.of("cooperative-sticky", "rack-optimal", "range", "roundrobin", "sticky");
    /** The service's Kafka Streams assignors (assignor/streams/api.py), one spelling each. */
    public static final List<String> STREAMS_ASSIGNORS = List.of("high_availability", "sticky");

    /** Keys warned about already: Kafka Streams configures a new plug-in instance every rebalance. */
    private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();

    private KassignKeys() {
    }

    /** One WARN line, once per JVM, for each {@code kassign.*} key in {@code configs} no plug-in reads. */
    public static void warnUnknown(final Map<String, ?> configs, final Logger log) {
        for (final String key : new TreeSet<>(configs.keySet())) {
            if (key.startsWith("kassign.") && !KNOWN.contains(key)
                    && KNOWN_PREFIXES.stream().noneMatch(key::startsWith) && WARNED.add(key)) {
                log.warn("kassign: unknown configuration key {}{}; it is ignored", key,
                        closest(key, KNOWN).map(k -> " (did you mean " + k + "?)").orElse(""));
            }
        }
    }

    /**
     * The assignor named under {@code key}, when set, if the service knows it; otherwise Kafka's
     * ConfigException naming the known ones and, for the other spelling or a near miss, the one meant.
     */
    public static Optional<String> assignor(final Map<String, ?> configs, final String key, final List<String> known) {
        final Optional<String> name = ConfigValues.text(configs, key);
        name.filter(n -> !known.contains(n)).ifPresent(n -> {
            final Optional<String> meant = known.stream()
                    .filter(k -> fold(k).equals(fold(n))).findFirst().or(() -> closest(n, known));
            throw new ConfigException(key, n, "unknown assignor" + meant.map(m -> "; did you mean " + m + "?")
                    .orElse("") + " (known: " + String.join(", ", known) + ")");
        });
        return name;
    }

    private static String fold(final String name) {
        return name.replace('_', '-').toLowerCase(Locale.ROOT);
    }

    /**
     * The known name nearest {@code name} by edit distance, if within a third of its length after
     * the shared {@code kassign.} prefix (so three letters are not "near" any three others).
     */
    static Optional<String> closest(final String name, final Iterable<String> known) {
        final Comparator<String> nearest = Comparator.<String>comparingInt(k -> distance(name, k))
                .thenComparing(Comparator.naturalOrder());
        final TreeSet<String> byDistance = new TreeSet<>(nearest);
        known.forEach(byDistance::add);
        return Optional.ofNullable(byDistance.isEmpty() ? null : byDistance.first())
                .filter(k -> distance(name, k) <= Math.max(1, name.replaceFirst("^kassign\\.", "").length() / 3));
    }

    /** Levenshtein distance. */
    static int distance(final String a, final String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                final int substitute = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitute, Math.min(previous[j], current[j - 1]) + 1);
            }
            final int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
