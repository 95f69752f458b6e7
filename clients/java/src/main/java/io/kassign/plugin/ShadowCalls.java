package io.kassign.plugin;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;

/**
 * Shadow mode's calls to kassign (issue 26), off the rebalance's path: the plug-in has already
 * returned Kafka's own answer when its call runs here, on a daemon thread, under the usual
 * {@code kassign.deadline.ms}.
 *
 * <p>Bounded, per plug-in type and group (Kafka Streams makes a new KIP-924 plug-in every
 * rebalance, so an instance alone would bound nothing): one call in flight, {@link #WAITING} more
 * waiting; when a new one comes to a full queue the oldest waiting one is dropped (the newest
 * rebalance is the one worth comparing), counted ({@code shadow-dropped-total}) and logged at
 * most once a minute. A call's outcome is one INFO line ({@code kassign shadow: ...}, the text
 * the call returns) or one WARN line, and a count: it never reaches the group.
 */
public final class ShadowCalls {
    /** Calls waiting behind the one in flight, at most. */
    public static final int WAITING = 2;
    private static final long DROP_LOG_NANOS = Duration.ofMinutes(1).toNanos();
    private static final Map<String, ShadowCalls> SHARED = new ConcurrentHashMap<>();
    private static final AtomicInteger THREADS = new AtomicInteger();
    /** Daemon threads, made as needed and dropped after a minute idle; one per busy group at most. */
    private static final ExecutorService POOL = Executors.newCachedThreadPool(task -> {
        final Thread thread = new Thread(task, "kassign-shadow-" + THREADS.incrementAndGet());
        thread.setDaemon(true);
        return thread;
    });

    private final String group;
    private final ArrayDeque<Call> waiting = new ArrayDeque<>();
    private boolean running;
    private long droppedUnlogged;
    private long lastDropLog = System.nanoTime() - DROP_LOG_NANOS;

    private ShadowCalls(final String group) {
        this.group = group;
    }

    /** The queue of one plug-in type and group, made once. */
    public static ShadowCalls of(final String type, final String group) {
        return SHARED.computeIfAbsent(type + "\u0000" + group, key -> new ShadowCalls(group));
    }

    /**
     * Prepares a shadow call on the rebalance's path ({@code prepare}: what must be read there,
     * cheaply; it returns the work) and queues it for group {@code group} of plug-in type {@code type}.
     * Never throws, but a VirtualMachineError: a failure is one WARN line and
     * {@code shadow-failed-total}, and Kafka's answer stands.
     */
    public static void send(final String type, final String group, final Callable<Callable<String>> prepare,
                            final AssignorMetrics metrics, final Logger log) {
        try {
            of(type, group).submit(prepare.call(), metrics, log);
        } catch (final VirtualMachineError e) {
            if (!(e instanceof StackOverflowError)) {
                throw e;
            }
            notSent(group, metrics, log, e);
        } catch (final Exception | Error e) {
            notSent(group, metrics, log, e);
        }
    }

    private static void notSent(final String group, final AssignorMetrics metrics, final Logger log,
                                final Throwable failure) {
        metrics.shadowFailed();
        log.warn("kassign shadow: the call for group {} was not sent, which changes nothing: {}", group,
                failure.toString());
    }

    /** One shadow call: its work, and where its outcome is told. */
    private record Call(Callable<String> work, AssignorMetrics metrics, Logger log) {
    }

    /**
     * Queues {@code work}, which builds the request, calls kassign and returns the line to log
     * after {@code kassign shadow: }; returns at once. Never throws, but a VirtualMachineError.
     */
    public void submit(final Callable<String> work, final AssignorMetrics metrics, final Logger log) {
        final boolean start;
        long dropped = 0;
        synchronized (this) {
            if (waiting.size() >= WAITING) {
                waiting.pollFirst();
                metrics.shadowDropped();
                droppedUnlogged++;
                if (System.nanoTime() - lastDropLog >= DROP_LOG_NANOS) {
                    dropped = droppedUnlogged;
                    droppedUnlogged = 0;
                    lastDropLog = System.nanoTime();
                }
            }
            waiting.addLast(new Call(work, metrics, log));
            start = !running;
            running = true;
        }
        if (dropped > 0) {
            log.warn("kassign shadow: dropped {} call(s) of group {} waiting behind a slower one (one in flight and {} "
                    + "waiting at most; logged once a minute, counted in shadow-dropped-total)", dropped, group, WAITING);
        }
        if (start) {
            try {
                POOL.execute(this::drain);
            } catch (final RuntimeException | Error e) {
                if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
                    throw e;
                }
                synchronized (this) {
                    waiting.clear();
                    running = false;
                    notifyAll();
                }
                metrics.shadowFailed();
                log.warn("kassign shadow: could not start the call of group {}: {}", group, e.toString());
            }
        }
    }

    private void drain() {
        while (true) {
            final Call next;
            synchronized (this) {
                next = waiting.pollFirst();
                if (next == null) {
                    running = false;
                    notifyAll();
                    return;
                }
            }
            try {
                run(next);
            } catch (final VirtualMachineError e) { // out of memory: the next call starts a thread again
                synchronized (this) {
                    running = false;
                    notifyAll();
                }
                throw e;
            }
        }
    }

    private void run(final Call call) {
        try {
            final String line = call.work().call();
            call.metrics().shadowOk();
            call.log().info("kassign shadow: {}", line);
        } catch (final VirtualMachineError e) {
            if (!(e instanceof StackOverflowError)) {
                throw e;
            }
            failed(call, e);
        } catch (final Exception | Error e) {
            failed(call, e);
        }
    }

    private void failed(final Call call, final Throwable failure) {
        call.metrics().shadowFailed();
        final String text = FallbackCause.describe(failure).lines().findFirst().orElse("");
        call.log().warn("kassign shadow: the call for group {} failed, which changes nothing: {}", group,
                text.length() <= 300 ? text : text.substring(0, 297) + "...");
        call.log().debug("kassign shadow failure", failure);
    }

    /** Waits until no call of this queue is in flight or waiting; false if {@code timeout} passed first (tests). */
    public boolean awaitIdle(final Duration timeout) throws InterruptedException {
        final long end = System.nanoTime() + timeout.toNanos();
        synchronized (this) {
            while (running) {
                final long left = end - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                wait(Math.max(1, left / 1_000_000L));
            }
            return true;
        }
    }
}
