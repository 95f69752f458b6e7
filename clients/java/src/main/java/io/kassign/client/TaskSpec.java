package io.kassign.client;

import io.kassign.v1.TaskId;
import io.kassign.v1.TaskInfo;
import io.kassign.v1.TaskTopicPartition;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.TreeSet;

/**
 * One task of the topology, from plain values: whether it keeps state, the partitions it reads and
 * writes with their replicas' racks (KIP-925), and for a stateful task the sum of its changelogs'
 * end offsets, against which the service computes every client's lag (KIP-441).
 *
 * <pre>{@code
 * TaskSpec.stateful(0, 1).stores("counts")
 *         .source("orders", 1, "rack-a", "rack-b")
 *         .changelog("app-counts-changelog", 1, "rack-a")
 *         .changelogEndOffsetSum(52_000);
 * }</pre>
 */
public final class TaskSpec {
    private static final Comparator<TaskTopicPartition> PARTITION_ORDER =
            Comparator.comparing(TaskTopicPartition::getTopic).thenComparingInt(TaskTopicPartition::getPartition);

    private final TaskId id;
    private final boolean stateful;
    private final TreeSet<String> stores = new TreeSet<>();
    private final List<TaskTopicPartition> partitions = new ArrayList<>();
    private long changelogEndOffsetSum;

    private TaskSpec(final TaskId id, final boolean stateful) {
        this.id = id;
        this.stateful = stateful;
    }

    /** A task with state (standbys and lags apply to it). */
    public static TaskSpec stateful(final int subtopology, final int partition) {
        return new TaskSpec(TaskIds.of(subtopology, partition), true);
    }

    /** A task without state. */
    public static TaskSpec stateless(final int subtopology, final int partition) {
        return new TaskSpec(TaskIds.of(subtopology, partition), false);
    }

    /** Any task id, stateful or not. */
    public static TaskSpec of(final TaskId id, final boolean stateful) {
        return new TaskSpec(id, stateful);
    }

    public TaskId id() {
        return id;
    }

    public TaskSpec stores(final String... storeNames) {
        stores.addAll(Arrays.asList(storeNames));
        return this;
    }

    /** A source partition; {@code racks}: where its replicas live (none: unknown). */
    public TaskSpec source(final String topic, final int partition, final String... racks) {
        return partition(topic, partition, true, false, racks);
    }

    /** A changelog partition of one of the task's stores. */
    public TaskSpec changelog(final String topic, final int partition, final String... racks) {
        return partition(topic, partition, false, true, racks);
    }

    /** A partition with explicit flags (a source topic reused as changelog is both). */
    public TaskSpec partition(final String topic, final int partition, final boolean source, final boolean changelog,
                              final String... racks) {
        partitions.add(TaskTopicPartition.newBuilder()
                .setTopic(topic)
                .setPartition(partition)
                .setIsSource(source)
                .setIsChangelog(changelog)
                .addAllRackIds(new TreeSet<>(Arrays.asList(racks)))
                .build());
        return this;
    }

    /** The sum of the end offsets of the task's changelog partitions. */
    public TaskSpec changelogEndOffsetSum(final long endOffsetSum) {
        if (endOffsetSum < 0) {
            throw new IllegalArgumentException("changelog end offset sum must not be negative, got " + endOffsetSum);
        }
        this.changelogEndOffsetSum = endOffsetSum;
        return this;
    }

    /** The wire message, partitions sorted by topic then partition. */
    public TaskInfo toProto() {
        final List<TaskTopicPartition> sorted = new ArrayList<>(partitions);
        sorted.sort(PARTITION_ORDER);
        return TaskInfo.newBuilder()
                .setId(id)
                .setStateful(stateful)
                .addAllStateStoreNames(stores)
                .addAllTopicPartitions(sorted)
                .setChangelogEndOffsetSum(changelogEndOffsetSum)
                .build();
    }
}
