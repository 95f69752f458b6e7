package io.kassign.bench;

import static io.kassign.client.Check.equal;
import static io.kassign.client.Check.isTrue;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The bench's inputs: each side's every call must see the group as built. Kafka's eager sticky on
 * both sides stands in for the plug-in, so no server is needed: the two must agree, and agree with
 * the rebalance meant (each remaining member keeps what it had, read from its userData).
 */
final class PluginBenchTest {

    @Test
    @DisplayName("leave, eager sticky: every call, the first included, reads each member's userData")
    void everyCallReadsTheUserData() {
        final Cluster cluster = PluginBench.cluster(5, 20);
        final GroupSubscription fresh = PluginBench.fresh(5, 10);
        final GroupAssignment before = PluginBench.kafka("sticky").assign(cluster, fresh);
        final GroupSubscription leave = PluginBench.leave(fresh, before, "sticky");
        for (final int warmup : new int[] {0, 1}) {
            final PluginBench.Timed<GroupAssignment> timed = PluginBench.interleaved(() -> PluginBench.unread(leave),
                    g -> PluginBench.kafka("sticky").assign(cluster, g),
                    g -> PluginBench.kafka("sticky").assign(cluster, g), 1, warmup);
            equal(partitions(timed.kafka()), partitions(timed.plugin()), "both sides, warm-up " + warmup);
            for (final Map.Entry<String, Assignment> member : timed.plugin().groupAssignment().entrySet()) {
                final Set<TopicPartition> kept = partitions(timed.plugin()).get(member.getKey());
                isTrue(kept.containsAll(before.groupAssignment().get(member.getKey()).partitions()),
                        member.getKey() + " keeps its partitions, warm-up " + warmup);
            }
        }
        equal(88, leave.groupSubscription().get("consumer-1").userData().remaining(), "the group as built, unread");
    }

    private static Map<String, Set<TopicPartition>> partitions(final GroupAssignment assignment) {
        final Map<String, Set<TopicPartition>> result = new TreeMap<>();
        assignment.groupAssignment().forEach((id, a) -> result.put(id, new HashSet<>(a.partitions())));
        return result;
    }
}
