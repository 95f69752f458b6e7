package io.kassign.client;

import io.kassign.v1.TaskId;
import java.util.Comparator;

/** Making, ordering and printing {@link TaskId}s the way Kafka Streams does ("0_1", sorted by sub-topology then partition). */
public final class TaskIds {
    /** Named topology (none first), then sub-topology, then partition: Kafka's TaskId order, total. */
    public static final Comparator<TaskId> ORDER = Comparator.comparing(TaskId::getNamedTopology)
            .thenComparingInt(TaskId::getSubtopology)
            .thenComparingInt(TaskId::getPartition);

    private TaskIds() {
    }

    /** Task {@code partition} of sub-topology {@code subtopology}. */
    public static TaskId of(final int subtopology, final int partition) {
        return of("", subtopology, partition);
    }

    /** A task of a named topology ({@code ""}: none). */
    public static TaskId of(final String namedTopology, final int subtopology, final int partition) {
        if (subtopology < 0 || partition < 0) {
            throw new IllegalArgumentException("task id parts must not be negative: " + subtopology + "_" + partition);
        }
        return TaskId.newBuilder()
                .setNamedTopology(namedTopology == null ? "" : namedTopology)
                .setSubtopology(subtopology)
                .setPartition(partition)
                .build();
    }

    /** "0_1", or "topology_0_1" for a named topology, as Kafka prints task ids. */
    public static String format(final TaskId task) {
        final String plain = task.getSubtopology() + "_" + task.getPartition();
        return task.getNamedTopology().isEmpty() ? plain : task.getNamedTopology() + "_" + plain;
    }
}
