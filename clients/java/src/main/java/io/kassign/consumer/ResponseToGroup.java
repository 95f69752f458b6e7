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
 * The service's answer as Kafka's GroupAssignment: each member's partition runs (the compact answer
 * {@link GroupToRequest} asks for) read into the Assignment the member will receive, checked before
 * Kafka sees it.
 *
 * <p>Refused ({@link InvalidAnswer}, so the plug-in falls back): a member missing, unknown or twice;
 * a member answered without runs (a service older than the compact wire, which reads the compact
 * request as members subscribed to nothing and answers them with nothing, validly); runs that do
 * not add up, or assignment bytes (sent only when asked for) that disagree with them; a partition
 * given twice, not in the metadata, or of a topic its member did not subscribe to; and, under
 * COOPERATIVE, a partition handed to a new owner while another member still claims it. That last
 * check is the one Kafka's ConsumerCoordinator applies (and throws on) after any assignor but its
 * own cooperative-sticky.
 *
 * <p>Why it looks the way it does: a large group's answer holds every partition of the group (a
 * million in Kafka's largest test), so each is touched a fixed, small number of times: who holds
 * which partition is kept per topic in an array indexed by partition, rather than in sets of
 * TopicPartition; topics go by their index in the answer's table, and which of them a member
 * subscribed to is worked out once per distinct topic list (a large group's members mostly list
 * the same topics), not topic by topic for every member. The deadline is checked once per member.
 */
final class ResponseToGroup {
    private ResponseToGroup() {
    }

    /** One answered topic as the checks see it. */
    private static final class Topic {
        /** holder[p]: the response position + 1 of the member given partition p; 0 for none. */
        final int[] holder;

        Topic(final int partitions) {
            this.holder = new int[partitions];
        }
    }

    /** The answer's topic table: each name's record (null when the metadata does not know it), by index. */
    private static final class Table {
        final String[] names;
        final Topic[] topics;
        private final Map<String, Integer> index;
        private final Map<List<String>, boolean[]> subscribed = new HashMap<>();

        Table(final List<String> names, final Cluster cluster) {
            this.names = names.toArray(new String[0]);
            this.topics = new Topic[this.names.length];
            this.index = new HashMap<>(2 * this.names.length);
            for (int i = 0; i < this.names.length; i++) {
                index.putIfAbsent(this.names[i], i);
                topics[i] = topic(cluster, this.names[i]);
            }
        }

        /** Per table index, whether {@code list} names that topic: made once per distinct list. */
        boolean[] subscribed(final List<String> list) {
            return subscribed.computeIfAbsent(list, topics -> {
                final boolean[] marked = new boolean[names.length];
                for (final String topic : topics) {
                    final Integer at = index.get(topic);
                    if (at != null) {
                        marked[at] = true;
                    }
                }
                return marked;
            });
        }

        /** The records by name, for the checks that start from a member's owned partitions. */
        Map<String, Topic> byName() {
            final Map<String, Topic> out = new HashMap<>(2 * names.length);
            for (final Map.Entry<String, Integer> name : index.entrySet()) {
                if (topics[name.getValue()] != null) {
                    out.put(name.getKey(), topics[name.getValue()]);
                }
            }
            return out;
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
        final Table table = new Table(response.getTopicsList(), cluster);
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
            if (!member.hasAssigned()) {
                throw InvalidAnswer.withoutRuns(id);
            }
            result.put(id, runs(member, table, table.subscribed(subscription.topics()), me, ids));
        }
        if (result.size() != members.size()) {
            for (final String id : members.keySet()) {
                if (!result.containsKey(id)) {
                    throw new InvalidAnswer("the service left out member " + id);
                }
            }
        }
        if (protocol == RebalanceProtocol.COOPERATIVE) {
            checkCooperative(members, position, table.byName(), ids, deadline);
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
     * The member's Assignment from a compact answer's runs (issue 24): run i is counts[i]
     * partitions of topic names[topics[i]], the numbers end to end; one TopicPartition per
     * partition, as Kafka's Assignment holds them, and no bytes to decode. Runs that do not add up
     * are refused, and so is a partition of a topic the member ({@code me}) did not subscribe to
     * ({@code subscribed}, by table index) or the metadata does not hold, or already given
     * (recorded in the table's holders). Bytes sent too (asked
     * for) must hold the same partitions. Why the checks are made here, run by run: a million
     * partitions were read into TopicPartitions, then walked again to look each one's topic up by
     * name (JFR); a run's topic is looked up once.
     */
    private static Assignment runs(final ConsumerMemberAssignment member, final Table table,
                                   final boolean[] subscribed, final int me, final String[] ids) {
        final String[] names = table.names;
        final io.kassign.v1.PartitionRuns runs = member.getAssigned();
        final int total = runs.getPartitionsCount();
        if (runs.getTopicsCount() != runs.getCountsCount()) {
            throw new InvalidAnswer("member " + member.getMemberId() + "'s runs have " + runs.getTopicsCount()
                    + " topics for " + runs.getCountsCount() + " counts");
        }
        final List<TopicPartition> partitions = new ArrayList<>(total);
        int at = 0;
        for (int r = 0; r < runs.getTopicsCount(); r++) {
            final int index = runs.getTopics(r);
            final int count = runs.getCounts(r);
            if (index < 0 || index >= names.length || count < 0 || count > total - at) {
                throw new InvalidAnswer("member " + member.getMemberId() + "'s run " + r + " names topic " + index
                        + " of " + names.length + " with " + count + " partitions, past the answer's lists");
            }
            final String name = names[index];
            final Topic topic = subscribed[index] ? table.topics[index] : null;
            for (final int end = at + count; at < end; at++) {
                final int partition = runs.getPartitions(at);
                if (topic == null || partition < 0 || partition >= topic.holder.length) {
                    throw new InvalidAnswer("the service gave member " + ids[me] + " partition "
                            + new TopicPartition(name, partition) + ", not of a topic it subscribed to in the metadata");
                }
                final int other = topic.holder[partition];
                if (other != 0) {
                    throw new InvalidAnswer("the service gave partition " + new TopicPartition(name, partition)
                            + " to both " + ids[other] + " and " + ids[me]);
                }
                topic.holder[partition] = me;
                partitions.add(new TopicPartition(name, partition));
            }
        }
        if (at != total) {
            throw new InvalidAnswer("member " + member.getMemberId() + "'s runs count " + at + " of its "
                    + total + " partitions");
        }
        if (member.getAssignment().isEmpty()) {
            return new Assignment(partitions);
        }
        final Assignment decoded = ConsumerProtocol.deserializeAssignment(
                ByteBuffer.wrap(member.getAssignment().toByteArray()));
        if (decoded.partitions().size() != partitions.size()
                || !new HashSet<>(decoded.partitions()).equals(new HashSet<>(partitions))) {
            throw new InvalidAnswer("member " + member.getMemberId() + "'s assignment bytes hold "
                    + decoded.partitions() + ", its runs " + partitions);
        }
        return decoded;
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
