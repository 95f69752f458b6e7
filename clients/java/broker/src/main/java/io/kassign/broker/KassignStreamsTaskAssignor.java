package io.kassign.broker;

import io.kassign.broker.GroupToStreamsRequest.Topology;
import io.kassign.plugin.AssignorMetrics;
import io.kassign.plugin.Balancing;
import io.kassign.plugin.KassignKeys;
import io.kassign.plugin.Mode;
import io.kassign.plugin.Prewarm;
import io.kassign.plugin.ShadowCalls;
import io.kassign.plugin.ShadowLine;
import io.kassign.plugin.SharedClients;
import io.kassign.v1.AssignRequest;
import io.kassign.v1.AssignResponse;
import io.kassign.v1.AssignmentReport;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignor;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A broker-side task assignor for KIP-1071 streams groups that asks the kassign service:
 * {@code group.streams.assignors=io.kassign.broker.KassignStreamsTaskAssignor} (KIP-1357, Kafka
 * 4.4), chosen per group by the group config {@code streams.assignor.name=kassign} or by being
 * listed first; the {@code kassign.*} keys of {@link StreamsSettings} go in the broker's
 * configuration.
 *
 * <p>Each assignment sends the group's members (process, rack, client tags, current tasks, task
 * offsets) and tasks ({@link GroupToStreamsRequest}) to kassign's TaskAssignmentService within
 * {@code kassign.deadline.ms} (300 ms by default), checks the answer ({@link StreamsResponseToAssignment})
 * and returns it; one INFO line says {@code kassign assigned ...}.
 *
 * <p>The service must never hold up or break the coordinator. On any failure (unreachable, deadline,
 * an error status, an answer that fails the checks, any exception, a LinkageError or other Error)
 * the group is assigned locally by Kafka's StickyTaskAssignor, the broker's default
 * ({@link StreamsFallback}); one WARN line says {@code kassign fallback: CAUSE; ...} and the
 * {@code broker-task-assignor} metrics (JMX domain {@code kassign}) count it. The next assignment
 * asks kassign again. Only a VirtualMachineError other than StackOverflowError propagates.
 *
 * <p>With {@code kassign.streams.mode=shadow} (or {@code kassign.mode}, {@link Mode}) the group gets
 * Kafka's StickyTaskAssignor's answer at once and kassign's is only asked for and compared in the
 * background, the group named by a stand-in id ({@link StreamsGroupShadow}, {@link StandInGroupIds}):
 * one INFO line {@code kassign shadow: ...}.
 *
 * <p>Thread-safe and stateless between calls: the coordinator may call it from several threads and
 * compute one group again; the settings are replaced whole by configure, the gRPC channel is shared
 * by every instance with the same connection ({@link SharedClients}). The one exception, opt-in:
 * under balance LOAD with {@code kassign.topic.names.bootstrap.servers} each task is sent with its
 * source partitions once {@link StreamsSources} (shared, described in the background) knows the
 * group, without them until then.
 */
public final class KassignStreamsTaskAssignor implements TaskAssignor, Configurable, AutoCloseable {
    /** The name groups select it by (group config streams.assignor.name). */
    public static final String NAME = "kassign";
    /** The MBean type of its metrics: kassign:type=broker-task-assignor,client-id=GROUP_ID. */
    public static final String METRICS_TYPE = "broker-task-assignor";

    private static final Logger LOG = LoggerFactory.getLogger(KassignStreamsTaskAssignor.class);

    private volatile StreamsSettings settings = StreamsSettings.defaults();
    private volatile AssignorMetrics metrics = AssignorMetrics.forGroup(METRICS_TYPE, settings.groupId());
    /** The groups' source topics (balance LOAD with kassign.topic.names.*), else none: tasks go without. */
    private final AdminUse<StreamsSources> sources = new AdminUse<>(AdminTopicNames::acquireSources);

    /** Reads the kassign.* keys of the broker configuration; a malformed one throws ConfigException naming it. */
    @Override
    public void configure(final Map<String, ?> configs) {
        final StreamsSettings read = StreamsSettings.from(configs);
        KassignKeys.warnUnknown(configs, LOG);
        sources.use(read.sources().orElse(null)); // first: an Admin config it refuses stops configure here
        settings = read;
        metrics = AssignorMetrics.forGroup(METRICS_TYPE, read.groupId());
        Prewarm.start(read.connection(), () -> SharedClients.waitingForReady(read.connection()));
        BoundedCall.background(() -> Warmup.run(read));
    }

    /**
     * Releases the sources' Admin client (the last user closes it). Kafka 4.4 closes an assignor
     * only when configuring the list fails; otherwise the shared client lives as long as the broker.
     */
    @Override
    public void close() {
        sources.use(null);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String toString() {
        return NAME;
    }

    @Override
    public GroupAssignment assign(final GroupSpec group, final TopologyDescriber describer) {
        final StreamsSettings current = settings;
        final AssignorMetrics counted = metrics;
        if (current.mode() == Mode.SHADOW) {
            return shadow(group, describer, current, counted);
        }
        final long started = System.nanoTime();
        Prewarm.calling(current.connection());
        final StreamsSources described = sources.get();
        final BoundedCall.Outcome<GroupAssignment> outcome = BoundedCall.within(current.connection().deadline(),
                () -> ask(group, describer, current, counted, started, described));
        if (outcome.failure() != null) {
            return fallback(group, describer, current, counted, outcome.failure(), started);
        }
        return outcome.value();
    }

    /**
     * Shadow mode (issue 26): Kafka's StickyTaskAssignor's answer ({@link StreamsFallback}: the
     * current tasks kept should it fail), returned at once; kassign is asked for its own on
     * {@link ShadowCalls}' thread, with this answer attached, and compares the two
     * ({@link StreamsGroupShadow}). Nothing on the coordinator's thread waits on kassign.
     */
    private static GroupAssignment shadow(final GroupSpec group, final TopologyDescriber describer,
                                          final StreamsSettings current, final AssignorMetrics counted) {
        final long started = System.nanoTime();
        final StreamsFallback.Result kafka = StreamsFallback.assign(group, describer);
        final long kafkaDone = System.nanoTime();
        if (kafka.kind() != StreamsFallback.Kind.STICKY) {
            LOG.warn("kassign shadow: Kafka's StickyTaskAssignor failed ({}); kept the current assignment (group {})",
                    kafka.stickyFailure(), current.groupId());
            return kafka.assignment();
        }
        ShadowCalls.send(METRICS_TYPE, current.groupId(),
                () -> StreamsGroupShadow.of(group, describer, current, kafka.assignment(),
                        ShadowLine.Path.of(started, kafkaDone)), counted, LOG);
        return kafka.assignment();
    }

    /** The service's assignment, checked; any failure is thrown to {@link #assign}, which falls back. */
    private static GroupAssignment ask(final GroupSpec group, final TopologyDescriber describer,
                                       final StreamsSettings current, final AssignorMetrics counted, final long started,
                                       final StreamsSources described) {
        final Topology topology = Topology.of(describer);
        final Optional<StreamsSources.Group> found = described == null ? Optional.empty()
                : described.find(group.memberIds(), topology.partitions().keySet());
        final AssignRequest request = GroupToStreamsRequest.convert(group, topology, current,
                found.map(StreamsSources.Group::subtopologies).orElse(Map.of()));
        final AssignResponse response;
        try {
            response = SharedClients.waitingForReady(current.connection()).assign(request);
        } finally {
            counted.call(elapsedMs(started));
        }
        final GroupAssignment assignment = StreamsResponseToAssignment.convert(response, group, topology);
        counted.assigned();
        final AssignmentReport report = response.getReport();
        LOG.info("kassign assigned streams group {}{}: {} tasks to {} members in {} ms ({}, {} warm-ups; {}){}",
                current.groupId(), sourcesNote(described, found), topology.tasks(), group.memberIds().size(),
                elapsedMs(started),
                report.getAssignor(), report.getWarmups(), StreamsResponseToAssignment.describe(assignment, group),
                Balancing.describe(current.balance(), report));
        return assignment;
    }

    /** " (sources of G)" or " (no sources yet)" under LOAD with the groups described, else empty. */
    static String sourcesNote(final StreamsSources described, final Optional<StreamsSources.Group> found) {
        if (described == null) {
            return "";
        }
        return found.map(g -> " (sources of " + g.groupId() + ")").orElse(" (no sources yet)");
    }

    private static GroupAssignment fallback(final GroupSpec group, final TopologyDescriber describer,
                                            final StreamsSettings current, final AssignorMetrics counted,
                                            final Throwable failure, final long started) {
        counted.fallback(BoundedCall.cause(failure));
        final StreamsFallback.Result result = StreamsFallback.assign(group, describer);
        final String how = result.kind() == StreamsFallback.Kind.STICKY
                ? "assigned locally with Kafka's StickyTaskAssignor"
                : "kept the current assignment, as StickyTaskAssignor failed too (" + result.stickyFailure() + ")";
        LOG.warn("kassign fallback: {}; {} in {} ms (group {}, target {})",
                BoundedCall.describe(failure), how,
                elapsedMs(started), current.groupId(), current.connection().target());
        LOG.debug("kassign fallback cause", failure);
        return result.assignment();
    }

    private static long elapsedMs(final long startedNanos) {
        return (System.nanoTime() - startedNanos) / 1_000_000L;
    }
}
