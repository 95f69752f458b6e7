package io.kassign.streams;

import io.kassign.client.ClientSpec;
import io.kassign.client.RequestBuilder;
import io.kassign.client.TaskIds;
import io.kassign.client.TaskSpec;
import io.kassign.v1.AssignRequest;
import io.kassign.v1.RackAwareStrategy;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
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
        final Map<TaskId, TaskInfo> tasks = sortedTasks(state.allTasks());
        final Map<TaskId, Long> endOffsetSums = endOffsetSums(tasks, clients);
        final RequestBuilder request = RequestBuilder.forGroup(settings.groupId()).nowMs(now.toEpochMilli());
        configs(request, state.assignmentConfigs(), settings);
        final String[] topics = sourceTopics(tasks);
        tasks.forEach((id, info) -> request.task(task(info, endOffsetSums.getOrDefault(id, 0L))));
        for (final KafkaStreamsState client : new TreeMap<>(clients).values()) {
            request.client(client(client, tasks, endOffsetSums, topics));
        }
        return request.build();
    }

    /** The largest known lag per stateful task: the end offset sum the lags are measured against. */
    static Map<TaskId, Long> endOffsetSums(final Map<TaskId, TaskInfo> tasks,
                                           final Map<ProcessId, KafkaStreamsState> clients) {
        final Map<TaskId, Long> sums = new HashMap<>();
        for (final KafkaStreamsState client : clients.values()) {
            client.statefulTasksToLagSums().forEach((task, lag) -> {
                if (tasks.containsKey(task) && lag != null && lag >= 0) {
                    sums.merge(task, lag, Math::max);
                }
            });
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

    private static ClientSpec client(final KafkaStreamsState state, final Map<TaskId, TaskInfo> tasks,
                                     final Map<TaskId, Long> endOffsetSums, final String[] topics) {
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
        final Set<TaskId> previousActive = new HashSet<>(state.previousActiveTasks());
        final Map<TaskId, Long> lags = state.statefulTasksToLagSums();
        for (final TaskId task : tasks.keySet()) {
            final Long offsetSum = offsetSum(task, tasks.get(task), previousActive.contains(task),
                    state.previousStandbyTasks().contains(task), lags.get(task), endOffsetSums.getOrDefault(task, 0L));
            if (offsetSum != null) {
                spec.offsetSum(reporter.get(task), taskId(task), offsetSum);
            }
        }
        final TreeSet<TaskId> activesInOrder = new TreeSet<>(TASK_ORDER);
        activesInOrder.addAll(previousActive);
        for (final TaskId task : activesInOrder) {
            final TaskInfo info = tasks.get(task);
            final String owner = reporter.get(task);
            if (info == null || owner == null) {
                continue;
            }
            for (final TaskTopicPartition partition : info.topicPartitions()) {
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
        request.assignmentTimeBudgetMs(settings.timeBudgetMs());
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

    private static String[] sourceTopics(final Map<TaskId, TaskInfo> tasks) {
        final TreeSet<String> topics = new TreeSet<>();
        for (final TaskInfo info : tasks.values()) {
            for (final TaskTopicPartition partition : info.topicPartitions()) {
                if (partition.isSource()) {
                    topics.add(partition.topicPartition().topic());
                }
            }
        }
        return topics.toArray(String[]::new);
    }

    private static Map<TaskId, TaskInfo> sortedTasks(final Map<TaskId, TaskInfo> tasks) {
        final Map<TaskId, TaskInfo> sorted = new TreeMap<>(TASK_ORDER);
        sorted.putAll(tasks);
        return sorted;
    }

    static io.kassign.v1.TaskId taskId(final TaskId task) {
        return TaskIds.of(task.topologyName(), task.subtopology(), task.partition());
    }
}
