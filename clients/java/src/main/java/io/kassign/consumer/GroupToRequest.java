package io.kassign.consumer;

import com.google.protobuf.ByteString;
import io.kassign.plugin.Balancing;
import io.kassign.plugin.IndexedTable;
import io.kassign.v1.CoPartitionedTopics;
import io.kassign.v1.ConsumerAssignOptions;
import io.kassign.v1.ConsumerAssignRequest;
import io.kassign.v1.ConsumerSubscription;
import io.kassign.v1.ConsumerTopic;
import io.kassign.v1.MemberSubscription;
import io.kassign.v1.PartitionReplicas;
import io.kassign.v1.TopicList;
import io.kassign.v1.TopicPartitions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.RebalanceProtocol;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * The leader's view of a rebalance as a ConsumerAssignRequest: every member's subscription as
 * Kafka decoded it (topics, owned partitions, generation, rack, user data), in the order the
 * assignor was given them (Kafka's sticky assignors walk members in that order), and every
 * subscribed topic in the leader's metadata with each partition's replica racks, leader first.
 *
 * <p>In the compact form (issue 24): a large group's members mostly list the same topics, and a
 * million partitions have a few distinct replica rack lists, so each distinct topic list and rack
 * list is sent once and referred to by index ({@code topic_lists}, {@code replica_rack_lists});
 * owned partitions go by topic, numbers packed; and the answer is asked for as runs by topic
 * without Kafka's assignment bytes, which the leader writes itself from the Assignment
 * ({@link ResponseToGroup}).
 */
final class GroupToRequest {
    private GroupToRequest() {
    }

    static ConsumerAssignRequest convert(final Cluster cluster, final GroupSubscription group,
                                         final ConsumerSettings settings, final RebalanceProtocol protocol) {
        final ConsumerAssignRequest.Builder request = ConsumerAssignRequest.newBuilder()
                .setGroupId(settings.groupId())
                .setAssignor(settings.assignor());
        // Every member usually lists the same topics: each distinct list sent once, read once.
        final Set<String> subscribed = new HashSet<>();
        final IndexedTable<List<String>> lists = new IndexedTable<>(listed -> {
            request.addTopicLists(TopicList.newBuilder().addAllTopics(listed));
            subscribed.addAll(listed);
        });
        final Map<String, ByteString> names = new HashMap<>();
        for (final Map.Entry<String, Subscription> member : group.groupSubscription().entrySet()) {
            request.addMembers(member(member.getKey(), member.getValue(), lists.indexOf(member.getValue().topics()),
                    names));
        }
        final List<String> topics = new ArrayList<>(subscribed);
        Collections.sort(topics);
        final IndexedTable<List<String>> rackLists = new IndexedTable<>(
                racks -> request.addReplicaRackLists(PartitionReplicas.newBuilder().addAllRackIds(racks)));
        for (final String topic : topics) {
            // A topic missing from the metadata has no partitions to assign (Kafka's assignors skip it too).
            if (cluster.partitionCountForTopic(topic) != null) {
                request.addTopics(compactTopic(cluster, topic, rackLists));
            }
        }
        request.setCompactAnswer(true);
        final ConsumerAssignOptions.Builder options = ConsumerAssignOptions.newBuilder()
                .setProtocol(protocol == RebalanceProtocol.COOPERATIVE
                        ? io.kassign.v1.RebalanceProtocol.REBALANCE_PROTOCOL_COOPERATIVE
                        : io.kassign.v1.RebalanceProtocol.REBALANCE_PROTOCOL_EAGER)
                .setSolverTimeBudgetMs(settings.timeBudgetMs())
                .setBalance(Balancing.wire(settings.balance()));
        for (final List<String> set : settings.coPartitioned()) {
            options.addCoPartitioned(CoPartitionedTopics.newBuilder().addAllTopics(set));
        }
        return request.setOptions(options).build();
    }

    /**
     * The member in the compact form: its topics as {@code topic_lists[topicList]}, owned partitions
     * by topic, each topic's name as UTF-8 from {@code names} (filled here, shared by the group's
     * members). Why bytes: a member of a large group owns a partition or two of each of hundreds of
     * topics (a cooperative group's million owned partitions were a million entries), and protobuf
     * measures and encodes a {@code String} field's UTF-8 anew at each write, twice per entry
     * (JFR); bytes are written as they are, the same bytes on the wire.
     */
    static MemberSubscription member(final String memberId, final Subscription subscription, final int topicList,
                                     final Map<String, ByteString> names) {
        final ConsumerSubscription.Builder s = ConsumerSubscription.newBuilder()
                .setTopicList(topicList)
                .setRackId(subscription.rackId().orElse(""));
        TopicPartitions.Builder entry = null;
        String topic = null;
        for (final TopicPartition owned : subscription.ownedPartitions()) {
            if (entry == null || !topic.equals(owned.topic())) {
                if (entry != null) {
                    s.addOwnedByTopic(entry);
                }
                topic = owned.topic();
                entry = TopicPartitions.newBuilder().setTopicBytes(names.computeIfAbsent(topic,
                        ByteString::copyFromUtf8));
            }
            entry.addPartitions(owned.partition());
        }
        if (entry != null) {
            s.addOwnedByTopic(entry);
        }
        subscription.generationId().ifPresent(s::setGenerationId);
        if (subscription.userData() != null) {
            s.setUserDataBytes(ByteString.copyFrom(subscription.userData().duplicate()));
        }
        return MemberSubscription.newBuilder()
                .setMemberId(memberId)
                .setGroupInstanceId(subscription.groupInstanceId().orElse(""))
                .setSubscription(s)
                .build();
    }

    /**
     * The topic in the compact form: its partition count and, when some replica has a rack, per
     * partition an index into the request's {@code replica_rack_lists} ({@code made}). A partition
     * the metadata does not list has no known replica. Why the first pass: most clusters have no
     * racks, and a million partitions' rack lists were most of building the request (JFR), to be
     * thrown away; so the lists are made only when some replica has a rack.
     */
    static ConsumerTopic compactTopic(final Cluster cluster, final String topic, final IndexedTable<List<String>> made) {
        final int count = cluster.partitionCountForTopic(topic);
        final List<PartitionInfo> infos = cluster.partitionsForTopic(topic);
        final ConsumerTopic.Builder out = ConsumerTopic.newBuilder().setName(topic).setPartitionCount(count);
        if (!anyRack(infos, count)) {
            return out.build();
        }
        final List<List<String>> racks = new ArrayList<>(Collections.nCopies(count, List.of()));
        for (final PartitionInfo info : infos) {
            if (info.partition() >= 0 && info.partition() < count) {
                racks.set(info.partition(), racks(info));
            }
        }
        for (final List<String> replicas : racks) {
            out.addReplicaRackList(made.indexOf(replicas));
        }
        return out.build();
    }

    /** Whether {@link #racks} would find a rack among the topic's partitions (the same replicas, no list made). */
    private static boolean anyRack(final List<PartitionInfo> infos, final int count) {
        for (final PartitionInfo info : infos) {
            if (info.partition() < 0 || info.partition() >= count) {
                continue;
            }
            final Node leader = info.leader();
            final boolean hasLeader = leader != null && !leader.isEmpty();
            if (hasLeader && !rack(leader).isEmpty()) {
                return true;
            }
            for (final Node replica : info.replicas() == null ? new Node[0] : info.replicas()) {
                if (replica != null && !(hasLeader && replica.id() == leader.id()) && !rack(replica).isEmpty()) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The racks of every replica (offline ones too, as KIP-881 reads them), the leader's first; "" for no rack. */
    static List<String> racks(final PartitionInfo info) {
        final List<String> racks = new ArrayList<>();
        final Node leader = info.leader();
        final boolean hasLeader = leader != null && !leader.isEmpty();
        if (hasLeader) {
            racks.add(rack(leader));
        }
        for (final Node replica : info.replicas() == null ? new Node[0] : info.replicas()) {
            if (replica != null && !(hasLeader && replica.id() == leader.id())) {
                racks.add(rack(replica));
            }
        }
        return racks;
    }

    private static String rack(final Node node) {
        return node.hasRack() ? node.rack() : "";
    }
}
