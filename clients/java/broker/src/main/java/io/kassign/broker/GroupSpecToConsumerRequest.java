package io.kassign.broker;

import io.kassign.plugin.Balancing;
import io.kassign.plugin.IndexedTable;
import io.kassign.v1.ConsumerAssignOptions;
import io.kassign.v1.ConsumerAssignRequest;
import io.kassign.v1.ConsumerSubscription;
import io.kassign.v1.ConsumerTopic;
import io.kassign.v1.MemberSubscription;
import io.kassign.v1.PartitionReplicas;
import io.kassign.v1.RebalanceProtocol;
import io.kassign.v1.TopicList;
import io.kassign.v1.TopicPartitions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
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
 * topic name), or its topic name where {@link TopicNames} knows it (balance LOAD with
 * {@code kassign.topic.names.bootstrap.servers}: the service's load source labels partitions by
 * topic name). Either way the answer is read back to ids through {@link Topics}. No generation
 * and no user data are sent: the coordinator keeps one target assignment, so no two members claim
 * one partition, and nothing else is known.
 *
 * <p>The protocol sent is EAGER: the coordinator hands a moved partition over only once its
 * previous owner has revoked it (KIP-848 reconciliation), so the target must name every
 * partition's owner, never withhold one for a later round as the classic cooperative protocol does.
 * Deterministic: the same group and metadata give the same bytes.
 *
 * <p>Compact (issue 24): each distinct topic list and replica rack set is sent once and referred
 * to by index, a target by topic with its numbers packed, and the answer is asked for as runs by
 * topic without Kafka's assignment bytes, which the coordinator never reads.
 */
final class GroupSpecToConsumerRequest {
    private GroupSpecToConsumerRequest() {
    }

    /**
     * The subscribed topics in the metadata: name sent to id, and partition counts, sorted by id
     * (the order sent) and hashed (looked up once per member and topic); {@code named} how many are
     * sent by their topic name rather than their id's string.
     */
    record Topics(Map<String, Uuid> ids, Map<Uuid, Integer> partitions, Map<Uuid, Known> known, int named) {
        /** A topic's name as sent and partition count, looked up by id. */
        record Known(String name, int count) {
        }

        /** Every topic sent by its id's string, as without {@code kassign.topic.names.*}. */
        static Topics of(final GroupSpec group, final SubscribedTopicDescriber describer) {
            return of(group, describer, ids -> Map.of());
        }

        /**
         * The topics, each named by {@code names} where it knows the id, else by the id's string.
         * Should a name so sent equal another topic's (a topic named like another's id), every
         * topic is sent by id: the answer's names must map back to exactly one id each.
         */
        static Topics of(final GroupSpec group, final SubscribedTopicDescriber describer,
                         final Function<Set<Uuid>, Map<Uuid, String>> names) {
            final Map<Uuid, Integer> partitions = new TreeMap<>();
            for (final Uuid id : subscribed(group)) {
                final int count = describer.numPartitions(id);
                if (count >= 0) { // -1: not in the metadata (deleted, or not yet known); nothing to assign
                    partitions.put(id, count);
                }
            }
            Map<Uuid, String> named = partitions.isEmpty() ? Map.of() : names.apply(partitions.keySet());
            Map<String, Uuid> ids = sentNames(partitions.keySet(), named);
            if (ids.size() < partitions.size()) {
                named = Map.of();
                ids = sentNames(partitions.keySet(), named);
            }
            final Map<Uuid, Known> known = new HashMap<>();
            ids.forEach((name, id) -> known.put(id, new Known(name, partitions.get(id))));
            return new Topics(Collections.unmodifiableMap(ids), Collections.unmodifiableMap(partitions),
                    Collections.unmodifiableMap(known), named.size());
        }

        private static Map<String, Uuid> sentNames(final Set<Uuid> topics, final Map<Uuid, String> named) {
            final Map<String, Uuid> ids = new TreeMap<>();
            for (final Uuid id : topics) {
                ids.put(named.getOrDefault(id, byId(id)), id);
            }
            return ids;
        }

        /** The name sent for {@code id}: its own when known here, else its id's string. */
        String name(final Uuid id) {
            final Known topic = known.get(id);
            return topic == null ? byId(id) : topic.name();
        }
    }

    /** A topic's id as its name in the request (base64url, 22 characters: a legal topic name). */
    static String byId(final Uuid topic) {
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
        final IndexedTable<Set<Uuid>> lists = new IndexedTable<>(ids -> {
            final TopicList.Builder names = TopicList.newBuilder();
            for (final Uuid topic : new TreeSet<>(ids)) {
                names.addTopics(topics.name(topic));
            }
            request.addTopicLists(names);
        });
        // HOMOGENEOUS: the coordinator says every member subscribes to the same topics, so one list
        // serves them all, without hashing and comparing each member's set (500 topics x 2,000 members).
        final boolean homogeneous = group.subscriptionType() == SubscriptionType.HOMOGENEOUS;
        int shared = -1;
        for (final String member : sortedMembers(group)) {
            final org.apache.kafka.coordinator.group.api.assignor.MemberSubscription subscription =
                    group.memberSubscription(member);
            if (shared < 0 || !homogeneous) {
                shared = lists.indexOf(subscription.subscribedTopicIds());
            }
            request.addMembers(member(group, member, subscription, shared, topics));
        }
        final RackSets replicas = new RackSets(new IndexedTable<>(racks ->
                request.addReplicaRackLists(PartitionReplicas.newBuilder().addAllRackIds(new TreeSet<>(racks)))));
        topics.partitions().forEach((id, count) ->
                request.addTopics(topic(describer, topics.name(id), id, count, replicas)));
        return request.setCompactAnswer(true).setOptions(ConsumerAssignOptions.newBuilder()
                        .setProtocol(RebalanceProtocol.REBALANCE_PROTOCOL_EAGER)
                        .setSolverTimeBudgetMs(settings.timeBudgetMs())
                        .setBalance(Balancing.wire(settings.balance())))
                .build();
    }

    private static String[] sortedMembers(final GroupSpec group) {
        final String[] members = group.memberIds().toArray(new String[0]);
        Arrays.sort(members);
        return members;
    }

    /**
     * The member: its subscribed topics as {@code topicList}, an index into the request's topic
     * lists, and its current target by topic (topics sorted, then numbers), restricted to
     * partitions still in the metadata.
     */
    private static MemberSubscription member(final GroupSpec group, final String member,
                                             final org.apache.kafka.coordinator.group.api.assignor.MemberSubscription
                                                     subscription, final int topicList, final Topics topics) {
        final MemberSubscription.Builder sent = MemberSubscription.newBuilder().setMemberId(member);
        subscription.instanceId().ifPresent(sent::setGroupInstanceId);
        final ConsumerSubscription.Builder s = ConsumerSubscription.newBuilder()
                .setTopicList(topicList)
                .setRackId(subscription.rackId().orElse(""));
        final Map<Uuid, Set<Integer>> owned = group.memberAssignment(member).partitions();
        final Uuid[] held = owned.keySet().toArray(new Uuid[0]);
        Arrays.sort(held);
        for (final Uuid topic : held) {
            final Topics.Known known = topics.known().get(topic);
            if (known == null) { // not subscribed, or not in the metadata: nothing of it is assigned
                continue;
            }
            final TopicPartitions.Builder entry = TopicPartitions.newBuilder().setTopic(known.name());
            for (final int p : sorted(owned.get(topic))) {
                if (p >= 0 && p < known.count()) {
                    entry.addPartitions(p);
                }
            }
            if (entry.getPartitionsCount() > 0) {
                s.addOwnedByTopic(entry);
            }
        }
        return sent.setSubscription(s).build();
    }

    private static int[] sorted(final Set<Integer> partitions) {
        final int[] numbers = new int[partitions.size()];
        int n = 0;
        for (final int p : partitions) {
            numbers[n++] = p;
        }
        Arrays.sort(numbers);
        return numbers;
    }

    /**
     * The partition count and, when some partition has a replica on a rack, per partition the
     * index of its racks in the request's replica rack lists, each distinct set added once (sorted)
     * through {@code made}: a million partitions, a few rack sets, each partition's set read once
     * as the describer gives it ({@link RackSets}), not copied.
     */
    private static ConsumerTopic topic(final SubscribedTopicDescriber describer, final String name, final Uuid id,
                                       final int count, final RackSets made) {
        final List<Set<String>> racks = new ArrayList<>(count);
        boolean anyRack = false;
        for (int p = 0; p < count; p++) {
            final Set<String> set = describer.racksForPartition(id, p);
            racks.add(set);
            anyRack |= !set.isEmpty();
        }
        final ConsumerTopic.Builder topic = ConsumerTopic.newBuilder().setName(name).setPartitionCount(count);
        if (anyRack) {
            for (final Set<String> set : racks) {
                topic.addReplicaRackList(made.indexOf(set));
            }
        }
        return topic.build();
    }
}
