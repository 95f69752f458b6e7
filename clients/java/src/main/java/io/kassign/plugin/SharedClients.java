package io.kassign.plugin;

import io.kassign.client.KassignClient;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One client (one gRPC channel) per distinct {@link Connection} in the JVM, made on first use.
 *
 * <p>Why shared: an application may run many consumers, each with its own assignor instance, and
 * Kafka never closes an assignor (ConsumerPartitionAssignor has no close); a channel per instance
 * would leak one per consumer ever created. Channels are cheap to keep and reconnect lazily.
 */
public final class SharedClients {
    private static final Map<Connection, KassignClient> CLIENTS = new ConcurrentHashMap<>();
    private static final Map<Connection, KassignClient> WAITING = new ConcurrentHashMap<>();

    private SharedClients() {
    }

    /** The client for {@code connection}, made once. */
    public static KassignClient of(final Connection connection) {
        return CLIENTS.computeIfAbsent(connection, Connection::build);
    }

    /**
     * The client for {@code connection} whose calls wait for the channel to (re)connect within the
     * deadline ({@link KassignClient.Builder#waitForReady}), made once: for the broker plug-ins,
     * called rarely with a short deadline.
     */
    public static KassignClient waitingForReady(final Connection connection) {
        return WAITING.computeIfAbsent(connection, c -> c.builder().waitForReady(true).build());
    }

    /** Closes every shared client (tests; an application that unloads the plug-in). */
    public static void closeAll() {
        for (final Map<Connection, KassignClient> clients : java.util.List.of(CLIENTS, WAITING)) {
            clients.values().removeIf(client -> {
                client.close();
                return true;
            });
        }
    }
}
