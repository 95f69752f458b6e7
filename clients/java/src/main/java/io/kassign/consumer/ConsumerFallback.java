package io.kassign.consumer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.TopicPartition;

/**
 * The assignment when kassign cannot be used: Kafka's own {@link CooperativeStickyAssignor}, safe
 * under both protocols (it withholds moving partitions for a round, and the coordinator trusts its
 * handling of stale generations), so the group rebalances as if kassign did not exist. Should even
 * that fail, every member keeps what it owns and claims alone: a plug-in never fails a rebalance.
 */
final class ConsumerFallback {
    /** Which of the two local assignments was used. */
    enum Kind { COOPERATIVE_STICKY, OWNED }

    record Result(GroupAssignment assignment, Kind kind, Throwable stickyFailure) {
    }

    private ConsumerFallback() {
    }

    static Result assign(final Cluster cluster, final GroupSubscription group) {
        try {
            return new Result(new CooperativeStickyAssignor().assign(cluster, group), Kind.COOPERATIVE_STICKY, null);
        } catch (final Exception | LinkageError e) {
            return new Result(keepOwned(group), Kind.OWNED, e);
        }
    }

    /** Each member keeps the partitions it owns that no other member claims too. */
    static GroupAssignment keepOwned(final GroupSubscription group) {
        final Map<TopicPartition, Integer> claims = new HashMap<>();
        for (final Subscription s : group.groupSubscription().values()) {
            for (final TopicPartition tp : new HashSet<>(s.ownedPartitions())) {
                claims.merge(tp, 1, Integer::sum);
            }
        }
        final Map<String, Assignment> result = new HashMap<>();
        for (final Map.Entry<String, Subscription> member : group.groupSubscription().entrySet()) {
            final Set<String> topics = new HashSet<>(member.getValue().topics());
            final List<TopicPartition> kept = new ArrayList<>();
            for (final TopicPartition tp : new HashSet<>(member.getValue().ownedPartitions())) {
                if (claims.get(tp) == 1 && topics.contains(tp.topic())) {
                    kept.add(tp);
                }
            }
            result.put(member.getKey(), new Assignment(kept));
        }
        return new GroupAssignment(result);
    }
}
