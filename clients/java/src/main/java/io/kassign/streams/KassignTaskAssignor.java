package io.kassign.streams;

import io.kassign.client.KassignClient;
import io.kassign.v1.AssignRequest;
import io.kassign.v1.AssignResponse;
import java.io.File;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignor;

/**
 * A Kafka Streams {@link TaskAssignor} (KIP-924, Kafka 3.8+) that asks the kassign service.
 *
 * <p>Set {@code task.assignor.class=io.kassign.streams.KassignTaskAssignor} and the
 * {@code kassign.*} keys of {@link AssignorSettings} in the Streams configuration. Each rebalance
 * the group leader turns its {@link ApplicationState} into an AssignRequest ({@link StateToRequest}),
 * calls the service within {@code kassign.deadline.ms}, and returns the answer with the follow-up
 * rebalance deadlines the service chose ({@link ResponseToAssignment}).
 *
 * <p>The service must never break a rebalance: when it cannot be reached, answers with an error,
 * or answers something Kafka would reject, every client keeps its previous tasks and a follow-up
 * rebalance is scheduled after {@code kassign.fallback.followup.delay.ms} (immediately by default),
 * as Kafka does itself after a TaskAssignmentException ({@link PreviousAssignment}).
 */
public final class KassignTaskAssignor implements TaskAssignor {
    private static final System.Logger LOG = System.getLogger(KassignTaskAssignor.class.getName());

    private final Clock clock;
    private AssignorSettings settings = AssignorSettings.defaults();
    private KassignClient client;

    /** The constructor Kafka Streams calls (by reflection, from task.assignor.class). */
    public KassignTaskAssignor() {
        this(Clock.systemUTC());
    }

    /** With a chosen clock: follow-up deadlines count from it. */
    public KassignTaskAssignor(final Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    @Override
    public synchronized void configure(final Map<String, ?> configs) {
        settings = AssignorSettings.from(configs);
        closeClient();
    }

    /** The settings in force (after configure). */
    public synchronized AssignorSettings settings() {
        return settings;
    }

    @Override
    public TaskAssignment assign(final ApplicationState applicationState) {
        final Instant now = clock.instant();
        try {
            final Map<ProcessId, KafkaStreamsState> clients = applicationState.kafkaStreamsStates(true);
            final AssignRequest request = StateToRequest.convert(applicationState, clients, settings(), now);
            final AssignResponse response = client().assign(request);
            final TaskAssignment assignment = ResponseToAssignment.convert(
                    response, clients.keySet(), applicationState.allTasks().keySet());
            LOG.log(Level.DEBUG, () -> "kassign assignment: " + ResponseToAssignment.describe(assignment));
            return assignment;
        } catch (final RuntimeException | LinkageError e) {
            final Duration delay = settings().fallbackFollowupDelay();
            LOG.log(Level.WARNING, "kassign could not assign tasks (" + e + "); keeping the previous assignment "
                    + "and scheduling a follow-up rebalance in " + delay.toMillis() + " ms");
            return PreviousAssignment.keep(applicationState, now.plus(delay));
        }
    }

    private synchronized KassignClient client() {
        if (client == null) {
            final KassignClient.Builder builder = KassignClient.builder(settings.target())
                    .deadline(settings.deadline())
                    .maxAttempts(settings.maxAttempts())
                    .initialBackoff(settings.initialBackoff())
                    .maxBackoff(settings.initialBackoff().compareTo(Duration.ofSeconds(1)) > 0
                            ? settings.initialBackoff() : Duration.ofSeconds(1));
            if (settings.caFile().isPresent()) {
                builder.tls(new File(settings.caFile().get()));
            } else if (settings.tls()) {
                builder.tls();
            }
            client = builder.build();
        }
        return client;
    }

    private void closeClient() {
        if (client != null) {
            client.close();
            client = null;
        }
    }
}
