package io.kassign.broker;

import io.kassign.broker.GroupSpecToConsumerRequest.Topics;
import io.kassign.plugin.SharedClients;
import io.kassign.plugin.ShadowLine;
import io.kassign.v1.ConsumerAssignRequest;
import io.kassign.v1.ConsumerAssignResponse;
import io.kassign.v1.ConsumerAssignmentReport;
import io.kassign.v1.ConsumerMemberAssignment;
import io.kassign.v1.ConsumerShadow;
import io.kassign.v1.TopicPartition;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;

/**
 * The KIP-848 plug-in's shadow call (issue 26): the request {@link KassignConsumerGroupAssignor}
 * would send, named by its stand-in group id ({@link StandInGroupIds}) and with Kafka's uniform
 * answer attached, built and sent on {@code ShadowCalls}' thread after the coordinator has the answer.
 *
 * <p>Why the group can be read then: Kafka 4.4's target assignment builder makes a new map of
 * member specs (subscriptions and current assignments, immutable) for each GroupSpec, and the
 * topic describer reads an immutable metadata image; the one live part, the group's inverted
 * target assignment behind {@code isPartitionAssigned}, is not read here.
 */
final class ConsumerGroupShadow {
    private ConsumerGroupShadow() {
    }

    /** The call ({@code path}: what the rebalance waited, for the line): build, ask, and the line to log; topics by name where {@code named} knows them. */
    static Callable<String> of(final GroupSpec group, final SubscribedTopicDescriber describer,
                               final ConsumerGroupSettings settings, final TopicNames named, final GroupAssignment kafka,
                               final ShadowLine.Path path) {
        return () -> {
            final long started = System.nanoTime();
            final Topics topics = named == null ? Topics.of(group, describer) : Topics.of(group, describer, named::known);
            final String standIn = StandInGroupIds.consumer(GroupSpecToConsumerRequest.subscribed(group));
            final ConsumerAssignRequest request = GroupSpecToConsumerRequest.convert(group, describer, topics, settings)
                    .toBuilder().setGroupId(standIn).setShadow(shadow(kafka, topics)).build();
            final ConsumerAssignResponse response =
                    SharedClients.waitingForReady(settings.connection()).assignConsumers(request);
            final ConsumerAssignmentReport report = response.getReport();
            return ShadowLine.describe(standIn, UniformAssignor.NAME, report.getAssignor(), report.hasShadow(),
                    report.getShadow(), false, (System.nanoTime() - started) / 1_000_000L, path);
        };
    }

    /** Kafka's answer as the contract's members, topics named as the request names them, all sorted. */
    static ConsumerShadow shadow(final GroupAssignment kafka, final Topics topics) {
        final ConsumerShadow.Builder shadow = ConsumerShadow.newBuilder().setKafkaAssignor(UniformAssignor.NAME);
        for (final Map.Entry<String, MemberAssignment> member : new TreeMap<>(kafka.members()).entrySet()) {
            final Map<String, Set<Integer>> byName = new TreeMap<>();
            for (final Map.Entry<Uuid, Set<Integer>> topic : member.getValue().partitions().entrySet()) {
                byName.computeIfAbsent(topics.name(topic.getKey()), n -> new TreeSet<>()).addAll(topic.getValue());
            }
            final ConsumerMemberAssignment.Builder assigned = ConsumerMemberAssignment.newBuilder()
                    .setMemberId(member.getKey());
            byName.forEach((name, partitions) -> partitions.forEach(p ->
                    assigned.addPartitions(TopicPartition.newBuilder().setTopic(name).setPartition(p))));
            shadow.addKafka(assigned);
        }
        return shadow.build();
    }
}
