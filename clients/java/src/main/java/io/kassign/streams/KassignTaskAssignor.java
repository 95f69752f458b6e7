package io.kassign.streams;

import io.kassign.client.KassignClient;
import io.kassign.plugin.AssignorMetrics;
import io.kassign.plugin.Balancing;
import io.kassign.plugin.Connection;
import io.kassign.plugin.Deadline;
import io.kassign.plugin.FallbackCause;
import io.kassign.plugin.KassignKeys;
import io.kassign.plugin.Mode;
import io.kassign.plugin.Prewarm;
import io.kassign.plugin.ShadowCalls;
import io.kassign.plugin.ShadowLine;
import io.kassign.v1.AssignRequest;
import io.kassign.v1.AssignResponse;
import io.kassign.v1.AssignmentReport;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignmentUtils;
import org.apache.kafka.streams.processor.assignment.TaskAssignor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Kafka Streams {@link TaskAssignor} (KIP-924, Kafka 3.8+) that asks the kassign service.
 *
 * <p>Set {@code task.assignor.class=io.kassign.streams.KassignTaskAssignor} and the
 * {@code kassign.*} keys of {@link AssignorSettings} in the Streams configuration. Each rebalance
 * the group leader turns its {@link ApplicationState} into an AssignRequest ({@link StateToRequest}),
 * calls the service, checks the answer with Kafka's own validation, and returns it with the
 * follow-up rebalance deadlines the service chose ({@link ResponseToAssignment}); one INFO line says
 * {@code kassign assigned ...}. {@code kassign.deadline.ms} bounds all of that, not only the call
 * ({@link Deadline}): the call gets what building the request left, and an answer checked after the
 * deadline is not used.
 *
 * <p>The service must never break a rebalance. On any failure (unreachable, deadline, an error
 * status, an answer Kafka would reject, any exception, a LinkageError or other Error) the
 * rebalance is assigned locally by Kafka's StickyTaskAssignor and every client is asked for a
 * follow-up rebalance after {@code kassign.fallback.followup.delay.ms} ({@link LocalFallback});
 * one WARN line says {@code kassign fallback: CAUSE; ...}, and {@link AssignorMetrics} counts it.
 * Only a VirtualMachineError other than StackOverflowError (out of memory, an internal JVM error)
 * is left to propagate: nothing sensible can be computed then.
 *
 * <p>With {@code kassign.mode=shadow} ({@link Mode}) the group gets Kafka's StickyTaskAssignor's
 * answer at once, without follow-up rebalances, and kassign's is only asked for and compared in the
 * background ({@link ShadowCall}, {@link ShadowCalls}): one INFO line {@code kassign shadow: ...}.
 *
 * <p>Kafka Streams creates and configures a new instance for every rebalance and never closes it,
 * so the gRPC channel is shared by all instances of one group id (reconfiguring with other
 * connection settings closes the old one), and so are the metrics.
 */
public final class KassignTaskAssignor implements TaskAssignor {
    private static final Logger LOG = LoggerFactory.getLogger(KassignTaskAssignor.class);
    private static final Map<String, SharedClient> CLIENTS = new ConcurrentHashMap<>();

    private final Clock clock;
    private volatile AssignorSettings settings = AssignorSettings.defaults();
    private volatile AssignorMetrics metrics = AssignorMetrics.forGroup(AssignorMetrics.TASK_ASSIGNOR, "");

    /** The constructor Kafka Streams calls (by reflection, from task.assignor.class). */
    public KassignTaskAssignor() {
        this(Clock.systemUTC());
    }

    /** With a chosen clock: follow-up deadlines count from it. */
    public KassignTaskAssignor(final Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** Reads the kassign.* keys; a malformed one throws Kafka's ConfigException naming it. */
    @Override
    public void configure(final Map<String, ?> configs) {
        final AssignorSettings read = AssignorSettings.from(configs);
        KassignKeys.warnUnknown(configs, LOG);
        settings = read;
        metrics = AssignorMetrics.forGroup(AssignorMetrics.TASK_ASSIGNOR, read.groupId());
        Prewarm.start(read.connection(), () -> warmClient(read));
    }

    /** The settings in force (after configure). */
    public AssignorSettings settings() {
        return settings;
    }

    @Override
    public TaskAssignment assign(final ApplicationState applicationState) {
        final AssignorSettings current = settings;
        final Instant now = clock.instant();
        if (current.mode() == Mode.SHADOW) {
            return shadow(applicationState, current, now);
        }
        final long started = System.nanoTime();
        final Deadline deadline = Deadline.after(current.deadline(), started);
        Prewarm.calling(current.connection());
        try {
            final Map<ProcessId, KafkaStreamsState> clients = applicationState.kafkaStreamsStates(true);
            final AssignRequest request = StateToRequest.convert(applicationState, clients, current, now, deadline);
            final KassignClient client = client(current);
            deadline.check("before the call");
            final AssignResponse response;
            try {
                response = client.assign(request, deadline.remaining());
            } finally {
                metrics.call(elapsedMs(started));
            }
            final TaskAssignment assignment = ResponseToAssignment.convert(
                    response, clients.keySet(), applicationState.allTasks().keySet());
            final AssignmentError error = TaskAssignmentUtils.validateTaskAssignment(applicationState, assignment);
            if (error != AssignmentError.NONE) {
                throw new ResponseToAssignment.InvalidResponse("Kafka's validation says " + error);
            }
            deadline.check("while checking the answer");
            metrics.assigned();
            final AssignmentReport report = response.getReport();
            LOG.info("kassign assigned group {}: {} tasks to {} clients in {} ms ({}){}", current.groupId(),
                    applicationState.allTasks().size(), clients.size(), elapsedMs(started),
                    ResponseToAssignment.describe(assignment), Balancing.describe(current.balance(), report));
            return assignment;
        } catch (final VirtualMachineError e) {
            if (!(e instanceof StackOverflowError)) {
                throw e;
            }
            return fallback(applicationState, current, now, e);
        } catch (final Exception | Error e) {
            return fallback(applicationState, current, now, e);
        }
    }

    /**
     * Shadow mode (issue 26): Kafka's StickyTaskAssignor's answer, returned at once; kassign is asked
     * for its own on {@link ShadowCalls}' thread, with this answer attached, and compares the two.
     * Nothing here waits on kassign: the clients' states (already computed, lags included) are read
     * once so the background call finds them cached, and the rest is read there ({@link ShadowCall}).
     */
    private TaskAssignment shadow(final ApplicationState state, final AssignorSettings current, final Instant now) {
        final long started = System.nanoTime();
        final LocalFallback.Result kafka = LocalFallback.shadow(state, now.plus(current.fallbackFollowupDelay()));
        final long kafkaDone = System.nanoTime();
        if (kafka.kind() != LocalFallback.Kind.STICKY) {
            LOG.warn("kassign shadow: Kafka's StickyTaskAssignor failed ({}); kept the previous assignment with a "
                    + "follow-up rebalance in {} ms (group {})", kafka.stickyFailure(),
                    current.fallbackFollowupDelay().toMillis(), current.groupId());
            return kafka.assignment();
        }
        ShadowCalls.send(AssignorMetrics.TASK_ASSIGNOR, current.groupId(), () -> {
            final Map<ProcessId, KafkaStreamsState> clients = state.kafkaStreamsStates(true);
            return ShadowCall.of(state, clients, current, now, kafka.assignment(), () -> client(current),
                    ShadowLine.Path.of(started, kafkaDone));
        }, metrics, LOG);
        return kafka.assignment();
    }

    /** Counts (and logs at WARN) an assignment that Kafka's validation rejected after assign(). */
    @Override
    public void onAssignmentComputed(final GroupAssignment assignment, final GroupSubscription subscription,
                                     final AssignmentError error) {
        if (error != AssignmentError.NONE) {
            metrics.rejected();
            LOG.warn("kassign: Kafka rejected the assignment of group {}: {}", settings.groupId(), error);
        }
    }

    private TaskAssignment fallback(final ApplicationState state, final AssignorSettings current, final Instant now,
                                    final Throwable failure) {
        final FallbackCause cause = FallbackCause.of(failure);
        metrics.fallback(cause);
        final Duration delay = current.fallbackFollowupDelay();
        final LocalFallback.Result result = LocalFallback.assign(state, now.plus(delay));
        final String how = result.kind() == LocalFallback.Kind.STICKY
                ? "assigned locally with Kafka's StickyTaskAssignor"
                : "kept the previous assignment, as StickyTaskAssignor failed too (" + result.stickyFailure() + ")";
        LOG.warn("kassign fallback: {}; {}; follow-up rebalance in {} ms (group {}, target {})",
                FallbackCause.describe(failure), how, delay.toMillis(), current.groupId(), current.target());
        LOG.debug("kassign fallback cause", failure);
        return result.assignment();
    }

    private static long elapsedMs(final long startedNanos) {
        return (System.nanoTime() - startedNanos) / 1_000_000L;
    }

    /** The group's client, made once and shared; remade (the old one closed) when its settings change. */
    static KassignClient client(final AssignorSettings settings) {
        final Connection key = settings.connection();
        final SharedClient shared = CLIENTS.compute(settings.groupId(), (group, existing) -> {
            if (existing != null && existing.key().equals(key)) {
                return existing;
            }
            if (existing != null) {
                existing.client().close();
            }
            return new SharedClient(key, key.build());
        });
        return shared.client();
    }

    /**
     * For the warming, which may run after a later configure: the group's client made if it has
     * none; one made with other settings is left as it is (a call may be using it).
     */
    private static KassignClient warmClient(final AssignorSettings settings) {
        final Connection key = settings.connection();
        return CLIENTS.computeIfAbsent(settings.groupId(), group -> new SharedClient(key, key.build())).client();
    }

    /** Closes every shared client (tests; an application that unloads the plug-in). */
    static void closeClients() {
        CLIENTS.values().removeIf(shared -> {
            shared.client().close();
            return true;
        });
    }

    private record SharedClient(Connection key, KassignClient client) {
    }
}
