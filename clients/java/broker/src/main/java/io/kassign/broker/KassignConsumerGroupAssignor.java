package io.kassign.broker;

import io.kassign.broker.GroupSpecToConsumerRequest.Topics;
import io.kassign.plugin.AssignorMetrics;
import io.kassign.plugin.Balancing;
import io.kassign.plugin.Connection;
import io.kassign.plugin.KassignKeys;
import io.kassign.plugin.Mode;
import io.kassign.plugin.Prewarm;
import io.kassign.plugin.ShadowCalls;
import io.kassign.plugin.ShadowLine;
import io.kassign.plugin.SharedClients;
import io.kassign.v1.ConsumerAssignRequest;
import io.kassign.v1.ConsumerAssignResponse;
import io.kassign.v1.ConsumerAssignmentReport;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.coordinator.common.runtime.CoordinatorMetadataImage;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;
import org.apache.kafka.coordinator.group.modern.SubscribedTopicDescriberImpl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A broker-side partition assignor for KIP-848 consumer groups that asks the kassign service:
 * {@code group.consumer.assignors=io.kassign.broker.KassignConsumerGroupAssignor,uniform,range} on
 * every broker (listed first, it is the default; a member picks it by
 * {@code group.remote.assignor=kassign}), with the {@code kassign.*} keys of
 * {@link ConsumerGroupSettings} in the broker's configuration.
 *
 * <p>Each assignment sends the group (members' subscriptions, racks and current targets; partitions
 * with their replicas' racks, {@link GroupSpecToConsumerRequest}) to kassign's
 * ConsumerAssignmentService, {@code rack-optimal} unless {@code kassign.consumer.assignor} says
 * otherwise, checks the answer ({@link ConsumerResponseToAssignment}) and returns it; one INFO line
 * says {@code kassign assigned consumer group ...}.
 *
 * <p>The coordinator waits at most {@code kassign.deadline.ms} (300 ms by default) from the moment
 * it calls: the conversion and the call run on a thread of their own and the coordinator's thread
 * stops waiting at the deadline whatever they are doing. On any failure (unreachable, deadline, an
 * error status, an answer that fails the checks, any exception or Error there) the group is assigned
 * locally by Kafka's {@link UniformAssignor}, the broker's default; one WARN line says
 * {@code kassign fallback: CAUSE; ...} and the {@code broker-consumer-assignor} metrics (JMX domain
 * {@code kassign}) count it. The next assignment asks kassign again. Only what UniformAssignor
 * throws, and a VirtualMachineError (other than StackOverflowError) on the coordinator's own
 * thread, reach the coordinator.
 *
 * <p>With {@code kassign.consumer.mode=shadow} (or {@code kassign.mode}, {@link Mode}) the group gets
 * the uniform assignor's answer at once and kassign's is only asked for and compared in the
 * background, the group named by a stand-in id ({@link ConsumerGroupShadow}, {@link StandInGroupIds}):
 * one INFO line {@code kassign shadow: ...}.
 *
 * <p>Thread-safe and stateless between calls, hence idempotent: the same group gives the same
 * request (the service answers it with the same bytes); settings are replaced whole by configure,
 * and every instance with the same connection shares one gRPC channel ({@link SharedClients}).
 * The one exception, opt-in: under balance LOAD with {@code kassign.topic.names.bootstrap.servers}
 * topics are sent by name once {@link TopicNames} (shared, refreshed in the background) knows
 * them, by id until then (either way the answer is read back to the same topic ids).
 */
public final class KassignConsumerGroupAssignor implements ConsumerGroupPartitionAssignor, Configurable,
        AutoCloseable {
    /** The name members select it by ({@code group.remote.assignor}). */
    public static final String NAME = "kassign";
    /** The MBean type of its metrics: kassign:type=broker-consumer-assignor,client-id=GROUP_ID. */
    public static final String METRICS_TYPE = "broker-consumer-assignor";

    private static final Logger LOG = LoggerFactory.getLogger(KassignConsumerGroupAssignor.class);
    private static final UniformAssignor UNIFORM = new UniformAssignor(); // stateless
    /** Connections warmed up already: the coordinator configures new instances again and again. */
    private static final Set<Connection> WARMED = ConcurrentHashMap.newKeySet();

    private volatile ConsumerGroupSettings settings = ConsumerGroupSettings.defaults();
    private volatile AssignorMetrics metrics = AssignorMetrics.forGroup(METRICS_TYPE, settings.groupId());
    /** Topic names for ids (balance LOAD with kassign.topic.names.*), else none: ids are sent. */
    private final AdminUse<TopicNames> names = new AdminUse<>(AdminTopicNames::acquire);

    /** Reads the kassign.* keys of the broker configuration; a malformed one throws ConfigException naming it. */
    @Override
    public void configure(final Map<String, ?> configs) {
        final ConsumerGroupSettings read = ConsumerGroupSettings.from(configs);
        KassignKeys.warnUnknown(configs, LOG);
        names.use(read.topicNames().orElse(null)); // first: an Admin config it refuses stops configure here
        settings = read;
        metrics = AssignorMetrics.forGroup(METRICS_TYPE, read.groupId());
        Prewarm.start(read.connection(), () -> SharedClients.waitingForReady(read.connection()));
        if (WARMED.add(read.connection())) {
            BoundedCall.background(() -> warmUp(read));
        }
    }

    /**
     * Releases the topic names' Admin client (the last user closes it). Kafka 4.4 closes an
     * assignor only when configuring the list fails; otherwise the shared client lives as long as
     * the broker, one per distinct setting.
     */
    @Override
    public void close() {
        names.use(null);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public GroupAssignment assign(final GroupSpec group, final SubscribedTopicDescriber describer)
            throws PartitionAssignorException {
        final ConsumerGroupSettings current = settings;
        final AssignorMetrics counted = metrics;
        final TopicNames named = names.get();
        if (current.mode() == Mode.SHADOW) {
            return shadow(group, describer, current, counted, named);
        }
        final long started = System.nanoTime();
        Prewarm.calling(current.connection());
        final BoundedCall.Outcome<Answer> outcome =
                BoundedCall.within(current.connection().deadline(), () -> ask(group, describer, current, named));
        counted.call(elapsedMs(started));
        if (outcome.failure() != null) {
            return fallback(group, describer, current, counted, outcome.failure(), started);
        }
        final Answer answer = outcome.value();
        counted.assigned();
        if (LOG.isInfoEnabled()) {
            final ConsumerAssignmentReport report = answer.report();
            LOG.info("kassign assigned consumer group: {} partitions of {} topics{} to {} members in {} ms ({}; {}){}",
                    report.getPartitions(), answer.topics().partitions().size(), byName(answer.topics(), named),
                    group.memberIds().size(), elapsedMs(started), report.getAssignor(), describe(report),
                    Balancing.describe(current.balance(), report));
        }
        return answer.assignment();
    }

    /**
     * Shadow mode (issue 26): Kafka's uniform assignor's answer, returned at once (what it throws
     * reaches the coordinator, as without kassign); kassign is asked for its own on
     * {@link ShadowCalls}' thread, with this answer attached, and compares the two
     * ({@link ConsumerGroupShadow}). Nothing on the coordinator's thread waits on kassign.
     */
    private static GroupAssignment shadow(final GroupSpec group, final SubscribedTopicDescriber describer,
                                          final ConsumerGroupSettings current, final AssignorMetrics counted,
                                          final TopicNames named) throws PartitionAssignorException {
        final long started = System.nanoTime();
        final GroupAssignment kafka = UNIFORM.assign(group, describer);
        final long kafkaDone = System.nanoTime();
        ShadowCalls.send(METRICS_TYPE, current.groupId(), () -> ConsumerGroupShadow.of(group, describer, current, named,
                kafka, ShadowLine.Path.of(started, kafkaDone)), counted, LOG);
        return kafka;
    }

    /** The service's answer with what it was checked against. */
    private record Answer(GroupAssignment assignment, ConsumerAssignmentReport report, Topics topics) {
    }

    /** " (2 by name)": how many topics were sent by name, when names are looked up. */
    static String byName(final Topics topics, final TopicNames named) {
        return named == null ? "" : " (" + topics.named() + " by name)";
    }

    /**
     * The service's assignment, checked; anything thrown makes {@link #assign} fall back. Topics
     * {@code named} knows are sent by name; the others by id, and asked for (never waited on).
     */
    private static Answer ask(final GroupSpec group, final SubscribedTopicDescriber describer,
                              final ConsumerGroupSettings current, final TopicNames named) {
        final Topics topics = named == null ? Topics.of(group, describer) : Topics.of(group, describer, named::known);
        final ConsumerAssignRequest request = GroupSpecToConsumerRequest.convert(group, describer, topics, current);
        final ConsumerAssignResponse response = SharedClients.waitingForReady(current.connection()).assignConsumers(request);
        return new Answer(ConsumerResponseToAssignment.convert(response, group, topics), response.getReport(), topics);
    }

    private static GroupAssignment fallback(final GroupSpec group, final SubscribedTopicDescriber describer,
                                            final ConsumerGroupSettings current, final AssignorMetrics counted,
                                            final Throwable failure, final long started) {
        final long waited = elapsedMs(started);
        counted.fallback(BoundedCall.cause(failure));
        final GroupAssignment assignment = UNIFORM.assign(group, describer);
        LOG.warn("kassign fallback: {}; assigned locally with Kafka's uniform assignor, {} members in {} ms "
                        + "(waited {} ms; {}, target {})",
                BoundedCall.describe(failure),
                group.memberIds().size(), elapsedMs(started), waited, current.groupId(),
                current.connection().target());
        LOG.debug("kassign fallback cause", failure);
        return assignment;
    }

    /** "cross-rack 0 (was 3), moved 2": the report's figures. */
    static String describe(final ConsumerAssignmentReport report) {
        return "cross-rack " + report.getCrossRackPartitionsAfter() + " (was " + report.getCrossRackPartitionsBefore()
                + "), moved " + report.getMovedPartitions();
    }

    /**
     * What a first assignment would otherwise pay inside its deadline, done once per connection at
     * configure (broker start) on a background thread: one whole assignment of a one-member group
     * with no topics, built from the coordinator's own classes, through the conversions, a real call
     * to the service and the checks; it loads every class on that path (messages, gRPC, Netty, ours)
     * and makes the shared channel's connection. Measured on three brokers starting beside their
     * consumers on two cores: a cold first assignment took 260 ms to more than the 300 ms, a warm
     * one 10 to 50 ms. A failed warm-up (kassign not up yet) is tried again at the next configure;
     * the service counts each warm-up as a call of group "GROUP_ID warm-up".
     */
    private static void warmUp(final ConsumerGroupSettings settings) {
        final long started = System.nanoTime();
        try {
            final GroupSpec group = new GroupSpecImpl(Map.of("warm-up", new MemberSubscriptionAndAssignmentImpl(
                    Optional.empty(), Optional.empty(), Set.of(), Assignment.EMPTY)), SubscriptionType.HOMOGENEOUS, Map.of());
            final SubscribedTopicDescriber describer = new SubscribedTopicDescriberImpl(CoordinatorMetadataImage.EMPTY);
            UNIFORM.assign(group, describer);
            final Answer answer = ask(group, describer, new ConsumerGroupSettings(settings.connection(),
                    settings.assignor(), settings.timeBudgetMs(), settings.groupId() + " warm-up", settings.balance(),
                    Optional.empty(), settings.mode()), null);
            LOG.info("kassign: warmed up the consumer assignor's connection to {} in {} ms ({} answered)",
                    settings.connection().target(), elapsedMs(started), answer.report().getAssignor());
        } catch (final Exception | LinkageError e) {
            WARMED.remove(settings.connection());
            LOG.info("kassign: warming up the consumer assignor's connection to {} failed after {} ms, tried again "
                    + "at the next configure: {}", settings.connection().target(), elapsedMs(started), e.toString());
        }
    }

    private static long elapsedMs(final long startedNanos) {
        return (System.nanoTime() - startedNanos) / 1_000_000L;
    }
}
