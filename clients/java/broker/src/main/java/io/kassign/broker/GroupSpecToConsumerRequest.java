package io.kassign.broker;

import io.kassign.v1.ConsumerAssignOptions;
import io.kassign.v1.ConsumerAssignRequest;
import io.kassign.v1.ConsumerSubscription;
import io.kassign.v1.ConsumerTopic;
import io.kassign.v1.MemberSubscription;
import io.kassign.v1.PartitionReplicas;
import io.kassign.v1.RebalanceProtocol;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;

/**
 * The coordinator's view of a KIP-848 group as a ConsumerAssignRequest: members sorted by id, each
 * with its subscribed topics, rack, instance id and current target assignment as owned partitions;
 * the subscribed topics with each partition's replica racks.
 *
 * <p>The broker API names topics only by id (GroupSpec and SubscribedTopicDescriber carry no
 * names), so a topic's name in the request is its Uuid's string (base64url, 22 characters: a legal
 * topic name). No generation and no user data are sent: the coordinator keeps one target
 * assignment, so no two members claim one partition, and nothing else is known.
 *
 * <p>The protocol sent is EAGER: the coordinator hands a moved partition over only once its
 * previous owner has revoked it (KIP-848 reconciliation), so the target must name every
 * partition's owner, never withhold one for a later round as the classic cooperative protocol does.
 * Deterministic: the same group and metadata give the same bytes.
 */
final class GroupSpecToConsumerRequest {
    private GroupSpecToConsumerRequest() {
    }

    /** The subscribed topics in the metadata: name sent (the id's string) to id, and partition counts. */
    record Topics(Map<String, Uuid> ids, Map<Uuid, Integer> partitions) {
        static Topics of(final GroupSpec group, final SubscribedTopicDescriber describer) {
            final Map<String, Uuid> ids = new TreeMap<>();
            final Map<Uuid, Integer> partitions = new TreeMap<>();
            for (final Uuid id : subscribed(group)) {
                final int count = describer.numPartitions(id);
                if (count >= 0) { // -1: not in the metadata (deleted, or not yet known); nothing to assign
                    ids.put(name(id), id);
                    partitions.put(id, count);
                }
            }
            return new Topics(Collections.unmodifiableMap(ids), Collections.unmodifiableMap(partitions));
        }

        boolean has(final Uuid topic, final int partition) {
            final Integer count = partitions.get(topic);
            return count != null && partition >= 0 && partition < count;
        }
    }

    static String name(final Uuid topic) {
        return topic.toString();
    }

    /** Every topic some member subscribes to; one member's set when the subscriptions are homogeneous. */
    static Set<Uuid> subscribed(final GroupSpec group) {
        final Set<Uuid> topics = new TreeSet<>();
        for (final String member : group.memberIds()) {
            topics.addAll(group.memberSubscription(member).subscribedTopicIds());
            if (group.subscriptionType() == SubscriptionType.HOMOGENEOUS) {
                break;
            }
        }
        return topics;
    }

    static ConsumerAssignRequest convert(final GroupSpec group, final SubscribedTopicDescriber describer,
                                         final Topics topics, final ConsumerGroupSettings settings) {
        final ConsumerAssignRequest.Builder request = ConsumerAssignRequest.newBuilder()
                .setGroupId(settings.groupId())
                .setAssignor(settings.assignor());
        for (final String member : new TreeSet<>(group.memberIds())) {
            request.addMembers(member(group, member, topics));
        }
        final Map<Set<String>, PartitionReplicas> replicas = new HashMap<>();
        topics.partitions().forEach((id, count) -> request.addTopics(topic(describer, id, count, replicas)));
        return request.setOptions(ConsumerAssignOptions.newBuilder()
                        .setProtocol(RebalanceProtocol.REBALANCE_PROTOCOL_EAGER)
                        .setSolverTimeBudgetMs(settings.timeBudgetMs()))
                .build();
    }

    private static MemberSubscription member(final GroupSpec group, final String member, final Topics topics) {
        final MemberSubscription.Builder sent = MemberSubscription.newBuilder().setMemberId(member);
        final org.apache.kafka.coordinator.group.api.assignor.MemberSubscription subscription =
                group.memberSubscription(member);
        subscription.instanceId().ifPresent(sent::setGroupInstanceId);
        final ConsumerSubscription.Builder s = ConsumerSubscription.newBuilder()
                .setRackId(subscription.rackId().orElse(""));
        for (final Uuid topic : new TreeSet<>(subscription.subscribedTopicIds())) {
            s.addTopics(name(topic));
        }
        // The current target, restricted to partitions still in the metadata.
        final Map<Uuid, Set<Integer>> owned = new TreeMap<>(group.memberAssignment(member).partitions());
        owned.forEach((topic, partitions) -> {
            for (final int p : new TreeSet<>(partitions)) {
                if (topics.has(topic, p)) {
                    s.addOwnedPartitions(io.kassign.v1.TopicPartition.newBuilder().setTopic(name(topic)).setPartition(p));
                }
            }
        });
        return sent.setSubscription(s).build();
    }

    /**
     * partitions[i] is partition i, with the racks holding a replica of it, sorted; one message per
     * distinct rack set, shared through {@code made} (a million partitions, a few rack sets).
     */
    private static ConsumerTopic topic(final SubscribedTopicDescriber describer, final Uuid id, final int count,
                                       final Map<Set<String>, PartitionReplicas> made) {
        final List<PartitionReplicas> partitions = new ArrayList<>(count);
        for (int p = 0; p < count; p++) {
            partitions.add(made.computeIfAbsent(new TreeSet<>(describer.racksForPartition(id, p)),
                    racks -> PartitionReplicas.newBuilder().addAllRackIds(racks).build()));
        }
        return ConsumerTopic.newBuilder().setName(name(id)).addAllPartitions(partitions).build();
    }
}
