package io.kassign.client;

import io.kassign.v1.ClientTag;
import io.kassign.v1.ConsumerSubscription;
import io.kassign.v1.MemberSubscription;
import io.kassign.v1.SubscriptionInfo;
import io.kassign.v1.TaskId;
import io.kassign.v1.TaskOffsetSum;
import io.kassign.v1.TopicPartition;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * One Kafka Streams client (a process) from plain values, turned into one group member per
 * consumer with a structured, version-11 {@link SubscriptionInfo}: what Kafka Streams itself would
 * send, without the byte encoding.
 *
 * <p>What a client had before this rebalance is told as KIP-441 offset sums: {@link #runningActive}
 * for a task it ran as an active (offset sum -2, always caught up), {@link #offsetSum} for a task it
 * has state for (its lag is the task's changelog end offset sum minus this). A task named in neither
 * has no state here: its lag is the whole end offset sum.
 *
 * <pre>{@code
 * ClientSpec.process("00000000-0000-0000-0000-000000000001")
 *         .consumers("c1-StreamThread-1-consumer", "c1-StreamThread-2-consumer")
 *         .rack("rack-a").tag("zone", "eu-west-1a").endpoint("c1.internal:8080")
 *         .runningActive(TaskIds.of(0, 0))
 *         .offsetSum(TaskIds.of(0, 1), 41_000);
 * }</pre>
 */
public final class ClientSpec {
    /** Kafka's offset sum for a task that ran as an active on the client (Task.LATEST_OFFSET). */
    public static final long RUNNING_ACTIVE = -2L;
    /** Kafka's offset sum when the client could not read its checkpoint (SubscriptionInfo.UNKNOWN_OFFSET_SUM). */
    public static final long UNKNOWN_OFFSET = -3L;
    /** The SubscriptionInfo version whose fields this client fills (v11: client tags included). */
    public static final int SUBSCRIPTION_VERSION = 11;

    private final UUID processId;
    private final List<String> consumers = new ArrayList<>();
    private final Map<String, Map<TaskId, Long>> offsetSums = new TreeMap<>();
    private final Map<String, List<TopicPartition>> owned = new TreeMap<>();
    private final Map<String, String> tags = new TreeMap<>();
    private final List<String> topics = new ArrayList<>();
    private String rack = "";
    private String endpoint = "";

    private ClientSpec(final UUID processId) {
        this.processId = processId;
    }

    /** The client whose process id is {@code processId} (canonical UUID text). */
    public static ClientSpec process(final String processId) {
        return new ClientSpec(UUID.fromString(processId));
    }

    public static ClientSpec process(final UUID processId) {
        return new ClientSpec(processId);
    }

    public UUID processId() {
        return processId;
    }

    /** The client's consumers (one per stream thread), by member id. */
    public ClientSpec consumers(final String... memberIds) {
        for (final String memberId : memberIds) {
            if (memberId.isEmpty() || consumers.contains(memberId)) {
                throw new IllegalArgumentException("member ids must be unique and non-empty, got '" + memberId + "'");
            }
            consumers.add(memberId);
        }
        return this;
    }

    /** {@code count} consumers named as Kafka Streams names them ("&lt;process&gt;-StreamThread-i-consumer"). */
    public ClientSpec threads(final int count) {
        for (int i = 1; i <= count; i++) {
            consumers(processId + "-StreamThread-" + i + "-consumer");
        }
        return this;
    }

    /** The rack of the client's consumers (client.rack, KIP-925). */
    public ClientSpec rack(final String rackId) {
        this.rack = rackId == null ? "" : rackId;
        return this;
    }

    /** The application.server "host:port" of the client. */
    public ClientSpec endpoint(final String hostPort) {
        this.endpoint = hostPort == null ? "" : hostPort;
        return this;
    }

    /** A client tag (KIP-708: client.tag.KEY=VALUE). */
    public ClientSpec tag(final String key, final String value) {
        tags.put(key, value);
        return this;
    }

    /** Topics the consumers subscribe to (informational; the tasks carry the partitions). */
    public ClientSpec topics(final String... topicNames) {
        topics.addAll(List.of(topicNames));
        return this;
    }

    /** The client ran {@code task} as an active (offset sum -2): reported by its first consumer. */
    public ClientSpec runningActive(final TaskId... tasks) {
        for (final TaskId task : tasks) {
            offsetSum(task, RUNNING_ACTIVE);
        }
        return this;
    }

    /** The client has state for {@code task} up to {@code sum}: reported by its first consumer. */
    public ClientSpec offsetSum(final TaskId task, final long sum) {
        return offsetSum(null, task, sum);
    }

    /** {@code memberId} reports state for {@code task} up to {@code sum} (-2: ran it as an active). */
    public ClientSpec offsetSum(final String memberId, final TaskId task, final long sum) {
        if (sum < 0 && sum != RUNNING_ACTIVE && sum != UNKNOWN_OFFSET) {
            throw new IllegalArgumentException("offset sum must be >= 0, -2 or -3, got " + sum + " for " + TaskIds.format(task));
        }
        offsetSums.computeIfAbsent(memberId == null ? "" : memberId, k -> new TreeMap<>(TaskIds.ORDER)).put(task, sum);
        return this;
    }

    /** {@code memberId} owned this partition before the rebalance (KIP-429 cooperative protocol). */
    public ClientSpec ownedPartition(final String memberId, final String topic, final int partition) {
        owned.computeIfAbsent(memberId, k -> new ArrayList<>())
                .add(TopicPartition.newBuilder().setTopic(topic).setPartition(partition).build());
        return this;
    }

    /** One member per consumer, sorted by member id; offset sums given without a member go to the first. */
    public List<MemberSubscription> toMembers() {
        if (consumers.isEmpty()) {
            throw new IllegalStateException("client " + processId + " has no consumers: call consumers() or threads()");
        }
        final List<String> memberIds = new ArrayList<>(consumers);
        memberIds.sort(Comparator.naturalOrder());
        for (final String memberId : offsetSums.keySet()) {
            if (!memberId.isEmpty() && !memberIds.contains(memberId)) {
                throw new IllegalStateException("offset sums for unknown member " + memberId + " of client " + processId);
            }
        }
        final List<MemberSubscription> members = new ArrayList<>();
        for (final String memberId : memberIds) {
            final Map<TaskId, Long> sums = new TreeMap<>(TaskIds.ORDER);
            if (memberId.equals(memberIds.get(0))) {
                sums.putAll(offsetSums.getOrDefault("", Map.of()));
            }
            sums.putAll(offsetSums.getOrDefault(memberId, Map.of()));
            members.add(member(memberId, sums));
        }
        return members;
    }

    private MemberSubscription member(final String memberId, final Map<TaskId, Long> sums) {
        final SubscriptionInfo.Builder info = SubscriptionInfo.newBuilder()
                .setVersion(SUBSCRIPTION_VERSION)
                .setLatestSupportedVersion(SUBSCRIPTION_VERSION)
                .setProcessId(processId.toString())
                .setUserEndPoint(endpoint);
        sums.forEach((task, sum) -> info.addTaskOffsetSums(TaskOffsetSum.newBuilder().setTask(task).setOffsetSum(sum)));
        tags.forEach((key, value) -> info.addClientTags(ClientTag.newBuilder().setKey(key).setValue(value)));
        final List<TopicPartition> ownedHere = new ArrayList<>(owned.getOrDefault(memberId, List.of()));
        ownedHere.sort(Comparator.comparing(TopicPartition::getTopic).thenComparingInt(TopicPartition::getPartition));
        return MemberSubscription.newBuilder()
                .setMemberId(memberId)
                .setSubscription(ConsumerSubscription.newBuilder()
                        .addAllTopics(topics.stream().sorted().distinct().toList())
                        .addAllOwnedPartitions(ownedHere)
                        .setRackId(rack)
                        .setInfo(info))
                .build();
    }
}
