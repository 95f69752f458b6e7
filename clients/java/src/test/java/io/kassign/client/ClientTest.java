package io.kassign.client;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import static io.kassign.client.Check.equal;
import static io.kassign.client.Check.isTrue;
import static io.kassign.client.Check.raises;

import io.grpc.Status;
import io.kassign.v1.AssignRequest;
import io.kassign.v1.AssignResponse;
import io.kassign.v1.AssignmentReport;
import io.kassign.v1.ClientAssignment;
import io.kassign.v1.MemberSubscription;
import io.kassign.v1.RackAwareStrategy;
import io.kassign.v1.SubscriptionInfo;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** The client library: builders, retry policy, deadline, message size; against loopback servers. */
public final class ClientTest {


    public static AssignRequest smallRequest() {
        return RequestBuilder.forGroup("orders")
                .nowMs(1_700_000_000_000L)
                .numStandbyReplicas(1)
                .rackAwareAssignmentTags("zone")
                .rackAwareStrategy(RackAwareStrategy.RACK_AWARE_STRATEGY_NONE)
                .task(TaskSpec.stateful(1, 0).stores("counts").source("orders", 0).changelog("orders-counts-changelog", 0)
                        .changelogEndOffsetSum(1000))
                .task(TaskSpec.stateful(0, 0).stores("counts").source("orders", 1, "r2", "r1")
                        .changelog("orders-counts-changelog", 1).changelogEndOffsetSum(500))
                .task(TaskSpec.stateless(0, 1).source("clicks", 0))
                .client(ClientSpec.process("00000000-0000-0000-0000-000000000002").threads(1).tag("zone", "b")
                        .offsetSum(TaskIds.of(0, 0), 400))
                .client(ClientSpec.process("00000000-0000-0000-0000-000000000001").consumers("c1-b", "c1-a")
                        .tag("zone", "a").rack("r1").endpoint("c1:8080")
                        .runningActive(TaskIds.of(0, 0))
                        .offsetSum("c1-b", TaskIds.of(1, 0), 900)
                        .ownedPartition("c1-a", "orders", 1))
                .build();
    }

    @Test
    @DisplayName("builders sort clients, members and tasks and fill SubscriptionInfo v11")
    void builders() {
        final AssignRequest request = smallRequest();
        equal("orders", request.getGroupId(), "group id");
        equal(3, request.getMembersCount(), "one member per consumer");
        equal("c1-a", request.getMembers(0).getMemberId(), "client 1 first (UUID order), members by id");
        equal("c1-b", request.getMembers(1).getMemberId(), "second member of client 1");
        final SubscriptionInfo first = request.getMembers(0).getSubscription().getInfo();
        equal(11, first.getVersion(), "SubscriptionInfo version");
        equal("00000000-0000-0000-0000-000000000001", first.getProcessId(), "process id");
        equal("c1:8080", first.getUserEndPoint(), "endpoint");
        equal("zone", first.getClientTags(0).getKey(), "tag key");
        equal(1, first.getTaskOffsetSumsCount(), "process-level offset sums go to the first consumer");
        equal(-2L, first.getTaskOffsetSums(0).getOffsetSum(), "running active is -2");
        equal("r1", request.getMembers(0).getSubscription().getRackId(), "rack");
        equal("orders", request.getMembers(0).getSubscription().getOwnedPartitions(0).getTopic(), "owned partition");
        final MemberSubscription second = request.getMembers(1);
        equal(900L, second.getSubscription().getInfo().getTaskOffsetSums(0).getOffsetSum(), "member-level offset sum");
        equal(0, second.getSubscription().getOwnedPartitionsCount(), "c1-b owns nothing");
        equal("00000000-0000-0000-0000-000000000002-StreamThread-1-consumer",
                request.getMembers(2).getMemberId(), "threads() names consumers as Kafka Streams does");
        equal("0_0", TaskIds.format(request.getTasks(0).getId()), "tasks sorted");
        equal("0_1", TaskIds.format(request.getTasks(1).getId()), "tasks sorted");
        equal("1_0", TaskIds.format(request.getTasks(2).getId()), "tasks sorted");
        equal(java.util.List.of("r1", "r2"), request.getTasks(0).getTopicPartitions(0).getRackIdsList(), "racks sorted");
        equal(500L, request.getTasks(0).getChangelogEndOffsetSum(), "end offset sum");
        equal(1, request.getConfigs().getNumStandbyReplicas(), "standbys");
        isTrue(!request.getConfigs().hasAcceptableRecoveryLag(), "unset configs stay unset (server defaults)");
        equal(request, smallRequest(), "same inputs, same request");
    }

    @Test
    @DisplayName("builders refuse bad offset sums and duplicate clients")
    void builderValidation() {
        raises(IllegalArgumentException.class, () -> ClientSpec.process("00000000-0000-0000-0000-000000000001")
                .offsetSum(TaskIds.of(0, 0), -5));
        raises(IllegalArgumentException.class, () -> ClientSpec.process("not-a-uuid"));
        raises(IllegalStateException.class, () -> RequestBuilder.forGroup("g")
                .client(ClientSpec.process("00000000-0000-0000-0000-000000000001").threads(1))
                .client(ClientSpec.process("00000000-0000-0000-0000-000000000001").threads(1))
                .build());
        raises(IllegalStateException.class, () -> RequestBuilder.forGroup("g")
                .client(ClientSpec.process("00000000-0000-0000-0000-000000000001")).build());
    }

    private static KassignClient.Builder fastClient(final String target) {
        return KassignClient.builder(target)
                .deadline(Duration.ofSeconds(10))
                .initialBackoff(Duration.ofMillis(20))
                .maxBackoff(Duration.ofMillis(200));
    }

    private static AssignResponse answer() {
        return AssignResponse.newBuilder()
                .addClients(ClientAssignment.newBuilder().setProcessId("00000000-0000-0000-0000-000000000001")
                        .addActiveTasks(TaskIds.of(0, 0)))
                .build();
    }

    @Test
    @DisplayName("retries UNAVAILABLE, then succeeds")
    void retriesUnavailable() throws Exception {
        try (ScriptedServer server = new ScriptedServer(0).answer(answer())
                .failWith(Status.UNAVAILABLE, Status.UNAVAILABLE);
             KassignClient client = fastClient(server.target()).maxAttempts(4).build()) {
            equal(answer(), client.assign(smallRequest()), "answer after two UNAVAILABLE");
            equal(3, server.calls(), "calls made");
        }
    }

    @Test
    @DisplayName("does not retry INVALID_ARGUMENT or INTERNAL")
    void noRetryOnOtherCodes() throws Exception {
        for (final Status status : new Status[] {Status.INVALID_ARGUMENT, Status.INTERNAL}) {
            try (ScriptedServer server = new ScriptedServer(0).answer(answer()).failWith(status);
                 KassignClient client = fastClient(server.target()).maxAttempts(4).build()) {
                final KassignException e = raises(KassignException.class, () -> client.assign(smallRequest()));
                equal(status.getCode(), e.code(), "status code");
                equal(1, e.attempts(), "attempts");
                equal(1, server.calls(), "calls made for " + status.getCode());
            }
        }
    }

    @Test
    @DisplayName("gives up after maxAttempts UNAVAILABLE")
    void givesUp() throws Exception {
        try (ScriptedServer server = new ScriptedServer(0).answer(answer())
                .failWith(Status.UNAVAILABLE, Status.UNAVAILABLE, Status.UNAVAILABLE, Status.UNAVAILABLE);
             KassignClient client = fastClient(server.target()).maxAttempts(3).build()) {
            final KassignException e = raises(KassignException.class, () -> client.assign(smallRequest()));
            equal(Status.Code.UNAVAILABLE, e.code(), "status code");
            equal(3, e.attempts(), "attempts");
            equal(3, server.calls(), "calls made");
        }
    }

    /** A loopback port nothing listens on (bound, read, released). */
    public static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    @Test
    @DisplayName("connection refused is UNAVAILABLE and retried")
    void connectionRefused() throws Exception {
        try (KassignClient client = fastClient("127.0.0.1:" + freePort()).maxAttempts(3).build()) {
            final long start = System.nanoTime();
            final KassignException e = raises(KassignException.class, () -> client.assign(smallRequest()));
            equal(Status.Code.UNAVAILABLE, e.code(), "status code");
            equal(3, e.attempts(), "attempts");
            // Two pauses (20 + 40 ms) at least: the attempts really were spaced out.
            isTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(60), "backoff was applied");
        }
    }

    @Test
    @DisplayName("reaches a server that comes up during the retries")
    void serverComesUpLate() throws Exception {
        final int port = freePort();
        try (KassignClient client = fastClient("127.0.0.1:" + port).maxAttempts(50).build()) {
            final CompletableFuture<AssignResponse> call = CompletableFuture.supplyAsync(() -> client.assign(smallRequest()));
            Thread.sleep(400);
            isTrue(!call.isDone(), "still retrying while nothing listens");
            try (ScriptedServer server = new ScriptedServer(port).answer(answer())) {
                equal(answer(), call.get(10, TimeUnit.SECONDS), "answer once the server is up");
                equal(1, server.calls(), "one call reached the server");
            }
        }
    }

    @Test
    @DisplayName("deadline bounds the whole call")
    void deadlineBoundsCall() throws Exception {
        try (ScriptedServer server = new ScriptedServer(0).answer(answer()).delay(3_000);
             KassignClient client = KassignClient.builder(server.target()).deadline(Duration.ofMillis(300)).build()) {
            final long start = System.nanoTime();
            final KassignException e = raises(KassignException.class, () -> client.assign(smallRequest()));
            final long elapsedMs = (System.nanoTime() - start) / 1_000_000;
            equal(Status.Code.DEADLINE_EXCEEDED, e.code(), "status code");
            isTrue(elapsedMs < 2_000, "returned after " + elapsedMs + " ms, not after the server's 3 s");
        }
    }

    @Test
    @DisplayName("backoff doubles and is capped")
    void backoffSchedule() {
        try (KassignClient client = KassignClient.builder("127.0.0.1:1").initialBackoff(Duration.ofMillis(100))
                .maxBackoff(Duration.ofMillis(350)).build()) {
            equal(100L, client.backoffNanos(1) / 1_000_000, "first pause");
            equal(200L, client.backoffNanos(2) / 1_000_000, "second pause");
            equal(350L, client.backoffNanos(3) / 1_000_000, "capped");
            equal(350L, client.backoffNanos(60) / 1_000_000, "no overflow");
        }
        raises(IllegalArgumentException.class, () -> KassignClient.builder("x").maxAttempts(0));
        raises(IllegalArgumentException.class, () -> KassignClient.builder("x").deadline(Duration.ZERO));
    }

    @Test
    @DisplayName("accepts responses above gRPC's 4 MiB default")
    void largeResponse() throws Exception {
        final AssignmentReport.Builder report = AssignmentReport.newBuilder();
        final String note = "n".repeat(1024);
        for (int i = 0; i < 6 * 1024; i++) {
            report.addNotes(note);
        }
        final AssignResponse big = answer().toBuilder().setReport(report).build();
        isTrue(big.getSerializedSize() > 6_000_000, "response is above 4 MiB");
        try (ScriptedServer server = new ScriptedServer(0).answer(big);
             KassignClient client = fastClient(server.target()).build()) {
            equal(big.getReport().getNotesCount(), client.assign(smallRequest()).getReport().getNotesCount(), "notes");
        }
    }

    /** A self-signed certificate for 127.0.0.1 made with openssl; the server presents it. */
    @Test
    @DisplayName("TLS: trusts the given CA file, refuses others")
    void tls() throws Exception {
        final java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("kassign-tls");
        final java.io.File cert = dir.resolve("cert.pem").toFile();
        final java.io.File key = dir.resolve("key.pem").toFile();
        final Process openssl = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                "-keyout", key.getPath(), "-out", cert.getPath())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        equal(0, openssl.waitFor(), "openssl made a certificate");
        try (ScriptedServer server = new ScriptedServer(0, cert, key).answer(answer())) {
            try (KassignClient client = fastClient(server.target()).tls(cert).build()) {
                equal(answer(), client.assign(smallRequest()), "answer over TLS");
            }
            try (KassignClient untrusting = fastClient(server.target()).tls().maxAttempts(1).build()) {
                final KassignException e = raises(KassignException.class, () -> untrusting.assign(smallRequest()));
                equal(Status.Code.UNAVAILABLE, e.code(), "a certificate the JVM does not trust");
            }
            try (KassignClient plaintext = fastClient(server.target()).maxAttempts(1).build()) {
                raises(KassignException.class, () -> plaintext.assign(smallRequest()));
            }
            equal(1, server.calls(), "only the trusting client got through");
        } finally {
            java.nio.file.Files.deleteIfExists(cert.toPath());
            java.nio.file.Files.deleteIfExists(key.toPath());
            java.nio.file.Files.deleteIfExists(dir);
        }
    }

    @Test
    @DisplayName("builder request answered by the real server")
    void liveRequest() {
        final String target = LiveServer.shared().target();
        try (KassignClient client = fastClient(target).build()) {
            final AssignResponse response = client.assign(smallRequest());
            equal(2, response.getClientsCount(), "clients");
            long actives = response.getClientsList().stream().mapToLong(ClientAssignment::getActiveTasksCount).sum();
            equal(3L, actives, "every task active once");
            equal("00000000-0000-0000-0000-000000000001", response.getClients(0).getProcessId(), "sorted clients");
        }
    }
}
