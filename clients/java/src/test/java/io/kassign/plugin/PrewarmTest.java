package io.kassign.plugin;

import static io.kassign.client.Check.equal;
import static io.kassign.client.Check.isTrue;

import io.kassign.client.KassignClient;
import io.kassign.consumer.KassignConsumerAssignor;
import io.kassign.streams.KassignTaskAssignor;
import io.kassign.v1.AssignRequest;
import io.kassign.v1.ConsumerAssignResponse;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The plug-ins' warming at configure: off the caller's thread, once per connection, no connection made. */
final class PrewarmTest {
    @Test
    @DisplayName("start and the plug-ins' configure return while the warming thread is busy; once per connection")
    void startDoesNotWait() throws Exception {
        final Connection connection = Connection.from(Map.of(Connection.TARGET, "127.0.0.1:1",
                Connection.DEADLINE_MS, 4321));
        final CountDownLatch release = new CountDownLatch(1);
        final Future<?> warming = Prewarm.start(connection, () -> {
            await(release);
            return SharedClients.of(connection);
        });
        final Future<?> again = Prewarm.start(connection, () -> {
            throw new AssertionError("warmed twice");
        });
        new KassignConsumerAssignor().configure(Map.of("group.id", "prewarm-busy", "kassign.target", "127.0.0.1:2",
                "partition.assignment.strategy", KassignConsumerAssignor.class.getName()));
        new KassignTaskAssignor().configure(Map.of("application.id", "prewarm-busy", "kassign.target", "127.0.0.1:3"));
        isTrue(!warming.isDone() && !again.isDone(), "configure returned while the warming thread waited");
        release.countDown();
        warming.get(60, TimeUnit.SECONDS);
        again.get(60, TimeUnit.SECONDS);  // an ExecutionException had it made a second client
    }

    @Test
    @DisplayName("warming makes the client and channel but connects to nothing (the channel stays idle)")
    void noConnection() throws Exception {
        try (ServerSocket service = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            final Connection connection = Connection.from(Map.of(Connection.TARGET,
                    "127.0.0.1:" + service.getLocalPort(), Connection.DEADLINE_MS, 4322));
            final KassignClient[] made = new KassignClient[1];
            Prewarm.start(connection, () -> made[0] = SharedClients.of(connection)).get(60, TimeUnit.SECONDS);
            equal(SharedClients.of(connection), made[0], "the shared client was made");
            service.setSoTimeout(500);
            try {
                service.accept().close();
                throw new AssertionError("the warming connected to the service");
            } catch (final SocketTimeoutException expected) {
                // nothing connected
            }
        }
    }

    @Test
    @DisplayName("the warming's messages reach nested types, maps' entries included")
    void filledMessages() throws Exception {
        final AssignRequest request = AssignRequest.parseFrom(Warming.filled(AssignRequest.getDescriptor(), 4));
        isTrue(request.getMembersCount() == 1 && request.getTasksCount() == 1 && request.hasConfigs(),
                "nested: " + request);
        isTrue(request.getMembers(0).getSubscription().getInfo().getClientTagsCount() == 1, "four levels: " + request);
        final ConsumerAssignResponse response = ConsumerAssignResponse.parseFrom(
                Warming.filled(ConsumerAssignResponse.getDescriptor(), 4));
        isTrue(response.getMembersCount() == 1, "nested: " + response);
        equal(0, Warming.filled(AssignRequest.getDescriptor(), 0).length, "depth 0: the empty message");
    }

    @Test
    @DisplayName("an assign() that has begun stops the warming's remaining steps")
    void overtaken() throws Exception {
        final Connection connection = Connection.from(Map.of(Connection.TARGET, "127.0.0.1:1",
                Connection.DEADLINE_MS, 4323));
        isTrue(!Prewarm.overtaken(connection), "no call yet");
        Prewarm.calling(connection);
        isTrue(Prewarm.overtaken(connection), "a call began");
    }

    private static void await(final CountDownLatch latch) {
        try {
            latch.await(60, TimeUnit.SECONDS);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
