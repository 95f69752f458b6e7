package io.kassign.broker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import javax.management.ObjectName;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.coordinator.common.runtime.KRaftCoordinatorMetadataImage;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;
import org.apache.kafka.coordinator.group.modern.SubscribedTopicDescriberImpl;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;

/**
 * KIP-848 consumer groups built from Kafka 4.4's own classes, as the coordinator's
 * TargetAssignmentBuilder builds them: a KRaft MetadataImage replayed from real metadata records
 * (brokers with racks, topics, partitions) behind SubscribedTopicDescriberImpl, and GroupSpecImpl
 * over MemberSubscriptionAndAssignmentImpl; and the checks every answer must pass.
 */
final class ConsumerGroups {
    private ConsumerGroups() {
    }

    /** A cluster: brokers 1..n with racks, topics with replicas per partition; ids by topic name. */
    record Cluster(SubscribedTopicDescriberImpl describer, Map<String, Uuid> ids, Map<Integer, String> racks,
                   Map<Uuid, List<List<Integer>>> replicas) {

        Uuid id(final String topic) {
            return ids.get(topic);
        }

        /** Whether a replica of the partition sits in {@code rack}. */
        boolean local(final Uuid topic, final int partition, final Optional<String> rack) {
            return rack.isPresent() && replicas.get(topic).get(partition).stream()
                    .anyMatch(b -> rack.get().equals(racks.get(b)));
        }
    }

    /** Replicas of partition p on brokers 1 + p % 3 and 1 + (p + 1) % 3: each partition misses one rack. */
    static List<List<Integer>> rotating(final int partitions) {
        final List<List<Integer>> replicas = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            replicas.add(List.of(1 + p % 3, 1 + (p + 1) % 3));
        }
        return replicas;
    }

    /** Brokers 1, 2, 3 in rack-a, rack-b, rack-c, and the topics. */
    static Cluster cluster(final Map<String, List<List<Integer>>> topics) {
        return cluster(Map.of(1, "rack-a", 2, "rack-b", 3, "rack-c"), topics);
    }

    static Cluster cluster(final Map<Integer, String> racks, final Map<String, List<List<Integer>>> topics) {
        final MetadataDelta delta = new MetadataDelta.Builder().setImage(MetadataImage.EMPTY).build();
        racks.forEach((broker, rack) -> delta.replay(new RegisterBrokerRecord().setBrokerId(broker)
                .setIncarnationId(new Uuid(7L, broker)).setRack(rack).setFenced(false)));
        final Map<String, Uuid> ids = new TreeMap<>();
        final Map<Uuid, List<List<Integer>>> replicas = new HashMap<>();
        int n = 0;
        for (final Map.Entry<String, List<List<Integer>>> topic : new TreeMap<>(topics).entrySet()) {
            // the low word mixed (odd multiplier: distinct), so the ids hash apart as Kafka's random
            // ones do: n added to both words gave 500 topics 62 hash codes, and every Uuid-keyed map
            // (Kafka's and the plug-in's) slow tree bins; the high word keeps the topics' order
            final Uuid id = new Uuid(0x4b61737369676e00L + n, 0x746f706963L + n++ * 0x9E3779B97F4A7C15L);
            ids.put(topic.getKey(), id);
            replicas.put(id, topic.getValue());
            delta.replay(new TopicRecord().setName(topic.getKey()).setTopicId(id));
            for (int p = 0; p < topic.getValue().size(); p++) {
                final List<Integer> brokers = topic.getValue().get(p);
                delta.replay(new PartitionRecord().setTopicId(id).setPartitionId(p).setReplicas(brokers)
                        .setIsr(brokers).setLeader(brokers.get(0)).setLeaderEpoch(0).setPartitionEpoch(0));
            }
        }
        final MetadataImage image = delta.apply(MetadataProvenance.EMPTY);
        return new Cluster(new SubscribedTopicDescriberImpl(new KRaftCoordinatorMetadataImage(image)), ids, racks,
                replicas);
    }

    /** A member: its rack (null: none), subscribed topics and current target. */
    record Member(String rack, Set<Uuid> topics, Map<Uuid, Set<Integer>> owned) {
        static Member of(final String rack, final Uuid... topics) {
            return new Member(rack, Set.of(topics), Map.of());
        }

        Member owning(final Map<Uuid, Set<Integer>> partitions) {
            return new Member(rack, topics, partitions);
        }
    }

    /** The GroupSpec the coordinator builds: members, subscription type, inverted current targets. */
    static GroupSpecImpl group(final Map<String, Member> members) {
        return group(members, Optional.empty());
    }

    static GroupSpecImpl group(final Map<String, Member> members,
                               final Optional<Map<Uuid, Set<Integer>>> assignable) {
        final Map<String, MemberSubscriptionAndAssignmentImpl> specs = new LinkedHashMap<>();
        final Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
        members.forEach((id, m) -> {
            specs.put(id, new MemberSubscriptionAndAssignmentImpl(Optional.ofNullable(m.rack()), Optional.empty(),
                    m.topics(), new Assignment(m.owned())));
            m.owned().forEach((topic, partitions) -> partitions.forEach(
                    p -> inverted.computeIfAbsent(topic, t -> new HashMap<>()).put(p, id)));
        });
        final boolean homogeneous = members.values().stream().map(Member::topics).distinct().count() <= 1;
        return new GroupSpecImpl(specs, homogeneous ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS,
                inverted, assignable);
    }

    /** Every member's partitions, as sorted maps (GroupAssignment's maps compare by content already). */
    static Map<String, Map<Uuid, Set<Integer>>> sorted(final GroupAssignment assignment) {
        final Map<String, Map<Uuid, Set<Integer>>> out = new TreeMap<>();
        assignment.members().forEach((member, a) -> {
            final Map<Uuid, Set<Integer>> partitions = new TreeMap<>();
            a.partitions().forEach((t, ps) -> {
                if (!ps.isEmpty()) {
                    partitions.put(t, new TreeSet<>(ps));
                }
            });
            out.put(member, partitions);
        });
        return out;
    }

    /** Every member answered; every partition of a subscribed topic once, to a subscriber. */
    static void assertValid(final GroupAssignment assignment, final GroupSpec group, final Cluster cluster) {
        assertEquals(new TreeSet<>(group.memberIds()), new TreeSet<>(assignment.members().keySet()), "members");
        final Map<Uuid, Set<Integer>> seen = new HashMap<>();
        final Set<Uuid> subscribed = new TreeSet<>();
        for (final String member : group.memberIds()) {
            final Set<Uuid> topics = group.memberSubscription(member).subscribedTopicIds();
            subscribed.addAll(topics);
            final MemberAssignment given = assignment.members().get(member);
            given.partitions().forEach((topic, partitions) -> {
                if (!partitions.isEmpty()) {
                    assertTrue(topics.contains(topic), member + " given a topic it does not subscribe to");
                }
                for (final int p : partitions) {
                    assertTrue(seen.computeIfAbsent(topic, t -> new TreeSet<>()).add(p), topic + "-" + p + " twice");
                }
            });
        }
        for (final Uuid topic : subscribed) {
            final int count = cluster.describer().numPartitions(topic);
            if (count >= 0) {
                assertEquals(count, seen.getOrDefault(topic, Set.of()).size(), "partitions of " + topic + " assigned");
            }
        }
    }

    /** How many assigned partitions have no replica in their member's rack. */
    static int crossRack(final GroupAssignment assignment, final GroupSpec group, final Cluster cluster) {
        int crossing = 0;
        for (final Map.Entry<String, MemberAssignment> m : assignment.members().entrySet()) {
            final Optional<String> rack = group.memberSubscription(m.getKey()).rackId();
            for (final Map.Entry<Uuid, Set<Integer>> t : m.getValue().partitions().entrySet()) {
                for (final int p : t.getValue()) {
                    crossing += cluster.local(t.getKey(), p, rack) ? 0 : 1;
                }
            }
        }
        return crossing;
    }

    /** Partition counts per member. */
    static List<Integer> counts(final GroupAssignment assignment) {
        final List<Integer> counts = new ArrayList<>();
        for (final MemberAssignment a : assignment.members().values()) {
            counts.add(a.partitions().values().stream().mapToInt(Set::size).sum());
        }
        return counts;
    }

    /**
     * A plug-in configured as a broker would be: node 7, the target, a group id for its metrics, and
     * a 5 s deadline (a cold test JVM's first gRPC call can take longer than the default 300 ms;
     * the tests of the deadline set it) unless {@code more} (key, value, ...) says otherwise.
     */
    static KassignConsumerGroupAssignor assignor(final String metricsId, final String target, final Object... more) {
        final Map<String, Object> configs = new HashMap<>(Map.of("node.id", "7", "kassign.target", target,
                ConsumerGroupSettings.GROUP_ID, metricsId, "kassign.deadline.ms", "5000"));
        for (int i = 0; i + 1 < more.length; i += 2) {
            configs.put((String) more[i], more[i + 1]);
        }
        final KassignConsumerGroupAssignor assignor = new KassignConsumerGroupAssignor();
        assignor.configure(configs);
        return assignor;
    }

    /** A metric of the plug-in's JMX bean for {@code metricsId} (suffix: ",cause=..." for per-cause beans). */
    static double metric(final String metricsId, final String suffix, final String name) {
        try {
            final String type = KassignConsumerGroupAssignor.METRICS_TYPE + (suffix.isEmpty() ? "" : "-fallbacks");
            final ObjectName bean = new ObjectName("kassign:type=" + type + ",client-id=" + metricsId + suffix);
            if (!ManagementFactory.getPlatformMBeanServer().isRegistered(bean)) {
                return 0;
            }
            return ((Number) ManagementFactory.getPlatformMBeanServer().getAttribute(bean, name)).doubleValue();
        } catch (final Exception e) {
            throw new AssertionError("cannot read metric " + name + " of " + metricsId, e);
        }
    }
}
