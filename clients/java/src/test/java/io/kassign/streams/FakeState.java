package io.kassign.streams;

import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskInfo;
import org.apache.kafka.streams.processor.assignment.TaskTopicPartition;
import org.apache.kafka.streams.state.HostInfo;

/**
 * Test-side implementations of KIP-924's read-only input interfaces, built from plain values the
 * way Kafka's StreamsPartitionAssignor would fill them.
 */
final class FakeState {
    private FakeState() {
    }

    static ProcessId pid(final int n) {
        return new ProcessId(new UUID(0L, n));
    }

    static TaskId task(final int subtopology, final int partition) {
        return new TaskId(subtopology, partition);
    }

    record Partition(TopicPartition topicPartition, boolean isSource, boolean isChangelog,
                     Optional<Set<String>> rackIds) implements TaskTopicPartition {
        static Partition source(final String topic, final int partition, final String... racks) {
            return new Partition(new TopicPartition(topic, partition), true, false, racks(racks));
        }

        static Partition changelog(final String topic, final int partition, final String... racks) {
            return new Partition(new TopicPartition(topic, partition), false, true, racks(racks));
        }

        private static Optional<Set<String>> racks(final String... racks) {
            return racks.length == 0 ? Optional.empty() : Optional.of(Set.of(racks));
        }
    }

    record Task(TaskId id, boolean isStateful, Set<String> stateStoreNames, Set<TaskTopicPartition> topicPartitions)
            implements TaskInfo {
        static Task stateful(final TaskId id, final String store, final TaskTopicPartition... partitions) {
            return new Task(id, true, Set.of(store), Set.of(partitions));
        }

        static Task stateless(final TaskId id, final TaskTopicPartition... partitions) {
            return new Task(id, false, Set.of(), Set.of(partitions));
        }
    }

    /** One client: lags for every stateful task (Kafka fills all of them), previous tasks, placement. */
    static final class Client implements KafkaStreamsState {
        final ProcessId processId;
        final SortedSet<String> consumers = new TreeSet<>();
        final SortedSet<TaskId> previousActive = new TreeSet<>();
        final SortedSet<TaskId> previousStandby = new TreeSet<>();
        final Map<TaskId, Long> lags = new HashMap<>();
        final Map<String, SortedSet<TaskId>> byConsumer = new HashMap<>();
        final Map<String, String> tags = new HashMap<>();
        Optional<String> rack = Optional.empty();
        Optional<HostInfo> host = Optional.empty();
        boolean lagsComputed;

        Client(final ProcessId processId, final String... consumerIds) {
            this.processId = processId;
            consumers.addAll(List.of(consumerIds));
        }

        Client active(final String consumer, final TaskId task) {
            previousActive.add(task);
            lags.put(task, -2L);
            byConsumer.computeIfAbsent(consumer, c -> new TreeSet<>()).add(task);
            return this;
        }

        Client standby(final String consumer, final TaskId task, final long lag) {
            previousStandby.add(task);
            lags.put(task, lag);
            byConsumer.computeIfAbsent(consumer, c -> new TreeSet<>()).add(task);
            return this;
        }

        Client lag(final TaskId task, final long lag) {
            lags.put(task, lag);
            return this;
        }

        Client tag(final String key, final String value) {
            tags.put(key, value);
            return this;
        }

        Client rack(final String rackId) {
            rack = Optional.of(rackId);
            return this;
        }

        Client host(final String hostName, final int port) {
            host = Optional.of(new HostInfo(hostName, port));
            return this;
        }

        @Override
        public ProcessId processId() {
            return processId;
        }

        @Override
        public int numProcessingThreads() {
            return consumers.size();
        }

        @Override
        public SortedSet<String> consumerClientIds() {
            return Collections.unmodifiableSortedSet(consumers);
        }

        @Override
        public SortedSet<TaskId> previousActiveTasks() {
            return Collections.unmodifiableSortedSet(previousActive);
        }

        @Override
        public SortedSet<TaskId> previousStandbyTasks() {
            return Collections.unmodifiableSortedSet(previousStandby);
        }

        @Override
        public long lagFor(final TaskId task) {
            requireLags();
            return lags.get(task);
        }

        @Override
        public SortedSet<TaskId> prevTasksByLag(final String consumerClientId) {
            requireLags();
            return byConsumer.getOrDefault(consumerClientId, new TreeSet<>());
        }

        @Override
        public Map<TaskId, Long> statefulTasksToLagSums() {
            requireLags();
            return Collections.unmodifiableMap(lags);
        }

        @Override
        public Optional<HostInfo> hostInfo() {
            return host;
        }

        @Override
        public Map<String, String> clientTags() {
            return Collections.unmodifiableMap(tags);
        }

        @Override
        public Optional<String> rackId() {
            return rack;
        }

        private void requireLags() {
            if (!lagsComputed) {
                throw new UnsupportedOperationException("lags were not requested");
            }
        }
    }

    /** The application: tasks, clients and configs; kafkaStreamsStates(true) may be made to fail. */
    static final class App implements ApplicationState {
        final Map<TaskId, TaskInfo> tasks = new HashMap<>();
        final Map<ProcessId, Client> clients = new HashMap<>();
        AssignmentConfigs configs = configs(0, List.of(), "none");
        /** Thrown by kafkaStreamsStates(true): an exception, or an Error such as NoSuchMethodError. */
        Throwable lagFailure;
        /** Thrown by assignmentConfigs(), which both kassign's conversion and StickyTaskAssignor read. */
        RuntimeException configsFailure;

        static AssignmentConfigs configs(final int standbys, final List<String> tags, final String strategy) {
            return new AssignmentConfigs(10_000L, 2, standbys, 600_000L, tags, OptionalInt.empty(), OptionalInt.empty(),
                    strategy);
        }

        App task(final TaskInfo task) {
            tasks.put(task.id(), task);
            return this;
        }

        App client(final Client client) {
            clients.put(client.processId(), client);
            return this;
        }

        @Override
        public Map<ProcessId, KafkaStreamsState> kafkaStreamsStates(final boolean computeTaskLags) {
            if (computeTaskLags && lagFailure instanceof RuntimeException e) {
                throw e;
            }
            if (computeTaskLags && lagFailure instanceof Error e) {
                throw e;
            }
            final Map<ProcessId, KafkaStreamsState> result = new HashMap<>();
            clients.forEach((id, client) -> {
                client.lagsComputed = computeTaskLags;
                result.put(id, client);
            });
            return result;
        }

        @Override
        public AssignmentConfigs assignmentConfigs() {
            if (configsFailure != null) {
                throw configsFailure;
            }
            return configs;
        }

        @Override
        public Map<TaskId, TaskInfo> allTasks() {
            return Collections.unmodifiableMap(tasks);
        }
    }
}
