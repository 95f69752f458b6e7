package io.kassign.broker;

import io.kassign.broker.StreamsSources.Group;
import io.kassign.broker.StreamsSources.SourceTopic;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeStreamsGroupsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupMemberDescription;
import org.apache.kafka.clients.admin.StreamsGroupSubtopologyDescription;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;

/**
 * The cluster's streams groups through Kafka's Admin client ({@link StreamsSources.Source}):
 * {@code listGroups} of type streams, {@code describeStreamsGroups} of the first
 * {@code maxGroups} ids in order, and {@code describeTopics} for the source topics' partition
 * counts (a repartition topic's count is in the group's description).
 *
 * <p>A subtopology's sources are its source topics and its repartition source topics, as Kafka's
 * coordinator and clients read a task: task (subtopology, p) reads partition p of each of them
 * that has more than p partitions. A group whose description failed (gone since the listing, not
 * authorised), that has no members or no configured topology, or one of whose source topics could
 * not be described is left out: its tasks go without sources, as before.
 */
final class StreamsGroupDescribing implements StreamsSources.Source {
    private final SharedAdmin admin;

    StreamsGroupDescribing(final SharedAdmin admin) {
        this.admin = admin;
    }

    @Override
    public List<Group> describe(final int maxGroups) throws Exception {
        final Admin client = admin.get();
        final long wait = AdminTopicNames.LIST_TIMEOUT_MS + 1_000L;
        final TreeSet<String> ids = new TreeSet<>();
        for (final GroupListing listing : client.listGroups(ListGroupsOptions.forStreamsGroups()
                .timeoutMs(AdminTopicNames.LIST_TIMEOUT_MS)).valid().get(wait, TimeUnit.MILLISECONDS)) {
            ids.add(listing.groupId());
        }
        final List<String> wanted = ids.stream().limit(maxGroups).toList();
        if (wanted.isEmpty()) {
            return List.of();
        }
        final List<StreamsGroupDescription> described = new ArrayList<>();
        for (final KafkaFuture<StreamsGroupDescription> future : client.describeStreamsGroups(wanted,
                new DescribeStreamsGroupsOptions().timeoutMs(AdminTopicNames.LIST_TIMEOUT_MS))
                .describedGroups().values()) {
            final StreamsGroupDescription group = got(future, wait);
            if (group != null) {
                described.add(group);
            }
        }
        final Set<String> topics = new TreeSet<>();
        described.forEach(group -> group.subtopologies().forEach(s -> topics.addAll(s.sourceTopics())));
        final Map<String, Integer> counts = new HashMap<>();
        if (!topics.isEmpty()) {
            client.describeTopics(topics, new DescribeTopicsOptions().timeoutMs(AdminTopicNames.LIST_TIMEOUT_MS))
                    .topicNameValues().forEach((name, future) -> {
                        final TopicDescription topic = got(future, wait);
                        if (topic != null) {
                            counts.put(name, topic.partitions().size());
                        }
                    });
        }
        final List<Group> groups = new ArrayList<>();
        for (final StreamsGroupDescription group : described) {
            of(group, counts).ifPresent(groups::add);
        }
        return groups;
    }

    /** The group's members and sources, when every source topic's partition count is known. */
    static Optional<Group> of(final StreamsGroupDescription group, final Map<String, Integer> counts) {
        final Set<String> members = new TreeSet<>();
        for (final StreamsGroupMemberDescription member : group.members()) {
            members.add(member.memberId());
        }
        final Map<String, List<SourceTopic>> subtopologies = new TreeMap<>();
        for (final StreamsGroupSubtopologyDescription subtopology : group.subtopologies()) {
            final Map<String, Integer> sources = new TreeMap<>();
            for (final String topic : subtopology.sourceTopics()) {
                sources.put(topic, counts.getOrDefault(topic, 0));
            }
            subtopology.repartitionSourceTopics().forEach((topic, info) -> sources.put(topic, info.partitions()));
            if (sources.isEmpty() || sources.values().stream().anyMatch(n -> n <= 0)) {
                return Optional.empty();
            }
            final List<SourceTopic> topics = new ArrayList<>();
            sources.forEach((topic, n) -> topics.add(new SourceTopic(topic, n)));
            subtopologies.put(subtopology.subtopologyId(), List.copyOf(topics));
        }
        if (members.isEmpty() || subtopologies.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new Group(group.groupId(), Set.copyOf(members), Map.copyOf(subtopologies)));
    }

    /** The future's value, or null when it failed (one group or topic: the others stand). */
    private static <T> T got(final KafkaFuture<T> future, final long waitMs) {
        try {
            return future.get(waitMs, TimeUnit.MILLISECONDS);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (final ExecutionException | TimeoutException e) {
            return null;
        }
    }

    @Override
    public void close() {
        // the Admin client is the setting's, closed by its last user
    }
}
