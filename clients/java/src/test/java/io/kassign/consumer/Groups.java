package io.kassign.consumer;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * Test groups made of Kafka's own types: a Cluster of six brokers in racks a, b, c (two each;
 * broker 7 has no rack) and Subscriptions as the ConsumerCoordinator hands them to an assignor.
 */
final class Groups {
    static final List<Node> NODES = List.of(new Node(1, "h1", 9092, "a"), new Node(2, "h2", 9092, "b"),
            new Node(3, "h3", 9092, "c"), new Node(4, "h4", 9092, "a"), new Node(5, "h5", 9092, "b"),
            new Node(6, "h6", 9092, "c"), new Node(7, "h7", 9092));

    private Groups() {
    }

    static Node node(final int id) {
        return NODES.get(id - 1);
    }

    /** Partition p of each topic: leader broker 1 + (p mod 3), a replica in the next rack (brokers 4-6). */
    static Cluster cluster(final Map<String, Integer> topics) {
        final List<PartitionInfo> partitions = new ArrayList<>();
        topics.forEach((topic, count) -> {
            for (int p = 0; p < count; p++) {
                final Node leader = node(1 + p % 3);
                final Node follower = node(4 + (p + 1) % 3);
                partitions.add(new PartitionInfo(topic, p, leader, new Node[] {follower, leader},
                        new Node[] {leader, follower}));
            }
        });
        return new Cluster("test", NODES, partitions, Set.of(), Set.of());
    }

    static Subscription member(final List<String> topics, final String rack, final List<TopicPartition> owned,
                               final int generation) {
        return new Subscription(topics, null, owned, generation, Optional.ofNullable(rack));
    }

    static GroupSubscription group(final Object... idsAndSubscriptions) {
        final Map<String, Subscription> members = new LinkedHashMap<>();
        for (int i = 0; i < idsAndSubscriptions.length; i += 2) {
            members.put((String) idsAndSubscriptions[i], (Subscription) idsAndSubscriptions[i + 1]);
        }
        return new GroupSubscription(members);
    }

    static ByteBuffer bytes(final int... values) {
        final ByteBuffer buffer = ByteBuffer.allocate(values.length);
        for (final int v : values) {
            buffer.put((byte) v);
        }
        return buffer.flip();
    }

    static TopicPartition tp(final String topic, final int partition) {
        return new TopicPartition(topic, partition);
    }
}
