package io.kassign.streams;

import io.kassign.client.ClientSpec;
import io.kassign.client.RequestBuilder;
import io.kassign.client.TaskIds;
import io.kassign.client.TaskSpec;
import io.kassign.plugin.Balancing;
import io.kassign.plugin.Deadline;
import io.kassign.v1.AssignRequest;
import io.kassign.v1.RackAwareStrategy;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskInfo;
import org.apache.kafka.streams.processor.assignment.TaskTopicPartition;

/**
 * KIP-924's {@link ApplicationState} to kassign's {@link AssignRequest}.
 *
 * <p>The request carries what the group leader received (one member per consumer, each with a
 * version-11 SubscriptionInfo), while Kafka hands a TaskAssignor lags, not the offsets they came
 * from. The lags are turned back into offset sums so that the service computes exactly the same
 * lags (KIP-441: lag = end offset sum - offset sum; -2 for a running active):
 * <ul>
 *   <li>a task's {@code changelog_end_offset_sum} E is the largest lag any client has for it (a
 *       client without state for the task has lag equal to the real end offset sum; if every client
 *       has state, any E at least the largest lag reproduces every lag);</li>
 *   <li>a previous active task is reported with offset sum -2 (Kafka reports running actives so);</li>
 *   <li>a task the client has state for (a previous standby, or lag below E) is reported with
 *       offset sum E - lag, or -3 when its lag is unknown;</li>
 *   <li>any other task is left out, so the service's lag for it is E, as it was in Kafka.</li>
 * </ul>
 * Each task is reported by the consumer whose {@code prevTasksByLag} lists it (the first consumer
 * otherwise), and each consumer owns the source partitions of the previous actives it lists.
 */
final class StateToRequest {
    /** Kafka's lag (and offset sum) for a task that ran as an active: Task.LATEST_OFFSET. */
    static final long RUNNING_ACTIVE = -2L;
    /** Kafka's lag when a client's offsets could not be read: SubscriptionInfo.UNKNOWN_OFFSET_SUM. */
    static final long UNKNOWN = -3L;

    private static final Comparator<TaskId> TASK_ORDER = Comparator
            .comparing((TaskId t) -> t.topologyName() == null ? "" : t.topologyName())
            .thenComparingInt(TaskId::subtopology)
            .thenComparingInt(TaskId::partition);

    private StateToRequest() {
    }

    static AssignRequest convert(final ApplicationState state, final Map<ProcessId, KafkaStreamsState> clients,
                                 final AssignorSettings settings, final Instant now) {
        return convert(state, clients, settings, now, null);
    }

    /** As above, checking {@code deadline} (when not null) once per client. */
    static AssignRequest convert(final ApplicationState state, final Map<ProcessId, KafkaStreamsState> clients,
                                 final AssignorSettings settings, final Instant now, final Deadline deadline) {
        final Tasks tasks = new Tasks(state.allTasks());
        final Map<ProcessId, KafkaStreamsState> sorted = new TreeMap<>(clients);
        final Map<ProcessId, long[]> lags = new HashMap<>();
        for (final KafkaStreamsState client : sorted.values()) {
            check(deadline);
            lags.put(client.processId(), tasks.lags(client));
        }
        final long[] endOffsetSums = endOffsetSums(tasks.size(), lags.values());
        final RequestBuilder request = RequestBuilder.forGroup(settings.groupId()).nowMs(now.toEpochMilli());
        configs(request, state.assignmentConfigs(), settings);
        final String[] topics = sourceTopics(tasks.infos);
        for (int i = 0; i < tasks.size(); i++) {
            request.task(task(tasks.infos[i], endOffsetSums[i]));
        }
        for (final KafkaStreamsState client : sorted.values()) {
            check(deadline);
            request.client(client(client, tasks, lags.get(client.processId()), endOffsetSums, topics));
        }
        return request.build();
    }

    private static void check(final Deadline deadline) {
        if (deadline != null) {
            deadline.check("while building the request");
        }
    }

    /**
     * The application's tasks in TASK_ORDER, each known by its position: a large application has
     * 10,000 tasks and 1,000 clients, so what is asked per client and task (its lag, whether it ran
     * there) is read from arrays indexed by position, each of Kafka's maps and sets read once.
     */
    static final class Tasks {
        /** A lag Kafka did not give (the client has no state for the task, or Kafka gave null). */
        static final long ABSENT = Long.MIN_VALUE;

        final TaskId[] ids;
        final TaskInfo[] infos;
        private final Map<TaskId, Integer> positions;

        Tasks(final Map<TaskId, TaskInfo> all) {
            final Map<TaskId, TaskInfo> sorted = new TreeMap<>(TASK_ORDER);
            sorted.putAll(all);
            ids = sorted.keySet().toArray(TaskId[]::new);
            infos = sorted.values().toArray(TaskInfo[]::new);
            positions = new HashMap<>(2 * ids.length);
            for (int i = 0; i < ids.length; i++) {
                positions.put(ids[i], i);
            }
        }

        int size() {
            return ids.length;
        }

        /** Position of {@code task}, or -1 for a task not in the application. */
        int position(final TaskId task) {
            final Integer i = positions.get(task);
            return i == null ? -1 : i;
        }

        /** The client's lag per task position ({@link #ABSENT} where Kafka gave none): one read of its map. */
        long[] lags(final KafkaStreamsState client) {
            final long[] lags = new long[ids.length];
            Arrays.fill(lags, ABSENT);
            client.statefulTasksToLagSums().forEach((task, lag) -> {
                final int i = position(task);
                if (i >= 0 && lag != null) {
                    lags[i] = lag;
                }
            });
            return lags;
        }

        /** Which task positions {@code tasks} holds. */
        boolean[] marked(final Set<TaskId> tasks) {
            final boolean[] marked = new boolean[ids.length];
            for (final TaskId task : tasks) {
                final int i = position(task);
                if (i >= 0) {
                    marked[i] = true;
                }
            }
            return marked;
        }
    }

    /**
     * The largest known lag per task position, 0 where no client knows one: the end offset sum the
     * lags are measured against (used for stateful tasks only).
     */
    static long[] endOffsetSums(final int tasks, final Iterable<long[]> lagsByClient) {
        final long[] sums = new long[tasks];
        for (final long[] lags : lagsByClient) {
            for (int i = 0; i < tasks; i++) {
                if (lags[i] >= 0 && lags[i] > sums[i]) {
                    sums[i] = lags[i];
                }
            }
        }
        return sums;
    }

    private static TaskSpec task(final TaskInfo info, final long endOffsetSum) {
        final TaskSpec spec = TaskSpec.of(taskId(info.id()), info.isStateful())
                .stores(info.stateStoreNames().toArray(String[]::new));
        for (final TaskTopicPartition partition : info.topicPartitions()) {
            final TopicPartition tp = partition.topicPartition();
            final String[] racks = partition.rackIds().map(r -> new TreeSet<>(r).toArray(String[]::new))
                    .orElse(new String[0]);
            spec.partition(tp.topic(), tp.partition(), partition.isSource(), partition.isChangelog(), racks);
        }
        return info.isStateful() ? spec.changelogEndOffsetSum(endOffsetSum) : spec;
    }

    private static ClientSpec client(final KafkaStreamsState state, final Tasks tasks, final long[] lags,
                                     final long[] endOffsetSums, final String[] topics) {
        final ClientSpec spec = ClientSpec.process(state.processId().id()).topics(topics);
        final List<String> consumers = new ArrayList<>(state.consumerClientIds());
        if (consumers.isEmpty()) {
            spec.threads(Math.max(1, state.numProcessingThreads()));
        } else {
            spec.consumers(consumers.toArray(String[]::new));
        }
        state.rackId().ifPresent(spec::rack);
        state.hostInfo().ifPresent(host -> spec.endpoint(host.host() + ":" + host.port()));
        new TreeMap<>(state.clientTags()).forEach(spec::tag);

        final Map<TaskId, String> reporter = reporters(state, consumers);
        final boolean[] previousActive = tasks.marked(state.previousActiveTasks());
        final boolean[] previousStandby = tasks.marked(state.previousStandbyTasks());
        for (int i = 0; i < tasks.size(); i++) {
            final Long offsetSum = offsetSum(tasks.ids[i], tasks.infos[i], previousActive[i], previousStandby[i],
                    lags[i] == Tasks.ABSENT ? null : lags[i], endOffsetSums[i]);
            if (offsetSum != null) {
                spec.offsetSum(reporter.get(tasks.ids[i]), taskId(tasks.ids[i]), offsetSum);
            }
        }
        // previous actives in TASK_ORDER; one no longer in the application is left out
        for (int i = 0; i < tasks.size(); i++) {
            final String owner = previousActive[i] ? reporter.get(tasks.ids[i]) : null;
            if (owner == null) {
                continue;
            }
            for (final TaskTopicPartition partition : tasks.infos[i].topicPartitions()) {
                if (partition.isSource()) {
                    spec.ownedPartition(owner, partition.topicPartition().topic(), partition.topicPartition().partition());
                }
            }
        }
        return spec;
    }

    /** The offset sum the client reports for {@code task}, or null when it reports none (no state there). */
    static Long offsetSum(final TaskId task, final TaskInfo info, final boolean previousActive,
                          final boolean previousStandby, final Long lag, final long endOffsetSum) {
        if (previousActive || (lag != null && lag == RUNNING_ACTIVE)) {
            return RUNNING_ACTIVE;
        }
        if (info == null || !info.isStateful() || lag == null) {
            return null;
        }
        if (lag == UNKNOWN || lag < 0) {
            return previousStandby ? UNKNOWN : null;
        }
        if (previousStandby || lag < endOffsetSum) {
            return endOffsetSum - lag;
        }
        return null;
    }

    /** Which consumer reports each task: the first (by client id) whose prevTasksByLag lists it. */
    private static Map<TaskId, String> reporters(final KafkaStreamsState state, final List<String> consumers) {
        final Map<TaskId, String> reporter = new HashMap<>();
        for (final String consumer : consumers) {
            for (final TaskId task : state.prevTasksByLag(consumer)) {
                reporter.putIfAbsent(task, consumer);
            }
        }
        return reporter;
    }

    private static void configs(final RequestBuilder request, final AssignmentConfigs configs,
                                final AssignorSettings settings) {
        request.acceptableRecoveryLag(configs.acceptableRecoveryLag())
                .maxWarmupReplicas(configs.maxWarmupReplicas())
                .numStandbyReplicas(configs.numStandbyReplicas())
                .probingRebalanceIntervalMs(configs.probingRebalanceIntervalMs())
                .rackAwareAssignmentTags(configs.rackAwareAssignmentTags().toArray(String[]::new))
                .rackAwareStrategy(strategy(configs.rackAwareAssignmentStrategy()));
        configs.rackAwareTrafficCost().ifPresent(request::trafficCost);
        configs.rackAwareNonOverlapCost().ifPresent(request::nonOverlapCost);
        settings.assignor().ifPresent(request::assignor);
        if (settings.standbyRackSpread()) {
            request.standbyRackSpread(true);
        }
        request.assignmentTimeBudgetMs(settings.timeBudgetMs()).balance(Balancing.wire(settings.balance()));
    }

    /** rack.aware.assignment.strategy's values: none, min_traffic, balance_subtopology. */
    static RackAwareStrategy strategy(final String name) {
        if (name == null || name.isBlank()) {
            return RackAwareStrategy.RACK_AWARE_STRATEGY_UNSPECIFIED;
        }
        return switch (name.trim().toLowerCase(Locale.ROOT)) {
            case "none" -> RackAwareStrategy.RACK_AWARE_STRATEGY_NONE;
            case "min_traffic" -> RackAwareStrategy.RACK_AWARE_STRATEGY_MIN_TRAFFIC;
            case "balance_subtopology" -> RackAwareStrategy.RACK_AWARE_STRATEGY_BALANCE_SUBTOPOLOGY;
            default -> throw new IllegalArgumentException("unknown rack.aware.assignment.strategy '" + name + "'");
        };
    }

    private static String[] sourceTopics(final TaskInfo[] tasks) {
        final TreeSet<String> topics = new TreeSet<>();
        for (final TaskInfo info : tasks) {
            for (final TaskTopicPartition partition : info.topicPartitions()) {
                if (partition.isSource()) {
                    topics.add(partition.topicPartition().topic());
                }
            }
        }
        return topics.toArray(String[]::new);
    }

    static io.kassign.v1.TaskId taskId(final TaskId task) {
        return TaskIds.of(task.topologyName(), task.subtopology(), task.partition());
    }
}
