package io.kassign.streams;

import static io.kassign.client.Check.equal;
import static io.kassign.client.Check.isTrue;
import static io.kassign.streams.FakeState.pid;
import static io.kassign.streams.FakeState.task;
import static io.kassign.streams.PluginTests.NOW;
import static io.kassign.streams.PluginTests.active;
import static io.kassign.streams.PluginTests.assignor;
import static io.kassign.streams.PluginTests.byProcess;
import static io.kassign.streams.PluginTests.response;
import static io.kassign.streams.PluginTests.sampleApp;
import static io.kassign.streams.PluginTests.standby;
import static io.kassign.streams.PluginTests.tasks;

import io.grpc.Status;
import io.kassign.client.Check;
import io.kassign.client.ClientTests;
import io.kassign.client.ScriptedServer;
import io.kassign.streams.FakeState.App;
import io.kassign.v1.AssignmentError;
import java.time.Instant;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;

/** The plug-in's fallback: the rebalance completes with the previous assignment and a follow-up. */
final class FallbackTests {
    private FallbackTests() {
    }

    static void register(final Check check) {
        check.add("fallback when the server is down: previous assignment + immediate follow-up", FallbackTests::serverDown);
        check.add("fallback when lags cannot be computed", FallbackTests::lagFailure);
        check.add("fallback when the server answers INTERNAL or an error code", FallbackTests::serverErrors);
        check.add("fallback drops what Kafka would reject; delay is configurable", FallbackTests::fallbackFiltering);
    }

    /** Client 1 kept 0_0 and 1_0 with standby 0_1, client 2 kept 0_1, client 3 nothing; all due now + delay. */
    private static void assertKeptPrevious(final TaskAssignment assignment, final Instant followup) {
        final Map<ProcessId, KafkaStreamsAssignment> result = byProcess(assignment);
        equal(Set.of(pid(1), pid(2), pid(3)), result.keySet(), "every client");
        equal(tasks(active(0, 0), active(1, 0), standby(0, 1)), new HashSet<>(result.get(pid(1)).tasks().values()),
                "client 1 keeps its tasks");
        equal(tasks(active(0, 1)), new HashSet<>(result.get(pid(2)).tasks().values()), "client 2 keeps its task");
        equal(Set.of(), new HashSet<>(result.get(pid(3)).tasks().values()), "client 3 had nothing");
        for (final KafkaStreamsAssignment client : result.values()) {
            equal(java.util.Optional.of(followup), client.followupRebalanceDeadline(), "follow-up of " + client.processId());
        }
    }

    private static void serverDown() throws Exception {
        final KassignTaskAssignor assignor = assignor(Map.of("kassign.target", "127.0.0.1:" + ClientTests.freePort(),
                "kassign.deadline.ms", 2_000, "kassign.retry.max.attempts", 2));
        final long start = System.nanoTime();
        final TaskAssignment result = assignor.assign(sampleApp());
        isTrue(System.nanoTime() - start < 4_000_000_000L, "the fallback came within the deadline");
        assertKeptPrevious(result, NOW);
    }

    private static void lagFailure() throws Exception {
        try (ScriptedServer server = new ScriptedServer(0)) {
            final App app = sampleApp();
            app.lagFailure = new IllegalStateException("end offsets timed out");
            final TaskAssignment result = assignor(Map.of("kassign.target", server.target())).assign(app);
            assertKeptPrevious(result, NOW);
            equal(0, server.calls(), "no call without lags");
        }
    }

    private static void serverErrors() throws Exception {
        try (ScriptedServer server = new ScriptedServer(0).failWith(Status.INTERNAL.withDescription("boom"))) {
            final KassignTaskAssignor assignor = assignor(Map.of("kassign.target", server.target()));
            assertKeptPrevious(assignor.assign(sampleApp()), NOW);
            equal(1, server.calls(), "INTERNAL is not retried");
            server.answer(response(AssignmentError.ASSIGNMENT_ERROR_ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES));
            assertKeptPrevious(assignor.assign(sampleApp()), NOW);
        }
    }

    private static void fallbackFiltering() {
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

        final KassignTaskAssignor delayed = assignor(Map.of("kassign.target", "127.0.0.1:1",
                "kassign.retry.max.attempts", 1, "kassign.fallback.followup.delay.ms", 30_000));
        assertKeptPrevious(delayed.assign(sampleApp()), NOW.plusSeconds(30));
    }
}
