package io.kassign.streams;

import static io.kassign.client.Check.equal;
import static io.kassign.client.Check.isTrue;
import static io.kassign.streams.FakeState.pid;
import static io.kassign.streams.FakeState.task;
import static io.kassign.streams.FallbackTest.metric;
import static io.kassign.streams.PluginTest.assignor;
import static io.kassign.streams.PluginTest.sampleApp;

import io.kassign.client.ClientTest;
import io.kassign.client.LiveServer;
import io.kassign.client.ProtoJson;
import io.kassign.plugin.AssignorMetrics;
import io.kassign.plugin.ShadowCalls;
import io.kassign.streams.FakeState.App;
import io.kassign.streams.FakeState.Client;
import io.kassign.streams.FakeState.Partition;
import io.kassign.streams.FakeState.Task;
import io.kassign.testlog.CapturingProvider;
import io.kassign.v1.AssignRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;
import org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

/**
 * The KIP-924 plug-in's shadow mode (issue 26): assign() returns exactly Kafka's StickyTaskAssignor's
 * answer, at its cost, whether kassign is there or not; the request kassign receives in the
 * background carries that answer; a failed shadow call is one WARN line and a count.
 */
final class ShadowTest {
    @BeforeEach
    void clearLog() {
        CapturingProvider.clear();
    }

    /** Shadow mode; a 5 s deadline for a live server's first call, 1 s for an unreachable one. */
    private static Map<String, Object> configs(final String group, final String target, final int deadlineMs) {
        return new HashMap<>(Map.of("application.id", group, "kassign.target", target, "kassign.mode", "shadow",
                "kassign.retry.max.attempts", 1, "kassign.deadline.ms", deadlineMs));
    }

    /** Each client's tasks and follow-up deadline, by process: what Kafka reads of an answer. */
    static Map<String, String> byProcess(final TaskAssignment assignment) {
        final Map<String, String> clients = new TreeMap<>();
        for (final KafkaStreamsAssignment client : assignment.assignment()) {
            clients.put(client.processId().toString(), new TreeMap<>(client.tasks()) + " followup "
                    + client.followupRebalanceDeadline());
        }
        return clients;
    }

    private static void idle(final String group) throws InterruptedException {
        isTrue(ShadowCalls.of(AssignorMetrics.TASK_ASSIGNOR, group).awaitIdle(Duration.ofSeconds(30)),
                "the shadow calls of " + group + " ended");
    }

    /** 240 stateless tasks over 8 clients that ran them before, one client new: some must move. */
    static App largerApp() {
        final App app = new App();
        final List<Client> clients = new ArrayList<>();
        for (int c = 1; c <= 8; c++) {
            clients.add(new Client(pid(c), "c" + c));
        }
        for (int p = 0; p < 240; p++) {
            app.task(Task.stateless(task(0, p), Partition.source("in", p)));
            final int owner = p % 7;
            clients.get(owner).active("c" + (owner + 1), task(0, p));
        }
        clients.forEach(app::client);
        return app;
    }

    @Test
    @DisplayName("shadow, kassign unreachable: exactly StickyTaskAssignor's answer, no follow-up; one WARN, counted")
    void unreachable() throws Exception {
        final String target = "127.0.0.1:" + ClientTest.freePort();
        final App app = sampleApp();
        final TaskAssignment result = assignor(configs("shadow-down", target, 1_000)).assign(app);
        equal(byProcess(new StickyTaskAssignor().assign(sampleApp())), byProcess(result),
                "exactly Kafka's StickyTaskAssignor, follow-ups included (none)");
        isTrue(result.assignment().stream().allMatch(c -> c.followupRebalanceDeadline().isEmpty()),
                "no follow-up rebalance in shadow mode");
        idle("shadow-down");
        equal(1.0, metric("task-assignor", "shadow-down", "", "shadow-failed-total"), "shadow-failed-total");
        equal(0.0, metric("task-assignor", "shadow-down", "", "shadow-ok-total"), "shadow-ok-total");
        equal(0.0, metric("task-assignor", "shadow-down", "", "calls-total"), "not an assignment call");
        final List<String> warns = CapturingProvider.events().stream().filter(e -> e.level() == Level.WARN)
                .filter(e -> e.logger().equals(KassignTaskAssignor.class.getName()))
                .map(CapturingProvider.Event::message).toList();
        equal(1, warns.size(), "one WARN line: " + warns);
        final String start = "kassign shadow: the call for group shadow-down failed, which changes nothing: ";
        // refused at once, or (a loaded machine) still connecting at the deadline
        isTrue(warns.get(0).startsWith(start + "UNAVAILABLE") || warns.get(0).startsWith(start + "DEADLINE_EXCEEDED"),
                warns.get(0));
    }

    @Test
    @DisplayName("shadow costs no wait: assign() against StickyTaskAssignor's, medians, kassign unreachable")
    void noWait() throws Exception {
        final KassignTaskAssignor plugin =
                assignor(configs("shadow-timing", "127.0.0.1:" + ClientTest.freePort(), 1_000));
        final int rounds = 21;
        final long[] shadow = new long[rounds];
        final long[] kafka = new long[rounds];
        for (int i = -5; i < rounds; i++) { // five rounds of warming first
            final App forKafka = largerApp();
            final App forShadow = largerApp();
            long start = System.nanoTime();
            final TaskAssignment expected = new StickyTaskAssignor().assign(forKafka);
            final long kafkaNanos = System.nanoTime() - start;
            start = System.nanoTime();
            final TaskAssignment got = plugin.assign(forShadow);
            final long shadowNanos = System.nanoTime() - start;
            if (i >= 0) {
                kafka[i] = kafkaNanos;
                shadow[i] = shadowNanos;
                equal(byProcess(expected), byProcess(got), "round " + i + ": Kafka's answer");
            }
        }
        Arrays.sort(shadow);
        Arrays.sort(kafka);
        final double shadowMs = shadow[rounds / 2] / 1e6;
        final double kafkaMs = kafka[rounds / 2] / 1e6;
        System.out.printf("shadow assign() median %.3f ms, StickyTaskAssignor median %.3f ms%n", shadowMs, kafkaMs);
        isTrue(shadowMs <= 1.5 * kafkaMs + 20, "shadow median " + shadowMs + " ms against Kafka's " + kafkaMs + " ms");
        idle("shadow-timing");
        final double told = metric("task-assignor", "shadow-timing", "", "shadow-failed-total")
                + metric("task-assignor", "shadow-timing", "", "shadow-dropped-total");
        equal(26.0, told, "every shadow call failed or was dropped, none lost");
    }

    @Test
    @DisplayName("shadow against a real server: its journal's request carries Kafka's answer; the INFO line")
    void liveServer() throws Exception {
        final LiveServer server = LiveServer.shared();
        final App app = sampleApp();
        final TaskAssignment result = assignor(configs("shadow-live", server.target(), 5_000)).assign(app);
        idle("shadow-live");
        equal(1.0, metric("task-assignor", "shadow-live", "", "shadow-ok-total"), "shadow-ok-total: " + server.log());
        AssignRequest sent = null;
        for (final String line : server.journalLines(false)) {
            final AssignRequest request = ProtoJson.parseRequest(line);
            if (request.getGroupId().equals("shadow-live")) {
                sent = request;
            }
        }
        isTrue(sent != null, "the shadow request is in the journal");
        equal(ShadowCall.shadow(result), sent.getShadow().toBuilder().clearKassign().clearComparison().build(),
                "shadow.kafka is the answer the group got");
        equal("StickyTaskAssignor", sent.getShadow().getKafkaAssignor(), "kafka_assignor");
        equal(3, sent.getShadow().getKafkaCount(), "one entry per client");
        equal(List.of(pid(1).id().toString(), pid(2).id().toString(), pid(3).id().toString()),
                sent.getShadow().getKafkaList().stream().map(c -> c.getProcessId()).toList(), "by process id, sorted");
        final long actives = sent.getShadow().getKafkaList().stream().mapToLong(c -> c.getActiveTasksCount()).sum();
        equal(3L, actives, "every task active once");
        final List<String> infos = CapturingProvider.events().stream().filter(e -> e.level() == Level.INFO)
                .map(CapturingProvider.Event::message).filter(m -> m.startsWith("kassign shadow: ")).toList();
        equal(1, infos.size(), "one shadow line: " + infos);
        isTrue(infos.get(0).startsWith("kassign shadow: group shadow-live: Kafka's StickyTaskAssignor against kassign's "),
                infos.get(0));
        // the server's comparison (report.shadow), read into the line; the journal's copy holds it too
        isTrue(infos.get(0).contains(": cross-rack ") && infos.get(0).contains(" clients differ")
                || infos.get(0).contains("; the same answer"), infos.get(0));
        isTrue(sent.getShadow().hasComparison(), "the journal's copy has the comparison");
    }
}
