package io.kassign.broker;

import io.kassign.plugin.ConfigValues;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.TopicListing;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigException;

/**
 * The opt-in {@code kassign.topic.names.*} keys: where the consumer plug-in lists topics to name
 * the ids the broker API gives (Kafka's Admin client, {@link TopicNames}), and one shared
 * {@link TopicNames} per distinct setting in the broker, counted by the plug-in instances that use
 * it and closed with the last.
 *
 * <p>{@value #BOOTSTRAP} turns it on; {@value #REFRESH_MS} (default 300000) is how often the
 * names are listed again besides when a group names an unknown id; every other
 * {@code kassign.topic.names.X} key is the Admin client's {@code X} (security.protocol,
 * sasl.jaas.config, ssl.truststore.location, ...). The principal needs DESCRIBE on the topics
 * (listTopics leaves out the others, whose ids stay unnamed).
 *
 * @param admin the Admin client's configs, prefix removed
 * @param refreshMs how often the names are listed again
 */
record AdminTopicNames(Map<String, Object> admin, long refreshMs) {
    static final String PREFIX = "kassign.topic.names.";
    static final String BOOTSTRAP = PREFIX + AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG;
    static final String REFRESH_MS = PREFIX + "refresh.ms";
    static final long DEFAULT_REFRESH_MS = 300_000L;
    /** The least time between two listings a group's unknown id asks for. */
    static final long MIN_GAP_MS = 5_000L;
    /** One listing's bound (the Admin's own timeout). */
    static final int LIST_TIMEOUT_MS = 30_000;

    private static final Map<AdminTopicNames, Shared> SHARED = new HashMap<>();

    /** The names' users, the names, the streams groups' sources (made on first use) and their one Admin client. */
    private static final class Shared {
        final SharedAdmin admin;
        final TopicNames names;
        StreamsSources sources;
        int users;

        Shared(final SharedAdmin admin, final TopicNames names) {
            this.admin = admin;
            this.names = names;
        }
    }

    /** The setting, when {@value #BOOTSTRAP} is set; a malformed refresh is ConfigException. */
    static Optional<AdminTopicNames> from(final Map<String, ?> configs, final String node) {
        if (ConfigValues.text(configs, BOOTSTRAP).isEmpty()) {
            return Optional.empty();
        }
        final Map<String, Object> admin = new TreeMap<>();
        admin.put(AdminClientConfig.CLIENT_ID_CONFIG, "kassign-topic-names-broker-" + node);
        // Kafka 4's default, rebootstrap, loops (tens of thousands of INFO lines a minute, seen in
        // the e2e) while the listener refuses connections, as at broker start; the bootstrap is the
        // only address there is to go back to anyway
        admin.put(AdminClientConfig.METADATA_RECOVERY_STRATEGY_CONFIG, "none");
        configs.forEach((key, value) -> {
            if (key.startsWith(PREFIX) && !key.equals(REFRESH_MS) && value != null) {
                admin.put(key.substring(PREFIX.length()), value);
            }
        });
        final long refresh = ConfigValues.number(configs, REFRESH_MS, 1_000L).orElse(DEFAULT_REFRESH_MS);
        return Optional.of(new AdminTopicNames(Map.copyOf(admin), refresh));
    }

    /**
     * The broker's names for this setting, made on first use (its Admin client is made on the
     * refresher's thread at the first listing, so a bootstrap not resolvable yet delays names only);
     * a value the Admin client refuses is ConfigException naming the prefix.
     */
    TopicNames acquire() {
        synchronized (SHARED) {
            final Shared shared = shared();
            shared.users++;
            return shared.names;
        }
    }

    /**
     * The broker's streams groups' source topics for this setting (the streams plug-in under
     * LOAD), on the same Admin client as the names; its describing starts on first use. Released
     * by {@link #release}, as the names are.
     */
    StreamsSources acquireSources() {
        synchronized (SHARED) {
            final Shared shared = shared();
            if (shared.sources == null) {
                shared.sources = new StreamsSources(new StreamsGroupDescribing(shared.admin), refreshMs,
                        MIN_GAP_MS, StreamsSources.ASK_DELAY_MS, () -> System.nanoTime() / 1_000_000L);
            }
            shared.users++;
            return shared.sources;
        }
    }

    private Shared shared() {
        return SHARED.computeIfAbsent(this, s -> {
            s.check();
            final SharedAdmin made = new SharedAdmin(s.admin());
            final TopicNames names = new TopicNames(new Listing(made), s.refreshMs(), MIN_GAP_MS,
                    () -> System.nanoTime() / 1_000_000L);
            names.start();
            return new Shared(made, names);
        });
    }

    /** One user less; the last closes the names, the sources and their Admin client. */
    void release() {
        synchronized (SHARED) {
            final Shared shared = SHARED.get(this);
            if (shared != null && --shared.users <= 0) {
                SHARED.remove(this);
                shared.names.close();
                if (shared.sources != null) {
                    shared.sources.close();
                }
                shared.admin.close();
            }
        }
    }

    private void check() {
        try {
            new AdminClientConfig(admin);
        } catch (final ConfigException e) {
            throw new ConfigException(PREFIX + "*: " + e.getMessage());
        }
    }

    /** Kafka's Admin client's listTopics, internal topics included, on the setting's one client. */
    private static final class Listing implements TopicNames.Source {
        private final SharedAdmin admin;

        Listing(final SharedAdmin admin) {
            this.admin = admin;
        }

        @Override
        public Map<Uuid, String> list() throws Exception {
            final Map<Uuid, String> names = new HashMap<>();
            for (final TopicListing topic : admin.get().listTopics(new ListTopicsOptions().listInternal(true)
                    .timeoutMs(LIST_TIMEOUT_MS)).listings().get(LIST_TIMEOUT_MS + 1_000L, TimeUnit.MILLISECONDS)) {
                names.put(topic.topicId(), topic.name());
            }
            return names;
        }

        @Override
        public void close() {
            // the Admin client is the setting's, closed by its last user (release)
        }
    }
}
