package io.kassign.consumer;

import io.kassign.plugin.InvalidAnswer;
import io.kassign.v1.ConsumerAssignResponse;
import io.kassign.v1.ConsumerMemberAssignment;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.RebalanceProtocol;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.TopicPartition;

/**
 * The service's answer as Kafka's GroupAssignment: each member's ConsumerProtocolAssignment bytes
 * decoded as the member will decode them, checked before Kafka sees them.
 *
 * <p>Refused ({@link InvalidAnswer}, so the plug-in falls back): a member missing, unknown or twice;
 * bytes that disagree with the listed partitions; a partition given twice, not in the metadata, or
 * of a topic its member did not subscribe to; and, under COOPERATIVE, a partition handed to a new
 * owner while another member still claims it. That last check is the one Kafka's ConsumerCoordinator
 * applies (and throws on) after any assignor but its own cooperative-sticky.
 */
final class ResponseToGroup {
    private ResponseToGroup() {
    }

    static GroupAssignment convert(final ConsumerAssignResponse response, final GroupSubscription group,
                                   final Cluster cluster, final RebalanceProtocol protocol) {
        final Map<String, Subscription> members = group.groupSubscription();
        final Map<String, Assignment> result = new HashMap<>();
        final Map<TopicPartition, String> owner = new HashMap<>();
        for (final ConsumerMemberAssignment member : response.getMembersList()) {
            final String id = member.getMemberId();
            final Subscription subscription = members.get(id);
            if (subscription == null) {
                throw new InvalidAnswer("the service assigned partitions to unknown member " + id);
            }
            final Assignment assignment = decode(member);
            if (result.put(id, assignment) != null) {
                throw new InvalidAnswer("the service listed member " + id + " twice");
            }
            final Set<String> subscribed = new HashSet<>(subscription.topics());
            for (final TopicPartition tp : assignment.partitions()) {
                final Integer count = cluster.partitionCountForTopic(tp.topic());
                if (!subscribed.contains(tp.topic()) || count == null || tp.partition() < 0 || tp.partition() >= count) {
                    throw new InvalidAnswer("the service gave member " + id + " partition " + tp
                            + ", not of a topic it subscribed to in the metadata");
                }
                final String other = owner.put(tp, id);
                if (other != null) {
                    throw new InvalidAnswer("the service gave partition " + tp + " to both " + other + " and " + id);
                }
            }
        }
        for (final String id : members.keySet()) {
            if (!result.containsKey(id)) {
                throw new InvalidAnswer("the service left out member " + id);
            }
        }
        if (protocol == RebalanceProtocol.COOPERATIVE) {
            checkCooperative(members, owner);
        }
        return new GroupAssignment(result);
    }

    private static Assignment decode(final ConsumerMemberAssignment member) {
        final Set<TopicPartition> listed = new HashSet<>();
        for (final io.kassign.v1.TopicPartition tp : member.getPartitionsList()) {
            listed.add(new TopicPartition(tp.getTopic(), tp.getPartition()));
        }
        if (member.getAssignment().isEmpty()) {
            return new Assignment(List.copyOf(listed));
        }
        final Assignment decoded = ConsumerProtocol.deserializeAssignment(
                ByteBuffer.wrap(member.getAssignment().toByteArray()));
        if (!new HashSet<>(decoded.partitions()).equals(listed) || decoded.partitions().size() != listed.size()) {
            throw new InvalidAnswer("member " + member.getMemberId() + "'s assignment bytes hold "
                    + decoded.partitions() + ", its partitions list " + listed);
        }
        return decoded;
    }

    /** No partition goes to a member other than one claiming it while a claimant keeps claiming it. */
    private static void checkCooperative(final Map<String, Subscription> members,
                                         final Map<TopicPartition, String> owner) {
        final Set<TopicPartition> revoked = new HashSet<>();
        final Set<TopicPartition> added = new HashSet<>();
        for (final Map.Entry<String, Subscription> member : members.entrySet()) {
            final Set<TopicPartition> owned = new HashSet<>(member.getValue().ownedPartitions());
            for (final TopicPartition tp : owned) {
                if (!member.getKey().equals(owner.get(tp))) {
                    revoked.add(tp);
                }
            }
        }
        for (final Map.Entry<TopicPartition, String> assigned : owner.entrySet()) {
            if (!members.get(assigned.getValue()).ownedPartitions().contains(assigned.getKey())) {
                added.add(assigned.getKey());
            }
        }
        added.retainAll(revoked);
        if (!added.isEmpty()) {
            throw new InvalidAnswer("under COOPERATIVE, partitions still owned by another member were handed over: "
                    + added);
        }
    }
}
