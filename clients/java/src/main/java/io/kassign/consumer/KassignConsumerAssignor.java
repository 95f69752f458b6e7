package io.kassign.consumer;

import io.kassign.client.KassignClient;
import io.kassign.plugin.AssignorMetrics;
import io.kassign.plugin.Balancing;
import io.kassign.plugin.Deadline;
import io.kassign.plugin.FallbackCause;
import io.kassign.plugin.KassignKeys;
import io.kassign.plugin.Mode;
import io.kassign.plugin.Prewarm;
import io.kassign.plugin.ShadowCalls;
import io.kassign.plugin.ShadowLine;
import io.kassign.plugin.SharedClients;
import io.kassign.v1.ConsumerAssignRequest;
import io.kassign.v1.ConsumerAssignResponse;
import io.kassign.v1.ConsumerAssignmentReport;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Configurable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A classic-protocol consumer assignor (KIP-881 racks, EAGER and COOPERATIVE) that asks the kassign
 * service: {@code partition.assignment.strategy=io.kassign.consumer.KassignConsumerAssignor}, with
 * the {@code kassign.*} keys of {@link ConsumerSettings} and {@link io.kassign.plugin.Connection}.
 *
 * <p>Each rebalance the group leader sends every member's subscription (rack, owned partitions,
 * generation, user data) and the subscribed topics' replica racks from its metadata
 * ({@link GroupToRequest}), with the rebalance protocol this consumer uses ({@link RebalanceProtocols});
 * checks the answer and hands Kafka each member's assignment bytes ({@link ResponseToGroup}); one INFO
 * line says {@code kassign assigned ...}.
 *
 * <p>{@code kassign.deadline.ms} bounds the whole {@code assign()}, not only the call ({@link Deadline}):
 * the call gets what building the request left, and the answer is used only if it was checked and
 * converted within the deadline too.
 *
 * <p>The service must never break a rebalance. On any failure (unreachable, deadline, an error
 * status, an answer Kafka would reject or that breaks the cooperative protocol, any exception, a
 * LinkageError or other Error) the group is assigned locally by Kafka's CooperativeStickyAssignor
 * ({@link ConsumerFallback}); one WARN line says {@code kassign fallback: CAUSE; ...}, and the
 * {@code consumer-assignor} metrics count it. The next rebalance asks kassign again. Only a
 * VirtualMachineError other than StackOverflowError is left to propagate.
 *
 * <p>With {@code kassign.mode=shadow} ({@link Mode}) the group gets Kafka's CooperativeStickyAssignor's
 * answer at once and kassign's is only asked for and compared in the background ({@link ShadowCall}):
 * one INFO line {@code kassign shadow: ...}.
 */
public final class KassignConsumerAssignor implements ConsumerPartitionAssignor, Configurable {
    /** The protocol name members advertise; the Python assignor (kassign_client.kafka_python) uses it too. */
    public static final String NAME = "kassign";

    private static final Logger LOG = LoggerFactory.getLogger(KassignConsumerAssignor.class);

    private volatile ConsumerSettings settings = ConsumerSettings.defaults();
    private volatile RebalanceProtocol protocol = RebalanceProtocol.COOPERATIVE;
    private volatile AssignorMetrics metrics = AssignorMetrics.forGroup(AssignorMetrics.CONSUMER_ASSIGNOR, "");
    /**
     * Eager sticky's memory. Under EAGER a member gives up every partition before it rejoins, so its
     * subscription owns nothing; Kafka's StickyAssignor carries the member's last assignment and
     * generation in its userData instead, which the service reads as Kafka does. Kafka's own class
     * keeps and encodes them here, so the bytes are Kafka's.
     */
    private final StickyAssignor stickyMemory = new StickyAssignor();

    /** Reads the kassign.* keys; a malformed one throws Kafka's ConfigException naming it. */
    @Override
    public void configure(final Map<String, ?> configs) {
        final ConsumerSettings read = ConsumerSettings.from(configs);
        KassignKeys.warnUnknown(configs, LOG);
        settings = read;
        protocol = RebalanceProtocols.chosen(read.strategies(), this);
        metrics = AssignorMetrics.forGroup(AssignorMetrics.CONSUMER_ASSIGNOR, read.groupId());
        Prewarm.start(read.connection(), () -> SharedClients.of(read.connection()));
    }

    @Override
    public String name() {
        return NAME;
    }

    /** With the service's {@code sticky}: the last assignment as Kafka's StickyAssignor sends it. */
    @Override
    public ByteBuffer subscriptionUserData(final Set<String> topics) {
        return "sticky".equals(settings.assignor()) ? stickyMemory.subscriptionUserData(topics) : null;
    }

    /** Remembers this member's assignment and generation for {@link #subscriptionUserData}. */
    @Override
    public void onAssignment(final Assignment assignment, final ConsumerGroupMetadata metadata) {
        stickyMemory.onAssignment(assignment, metadata);
    }

    /**
     * Both, unless kassign.consumer.rebalance.protocol names one; only EAGER when the service's
     * assignor is one of Kafka's eager ones (range, roundrobin, sticky), which hand partitions over
     * directly, as Kafka's own classes declare.
     */
    @Override
    public List<RebalanceProtocol> supportedProtocols() {
        final ConsumerSettings current = settings;
        if (EAGER_ONLY.contains(current.assignor())) {
            return List.of(RebalanceProtocol.EAGER);
        }
        return current.onlyProtocol().map(List::of)
                .orElse(List.of(RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER));
    }

    /** Kafka's assignors that support only EAGER (their supportedProtocols()). */
    static final java.util.Set<String> EAGER_ONLY = java.util.Set.of("range", "roundrobin", "sticky");

    /** The settings in force (after configure). */
    public ConsumerSettings settings() {
        return settings;
    }

    /** The rebalance protocol this consumer uses, as its coordinator computes it from the same configs. */
    public RebalanceProtocol protocol() {
        return protocol;
    }

    @Override
    public GroupAssignment assign(final Cluster metadata, final GroupSubscription groupSubscription) {
        final ConsumerSettings current = settings;
        final RebalanceProtocol used = protocol;
        if (current.mode() == Mode.SHADOW) {
            return shadow(metadata, groupSubscription, current, used);
        }
        final long started = System.nanoTime();
        final Deadline deadline = Deadline.after(current.connection().deadline(), started);
        Prewarm.calling(current.connection());
        try {
            final ConsumerAssignRequest request = GroupToRequest.convert(metadata, groupSubscription, current, used);
            final KassignClient client = SharedClients.of(current.connection());
            deadline.check("before the call");
            final ConsumerAssignResponse response;
            try {
                response = client.assignConsumers(request, deadline.remaining());
            } finally {
                metrics.call(elapsedMs(started));
            }
            final GroupAssignment assignment = ResponseToGroup.convert(response, groupSubscription, metadata, used,
                    deadline);
            metrics.assigned();
            if (LOG.isInfoEnabled()) { // the line's per-member counts cost ~1 ms at 2,000 members: not when off
                final ConsumerAssignmentReport report = response.getReport();
                LOG.info("kassign assigned group {}: {} partitions to {} members in {} ms ({}, {}; {}){}",
                        current.groupId(), report.getPartitions(), groupSubscription.groupSubscription().size(),
                        elapsedMs(started), report.getAssignor(), used, describe(report, assignment),
                        Balancing.describe(current.balance(), report));
            }
            return assignment;
        } catch (final VirtualMachineError e) {
            if (!(e instanceof StackOverflowError)) {
                throw e;
            }
            return fallback(metadata, groupSubscription, current, e);
        } catch (final Exception | Error e) {
            return fallback(metadata, groupSubscription, current, e);
        }
    }

    /**
     * Shadow mode (issue 26): Kafka's CooperativeStickyAssignor's answer (as {@link ConsumerFallback}
     * gives it), returned at once; kassign is asked for its own on {@link ShadowCalls}' thread, with
     * this answer attached, and compares the two ({@link ShadowCall}). Nothing here waits on kassign.
     */
    private GroupAssignment shadow(final Cluster metadata, final GroupSubscription group,
                                   final ConsumerSettings current, final RebalanceProtocol used) {
        final long started = System.nanoTime();
        final ConsumerFallback.Result kafka = ConsumerFallback.assign(metadata, group);
        final long kafkaDone = System.nanoTime();
        if (kafka.kind() != ConsumerFallback.Kind.COOPERATIVE_STICKY) {
            LOG.warn("kassign shadow: Kafka's CooperativeStickyAssignor failed ({}); kept the owned partitions "
                    + "(group {})", kafka.stickyFailure(), current.groupId());
            return kafka.assignment();
        }
        ShadowCalls.send(AssignorMetrics.CONSUMER_ASSIGNOR, current.groupId(),
                () -> ShadowCall.of(metadata, group, current, used, kafka.assignment(),
                        ShadowLine.Path.of(started, kafkaDone)), metrics, LOG);
        return kafka.assignment();
    }

    private GroupAssignment fallback(final Cluster metadata, final GroupSubscription group,
                                     final ConsumerSettings current, final Throwable failure) {
        metrics.fallback(FallbackCause.of(failure));
        final ConsumerFallback.Result result = ConsumerFallback.assign(metadata, group);
        final String how = result.kind() == ConsumerFallback.Kind.COOPERATIVE_STICKY
                ? "assigned locally with Kafka's CooperativeStickyAssignor"
                : "kept the owned partitions, as CooperativeStickyAssignor failed too (" + result.stickyFailure() + ")";
        LOG.warn("kassign fallback: {}; {} (group {}, target {})", FallbackCause.describe(failure), how,
                current.groupId(), current.connection().target());
        LOG.debug("kassign fallback cause", failure);
        return result.assignment();
    }

    /** The report's figures and each member's count: "moved 2, revoked 1, cross-rack 0 (was 3); m1=4 m2=4". */
    static String describe(final ConsumerAssignmentReport report, final GroupAssignment assignment) {
        final Map<String, Integer> counts = new TreeMap<>();
        for (final Map.Entry<String, Assignment> member : assignment.groupAssignment().entrySet()) {
            counts.put(member.getKey(), member.getValue().partitions().size());
        }
        final StringBuilder text = new StringBuilder()
                .append("moved ").append(report.getMovedPartitions())
                .append(", revoked ").append(report.getRevokedPartitions())
                .append(", cross-rack ").append(report.getCrossRackPartitionsAfter())
                .append(" (was ").append(report.getCrossRackPartitionsBefore()).append(')');
        String separator = "; ";
        for (final Map.Entry<String, Integer> count : counts.entrySet()) {
            text.append(separator).append(count.getKey()).append('=').append(count.getValue());
            separator = " ";
        }
        return text.toString();
    }

    private static long elapsedMs(final long startedNanos) {
        return (System.nanoTime() - startedNanos) / 1_000_000L;
    }
}
