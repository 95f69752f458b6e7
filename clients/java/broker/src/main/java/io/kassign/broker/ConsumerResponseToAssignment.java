package io.kassign.broker;

import io.kassign.broker.GroupSpecToConsumerRequest.Topics;
import io.kassign.plugin.InvalidAnswer;
import io.kassign.v1.ConsumerAssignResponse;
import io.kassign.v1.ConsumerMemberAssignment;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.modern.MemberAssignmentImpl;

/**
 * The service's answer as the coordinator's GroupAssignment, checked before Kafka sees it.
 *
 * <p>Refused ({@link InvalidAnswer}, so the plug-in falls back): a member unknown, listed twice or
 * left out; a partition of a topic not in the request, out of range, of a topic its member does not
 * subscribe to, or given twice; a partition of a subscribed topic given to no one. Partitions the
 * group marks not assignable ({@link GroupSpec#isPartitionAssignable}; only share groups set any in
 * Kafka 4.4) are left out of the result.
 */
final class ConsumerResponseToAssignment {
    private ConsumerResponseToAssignment() {
    }

    static GroupAssignment convert(final ConsumerAssignResponse response, final GroupSpec group, final Topics topics) {
        final Map<String, MemberAssignment> result = new HashMap<>();
        final Map<Uuid, Map<Integer, String>> owner = new HashMap<>();
        for (final ConsumerMemberAssignment member : response.getMembersList()) {
            final String id = member.getMemberId();
            if (!group.memberIds().contains(id)) {
                throw new InvalidAnswer("the service assigned partitions to unknown member " + id);
            }
            final Set<Uuid> subscribed = group.memberSubscription(id).subscribedTopicIds();
            final Map<Uuid, Set<Integer>> partitions = new TreeMap<>();
            for (final io.kassign.v1.TopicPartition tp : member.getPartitionsList()) {
                final Uuid topic = topics.ids().get(tp.getTopic());
                if (topic == null || !topics.has(topic, tp.getPartition()) || !subscribed.contains(topic)) {
                    throw new InvalidAnswer("the service gave member " + id + " partition " + tp.getTopic() + "-"
                            + tp.getPartition() + ", not of a topic it subscribes to in the metadata");
                }
                final String other = owner.computeIfAbsent(topic, t -> new HashMap<>()).put(tp.getPartition(), id);
                if (other != null) {
                    throw new InvalidAnswer("the service gave partition " + tp.getTopic() + "-" + tp.getPartition()
                            + " to both " + other + " and " + id);
                }
                if (group.isPartitionAssignable(topic, tp.getPartition())) {
                    partitions.computeIfAbsent(topic, t -> new TreeSet<>()).add(tp.getPartition());
                }
            }
            if (result.put(id, new MemberAssignmentImpl(partitions)) != null) {
                throw new InvalidAnswer("the service listed member " + id + " twice");
            }
        }
        for (final String id : group.memberIds()) {
            if (!result.containsKey(id)) {
                throw new InvalidAnswer("the service left out member " + id);
            }
        }
        checkComplete(group, topics, owner);
        return new GroupAssignment(result);
    }

    /** Every partition of every subscribed topic in the metadata has an owner. */
    private static void checkComplete(final GroupSpec group, final Topics topics,
                                      final Map<Uuid, Map<Integer, String>> owner) {
        topics.partitions().forEach((topic, count) -> {
            final int given = owner.getOrDefault(topic, Map.of()).size();
            if (given != count) {
                throw new InvalidAnswer("the service assigned " + given + " of the " + count + " partitions of topic "
                        + topic + " (subscribed by " + subscribers(group, topic) + " members)");
            }
        });
    }

    private static long subscribers(final GroupSpec group, final Uuid topic) {
        return group.memberIds().stream()
                .filter(m -> group.memberSubscription(m).subscribedTopicIds().contains(topic)).count();
    }
}
