package io.kassign.client;

import io.kassign.v1.AssignRequest;
import io.kassign.v1.AssignmentConfigs;
import io.kassign.v1.Balance;
import io.kassign.v1.RackAwareStrategy;
import io.kassign.v1.TaskInfo;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * Builds an {@link AssignRequest} from {@link ClientSpec}s, {@link TaskSpec}s and config values, so
 * a caller never assembles protobuf messages by hand. Unset configs keep Kafka's defaults (the
 * server applies them). Output is sorted (clients by process id in Java UUID order, members by id,
 * tasks by id), so the same inputs give the same bytes.
 *
 * <pre>{@code
 * AssignRequest request = RequestBuilder.forGroup("orders-app")
 *         .numStandbyReplicas(1)
 *         .rackAwareAssignmentTags("zone")
 *         .task(TaskSpec.stateful(0, 0).changelogEndOffsetSum(1000))
 *         .client(ClientSpec.process(uuid).threads(2).tag("zone", "a").runningActive(TaskIds.of(0, 0)))
 *         .build();
 * }</pre>
 */
public final class RequestBuilder {
    private final String groupId;
    private final List<ClientSpec> clients = new ArrayList<>();
    private final List<TaskInfo> tasks = new ArrayList<>();
    private final AssignmentConfigs.Builder configs = AssignmentConfigs.newBuilder();
    private long nowMs;

    private RequestBuilder(final String groupId) {
        this.groupId = Objects.requireNonNull(groupId, "groupId");
    }

    /** A request for consumer group (application.id) {@code groupId}. */
    public static RequestBuilder forGroup(final String groupId) {
        return new RequestBuilder(groupId);
    }

    public RequestBuilder client(final ClientSpec client) {
        clients.add(client);
        return this;
    }

    public RequestBuilder task(final TaskSpec task) {
        tasks.add(task.toProto());
        return this;
    }

    /** The time follow-up deadlines count from; unset (0) means the server's clock. */
    public RequestBuilder nowMs(final long epochMillis) {
        this.nowMs = epochMillis;
        return this;
    }

    /** "high_availability" (the server's default), "sticky", or another registered assignor. */
    public RequestBuilder assignor(final String name) {
        configs.setAssignor(name);
        return this;
    }

    public RequestBuilder acceptableRecoveryLag(final long records) {
        configs.setAcceptableRecoveryLag(records);
        return this;
    }

    public RequestBuilder maxWarmupReplicas(final int replicas) {
        configs.setMaxWarmupReplicas(replicas);
        return this;
    }

    public RequestBuilder numStandbyReplicas(final int replicas) {
        configs.setNumStandbyReplicas(replicas);
        return this;
    }

    public RequestBuilder probingRebalanceIntervalMs(final long millis) {
        configs.setProbingRebalanceIntervalMs(millis);
        return this;
    }

    /** KIP-708: the client tag keys standbys are spread over. */
    public RequestBuilder rackAwareAssignmentTags(final String... tagKeys) {
        configs.clearRackAwareAssignmentTags().addAllRackAwareAssignmentTags(List.of(tagKeys));
        return this;
    }

    /** KIP-925: none, min_traffic or balance_subtopology. */
    public RequestBuilder rackAwareStrategy(final RackAwareStrategy strategy) {
        configs.setRackAwareStrategy(strategy);
        return this;
    }

    public RequestBuilder trafficCost(final int cost) {
        configs.setTrafficCost(cost);
        return this;
    }

    public RequestBuilder nonOverlapCost(final int cost) {
        configs.setNonOverlapCost(cost);
        return this;
    }

    /** How long the server may spend on rack-aware optimisation before it falls back. */
    public RequestBuilder assignmentTimeBudgetMs(final long millis) {
        configs.setAssignmentTimeBudgetMs(millis);
        return this;
    }

    /**
     * With no tag keys, spread standbys over the clients' racks (kassign's own option; Kafka's
     * assignors never do, so it is off unless set).
     */
    public RequestBuilder standbyRackSpread(final boolean spread) {
        configs.setStandbyRackSpread(spread);
        return this;
    }

    /**
     * What the service balances (issue 25): BALANCE_LOAD balances each task's load per stream
     * thread, taking loads from the tasks or the service's --load-source; unset, COUNT.
     */
    public RequestBuilder balance(final Balance balance) {
        configs.setBalance(balance);
        return this;
    }

    public AssignRequest build() {
        final List<ClientSpec> sortedClients = new ArrayList<>(clients);
        sortedClients.sort(Comparator.comparing(ClientSpec::processId));
        for (int i = 1; i < sortedClients.size(); i++) {
            if (sortedClients.get(i).processId().equals(sortedClients.get(i - 1).processId())) {
                throw new IllegalStateException("client " + sortedClients.get(i).processId() + " given twice");
            }
        }
        final List<TaskInfo> sortedTasks = new ArrayList<>(tasks);
        sortedTasks.sort(Comparator.comparing(TaskInfo::getId, TaskIds.ORDER));
        final AssignRequest.Builder request = AssignRequest.newBuilder()
                .setGroupId(groupId)
                .addAllTasks(sortedTasks)
                .setConfigs(configs)
                .setNowMs(nowMs);
        for (final ClientSpec client : sortedClients) {
            request.addAllMembers(client.toMembers());
        }
        return request.build();
    }
}
