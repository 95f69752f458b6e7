package io.kassign.broker;

import java.util.Objects;
import java.util.function.Function;

/**
 * One plug-in instance's use of what a {@code kassign.topic.names.*} setting shares in the broker
 * ({@link TopicNames}, {@link StreamsSources}): acquired when configure names a setting, the one
 * held before released (the coordinator configures instances again and again), released by close.
 *
 * @param <T> what is shared
 */
final class AdminUse<T> {
    private final Function<AdminTopicNames, T> acquire;
    /** The setting {@link #value} was acquired for; guarded by this. */
    private AdminTopicNames held;
    private volatile T value;

    AdminUse(final Function<AdminTopicNames, T> acquire) {
        this.acquire = acquire;
    }

    /** Acquires the shared value of {@code wanted} (null: none) and releases the one held before. */
    synchronized void use(final AdminTopicNames wanted) {
        if (Objects.equals(wanted, held)) {
            return;
        }
        final T acquired = wanted == null ? null : acquire.apply(wanted);
        if (held != null) {
            held.release();
        }
        held = wanted;
        value = acquired;
    }

    /** The value in use, else null. */
    T get() {
        return value;
    }
}
