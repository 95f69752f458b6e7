package io.kassign.consumer;

import io.kassign.plugin.Deadline;
import io.kassign.plugin.SharedClients;
import io.kassign.plugin.ShadowLine;
import io.kassign.v1.ConsumerAssignRequest;
import io.kassign.v1.ConsumerAssignResponse;
import io.kassign.v1.ConsumerAssignmentReport;
import io.kassign.v1.ConsumerMemberAssignment;
import io.kassign.v1.ConsumerShadow;
import io.kassign.v1.TopicPartition;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.RebalanceProtocol;
import org.apache.kafka.common.Cluster;

/**
 * The classic consumer plug-in's shadow call (issue 26): the request {@link KassignConsumerAssignor}
 * would send, with Kafka's answer attached as {@link ConsumerShadow}, built and sent on
 * {@code ShadowCalls}' thread after {@code assign()} has returned Kafka's answer.
 *
 * <p>Why the inputs can be read then: the Cluster is immutable; the consumer's coordinator builds
 * a new GroupSubscription for each rebalance and, like the answer, only reads it afterwards (user
 * data is read through a duplicate buffer, {@link GroupToRequest}).
 */
final class ShadowCall {
    /** The assignor whose answer the group gets in shadow mode, by its Kafka name. */
    static final String KAFKA_ASSIGNOR = "cooperative-sticky";

    private ShadowCall() {
    }

    /** The call ({@code path}: what the rebalance waited, for the line): build, ask, and the line to log. */
    static Callable<String> of(final Cluster metadata, final GroupSubscription group, final ConsumerSettings settings,
                               final RebalanceProtocol protocol, final GroupAssignment kafka,
                               final ShadowLine.Path path) {
        return () -> {
            final long started = System.nanoTime();
            final Deadline deadline = Deadline.after(settings.connection().deadline(), started);
            final ConsumerAssignRequest request = GroupToRequest.convert(metadata, group, settings, protocol)
                    .toBuilder().setShadow(shadow(kafka)).build();
            deadline.check("before the call");
            final ConsumerAssignResponse response =
                    SharedClients.of(settings.connection()).assignConsumers(request, deadline.remaining());
            final ConsumerAssignmentReport report = response.getReport();
            return ShadowLine.describe(settings.groupId(), KAFKA_ASSIGNOR, report.getAssignor(), report.hasShadow(),
                    report.getShadow(), false, (System.nanoTime() - started) / 1_000_000L, path);
        };
    }

    /** Kafka's answer as the contract's members: member id and partitions, sorted. */
    static ConsumerShadow shadow(final GroupAssignment kafka) {
        final ConsumerShadow.Builder shadow = ConsumerShadow.newBuilder().setKafkaAssignor(KAFKA_ASSIGNOR);
        for (final Map.Entry<String, Assignment> member : new TreeMap<>(kafka.groupAssignment()).entrySet()) {
            final List<org.apache.kafka.common.TopicPartition> partitions =
                    new ArrayList<>(member.getValue().partitions());
            partitions.sort(Comparator.comparing(org.apache.kafka.common.TopicPartition::topic)
                    .thenComparingInt(org.apache.kafka.common.TopicPartition::partition));
            final ConsumerMemberAssignment.Builder assigned = ConsumerMemberAssignment.newBuilder()
                    .setMemberId(member.getKey());
            for (final org.apache.kafka.common.TopicPartition tp : partitions) {
                assigned.addPartitions(TopicPartition.newBuilder().setTopic(tp.topic()).setPartition(tp.partition()));
            }
            shadow.addKafka(assigned);
        }
        return shadow.build();
    }
}
