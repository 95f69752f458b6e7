package io.kassign.broker;

import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;

/**
 * One Kafka Admin client per {@code kassign.topic.names.*} setting, shared by the topic names'
 * listing and the streams groups' describing ({@link AdminTopicNames}): made on first use, on the
 * background thread that needs it (a bootstrap not resolvable yet delays only that use), closed
 * once by the setting's last user.
 */
final class SharedAdmin implements AutoCloseable {
    private final Map<String, Object> configs;
    private Admin admin;
    private boolean closed;

    SharedAdmin(final Map<String, Object> configs) {
        this.configs = configs;
    }

    /** The client, made now if not yet; IllegalStateException once closed. */
    synchronized Admin get() {
        if (closed) {
            throw new IllegalStateException("kassign's Admin client is closed");
        }
        if (admin == null) {
            admin = Admin.create(configs);
        }
        return admin;
    }

    /** Closes the client without waiting: a call in flight is abandoned, nothing waits for it. */
    @Override
    public void close() {
        final Admin made;
        synchronized (this) {
            closed = true;
            made = admin;
            admin = null;
        }
        if (made != null) {
            made.close(Duration.ZERO);
        }
    }
}
