package io.kassign.broker;

import io.kassign.plugin.Connection;
import io.kassign.plugin.FallbackCause;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How both broker plug-ins keep the group coordinator's thread from waiting on kassign longer than
 * {@code kassign.deadline.ms}: the work (conversion, call, checks) runs on a daemon thread of a
 * shared pool, the coordinator's thread waits for it at most the deadline, then cancels it (an
 * interrupted gRPC call is cancelled) and learns why there is no answer.
 *
 * <p>Why a thread of its own: the gRPC deadline bounds the call alone, not a first call loading
 * classes, a stuck conversion or a pause before the call starts.
 */
final class BoundedCall {
    private static final AtomicInteger THREADS = new AtomicInteger();
    /** Daemon threads, made as needed and dropped after a minute idle. */
    private static final ExecutorService CALLS = Executors.newCachedThreadPool(task -> {
        final Thread thread = new Thread(task, "kassign-broker-call-" + THREADS.incrementAndGet());
        thread.setDaemon(true);
        return thread;
    });

    private BoundedCall() {
    }

    /** The task's value, or why there is none ({@code failure} set, {@code value} null). */
    record Outcome<T>(T value, Throwable failure) {
    }

    /**
     * Runs {@code task} and waits for it at most {@code deadline}. The failure is a {@link NoAnswer}
     * at the deadline, the task's own exception or Error, or the InterruptedException of an
     * interrupted wait (the thread's interrupt flag set again). Only a VirtualMachineError other
     * than StackOverflowError on the calling thread itself propagates.
     */
    static <T> Outcome<T> within(final Duration deadline, final Callable<T> task) {
        final Future<T> future;
        try {
            future = CALLS.submit(task);
        } catch (final RuntimeException | Error e) {
            if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
                throw e;
            }
            return new Outcome<>(null, e);
        }
        try {
            return new Outcome<>(future.get(deadline.toNanos(), TimeUnit.NANOSECONDS), null);
        } catch (final TimeoutException e) {
            future.cancel(true);
            return new Outcome<>(null, new NoAnswer(deadline));
        } catch (final InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            return new Outcome<>(null, e);
        } catch (final ExecutionException e) {
            return new Outcome<>(null, e.getCause());
        }
    }

    /** Runs {@code task} in the background (a warm-up), whose failures are its own to report. */
    static void background(final Runnable task) {
        CALLS.execute(task);
    }

    /** The metric's cause of a failure {@link #within} returned. */
    static FallbackCause cause(final Throwable failure) {
        return failure instanceof NoAnswer ? FallbackCause.DEADLINE_EXCEEDED : FallbackCause.of(failure);
    }

    /**
     * The failure as the WARN line shows it, on one line of at most 300 characters: a gRPC status
     * may carry its cause's whole stack trace in its description ("Connection refused ... at ...").
     */
    static String describe(final Throwable failure) {
        final String text = failure instanceof NoAnswer ? failure.getMessage() : FallbackCause.describe(failure);
        final String first = text.lines().findFirst().orElse("");
        return first.length() <= 300 ? first : first.substring(0, 297) + "...";
    }

    /** The deadline passed with the service's answer still to come. */
    static final class NoAnswer extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NoAnswer(final Duration deadline) {
            super("no answer within " + Connection.DEADLINE_MS + " (" + deadline.toMillis() + " ms)", null, false,
                    false);
        }
    }
}
