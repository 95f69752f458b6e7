package io.kassign.plugin;

import java.time.Duration;

/**
 * When a plug-in's {@code assign()} must be done by: {@code kassign.deadline.ms} from its start.
 *
 * <p>Why the whole {@code assign()}, not only the call: a leader waits for all of it (reading its
 * group, building the request, the call, checking and converting the answer), and on a large group
 * the JVM's own share can exceed the call's. So the call gets only what is {@link #remaining} when
 * it starts, and the conversion {@link #check}s the clock as it goes; a plug-in that finds the
 * deadline passed falls back to Kafka's own assignor, as on any other failure, with cause
 * {@link FallbackCause#DEADLINE_EXCEEDED}.
 */
public final class Deadline {
    private final Duration bound;
    private final long endNanos;

    private Deadline(final Duration bound, final long startNanos) {
        this.bound = bound;
        this.endNanos = startNanos + bound.toNanos();
    }

    /** {@code bound} from {@code startNanos} (a {@link System#nanoTime} reading). */
    public static Deadline after(final Duration bound, final long startNanos) {
        return new Deadline(bound, startNanos);
    }

    /** The time left; zero or negative once passed. */
    public Duration remaining() {
        return Duration.ofNanos(endNanos - System.nanoTime());
    }

    /** The bound this deadline was made with. */
    public Duration bound() {
        return bound;
    }

    /**
     * Throws {@link Passed} if the deadline has passed; {@code stage} names what was being done.
     * Cheap enough (one {@link System#nanoTime}) to call once per member or client.
     */
    public void check(final String stage) {
        if (System.nanoTime() - endNanos > 0) {
            throw new Passed(bound, stage);
        }
    }

    /** The deadline passed in the plug-in's own work, before or after the call. */
    public static final class Passed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Passed(final Duration bound, final String stage) {
            super(Connection.DEADLINE_MS + " (" + bound.toMillis() + " ms) passed " + stage, null, false, false);
        }
    }
}
