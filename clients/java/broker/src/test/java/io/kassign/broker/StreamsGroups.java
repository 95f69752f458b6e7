package io.kassign.broker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import javax.management.ObjectName;
import org.apache.kafka.coordinator.common.runtime.CoordinatorMetadataImage;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.streams.TopologyMetadata;
import org.apache.kafka.coordinator.group.streams.assignor.AssignmentConfigsImpl;
import org.apache.kafka.coordinator.group.streams.assignor.GroupSpecImpl;
import org.apache.kafka.coordinator.group.streams.assignor.MemberMetadataAndStateImpl;
import org.apache.kafka.coordinator.group.streams.topics.ConfiguredInternalTopic;
import org.apache.kafka.coordinator.group.streams.topics.ConfiguredSubtopology;

/**
 * Streams groups built from Kafka 4.4's own implementation classes (the ones the coordinator's
 * TargetAssignmentBuilder builds: GroupSpecImpl, MemberMetadataAndStateImpl, AssignmentConfigsImpl,
 * TopologyMetadata over ConfiguredSubtopology), and the checks every answer must pass.
 */
final class StreamsGroups {
    private StreamsGroups() {
    }

    /** Subtopology id to partition count; those in {@code stateful} get a changelog topic. */
    static TopologyMetadata topology(final Map<String, Integer> partitions, final Set<String> stateful) {
        final SortedMap<String, ConfiguredSubtopology> subtopologies = new TreeMap<>();
        partitions.forEach((id, count) -> {
            final Map<String, ConfiguredInternalTopic> changelogs = stateful.contains(id)
                    ? Map.of("app-store-" + id + "-changelog",
                            new ConfiguredInternalTopic("app-store-" + id + "-changelog", count, Optional.empty(), Map.of()))
                    : Map.of();
            subtopologies.put(id, new ConfiguredSubtopology(count, Set.of("in-" + id), Map.of(), Set.of(), changelogs));
        });
        return new TopologyMetadata(CoordinatorMetadataImage.EMPTY, subtopologies);
    }

    /** One member's metadata and current state, as the builder below fills it. */
    static final class Member {
        final String process;
        Optional<String> rack = Optional.empty();
        final Map<String, String> tags = new TreeMap<>();
        final Map<String, Set<Integer>> active = new TreeMap<>();
        final Map<String, Set<Integer>> standby = new TreeMap<>();
        final Map<String, Map<Integer, Long>> offsets = new TreeMap<>();
        final Map<String, Map<Integer, Long>> endOffsets = new TreeMap<>();

        Member(final String process) {
            this.process = process;
        }

        Member rack(final String id) {
            rack = Optional.of(id);
            return this;
        }

        Member tag(final String key, final String value) {
            tags.put(key, value);
            return this;
        }

        Member active(final String subtopology, final Integer... partitions) {
            active.computeIfAbsent(subtopology, s -> new TreeSet<>()).addAll(List.of(partitions));
            return this;
        }

        Member standby(final String subtopology, final Integer... partitions) {
            standby.computeIfAbsent(subtopology, s -> new TreeSet<>()).addAll(List.of(partitions));
            return this;
        }

        /** The member's changelog offset sum and end offset sum for one task. */
        Member offsets(final String subtopology, final int partition, final long offset, final long end) {
            offsets.computeIfAbsent(subtopology, s -> new TreeMap<>()).put(partition, offset);
            endOffsets.computeIfAbsent(subtopology, s -> new TreeMap<>()).put(partition, end);
            return this;
        }

        MemberMetadataAndStateImpl build() {
            return new MemberMetadataAndStateImpl(Optional.empty(), rack, process, tags, active, standby, Map.of(),
                    offsets, endOffsets);
        }
    }

    static GroupSpecImpl group(final Map<String, Member> members, final int standbys, final String... tagKeys) {
        final Map<String, MemberMetadataAndStateImpl> built = new HashMap<>();
        members.forEach((id, member) -> built.put(id, member.build()));
        return new GroupSpecImpl(built, new AssignmentConfigsImpl(standbys, List.of(tagKeys)));
    }

    /**
     * What the coordinator needs of any assignment: every member once, every task active exactly
     * once, standbys only of stateful tasks, and no process holding one task twice.
     */
    static void assertValid(final GroupAssignment assignment, final GroupSpecImpl group, final TopologyMetadata topology) {
        assertEquals(group.members().keySet(), assignment.members().keySet(), "members");
        final Map<String, Integer> active = new TreeMap<>();
        final Map<String, Set<String>> held = new HashMap<>();
        assignment.members().forEach((member, tasks) -> {
            final Set<String> process = held.computeIfAbsent(group.memberMetadata(member).processId(), p -> new HashSet<>());
            tasks.activeTasks().forEach((s, ps) -> ps.forEach(p -> {
                active.merge(s + "_" + p, 1, Integer::sum);
                assertTrue(process.add(s + "_" + p), "process holds " + s + "_" + p + " twice");
            }));
            tasks.standbyTasks().forEach((s, ps) -> ps.forEach(p -> {
                assertTrue(topology.isStateful(s), "standby of stateless " + s + "_" + p);
                assertTrue(process.add(s + "_" + p), "process holds " + s + "_" + p + " twice");
            }));
        });
        final Map<String, Integer> expected = new TreeMap<>();
        for (final String s : topology.subtopologies()) {
            for (int p = 0; p < topology.maxNumInputPartitions(s); p++) {
                expected.put(s + "_" + p, 1);
            }
        }
        assertEquals(expected, active, "every task active exactly once");
    }

    /** Task ids ("0_3") a member's assignment lists. */
    static Set<String> ids(final Map<String, Set<Integer>> tasks) {
        final Set<String> ids = new TreeSet<>();
        tasks.forEach((s, ps) -> ps.forEach(p -> ids.add(s + "_" + p)));
        return ids;
    }

    /** Tasks of each process: its members' actives (or standbys) together. */
    static Map<String, Set<String>> byProcess(final GroupAssignment assignment, final GroupSpecImpl group,
                                              final boolean standby) {
        final Map<String, Set<String>> result = new TreeMap<>();
        assignment.members().forEach((member, tasks) -> result
                .computeIfAbsent(group.memberMetadata(member).processId(), p -> new TreeSet<>())
                .addAll(ids(standby ? tasks.standbyTasks() : tasks.activeTasks())));
        return result;
    }

    static long total(final GroupAssignment assignment, final boolean standby) {
        long n = 0;
        for (final MemberAssignment tasks : assignment.members().values()) {
            n += ids(standby ? tasks.standbyTasks() : tasks.activeTasks()).size();
        }
        return n;
    }

    /** A plug-in metric of {@code group} (JMX, as an operator reads it); 0 before it exists. */
    static double metric(final String group, final String name) {
        try {
            final ObjectName bean = new ObjectName("kassign:type=" + KassignStreamsTaskAssignor.METRICS_TYPE
                    + ",client-id=" + group);
            if (!ManagementFactory.getPlatformMBeanServer().isRegistered(bean)) {
                return 0;
            }
            return ((Number) ManagementFactory.getPlatformMBeanServer().getAttribute(bean, name)).doubleValue();
        } catch (final Exception e) {
            throw new AssertionError("cannot read metric " + name + " of " + group, e);
        }
    }

    static void assertNoneEmpty(final Map<String, Set<String>> byProcess) {
        byProcess.forEach((process, tasks) -> assertFalse(tasks.isEmpty(), process + " got nothing"));
    }
}
