package io.kassign.broker;

import io.kassign.client.ClientSpec;
import io.kassign.client.KassignClient;
import io.kassign.client.RequestBuilder;
import io.kassign.client.TaskIds;
import io.kassign.client.TaskSpec;
import io.kassign.plugin.Connection;
import io.kassign.plugin.FallbackCause;
import io.kassign.plugin.SharedClients;
import io.kassign.v1.AssignRequest;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a first assignment would otherwise pay inside its deadline, paid at broker start on a
 * background thread, once per connection in the JVM (the coordinator configures its assignors
 * many times): a small call to the service under the group id {@value #GROUP_ID} on a throwaway
 * channel with a long deadline, which loads gRPC's and the messages' classes and warms the service,
 * then the same on the shared channel, which opens it; and Kafka's StickyTaskAssignor loaded for the
 * fallback. Measured on the e2e brokers: the first call of a starting broker took 1.3 to 1.7 s.
 */
final class Warmup {
    /** The group id of the warm-up call, so the service's logs and journal tell it apart. */
    static final String GROUP_ID = "kassign-warm-up";

    private static final Logger LOG = LoggerFactory.getLogger(Warmup.class);
    /** The first call's deadline: a broker starting up loads classes slowly (1.3 to 1.7 s seen). */
    private static final Duration WARM_UP_DEADLINE = Duration.ofSeconds(10);
    private static final Set<Connection> DONE = ConcurrentHashMap.newKeySet();

    private Warmup() {
    }

    static void run(final StreamsSettings settings) {
        if (!DONE.add(settings.connection())) {
            return;
        }
        final long started = System.nanoTime();
        try {
            new StickyTaskAssignor().name();
            final AssignRequest request = RequestBuilder.forGroup(GROUP_ID)
                    .task(TaskSpec.of(TaskIds.of(0, 0), true).changelogEndOffsetSum(1))
                    .client(ClientSpec.process(new UUID(0, 1)).consumers("warm-up").tag("zone", "a")
                            .offsetSum("warm-up", TaskIds.of(0, 0), 1))
                    .build();
            final Connection connection = settings.connection();
            final Connection patient = new Connection(connection.target(), WARM_UP_DEADLINE, connection.maxAttempts(),
                    connection.initialBackoff(), connection.tls(), connection.caFile(), connection.clientCert(),
                    connection.clientKey());
            try (KassignClient client = patient.build()) {
                client.assign(request);  // a starting broker's JVM is slow: classes load, the service warms
            }
            SharedClients.waitingForReady(connection).assign(request);  // within the deadline: opens the shared channel
            LOG.info("kassign: the streams assignor's warm-up call to {} answered in {} ms",
                    settings.connection().target(), (System.nanoTime() - started) / 1_000_000L);
        } catch (final Exception | LinkageError e) {
            LOG.warn("kassign: the streams assignor's warm-up call to {} failed in {} ms: {}",
                    settings.connection().target(), (System.nanoTime() - started) / 1_000_000L,
                    FallbackCause.describe(e));
        }
    }
}
