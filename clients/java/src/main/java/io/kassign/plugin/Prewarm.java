package io.kassign.plugin;

import io.kassign.client.KassignClient;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The JVM's one-time costs of a plug-in's first call, paid when the plug-in is configured rather
 * than inside its first {@code assign()} and its {@code kassign.deadline.ms}: on a daemon thread,
 * once per connection in the JVM, it makes the shared client (gRPC's and Netty's classes, the
 * channel), parses and encodes a message of each kind through the services' own marshallers
 * (protobuf's classes and the messages' descriptors), and passes one gRPC-shaped HTTP/2 exchange
 * between two of Netty's connection handlers in memory (the codec a connection uses).
 *
 * <p>Why nothing goes over the network: a grpc-java channel is lazy; made and never used, it
 * resolves no name, opens no connection and so never enters reconnect backoff, so a service that
 * is down (or not up yet) at configure cannot make the first rebalance's call fail faster or later
 * than it would have; and every consumer of an application configures the plug-in, while only the
 * group's leader ever calls. Why a thread: a broker or an application must not wait at start for
 * seconds of class loading. A first {@code assign()} that comes while it runs waits at most for
 * the part it needs (the client being made, a class being initialised), which it would have paid
 * itself, and the steps not yet begun are skipped ({@link #calling}). This class stays small so
 * that loading it (in configure) loads nothing else: the work is {@link Warming}'s, loaded on the
 * thread.
 */
public final class Prewarm {
    /** One daemon thread at most, gone when idle: a JVM has one or two connections. */
    private static final ExecutorService THREAD = new ThreadPoolExecutor(0, 1, 10, TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(), task -> {
                final Thread thread = new Thread(task, "kassign-prewarm");
                thread.setDaemon(true);
                return thread;
            });
    private static final Set<Connection> WARMED = ConcurrentHashMap.newKeySet();
    private static final Set<Connection> CALLING = ConcurrentHashMap.newKeySet();

    private Prewarm() {
    }

    /**
     * Starts warming for {@code connection} unless it has been warmed already in this JVM, and
     * returns at once; {@code client} makes (or finds) the plug-in's shared client for it. Which
     * connections were warmed is looked up on the thread too (a record's first hashing in a JVM
     * loads the classes of its generated methods). The future ends when the warming has, or was
     * found done before (tests); a failure is logged at DEBUG and left to the first call to meet,
     * and report, as it would have.
     */
    public static Future<?> start(final Connection connection, final Supplier<KassignClient> client) {
        return THREAD.submit(() -> {
            if (WARMED.add(connection)) {
                Warming.run(connection, client);
            }
        });
    }

    /**
     * Tells the warming of {@code connection} that a plug-in's {@code assign()} has begun: the steps
     * not yet started are skipped. Cheap; called at every {@code assign()}.
     */
    public static void calling(final Connection connection) {
        if (!CALLING.contains(connection)) {
            CALLING.add(connection);
        }
    }

    /** Whether an {@code assign()} on {@code connection} has begun. */
    static boolean overtaken(final Connection connection) {
        return CALLING.contains(connection);
    }
}
