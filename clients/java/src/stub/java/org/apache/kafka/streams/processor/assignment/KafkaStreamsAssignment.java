// Compile-only stand-in for the Kafka 3.8 public API our plug-in uses: same signatures, minimal
// bodies of our own. Test-only source tree: never packaged; at run time Kafka's own classes are used.
package org.apache.kafka.streams.processor.assignment;

import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.streams.processor.TaskId;

public class KafkaStreamsAssignment {
    private final ProcessId processId;
    private final Map<TaskId, AssignedTask> tasks;
    private final Optional<Instant> followupRebalanceDeadline;

    private KafkaStreamsAssignment(final ProcessId processId, final Map<TaskId, AssignedTask> tasks,
                                   final Optional<Instant> followupRebalanceDeadline) {
        this.processId = processId;
        this.tasks = tasks;
        this.followupRebalanceDeadline = followupRebalanceDeadline;
    }

    public static KafkaStreamsAssignment of(final ProcessId processId, final Set<AssignedTask> assignment) {
        final Map<TaskId, AssignedTask> tasks = new HashMap<>();
        for (final AssignedTask task : assignment) {
            tasks.put(task.id(), task);
        }
        return new KafkaStreamsAssignment(processId, tasks, Optional.empty());
    }

    public KafkaStreamsAssignment withFollowupRebalance(final Instant rebalanceDeadline) {
        return new KafkaStreamsAssignment(processId, new HashMap<>(tasks), Optional.of(rebalanceDeadline));
    }

    public ProcessId processId() {
        return processId;
    }

    public Map<TaskId, AssignedTask> tasks() {
        return java.util.Collections.unmodifiableMap(tasks);
    }

    public void assignTask(final AssignedTask newTask) {
        tasks.put(newTask.id(), newTask);
    }

    public void removeTask(final AssignedTask removedTask) {
        tasks.remove(removedTask.id());
    }

    public Optional<Instant> followupRebalanceDeadline() {
        return followupRebalanceDeadline;
    }

    public static class AssignedTask {
        private final TaskId id;
        private final Type taskType;

        public AssignedTask(final TaskId id, final Type taskType) {
            this.id = id;
            this.taskType = taskType;
        }

        public enum Type {
            ACTIVE,
            STANDBY
        }

        public TaskId id() {
            return id;
        }

        public Type type() {
            return taskType;
        }

        @Override
        public boolean equals(final Object o) {
            return o instanceof AssignedTask other && id.equals(other.id) && taskType == other.taskType;
        }

        @Override
        public int hashCode() {
            return Objects.hash(id, taskType);
        }

        @Override
        public String toString() {
            return taskType + " " + id;
        }
    }
}
