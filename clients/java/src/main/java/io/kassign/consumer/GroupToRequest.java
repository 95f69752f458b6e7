package io.kassign.consumer;

import com.google.protobuf.ByteString;
import io.kassign.v1.CoPartitionedTopics;
import io.kassign.v1.ConsumerAssignOptions;
import io.kassign.v1.ConsumerAssignRequest;
import io.kassign.v1.ConsumerSubscription;
import io.kassign.v1.ConsumerTopic;
import io.kassign.v1.MemberSubscription;
import io.kassign.v1.PartitionReplicas;
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
 */
final class GroupToRequest {
    private GroupToRequest() {
    }

    static ConsumerAssignRequest convert(final Cluster cluster, final GroupSubscription group,
                                         final ConsumerSettings settings, final RebalanceProtocol protocol) {
        final ConsumerAssignRequest.Builder request = ConsumerAssignRequest.newBuilder()
                .setGroupId(settings.groupId())
                .setAssignor(settings.assignor());
        // Every member usually lists the same topics: a hash set, sorted once, not a tree set per member.
        final Set<String> subscribed = new HashSet<>();
        for (final Map.Entry<String, Subscription> member : group.groupSubscription().entrySet()) {
            request.addMembers(member(member.getKey(), member.getValue()));
            subscribed.addAll(member.getValue().topics());
        }
        final List<String> topics = new ArrayList<>(subscribed);
        Collections.sort(topics);
        final Map<List<String>, PartitionReplicas> replicas = new HashMap<>();
        for (final String topic : topics) {
            // A topic missing from the metadata has no partitions to assign (Kafka's assignors skip it too).
            if (cluster.partitionCountForTopic(topic) != null) {
                request.addTopics(topic(cluster, topic, replicas));
            }
        }
        final ConsumerAssignOptions.Builder options = ConsumerAssignOptions.newBuilder()
                .setProtocol(protocol == RebalanceProtocol.COOPERATIVE
                        ? io.kassign.v1.RebalanceProtocol.REBALANCE_PROTOCOL_COOPERATIVE
                        : io.kassign.v1.RebalanceProtocol.REBALANCE_PROTOCOL_EAGER)
                .setSolverTimeBudgetMs(settings.timeBudgetMs());
        for (final List<String> set : settings.coPartitioned()) {
            options.addCoPartitioned(CoPartitionedTopics.newBuilder().addAllTopics(set));
        }
        return request.setOptions(options).build();
    }

    static MemberSubscription member(final String memberId, final Subscription subscription) {
        final ConsumerSubscription.Builder s = ConsumerSubscription.newBuilder()
                .addAllTopics(subscription.topics())
                .setRackId(subscription.rackId().orElse(""));
        for (final TopicPartition owned : subscription.ownedPartitions()) {
            s.addOwnedPartitions(io.kassign.v1.TopicPartition.newBuilder()
                    .setTopic(owned.topic()).setPartition(owned.partition()));
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

    /** partitions[i] is partition i; one the metadata does not list has no known replica. */
    static ConsumerTopic topic(final Cluster cluster, final String topic) {
        return topic(cluster, topic, new HashMap<>());
    }

    /**
     * As above, sharing one PartitionReplicas message per distinct rack list through {@code made}
     * (a large cluster has a million partitions but few rack lists; the messages are immutable).
     */
    static ConsumerTopic topic(final Cluster cluster, final String topic, final Map<List<String>, PartitionReplicas> made) {
        final int count = cluster.partitionCountForTopic(topic);
        final List<PartitionReplicas> partitions = new ArrayList<>(count);
        for (int p = 0; p < count; p++) {
            partitions.add(PartitionReplicas.getDefaultInstance());
        }
        for (final PartitionInfo info : cluster.partitionsForTopic(topic)) {
            if (info.partition() >= 0 && info.partition() < count) {
                partitions.set(info.partition(), made.computeIfAbsent(racks(info),
                        racks -> PartitionReplicas.newBuilder().addAllRackIds(racks).build()));
            }
        }
        return ConsumerTopic.newBuilder().setName(topic).addAllPartitions(partitions).build();
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
