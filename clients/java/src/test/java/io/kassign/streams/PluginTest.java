package io.kassign.streams;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import static io.kassign.client.Check.equal;
import static io.kassign.client.Check.isTrue;
import static io.kassign.client.Check.raises;
import static io.kassign.streams.FakeState.pid;
import static io.kassign.streams.FakeState.task;

import io.kassign.client.LiveServer;
import io.kassign.client.ScriptedServer;
import io.kassign.client.TaskIds;
import io.kassign.streams.FakeState.App;
import io.kassign.streams.FakeState.Client;
import io.kassign.streams.FakeState.Partition;
import io.kassign.streams.FakeState.Task;
import io.kassign.v1.AssignRequest;
import io.kassign.v1.AssignResponse;
import io.kassign.v1.AssignmentError;
import io.kassign.v1.Balance;
import io.kassign.v1.ClientAssignment;
import io.kassign.v1.MemberSubscription;
import io.kassign.v1.RackAwareStrategy;
import io.kassign.v1.TaskInfo;
import io.kassign.v1.TaskOffsetSum;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;

/** The KIP-924 plug-in: conversions both ways, the fallback, and a real rebalance against the server. */
final class PluginTest {
    static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");
    static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

    private PluginTest() {
    }


    /** Three clients, two stateful tasks, one stateless; lags as Kafka would report them. */
    static App sampleApp() {
        final App app = new App()
                .task(Task.stateful(task(0, 0), "counts", Partition.source("orders", 0, "r1", "r2"),
                        Partition.changelog("app-counts-changelog", 0, "r2")))
                .task(Task.stateful(task(0, 1), "counts", Partition.source("orders", 1),
                        Partition.changelog("app-counts-changelog", 1)))
                .task(Task.stateless(task(1, 0), Partition.source("clicks", 0, "r3")));
        app.configs = new AssignmentConfigs(500L, 3, 1, 60_000L, List.of("zone"), OptionalInt.of(10), OptionalInt.empty(),
                "min_traffic");
        app.client(new Client(pid(1), "c1-a", "c1-b").active("c1-a", task(0, 0)).active("c1-a", task(1, 0))
                .standby("c1-b", task(0, 1), 50).tag("zone", "eu-1").rack("r1").host("c1.internal", 8080));
        app.client(new Client(pid(2), "c2-a").active("c2-a", task(0, 1)).lag(task(0, 0), 1000).tag("zone", "eu-2"));
        // Client 3 has state for 0_0 without listing it as standby, and none for 0_1 (lag = end offset sum).
        app.client(new Client(pid(3), "c3-a").lag(task(0, 0), 400).lag(task(0, 1), 700).tag("zone", "eu-3"));
        return app;
    }

    private static AssignRequest convert(final App app, final Map<String, ?> configs) {
        return StateToRequest.convert(app, app.kafkaStreamsStates(true), AssignorSettings.from(configs), NOW);
    }

    private static Map<String, Long> sums(final MemberSubscription member) {
        final Map<String, Long> sums = new TreeMap<>();
        for (final TaskOffsetSum sum : member.getSubscription().getInfo().getTaskOffsetSumsList()) {
            sums.put(TaskIds.format(sum.getTask()), sum.getOffsetSum());
        }
        return sums;
    }

    @Test
    @DisplayName("ApplicationState -> AssignRequest: members, offset sums, tasks, configs")
    void stateToRequest() {
        final AssignRequest request = convert(sampleApp(), Map.of("application.id", "orders-app",
                "kassign.assignor", "sticky", "kassign.assignment.time.budget.ms", 250));
        equal("orders-app", request.getGroupId(), "group id from application.id");
        equal(NOW.toEpochMilli(), request.getNowMs(), "now");
        equal(List.of("c1-a", "c1-b", "c2-a", "c3-a"),
                request.getMembersList().stream().map(MemberSubscription::getMemberId).toList(), "one member per consumer");
        final MemberSubscription c1a = request.getMembers(0);
        equal(pid(1).id().toString(), c1a.getSubscription().getInfo().getProcessId(), "process id");
        equal("r1", c1a.getSubscription().getRackId(), "rack");
        equal("c1.internal:8080", c1a.getSubscription().getInfo().getUserEndPoint(), "endpoint");
        equal("eu-1", c1a.getSubscription().getInfo().getClientTags(0).getValue(), "tag");
        equal(List.of("clicks", "orders"), c1a.getSubscription().getTopicsList(), "source topics");
        equal(Map.of("0_0", -2L, "1_0", -2L), sums(c1a), "c1-a ran 0_0 and 1_0");
        equal(List.of("clicks", "orders"), c1a.getSubscription().getOwnedPartitionsList().stream()
                .map(tp -> tp.getTopic()).toList(), "c1-a owns its actives' source partitions");
        // 0_1's end offset sum is the largest lag, 700 (client 3 has no state): 700 - 50 = 650.
        equal(Map.of("0_1", 650L), sums(request.getMembers(1)), "c1-b's standby");
        equal(Map.of("0_1", -2L), sums(request.getMembers(2)), "c2 ran 0_1; no state for 0_0");
        // 0_0's end offset sum is 1000 (client 2's lag): client 3 reports 1000 - 400.
        equal(Map.of("0_0", 600L), sums(request.getMembers(3)), "c3 has state for 0_0 only");

        final TaskInfo t00 = request.getTasks(0);
        equal("0_0", TaskIds.format(t00.getId()), "tasks sorted");
        isTrue(t00.getStateful(), "0_0 stateful");
        equal(1000L, t00.getChangelogEndOffsetSum(), "0_0 end offset sum");
        equal(List.of("counts"), t00.getStateStoreNamesList(), "stores");
        equal("app-counts-changelog", t00.getTopicPartitions(0).getTopic(), "partitions sorted by topic");
        isTrue(t00.getTopicPartitions(0).getIsChangelog() && !t00.getTopicPartitions(0).getIsSource(), "changelog flags");
        equal(List.of("r1", "r2"), t00.getTopicPartitions(1).getRackIdsList(), "source racks");
        equal(700L, request.getTasks(1).getChangelogEndOffsetSum(), "0_1 end offset sum");
        isTrue(!request.getTasks(2).getStateful(), "1_0 stateless");
        equal(0L, request.getTasks(2).getChangelogEndOffsetSum(), "stateless tasks have no end offset sum");

        equal(500L, request.getConfigs().getAcceptableRecoveryLag(), "acceptable recovery lag");
        equal(3, request.getConfigs().getMaxWarmupReplicas(), "warm-ups");
        equal(1, request.getConfigs().getNumStandbyReplicas(), "standbys");
        equal(60_000L, request.getConfigs().getProbingRebalanceIntervalMs(), "probing interval");
        equal(List.of("zone"), request.getConfigs().getRackAwareAssignmentTagsList(), "tags");
        equal(RackAwareStrategy.RACK_AWARE_STRATEGY_MIN_TRAFFIC, request.getConfigs().getRackAwareStrategy(), "strategy");
        equal(10, request.getConfigs().getTrafficCost(), "traffic cost");
        isTrue(!request.getConfigs().hasNonOverlapCost(), "unset non-overlap cost stays unset");
        equal("sticky", request.getConfigs().getAssignor(), "assignor from kassign.assignor");
        equal(250L, request.getConfigs().getAssignmentTimeBudgetMs(), "time budget");
        isTrue(!request.getConfigs().hasStandbyRackSpread(), "standby rack spread unset: Kafka's behaviour");
        equal(Balance.BALANCE_UNSPECIFIED, request.getConfigs().getBalance(), "balance unset: count");
        equal(request, convert(sampleApp(), Map.of("application.id", "orders-app", "kassign.assignor", "sticky",
                "kassign.assignment.time.budget.ms", 250)), "deterministic");
    }

    @Test
    @DisplayName("kassign.standby.rack.spread reaches the request's configs")
    void standbyRackSpread() {
        isTrue(convert(sampleApp(), Map.of("kassign.standby.rack.spread", "true"))
                .getConfigs().getStandbyRackSpread(), "set from a properties string");
        isTrue(convert(sampleApp(), Map.of("kassign.standby.rack.spread", true))
                .getConfigs().getStandbyRackSpread(), "set from a boolean");
        isTrue(!convert(sampleApp(), Map.of("kassign.standby.rack.spread", "false"))
                .getConfigs().hasStandbyRackSpread(), "false is sent as unset");
    }

    @Test
    @DisplayName("kassign.balance=load reaches the request's configs.balance; tasks carry no loads")
    void balanceLoad() {
        final AssignRequest request = convert(sampleApp(), Map.of("kassign.balance", "load"));
        equal(Balance.BALANCE_LOAD, request.getConfigs().getBalance(), "LOAD sent");
        isTrue(request.getTasksList().stream().noneMatch(TaskInfo::hasLoad),
                "no task loads: the service's --load-source has them");
        equal(Balance.BALANCE_UNSPECIFIED, convert(sampleApp(), Map.of("kassign.balance", "count")).getConfigs()
                .getBalance(), "count: unset on the wire");
    }

    /** KIP-441's lag rule, as the service applies it to offset sums. */
    private static Map<String, Long> serverLags(final AssignRequest request, final String processId) {
        final Map<String, Long> reported = new HashMap<>();
        for (final MemberSubscription member : request.getMembersList()) {
            if (member.getSubscription().getInfo().getProcessId().equals(processId)) {
                reported.putAll(sums(member));
            }
        }
        final Map<String, Long> lags = new TreeMap<>();
        for (final TaskInfo task : request.getTasksList()) {
            if (!task.getStateful()) {
                continue;
            }
            final String id = TaskIds.format(task.getId());
            final Long sum = reported.get(id);
            final long end = task.getChangelogEndOffsetSum();
            lags.put(id, sum == null ? end : sum == -2 ? -2 : sum == -3 ? -3 : end - sum);
        }
        return lags;
    }

    @Test
    @DisplayName("lags survive the trip through offset sums (300 random states)")
    void lagRoundTrip() {
        final Random random = new Random(924);
        for (int round = 0; round < 300; round++) {
            final App app = new App();
            final int tasks = 1 + random.nextInt(6);
            final Map<TaskId, Long> trueEnd = new HashMap<>();
            for (int p = 0; p < tasks; p++) {
                app.task(Task.stateful(task(0, p), "s", Partition.source("in", p)));
                trueEnd.put(task(0, p), (long) random.nextInt(5) * random.nextInt(10_000));
            }
            final int clients = 1 + random.nextInt(4);
            final Set<TaskId> activeSomewhere = new HashSet<>();
            for (int c = 1; c <= clients; c++) {
                final Client client = new Client(pid(c), "c" + c);
                for (int p = 0; p < tasks; p++) {
                    final TaskId t = task(0, p);
                    final int kind = random.nextInt(4);
                    if (kind == 0 && activeSomewhere.add(t)) {
                        client.active("c" + c, t);
                    } else if (kind == 1) {
                        client.standby("c" + c, t, random.nextInt((int) (trueEnd.get(t) + 1)));
                    } else {
                        client.lag(t, trueEnd.get(t));
                    }
                }
                app.client(client);
            }
            final AssignRequest request = convert(app, Map.of());
            for (final Client client : app.clients.values()) {
                final Map<String, Long> expected = new TreeMap<>();
                client.lags.forEach((t, lag) -> expected.put(t.toString(), lag));
                equal(expected, serverLags(request, client.processId.id().toString()),
                        "round " + round + ": lags of client " + client.processId.id());
            }
        }
    }

    static AssignResponse response(final AssignmentError error) {
        return AssignResponse.newBuilder()
                .setError(error)
                .addClients(ClientAssignment.newBuilder().setProcessId(pid(1).id().toString())
                        .addActiveTasks(TaskIds.of(0, 0)).addActiveTasks(TaskIds.of(1, 0)).addStandbyTasks(TaskIds.of(0, 1))
                        .setFollowupRebalanceDeadlineMs(NOW.toEpochMilli() + 60_000))
                .addClients(ClientAssignment.newBuilder().setProcessId(pid(2).id().toString())
                        .addActiveTasks(TaskIds.of(0, 1)))
                .addClients(ClientAssignment.newBuilder().setProcessId(pid(3).id().toString())
                        .addStandbyTasks(TaskIds.of(0, 0)))
                .build();
    }

    static Map<ProcessId, KafkaStreamsAssignment> byProcess(final TaskAssignment assignment) {
        final Map<ProcessId, KafkaStreamsAssignment> result = new TreeMap<>();
        for (final KafkaStreamsAssignment client : assignment.assignment()) {
            result.put(client.processId(), client);
        }
        return result;
    }

    static Set<AssignedTask> tasks(final AssignedTask... tasks) {
        return Set.of(tasks);
    }

    static AssignedTask active(final int s, final int p) {
        return new AssignedTask(task(s, p), AssignedTask.Type.ACTIVE);
    }

    static AssignedTask standby(final int s, final int p) {
        return new AssignedTask(task(s, p), AssignedTask.Type.STANDBY);
    }

    @Test
    @DisplayName("AssignResponse -> TaskAssignment with follow-up deadlines")
    void responseToAssignment() {
        final App app = sampleApp();
        final Map<ProcessId, KafkaStreamsAssignment> result = byProcess(ResponseToAssignment.convert(
                response(AssignmentError.ASSIGNMENT_ERROR_NONE), app.clients.keySet(), app.tasks.keySet()));
        equal(Set.of(pid(1), pid(2), pid(3)), result.keySet(), "every client");
        equal(tasks(active(0, 0), active(1, 0), standby(0, 1)), new HashSet<>(result.get(pid(1)).tasks().values()),
                "client 1");
        equal(java.util.Optional.of(NOW.plusSeconds(60)), result.get(pid(1)).followupRebalanceDeadline(), "follow-up");
        equal(tasks(active(0, 1)), new HashSet<>(result.get(pid(2)).tasks().values()), "client 2");
        equal(java.util.Optional.empty(), result.get(pid(2)).followupRebalanceDeadline(), "no follow-up (0)");
        equal(tasks(standby(0, 0)), new HashSet<>(result.get(pid(3)).tasks().values()), "client 3");
    }

    @Test
    @DisplayName("responses Kafka would reject are refused")
    void unusableResponses() {
        final App app = sampleApp();
        final Set<ProcessId> clients = app.clients.keySet();
        final Set<TaskId> known = app.tasks.keySet();
        raises(ResponseToAssignment.InvalidResponse.class, () -> ResponseToAssignment.convert(
                response(AssignmentError.ASSIGNMENT_ERROR_ACTIVE_TASK_UNASSIGNED), clients, known));
        final AssignResponse ok = response(AssignmentError.ASSIGNMENT_ERROR_NONE);
        raises(ResponseToAssignment.InvalidResponse.class, () -> ResponseToAssignment.convert(
                ok.toBuilder().removeClients(2).build(), clients, known));
        raises(ResponseToAssignment.InvalidResponse.class, () -> ResponseToAssignment.convert(
                ok.toBuilder().addClients(ClientAssignment.newBuilder().setProcessId(pid(9).id().toString())).build(),
                clients, known));
        raises(ResponseToAssignment.InvalidResponse.class, () -> ResponseToAssignment.convert(
                ok.toBuilder().setClients(2, ok.getClients(2).toBuilder().addActiveTasks(TaskIds.of(7, 7))).build(),
                clients, known));
        raises(ResponseToAssignment.InvalidResponse.class, () -> ResponseToAssignment.convert(
                ok.toBuilder().setClients(2, ok.getClients(2).toBuilder().setProcessId("p3")).build(), clients, known));
    }

    @Test
    @DisplayName("settings: keys, defaults, validation")
    void settings() {
        final AssignorSettings defaults = AssignorSettings.defaults();
        equal("localhost:50051", defaults.target(), "default target");
        equal(10_000L, defaults.deadline().toMillis(), "default deadline");
        equal(5_000L, defaults.timeBudgetMs(), "default budget: half the deadline");
        equal(3, defaults.maxAttempts(), "default attempts");
        equal(60_000L, defaults.fallbackFollowupDelay().toMillis(), "follow-up a minute after a fallback");
        final AssignorSettings set = AssignorSettings.from(Map.of("kassign.target", "kassign:9000",
                "kassign.deadline.ms", "1500", "kassign.retry.max.attempts", 5, "kassign.tls.ca.file", "/etc/ca.pem",
                "application.id", "app", "kassign.group.id", "group"));
        equal("kassign:9000", set.target(), "target");
        equal(1_500L, set.deadline().toMillis(), "deadline from a string");
        equal(5, set.maxAttempts(), "attempts from a number");
        isTrue(set.tls(), "a CA file implies TLS");
        equal("group", set.groupId(), "kassign.group.id wins over application.id");
        equal(750L, set.timeBudgetMs(), "budget follows the deadline");
        raises(ConfigException.class, () -> AssignorSettings.from(Map.of("kassign.deadline.ms", "soon")));
        raises(ConfigException.class, () -> AssignorSettings.from(Map.of("kassign.deadline.ms", "0")));
        raises(ConfigException.class, () -> AssignorSettings.from(Map.of("kassign.tls", "yes")));
        raises(ConfigException.class, () -> AssignorSettings.from(Map.of("kassign.tls.client.cert", "/c.pem")));
        final ConfigException tooLong = raises(ConfigException.class, () -> AssignorSettings.from(Map.of(
                "kassign.deadline.ms", 4_000, "kassign.assignment.time.budget.ms", 4_000)));
        isTrue(tooLong.getMessage().contains("kassign.assignment.time.budget.ms"), tooLong.getMessage());
        raises(ConfigException.class, () -> AssignorSettings.from(Map.of("kassign.assignment.time.budget.ms", 10_000)));
        equal(9_999L, AssignorSettings.from(Map.of("kassign.assignment.time.budget.ms", 9_999)).timeBudgetMs(),
                "a budget just below the default deadline");
        final AssignorSettings mtls = AssignorSettings.from(Map.of("kassign.tls.client.cert", "/c.pem",
                "kassign.tls.client.key", "/k.pem"));
        isTrue(mtls.tls(), "a client certificate implies TLS");
        raises(IllegalArgumentException.class, () -> StateToRequest.strategy("fastest"));
    }

    static KassignTaskAssignor assignor(final Map<String, Object> configs) {
        final KassignTaskAssignor assignor = new KassignTaskAssignor(CLOCK);
        assignor.configure(configs);
        return assignor;
    }

    @Test
    @DisplayName("plug-in uses the service's answer (scripted server)")
    void usesAnswer() throws Exception {
        try (ScriptedServer server = new ScriptedServer(0).answer(response(AssignmentError.ASSIGNMENT_ERROR_NONE))) {
            final Map<ProcessId, KafkaStreamsAssignment> result = byProcess(
                    assignor(Map.of("kassign.target", server.target())).assign(sampleApp()));
            equal(tasks(standby(0, 0)), new HashSet<>(result.get(pid(3)).tasks().values()), "the service's placement");
            equal(java.util.Optional.of(NOW.plusSeconds(60)), result.get(pid(1)).followupRebalanceDeadline(), "deadline");
        }
    }

    /** Four clients that ran three stateful tasks each, caught up; one standby per task. */
    @Test
    @DisplayName("a rebalance through the real server is valid and sticky")
    void liveRebalance() {
        final String target = LiveServer.shared().target();
        final App app = new App();
        app.configs = App.configs(1, List.of(), "none");
        final Map<ProcessId, Set<TaskId>> before = new TreeMap<>();
        for (int c = 1; c <= 4; c++) {
            final Client client = new Client(pid(c), "c" + c + "-1", "c" + c + "-2");
            before.put(pid(c), new TreeSet<>());
            app.client(client);
        }
        for (int p = 0; p < 12; p++) {
            app.task(Task.stateful(task(0, p), "store", Partition.source("in", p), Partition.changelog("cl", p)));
            final int owner = 1 + p % 4;
            for (int c = 1; c <= 4; c++) {
                final Client client = app.clients.get(pid(c));
                if (c == owner) {
                    client.active("c" + c + "-1", task(0, p));
                    before.get(pid(c)).add(task(0, p));
                } else {
                    client.lag(task(0, p), 5_000);
                }
            }
        }
        app.task(Task.stateless(task(1, 0), Partition.source("other", 0)));
        final Map<ProcessId, KafkaStreamsAssignment> result = byProcess(
                assignor(Map.of("kassign.target", target, "application.id", "live-test")).assign(app));
        equal(before.keySet(), result.keySet(), "every client assigned");
        final Map<TaskId, Integer> activeCount = new HashMap<>();
        final Map<TaskId, Integer> standbyCount = new HashMap<>();
        for (final KafkaStreamsAssignment client : result.values()) {
            for (final AssignedTask t : client.tasks().values()) {
                (t.type() == AssignedTask.Type.ACTIVE ? activeCount : standbyCount).merge(t.id(), 1, Integer::sum);
            }
            final Set<TaskId> actives = new TreeSet<>();
            client.tasks().values().stream().filter(t -> t.type() == AssignedTask.Type.ACTIVE)
                    .forEach(t -> actives.add(t.id()));
            isTrue(actives.containsAll(before.get(client.processId())),
                    "caught-up client " + client.processId() + " keeps its actives " + before.get(client.processId())
                            + ", got " + actives);
            isTrue(client.followupRebalanceDeadline().isEmpty(), "balanced and caught up: no follow-up");
        }
        equal(13, activeCount.size(), "every task active");
        isTrue(activeCount.values().stream().allMatch(n -> n == 1), "each active once");
        equal(12, standbyCount.size(), "a standby for every stateful task");
        isTrue(standbyCount.values().stream().allMatch(n -> n == 1), "one standby each");
        isTrue(!standbyCount.containsKey(task(1, 0)), "no standby for the stateless task");
    }

    /**
     * KIP-441 scale-out through the real server: client 1 ran all four stateful tasks; client 2 joins.
     * Lagging beyond acceptable.recovery.lag (10,000), client 2 gets no active but warm-ups (standbys
     * here), and a probing follow-up is scheduled; within it, client 2 takes over half at once.
     */
    @Test
    @DisplayName("scale-out through the real server: lagging newcomer warms up, caught-up one takes over")
    void liveScaleOut() {
        final String target = LiveServer.shared().target();
        for (final long newcomerLag : new long[] {100_000L, 50L}) {
            final App app = new App();
            final Client veteran = new Client(pid(1), "c1");
            final Client newcomer = new Client(pid(2), "c2");
            for (int p = 0; p < 4; p++) {
                app.task(Task.stateful(task(0, p), "store", Partition.source("in", p), Partition.changelog("cl", p)));
                veteran.active("c1", task(0, p));
                if (newcomerLag < 100_000L) {
                    newcomer.standby("c2", task(0, p), newcomerLag);
                } else {
                    newcomer.lag(task(0, p), newcomerLag);
                }
            }
            app.client(veteran).client(newcomer);
            final Map<ProcessId, KafkaStreamsAssignment> result = byProcess(
                    assignor(Map.of("kassign.target", target)).assign(app));
            final Map<AssignedTask.Type, Integer> second = new HashMap<>();
            result.get(pid(2)).tasks().values().forEach(t -> second.merge(t.type(), 1, Integer::sum));
            final boolean followup = result.values().stream().anyMatch(a -> a.followupRebalanceDeadline().isPresent());
            if (newcomerLag > 10_000L) {
                equal(null, second.get(AssignedTask.Type.ACTIVE), "a lagging newcomer gets no active");
                equal(2, second.get(AssignedTask.Type.STANDBY), "max.warmup.replicas warm-ups");
                isTrue(followup, "a probing rebalance is scheduled");
                result.values().forEach(a -> a.followupRebalanceDeadline().ifPresent(deadline -> equal(
                        NOW.plusMillis(app.configs.probingRebalanceIntervalMs()), deadline, "probing deadline")));
            } else {
                equal(2, second.get(AssignedTask.Type.ACTIVE), "a caught-up newcomer takes half at once");
                isTrue(!followup, "nothing left to warm up: no follow-up");
            }
        }
    }
}
