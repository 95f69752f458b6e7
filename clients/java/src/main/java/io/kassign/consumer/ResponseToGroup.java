package io.kassign.consumer;

import io.kassign.plugin.Deadline;
import io.kassign.plugin.InvalidAnswer;
import io.kassign.v1.ConsumerAssignResponse;
import io.kassign.v1.ConsumerMemberAssignment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
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
 *
 * <p>Why it looks the way it does: a large group's answer holds every partition of the group (a
 * million in Kafka's largest test), so each is touched a fixed, small number of times. The bytes
 * are decoded once, by Kafka's own {@link ConsumerProtocol}, into the Assignment handed to Kafka;
 * the listed partitions are compared with them position by position (the service writes both in
 * the same sorted order; any other order falls back to comparing them as sets); and who holds
 * which partition is kept per topic in an array indexed by partition, with each member's
 * subscribed topics marked on the same per-topic record, rather than in sets of TopicPartition.
 * The deadline is checked once per member.
 */
final class ResponseToGroup {
    private ResponseToGroup() {
    }

    /** One subscribed topic as the checks see it. */
    private static final class Topic {
        /** holder[p]: the response position + 1 of the member given partition p; 0 for none. */
        final int[] holder;
        /** The response position + 1 of the last member found subscribed to this topic. */
        int subscriber;

        Topic(final int partitions) {
            this.holder = new int[partitions];
        }
    }

    static GroupAssignment convert(final ConsumerAssignResponse response, final GroupSubscription group,
                                   final Cluster cluster, final RebalanceProtocol protocol) {
        return convert(response, group, cluster, protocol, null);
    }

    /** As above, checking {@code deadline} (when not null) once per member and at the end. */
    static GroupAssignment convert(final ConsumerAssignResponse response, final GroupSubscription group,
                                   final Cluster cluster, final RebalanceProtocol protocol, final Deadline deadline) {
        final Map<String, Subscription> members = group.groupSubscription();
        final List<ConsumerMemberAssignment> answered = response.getMembersList();
        final Map<String, Assignment> result = new HashMap<>(2 * answered.size());
        final Map<String, Integer> position = new HashMap<>(2 * answered.size());
        final String[] ids = new String[answered.size() + 1];
        final Map<String, Topic> topics = new HashMap<>();
        for (final ConsumerMemberAssignment member : answered) {
            check(deadline);
            final String id = member.getMemberId();
            final Subscription subscription = members.get(id);
            if (subscription == null) {
                throw new InvalidAnswer("the service assigned partitions to unknown member " + id);
            }
            final int me = position.size() + 1;
            if (position.putIfAbsent(id, me) != null) {
                throw new InvalidAnswer("the service listed member " + id + " twice");
            }
            ids[me] = id;
            for (final String subscribed : subscription.topics()) {
                final Topic topic = topics.computeIfAbsent(subscribed, name -> topic(cluster, name));
                if (topic != null) {
                    topic.subscriber = me;
                }
            }
            final Assignment assignment = decode(member);
            result.put(id, assignment);
            String lastName = null;
            Topic topic = null;
            for (final TopicPartition tp : assignment.partitions()) {
                if (!tp.topic().equals(lastName)) {
                    lastName = tp.topic();
                    topic = topics.get(lastName);
                }
                if (topic == null || topic.subscriber != me || tp.partition() < 0
                        || tp.partition() >= topic.holder.length) {
                    throw new InvalidAnswer("the service gave member " + id + " partition " + tp
                            + ", not of a topic it subscribed to in the metadata");
                }
                final int other = topic.holder[tp.partition()];
                if (other != 0) {
                    throw new InvalidAnswer("the service gave partition " + tp + " to both " + ids[other] + " and "
                            + id);
                }
                topic.holder[tp.partition()] = me;
            }
        }
        if (result.size() != members.size()) {
            for (final String id : members.keySet()) {
                if (!result.containsKey(id)) {
                    throw new InvalidAnswer("the service left out member " + id);
                }
            }
        }
        if (protocol == RebalanceProtocol.COOPERATIVE) {
            checkCooperative(members, position, topics, ids, deadline);
        }
        check(deadline);
        return new GroupAssignment(result);
    }

    /** The topic's record, or null when the metadata does not know it. */
    private static Topic topic(final Cluster cluster, final String name) {
        final Integer count = cluster.partitionCountForTopic(name);
        return count == null ? null : new Topic(count);
    }

    private static void check(final Deadline deadline) {
        if (deadline != null) {
            deadline.check("while checking the answer");
        }
    }

    /**
     * The member's Assignment: its bytes as Kafka decodes them, which must hold exactly its listed
     * partitions; without bytes, its listed partitions.
     */
    private static Assignment decode(final ConsumerMemberAssignment member) {
        final List<io.kassign.v1.TopicPartition> listed = member.getPartitionsList();
        if (member.getAssignment().isEmpty()) {
            final List<TopicPartition> partitions = new ArrayList<>(listed.size());
            for (final io.kassign.v1.TopicPartition tp : listed) {
                partitions.add(new TopicPartition(tp.getTopic(), tp.getPartition()));
            }
            return new Assignment(partitions);
        }
        final Assignment decoded = ConsumerProtocol.deserializeAssignment(
                ByteBuffer.wrap(member.getAssignment().toByteArray()));
        if (!samePartitions(decoded.partitions(), listed)) {
            throw new InvalidAnswer("member " + member.getMemberId() + "'s assignment bytes hold "
                    + decoded.partitions() + ", its partitions list " + listed(listed));
        }
        return decoded;
    }

    /**
     * Whether the bytes hold the listed partitions, each once: position by position when both come
     * in one order (the service writes them so), otherwise as sets, the bytes without repeats.
     */
    static boolean samePartitions(final List<TopicPartition> decoded, final List<io.kassign.v1.TopicPartition> listed) {
        if (decoded.size() != listed.size()) {
            return false;
        }
        boolean inOrder = true;
        for (int i = 0; i < decoded.size() && inOrder; i++) {
            final TopicPartition a = decoded.get(i);
            final io.kassign.v1.TopicPartition b = listed.get(i);
            inOrder = a.partition() == b.getPartition() && a.topic().equals(b.getTopic());
        }
        // In order, a repeat in the bytes is a repeat in the list too: the caller refuses it as a
        // partition given twice.
        if (inOrder) {
            return true;
        }
        final Set<TopicPartition> held = new HashSet<>(decoded);
        return held.size() == decoded.size() && held.equals(listed(listed));
    }

    private static Set<TopicPartition> listed(final List<io.kassign.v1.TopicPartition> listed) {
        final Set<TopicPartition> set = new LinkedHashSet<>();
        for (final io.kassign.v1.TopicPartition tp : listed) {
            set.add(new TopicPartition(tp.getTopic(), tp.getPartition()));
        }
        return set;
    }

    /**
     * No partition goes to a member other than one claiming it while a claimant keeps claiming it:
     * for every partition some member claims, given to another member that does not claim it too.
     */
    private static void checkCooperative(final Map<String, Subscription> members, final Map<String, Integer> position,
                                         final Map<String, Topic> topics, final String[] ids,
                                         final Deadline deadline) {
        final Map<Integer, Set<TopicPartition>> claims = new HashMap<>();
        final Set<TopicPartition> handedOver = new LinkedHashSet<>();
        for (final Map.Entry<String, Subscription> member : members.entrySet()) {
            check(deadline);
            final int me = position.get(member.getKey());
            String lastName = null;
            Topic topic = null;
            for (final TopicPartition tp : member.getValue().ownedPartitions()) {
                if (!tp.topic().equals(lastName)) {
                    lastName = tp.topic();
                    topic = topics.get(lastName);
                }
                final int holder = topic == null || tp.partition() < 0 || tp.partition() >= topic.holder.length
                        ? 0 : topic.holder[tp.partition()];
                if (holder != 0 && holder != me && !claims.computeIfAbsent(holder,
                        h -> new HashSet<>(members.get(ids[h]).ownedPartitions())).contains(tp)) {
                    handedOver.add(tp);
                }
            }
        }
        if (!handedOver.isEmpty()) {
            throw new InvalidAnswer("under COOPERATIVE, partitions still owned by another member were handed over: "
                    + handedOver);
        }
    }
}
