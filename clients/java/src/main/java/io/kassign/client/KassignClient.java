package io.kassign.client;

import io.grpc.ChannelCredentials;
import io.grpc.ConnectivityState;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.kassign.v1.AssignRequest;
import io.kassign.v1.AssignResponse;
import io.kassign.v1.ConsumerAssignRequest;
import io.kassign.v1.ConsumerAssignResponse;
import io.kassign.v1.ConsumerAssignmentServiceGrpc;
import io.kassign.v1.ConsumerAssignmentServiceGrpc.ConsumerAssignmentServiceBlockingStub;
import io.kassign.v1.TaskAssignmentServiceGrpc;
import io.kassign.v1.TaskAssignmentServiceGrpc.TaskAssignmentServiceBlockingStub;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A blocking client for kassign's {@code TaskAssignmentService} ({@link #assign}) and
 * {@code ConsumerAssignmentService} ({@link #assignConsumers}), over one channel.
 *
 * <p>Why a wrapper rather than the generated stub: a group leader calls once per rebalance and must
 * get an answer, or a definite failure, within a bound. So every call here has one deadline that
 * covers all its attempts; only {@code UNAVAILABLE} (no server reachable, connection dropped) is
 * retried, with exponential backoff capped at {@link Builder#maxBackoff}; every other status
 * (INVALID_ARGUMENT, INTERNAL, DEADLINE_EXCEEDED, ...) fails at once, because sending the same
 * request again would get the same answer.
 *
 * <pre>{@code
 * try (KassignClient client = KassignClient.builder("kassign.internal:50051")
 *         .deadline(Duration.ofSeconds(5))
 *         .build()) {
 *     AssignResponse response = client.assign(request);
 * }
 * }</pre>
 */
public final class KassignClient implements AutoCloseable {
    /** The server's default limit for one message, which this client accepts too (64 MiB). */
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

    private final ManagedChannel channel;
    private final boolean ownsChannel;
    private final TaskAssignmentServiceBlockingStub stub;
    private final ConsumerAssignmentServiceBlockingStub consumerStub;
    private final Duration deadline;
    private final int maxAttempts;
    private final Duration initialBackoff;
    private final Duration maxBackoff;
    private final boolean waitForReady;

    private KassignClient(final Builder builder, final ManagedChannel channel, final boolean ownsChannel) {
        this.channel = channel;
        this.ownsChannel = ownsChannel;
        final TaskAssignmentServiceBlockingStub tasks = TaskAssignmentServiceGrpc.newBlockingStub(channel)
                .withMaxInboundMessageSize(builder.maxMessageBytes)
                .withMaxOutboundMessageSize(builder.maxMessageBytes);
        final ConsumerAssignmentServiceBlockingStub consumers = ConsumerAssignmentServiceGrpc.newBlockingStub(channel)
                .withMaxInboundMessageSize(builder.maxMessageBytes)
                .withMaxOutboundMessageSize(builder.maxMessageBytes);
        this.stub = builder.waitForReady ? tasks.withWaitForReady() : tasks;
        this.consumerStub = builder.waitForReady ? consumers.withWaitForReady() : consumers;
        this.waitForReady = builder.waitForReady;
        this.deadline = builder.deadline;
        this.maxAttempts = builder.maxAttempts;
        this.initialBackoff = builder.initialBackoff;
        this.maxBackoff = builder.maxBackoff;
    }

    /** A builder for a client of the service at {@code target} ("host:port" or any gRPC target URI). */
    public static Builder builder(final String target) {
        return new Builder(Objects.requireNonNull(target, "target"));
    }

    /**
     * Computes a Kafka Streams assignment. Retries only on UNAVAILABLE, within the deadline.
     *
     * @throws KassignException with the last status when the call fails
     */
    public AssignResponse assign(final AssignRequest request) {
        return assign(request, deadline);
    }

    /**
     * As {@link #assign(AssignRequest)}, bounded by {@code bound} instead of the client's deadline:
     * for a caller whose own deadline started before the call (a plug-in whose deadline covers
     * building the request and converting the answer too). A bound of zero or less fails at once.
     *
     * @throws KassignException with the last status when the call fails
     */
    public AssignResponse assign(final AssignRequest request, final Duration bound) {
        return call(bound, remaining -> stub.withDeadlineAfter(remaining, TimeUnit.NANOSECONDS).assign(request));
    }

    /**
     * Computes a plain consumer group's assignment (KIP-881). Retries only on UNAVAILABLE, within
     * the deadline.
     *
     * @throws KassignException with the last status when the call fails
     */
    public ConsumerAssignResponse assignConsumers(final ConsumerAssignRequest request) {
        return assignConsumers(request, deadline);
    }

    /**
     * As {@link #assignConsumers(ConsumerAssignRequest)}, bounded by {@code bound} instead of the
     * client's deadline (see {@link #assign(AssignRequest, Duration)}).
     *
     * @throws KassignException with the last status when the call fails
     */
    public ConsumerAssignResponse assignConsumers(final ConsumerAssignRequest request, final Duration bound) {
        return call(bound, remaining -> consumerStub.withDeadlineAfter(remaining, TimeUnit.NANOSECONDS).assign(request));
    }

    /** One call within {@code bound}, retries included; {@code attempt} gets the nanoseconds left. */
    private <R> R call(final Duration bound, final Function<Long, R> attempt) {
        final long deadlineNanos = System.nanoTime() + bound.toNanos();
        if (waitForReady && channel.getState(true) == ConnectivityState.TRANSIENT_FAILURE) {
            channel.resetConnectBackoff(); // reconnect now, not when the channel's backoff ends
        }
        for (int n = 1; ; n++) {
            final long remaining = deadlineNanos - System.nanoTime();
            if (remaining <= 0) {
                throw new KassignException(Status.DEADLINE_EXCEEDED.withDescription(
                        "deadline of " + bound.toMillis() + " ms spent before attempt " + n), n - 1, null);
            }
            try {
                return attempt.apply(remaining);
            } catch (final StatusRuntimeException e) {
                final Status status = e.getStatus();
                final long pause = backoffNanos(n);
                final boolean retry = status.getCode() == Status.Code.UNAVAILABLE && n < maxAttempts
                        && System.nanoTime() + pause < deadlineNanos;
                if (!retry) {
                    throw new KassignException(status, n, e);
                }
                pause(pause);
                // The channel backs off its own reconnects (1 s and growing); our schedule decides instead.
                channel.resetConnectBackoff();
            }
        }
    }

    /** Backoff before attempt {@code attempt + 1}: initial * 2^(attempt-1), capped. */
    long backoffNanos(final int attempt) {
        final long initial = initialBackoff.toNanos();
        final int doublings = Math.min(attempt - 1, 30);
        final long grown = initial > (Long.MAX_VALUE >> doublings) ? Long.MAX_VALUE : initial << doublings;
        return Math.min(grown, maxBackoff.toNanos());
    }

    private static void pause(final long nanos) {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KassignException(Status.CANCELLED.withDescription("interrupted during retry backoff"), 0, e);
        }
    }

    /** Closes the channel if this client created it; waits up to five seconds for calls in flight. */
    @Override
    public void close() {
        if (!ownsChannel) {
            return;
        }
        channel.shutdown();
        try {
            if (!channel.awaitTermination(5, TimeUnit.SECONDS)) {
                channel.shutdownNow();
            }
        } catch (final InterruptedException e) {
            channel.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    /** Settings for a {@link KassignClient}; defaults suit a rebalance (5 s, 4 attempts). */
    public static final class Builder {
        private final String target;
        private boolean tls;
        private File caCertificates;
        private File clientCertificate;
        private File clientKey;
        private ManagedChannel channel;
        private Duration deadline = Duration.ofSeconds(5);
        private int maxAttempts = 4;
        private Duration initialBackoff = Duration.ofMillis(100);
        private Duration maxBackoff = Duration.ofSeconds(1);
        private int maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES;
        private boolean waitForReady;

        private Builder(final String target) {
            this.target = target;
        }

        /** Plaintext HTTP/2 (the default): for loopback, a sidecar or a trusted network. */
        public Builder plaintext() {
            this.tls = false;
            this.caCertificates = null;
            this.clientCertificate = null;
            this.clientKey = null;
            return this;
        }

        /** TLS, trusting the JVM's default certificate authorities. */
        public Builder tls() {
            this.tls = true;
            this.caCertificates = null;
            return this;
        }

        /** TLS, trusting the PEM certificate(s) in {@code caCertificates}. */
        public Builder tls(final File caCertificates) {
            this.tls = true;
            this.caCertificates = Objects.requireNonNull(caCertificates, "caCertificates");
            return this;
        }

        /**
         * Mutual TLS: presents this PEM certificate chain and PEM (PKCS#8) private key to a server
         * that asks for a client certificate ({@code kassign serve --tls-client-ca}). Implies TLS.
         */
        public Builder clientCertificate(final File certificateChain, final File privateKey) {
            this.tls = true;
            this.clientCertificate = Objects.requireNonNull(certificateChain, "certificateChain");
            this.clientKey = Objects.requireNonNull(privateKey, "privateKey");
            return this;
        }

        /**
         * The transport as the plug-in's {@code kassign.tls*} settings and the command line's
         * {@code --tls}, {@code --ca-file}, {@code --client-cert}/{@code --client-key} name it, null
         * meaning unset: a CA file or a client certificate implies TLS; nothing set is plaintext.
         */
        public Builder transport(final boolean tls, final String caFile, final String clientCert,
                                 final String clientKey) {
            if (caFile != null) {
                tls(new File(caFile));
            } else if (tls || clientCert != null) {
                tls();
            } else {
                plaintext();
            }
            if (clientCert != null) {
                clientCertificate(new File(clientCert), new File(Objects.requireNonNull(clientKey, "clientKey")));
            }
            return this;
        }

        /** Uses a channel the caller made and keeps owning; {@link #close()} leaves it open. */
        public Builder channel(final ManagedChannel channel) {
            this.channel = Objects.requireNonNull(channel, "channel");
            return this;
        }

        /** The bound on one {@link #assign} call, retries included. */
        public Builder deadline(final Duration deadline) {
            this.deadline = positive(deadline, "deadline");
            return this;
        }

        /** Attempts per call when the server is UNAVAILABLE, the first included (1 disables retries). */
        public Builder maxAttempts(final int maxAttempts) {
            if (maxAttempts < 1) {
                throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
            }
            this.maxAttempts = maxAttempts;
            return this;
        }

        /** The pause before the first retry; it doubles per retry up to {@link #maxBackoff}. */
        public Builder initialBackoff(final Duration initialBackoff) {
            this.initialBackoff = positive(initialBackoff, "initialBackoff");
            return this;
        }

        /** The longest pause between two attempts. */
        public Builder maxBackoff(final Duration maxBackoff) {
            this.maxBackoff = positive(maxBackoff, "maxBackoff");
            return this;
        }

        /**
         * Calls wait, within the deadline, for the channel to connect rather than fail at once while
         * it reconnects, and a call first ends the channel's reconnect backoff. Why: gRPC fails calls
         * at once while a channel that lost its server is reconnecting, and backs reconnects off up
         * to two minutes; a caller that calls rarely, with a short deadline (a broker plug-in,
         * called when a group changes), would miss a server that came back. The price: while the
         * server is down, each call takes the whole deadline.
         */
        public Builder waitForReady(final boolean waitForReady) {
            this.waitForReady = waitForReady;
            return this;
        }

        /** The largest message sent or accepted; keep it equal to the server's (64 MiB by default). */
        public Builder maxMessageBytes(final int maxMessageBytes) {
            if (maxMessageBytes < 1) {
                throw new IllegalArgumentException("maxMessageBytes must be positive, got " + maxMessageBytes);
            }
            this.maxMessageBytes = maxMessageBytes;
            return this;
        }

        public KassignClient build() {
            if (maxBackoff.compareTo(initialBackoff) < 0) {
                throw new IllegalArgumentException("maxBackoff " + maxBackoff + " is below initialBackoff " + initialBackoff);
            }
            if (channel != null) {
                return new KassignClient(this, channel, false);
            }
            final ManagedChannel owned = Grpc.newChannelBuilder(target, credentials())
                    .maxInboundMessageSize(maxMessageBytes).build();
            return new KassignClient(this, owned, true);
        }

        private ChannelCredentials credentials() {
            if (!tls) {
                return InsecureChannelCredentials.create();
            }
            final TlsChannelCredentials.Builder credentials = TlsChannelCredentials.newBuilder();
            try {
                if (caCertificates != null) {
                    credentials.trustManager(caCertificates);
                }
            } catch (final IOException e) {
                throw new UncheckedIOException("cannot read CA certificates " + caCertificates, e);
            }
            try {
                if (clientCertificate != null) {
                    credentials.keyManager(clientCertificate, clientKey);
                }
            } catch (final IOException e) {
                throw new UncheckedIOException("cannot read client certificate " + clientCertificate
                        + " or key " + clientKey, e);
            }
            return credentials.build();
        }

        private static Duration positive(final Duration value, final String name) {
            if (value == null || value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException(name + " must be positive, got " + value);
            }
            return value;
        }
    }
}
