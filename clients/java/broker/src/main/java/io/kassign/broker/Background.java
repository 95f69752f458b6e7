package io.kassign.broker;

import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The daemon thread the Admin-backed lookups ({@link TopicNames}, {@link StreamsSources}) work on,
 * off the rebalance path, and their one-at-a-time scheduling: an ask or a retry is pending at most
 * once, so a burst of rebalances makes one Admin call, not one each.
 */
final class Background {
    private Background() {
    }

    /** A single daemon thread named {@code name}: it never holds the broker up at shutdown. */
    static ScheduledExecutorService daemon(final String name) {
        return Executors.newSingleThreadScheduledExecutor(r -> {
            final Thread thread = new Thread(r, name);
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Runs {@code task} in {@code delayMs} unless one is pending already ({@code pending} set: the
     * task clears it when it starts) or the thread is stopped.
     */
    static void once(final ScheduledExecutorService thread, final AtomicBoolean pending, final Runnable task,
                     final long delayMs) {
        if (!thread.isShutdown() && pending.compareAndSet(false, true)) {
            try {
                thread.schedule(task, delayMs, TimeUnit.MILLISECONDS);
            } catch (final RejectedExecutionException e) { // stopped meanwhile
                pending.set(false);
            }
        }
    }
}
