package io.kassign.streams;

import static io.kassign.client.Check.equal;
import static io.kassign.client.Check.isTrue;
import static io.kassign.streams.FakeState.pid;
import static io.kassign.streams.FakeState.task;
import static io.kassign.streams.PluginTest.NOW;
import static io.kassign.streams.PluginTest.active;
import static io.kassign.streams.PluginTest.assignor;
import static io.kassign.streams.PluginTest.byProcess;
import static io.kassign.streams.PluginTest.response;
import static io.kassign.streams.PluginTest.sampleApp;
import static io.kassign.streams.PluginTest.standby;
import static io.kassign.streams.PluginTest.tasks;

import io.grpc.Status;
import io.kassign.client.ClientTest;
import io.kassign.client.ScriptedServer;
import io.kassign.plugin.Prewarm;
import io.kassign.streams.FakeState.App;
import io.kassign.streams.FakeState.Client;
import io.kassign.streams.FakeState.Partition;
import io.kassign.streams.FakeState.Task;
import io.kassign.testlog.CapturingProvider;
import io.kassign.v1.AssignmentError;
import java.lang.management.ManagementFactory;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.management.ObjectName;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignmentUtils;
import org.apache.kafka.streams.processor.assignment.TaskAssignor;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The plug-in's fallback: whatever goes wrong, Kafka's StickyTaskAssignor assigns the rebalance,
 * every client is asked for a follow-up after the back-off, one WARN line says why, and the
 * metrics count it.
 */
final class FallbackTest {
    private static final Instant DEFAULT_FOLLOWUP = NOW.plusMillis(60_000);

    @BeforeEach
    void clearLog() {
        CapturingProvider.clear();
    }

    private static Map<String, Object> configs(final String group, final Object... more) {
        final Map<String, Object> configs = new HashMap<>(Map.of("application.id", group));
        for (int i = 0; i < more.length; i += 2) {
            configs.put((String) more[i], more[i + 1]);
        }
        return configs;
    }

    /** Valid for Kafka, every task active once, every client due for a follow-up at {@code followup}. */
    private static void assertFallback(final App app, final TaskAssignment assignment, final Instant followup) {
        equal(TaskAssignor.AssignmentError.NONE, TaskAssignmentUtils.validateTaskAssignment(app, assignment),
                "Kafka's own validation accepts the fallback");
        final Map<TaskId, Integer> actives = new HashMap<>();
        for (final KafkaStreamsAssignment client : assignment.assignment()) {
            equal(Optional.of(followup), client.followupRebalanceDeadline(), "follow-up of " + client.processId());
            client.tasks().values().stream().filter(t -> t.type() == AssignedTask.Type.ACTIVE)
                    .forEach(t -> actives.merge(t.id(), 1, Integer::sum));
        }
        equal(app.tasks.keySet(), actives.keySet(), "every task is active somewhere");
        isTrue(actives.values().stream().allMatch(n -> n == 1), "once: " + actives);
    }

    /** Exactly one WARN line, starting with "kassign fallback: " and the cause. */
    private static String warnLine(final String causeStart) {
        final List<CapturingProvider.Event> warns = CapturingProvider.events().stream()
                .filter(e -> e.level() == org.slf4j.event.Level.WARN)
                .filter(e -> e.logger().equals(KassignTaskAssignor.class.getName())).toList();
        equal(1, warns.size(), "one WARN line per fallback: " + warns);
        final String line = warns.get(0).message();
        isTrue(line.startsWith("kassign fallback: " + causeStart), line);
        return line;
    }

    static double metric(final String type, final String group, final String extra, final String attribute)
            throws Exception {
        final ObjectName name = new ObjectName("kassign:type=" + type + ",client-id=" + group + extra);
        return ((Number) ManagementFactory.getPlatformMBeanServer().getAttribute(name, attribute)).doubleValue();
    }

    @Test
    @DisplayName("UNAVAILABLE: StickyTaskAssignor assigns, follow-up at now + 60 s, WARN line, metrics")
    void serverDown() throws Exception {
        final KassignTaskAssignor assignor = assignor(configs("fb-down", "kassign.target",
                "127.0.0.1:" + ClientTest.freePort(), "kassign.deadline.ms", 2_000, "kassign.retry.max.attempts", 2));
        // The warming configure started, with the service down, left the channel unused: still 2 attempts.
        Prewarm.start(assignor.settings().connection(), () -> {
            throw new AssertionError("configure did not start the warming");
        }).get(60, TimeUnit.SECONDS);
        final App app = sampleApp();
        final long start = System.nanoTime();
        final TaskAssignment result = assignor.assign(app);
        isTrue(System.nanoTime() - start < 4_000_000_000L, "the fallback came within the deadline");
        assertFallback(app, result, DEFAULT_FOLLOWUP);
        final Map<ProcessId, KafkaStreamsAssignment> byProcess = byProcess(result);
        isTrue(byProcess.get(pid(1)).tasks().containsKey(task(0, 0)), "sticky: client 1 keeps 0_0");
        isTrue(byProcess.get(pid(2)).tasks().containsKey(task(0, 1)), "sticky: client 2 keeps 0_1");
        final String line = warnLine("UNAVAILABLE");
        isTrue(line.contains("(after 2 attempts)"), "the call tried, as without the warming: " + line);
        isTrue(line.contains("assigned locally with Kafka's StickyTaskAssignor; follow-up rebalance in 60000 ms"), line);
        equal(1.0, metric("task-assignor", "fb-down", "", "fallbacks-total"), "fallbacks-total");
        equal(1.0, metric("task-assignor", "fb-down", "", "calls-total"), "calls-total");
        equal(1.0, metric("task-assignor-fallbacks", "fb-down", ",cause=unavailable", "fallbacks-total"), "by cause");
        isTrue(metric("task-assignor", "fb-down", "", "call-latency-max") >= 0, "latency recorded");
    }

    @Test
    @DisplayName("StickyTaskAssignor moves a departed client's tasks and gives a new client some")
    void stickyFailover() {
        final App app = new App();
        for (int p = 0; p < 6; p++) {
            app.task(Task.stateless(task(0, p), Partition.source("in", p)));
        }
        final Client stays = new Client(pid(1), "c1");
        for (int p = 0; p < 3; p++) {
            stays.active("c1", task(0, p));
        }
        app.client(stays).client(new Client(pid(3), "c3"));    // client 2, which ran 0_3..0_5, left
        final TaskAssignment result = assignor(configs("fb-failover", "kassign.target", "127.0.0.1:1",
                "kassign.retry.max.attempts", 1, "kassign.fallback.followup.delay.ms", 30_000)).assign(app);
        assertFallback(app, result, NOW.plusSeconds(30));
        final Map<ProcessId, KafkaStreamsAssignment> byProcess = byProcess(result);
        equal(tasks(active(0, 0), active(0, 1), active(0, 2)), new HashSet<>(byProcess.get(pid(1)).tasks().values()),
                "the client that stayed keeps its tasks");
        equal(tasks(active(0, 3), active(0, 4), active(0, 5)), new HashSet<>(byProcess.get(pid(3)).tasks().values()),
                "the new client takes over the departed client's tasks");
    }

    @Test
    @DisplayName("a NoSuchMethodError (LinkageError) inside assign() falls back")
    void linkageError() throws Exception {
        try (ScriptedServer server = new ScriptedServer(0)) {
            final App app = sampleApp();
            app.lagFailure = new NoSuchMethodError("'java.lang.String TaskId.namedTopology()'");
            final TaskAssignment result = assignor(configs("fb-linkage", "kassign.target", server.target())).assign(app);
            assertFallback(app, result, DEFAULT_FOLLOWUP);
            equal(0, server.calls(), "no call without lags");
            isTrue(warnLine("java.lang.NoSuchMethodError").contains("namedTopology"), "names the missing method");
            equal(1.0, metric("task-assignor-fallbacks", "fb-linkage", ",cause=linkage-error", "fallbacks-total"),
                    "linkage-error counted");
        }
    }

    @Test
    @DisplayName("an exception reading the state falls back")
    void lagFailure() throws Exception {
        final App app = sampleApp();
        app.lagFailure = new IllegalStateException("end offsets timed out");
        assertFallback(app, assignor(configs("fb-lags", "kassign.target", "127.0.0.1:1")).assign(app),
                DEFAULT_FOLLOWUP);
        warnLine("java.lang.IllegalStateException: end offsets timed out");
    }

    @Test
    @DisplayName("deadline exceeded falls back within the deadline")
    void deadlineExceeded() throws Exception {
        try (ScriptedServer server = new ScriptedServer(0).delay(3_000)
                .answer(response(AssignmentError.ASSIGNMENT_ERROR_NONE))) {
            final App app = sampleApp();
            final long start = System.nanoTime();
            final TaskAssignment result = assignor(configs("fb-deadline", "kassign.target", server.target(),
                    "kassign.deadline.ms", 500)).assign(app);
            isTrue(System.nanoTime() - start < 2_500_000_000L, "did not wait for the slow server");
            assertFallback(app, result, DEFAULT_FOLLOWUP);
            warnLine("DEADLINE_EXCEEDED");
            equal(1.0, metric("task-assignor-fallbacks", "fb-deadline", ",cause=deadline-exceeded", "fallbacks-total"),
                    "deadline-exceeded counted");
        }
    }

    @Test
    @DisplayName("INTERNAL, and an answer carrying an AssignmentError, fall back")
    void serverErrors() throws Exception {
        try (ScriptedServer server = new ScriptedServer(0).failWith(Status.INTERNAL.withDescription("boom"))) {
            final KassignTaskAssignor assignor = assignor(configs("fb-errors", "kassign.target", server.target()));
            assertFallback(sampleApp(), assignor.assign(sampleApp()), DEFAULT_FOLLOWUP);
            equal(1, server.calls(), "INTERNAL is not retried");
            warnLine("INTERNAL: boom");
            CapturingProvider.clear();
            server.answer(response(AssignmentError.ASSIGNMENT_ERROR_ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES));
            assertFallback(sampleApp(), assignor.assign(sampleApp()), DEFAULT_FOLLOWUP);
            warnLine("invalid answer");
            equal(2.0, metric("task-assignor", "fb-errors", "", "fallbacks-total"), "both counted");
        }
    }

    @Test
    @DisplayName("the service's answer: one INFO 'kassign assigned' line, no fallback")
    void successLogsInfo() throws Exception {
        try (ScriptedServer server = new ScriptedServer(0).answer(response(AssignmentError.ASSIGNMENT_ERROR_NONE))) {
            assignor(configs("fb-ok", "kassign.target", server.target())).assign(sampleApp());
            final List<String> infos = CapturingProvider.events().stream()
                    .filter(e -> e.logger().equals(KassignTaskAssignor.class.getName()))
                    .map(CapturingProvider.Event::message).toList();
            equal(1, infos.size(), "one line: " + infos);
            isTrue(infos.get(0).startsWith("kassign assigned group fb-ok: 3 tasks to 3 clients in "), infos.get(0));
            equal(1.0, metric("task-assignor", "fb-ok", "", "assignments-total"), "assignments-total");
            equal(0.0, metric("task-assignor", "fb-ok", "", "fallbacks-total"), "no fallback");
        }
    }

    @Test
    @DisplayName("when StickyTaskAssignor fails too, every client keeps its previous tasks")
    void lastResort() {
        final App app = sampleApp();
        app.configsFailure = new IllegalStateException("configs unreadable");
        final Map<ProcessId, KafkaStreamsAssignment> result = byProcess(
                assignor(configs("fb-last", "kassign.target", "127.0.0.1:1")).assign(app));
        equal(tasks(active(0, 0), active(1, 0), standby(0, 1)), new HashSet<>(result.get(pid(1)).tasks().values()),
                "client 1 keeps its tasks");
        equal(tasks(active(0, 1)), new HashSet<>(result.get(pid(2)).tasks().values()), "client 2 keeps its task");
        equal(Optional.of(DEFAULT_FOLLOWUP), result.get(pid(3)).followupRebalanceDeadline(), "follow-up");
        isTrue(warnLine("java.lang.IllegalStateException").contains("kept the previous assignment"), "says so");
    }

    @Test
    @DisplayName("an earlier follow-up from the sticky result is kept; later ones move to now + back-off")
    void earlierFollowupKept() {
        final KafkaStreamsAssignment early = KafkaStreamsAssignment.of(pid(1), Set.of())
                .withFollowupRebalance(NOW.plusSeconds(5));
        final KafkaStreamsAssignment late = KafkaStreamsAssignment.of(pid(2), Set.of())
                .withFollowupRebalance(NOW.plusSeconds(500));
        final KafkaStreamsAssignment none = KafkaStreamsAssignment.of(pid(3), Set.of());
        final Map<ProcessId, KafkaStreamsAssignment> result = byProcess(LocalFallback.withFollowup(
                new TaskAssignment(List.of(early, late, none)), NOW.plusSeconds(60)));
        equal(Optional.of(NOW.plusSeconds(5)), result.get(pid(1)).followupRebalanceDeadline(), "earlier kept");
        equal(Optional.of(NOW.plusSeconds(60)), result.get(pid(2)).followupRebalanceDeadline(), "later moved up");
        equal(Optional.of(NOW.plusSeconds(60)), result.get(pid(3)).followupRebalanceDeadline(), "none gets one");
    }

    @Test
    @DisplayName("onAssignmentComputed counts and logs an assignment Kafka rejected")
    void rejectedAssignment() throws Exception {
        final KassignTaskAssignor assignor = assignor(configs("fb-rejected"));
        assignor.onAssignmentComputed(new GroupAssignment(Map.of()), new GroupSubscription(Map.of()),
                TaskAssignor.AssignmentError.NONE);
        assignor.onAssignmentComputed(new GroupAssignment(Map.of()), new GroupSubscription(Map.of()),
                TaskAssignor.AssignmentError.UNKNOWN_TASK_ID);
        equal(1.0, metric("task-assignor", "fb-rejected", "", "rejected-assignments-total"), "one rejection");
        isTrue(CapturingProvider.events().stream().anyMatch(e -> e.level() == org.slf4j.event.Level.WARN
                && e.message().contains("UNKNOWN_TASK_ID")), "a WARN line names the error");
    }

    @Test
    @DisplayName("PreviousAssignment drops what Kafka would reject")
    void fallbackFiltering() {
        final App app = sampleApp();
        app.clients.get(pid(2)).active("c2-a", task(0, 0));         // 0_0 claimed by clients 1 and 2
        app.clients.get(pid(2)).active("c2-a", task(5, 5));         // no longer in the topology
        app.clients.get(pid(3)).previousStandby.add(task(1, 0));    // standby of a stateless task
        app.clients.get(pid(1)).previousStandby.add(task(0, 0));    // standby beside its own active
        final TaskAssignment result = PreviousAssignment.keep(app, NOW.plusSeconds(30));
        final Map<ProcessId, KafkaStreamsAssignment> byProcess = byProcess(result);
        equal(tasks(active(0, 0), active(1, 0), standby(0, 1)), new HashSet<>(byProcess.get(pid(1)).tasks().values()),
                "client 1 (first in process order) keeps 0_0");
        equal(tasks(active(0, 1)), new HashSet<>(byProcess.get(pid(2)).tasks().values()), "client 2 loses the duplicates");
        equal(Set.of(), new HashSet<>(byProcess.get(pid(3)).tasks().values()), "no stateless standby");
    }
}
