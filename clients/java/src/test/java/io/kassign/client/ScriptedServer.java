package io.kassign.client;

import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.kassign.v1.AssignRequest;
import io.kassign.v1.AssignResponse;
import io.kassign.v1.TaskAssignmentServiceGrpc;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A gRPC server on loopback that fails on cue: it ends the first calls with the scripted statuses,
 * then answers with a fixed response. The real kassign server does not fail on demand, and the
 * client's retry policy is about exactly those failures.
 */
public final class ScriptedServer implements AutoCloseable {
    private final Deque<Status> failures = new ArrayDeque<>();
    private final AtomicInteger calls = new AtomicInteger();
    private final Server server;
    private volatile AssignResponse answer = AssignResponse.getDefaultInstance();
    private volatile long delayMs;

    public ScriptedServer(final int port) throws IOException {
        this(port, null, null);
    }

    /** With TLS when {@code certChain} and {@code privateKey} (PEM files) are given. */
    public ScriptedServer(final int port, final java.io.File certChain, final java.io.File privateKey) throws IOException {
        final NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port));
        if (certChain != null) {
            builder.useTransportSecurity(certChain, privateKey);
        }
        server = builder
                .maxInboundMessageSize(KassignClient.DEFAULT_MAX_MESSAGE_BYTES)
                .addService(new TaskAssignmentServiceGrpc.TaskAssignmentServiceImplBase() {
                    @Override
                    public void assign(final AssignRequest request, final StreamObserver<AssignResponse> observer) {
                        handle(observer);
                    }
                })
                .build()
                .start();
    }

    private void handle(final StreamObserver<AssignResponse> observer) {
        calls.incrementAndGet();
        final Status failure;
        synchronized (failures) {
            failure = failures.poll();
        }
        if (delayMs > 0) {
            try {
                Thread.sleep(delayMs);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (failure != null) {
            observer.onError(failure.asRuntimeException());
            return;
        }
        observer.onNext(answer);
        observer.onCompleted();
    }

    /** The next calls fail with these statuses, in order. */
    public ScriptedServer failWith(final Status... statuses) {
        synchronized (failures) {
            failures.addAll(java.util.List.of(statuses));
        }
        return this;
    }

    public ScriptedServer answer(final AssignResponse response) {
        this.answer = response;
        return this;
    }

    public ScriptedServer delay(final long millis) {
        this.delayMs = millis;
        return this;
    }

    public int calls() {
        return calls.get();
    }

    public String target() {
        return "127.0.0.1:" + server.getPort();
    }

    @Override
    public void close() {
        try {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
