package io.kassign.plugin;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import io.grpc.MethodDescriptor;
import io.kassign.client.KassignClient;
import io.kassign.v1.AssignRequest;
import io.kassign.v1.AssignResponse;
import io.kassign.v1.ConsumerAssignRequest;
import io.kassign.v1.ConsumerAssignResponse;
import io.kassign.v1.ConsumerAssignmentServiceGrpc;
import io.kassign.v1.TaskAssignmentServiceGrpc;
import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.grpc.netty.shaded.io.netty.buffer.Unpooled;
import io.grpc.netty.shaded.io.netty.channel.embedded.EmbeddedChannel;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2ConnectionHandlerBuilder;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2FrameAdapter;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Prewarm}'s work, on its thread: the client made, messages parsed and encoded, an HTTP/2
 * exchange in memory; no call. Each step is what a first call would do first; once the plug-in's
 * first {@code assign()} has begun ({@link Prewarm#overtaken}) the steps left are skipped, as that
 * call now loads what it needs itself and would only share the processor with them.
 */
final class Warming {
    private static final Logger LOG = LoggerFactory.getLogger(Prewarm.class);
    /** How deep {@link #filled} sets message fields: every message type the contract has is met by then. */
    private static final int DEPTH = 4;

    private Warming() {
    }

    static void run(final Connection connection, final Supplier<KassignClient> client) {
        final long started = System.nanoTime();
        try {
            client.get();
            final long made = System.nanoTime();
            if (Prewarm.overtaken(connection)) {
                return;
            }
            roundTrip(TaskAssignmentServiceGrpc.getAssignMethod(), AssignRequest.getDescriptor(),
                    AssignResponse.getDescriptor());
            roundTrip(ConsumerAssignmentServiceGrpc.getAssignMethod(), ConsumerAssignRequest.getDescriptor(),
                    ConsumerAssignResponse.getDescriptor());
            if (Prewarm.overtaken(connection)) {
                return;
            }
            http2();
            LOG.debug("kassign: warmed the client for {} in {} ms (client {} ms, messages and HTTP/2 {} ms), "
                    + "no call made", connection.target(), (System.nanoTime() - started) / 1_000_000L, (made - started) / 1_000_000L,
                    (System.nanoTime() - made) / 1_000_000L);
        } catch (final RuntimeException | LinkageError e) {
            LOG.debug("kassign: warming the client for {} failed; the first call will meet it: {}",
                    connection.target(), FallbackCause.describe(e));
        }
    }

    /**
     * One gRPC-shaped exchange (request headers and a message, response headers) between two
     * Netty HTTP/2 connection handlers in memory ({@link EmbeddedChannel}: no socket), both ways
     * through the encoder, frame writer, HPACK and frame reader a channel's connection uses.
     */
    private static void http2() {
        final Http2ConnectionHandler client = handler(false);
        final Http2ConnectionHandler server = handler(true);
        final EmbeddedChannel clientSide = new EmbeddedChannel(client);
        final EmbeddedChannel serverSide = new EmbeddedChannel(server);
        try {
            final int stream = 3;
            client.encoder().writeHeaders(clientSide.pipeline().context(client), stream, new DefaultHttp2Headers()
                    .method("POST").scheme("http").path("/" + ConsumerAssignmentServiceGrpc.SERVICE_NAME + "/Assign")
                    .authority("warm-up").add("content-type", "application/grpc").add("te", "trailers"),
                    0, false, clientSide.newPromise());
            client.encoder().writeData(clientSide.pipeline().context(client), stream,
                    Unpooled.wrappedBuffer(new byte[] {0, 0, 0, 0, 0}), 0, true, clientSide.newPromise());
            clientSide.flush();
            pass(clientSide, serverSide);
            server.encoder().writeHeaders(serverSide.pipeline().context(server), stream, new DefaultHttp2Headers()
                    .status("200").add("content-type", "application/grpc").add("grpc-status", "0"), 0, true,
                    serverSide.newPromise());
            serverSide.flush();
            pass(serverSide, clientSide);
        } finally {
            clientSide.finishAndReleaseAll();
            serverSide.finishAndReleaseAll();
        }
    }

    private static Http2ConnectionHandler handler(final boolean server) {
        return new Http2ConnectionHandlerBuilder().server(server).frameListener(new Http2FrameAdapter()).build();
    }

    /** What {@code from} wrote, read by {@code to}. */
    private static void pass(final EmbeddedChannel from, final EmbeddedChannel to) {
        for (ByteBuf bytes = from.readOutbound(); bytes != null; bytes = from.readOutbound()) {
            to.writeInbound(bytes);
        }
    }

    /**
     * A request and a response of {@code method}, every message field set, parsed and encoded
     * through its marshallers: the generated parsers and writers of each nested type, as a call uses.
     */
    private static <Q, R> void roundTrip(final MethodDescriptor<Q, R> method, final Descriptor request,
                                         final Descriptor response) {
        method.streamRequest(method.parseRequest(new ByteArrayInputStream(filled(request, DEPTH))));
        method.streamResponse(method.parseResponse(new ByteArrayInputStream(filled(response, DEPTH))));
    }

    /**
     * The encoding of a {@code type} whose message fields (maps' entries included) are each set once
     * to such a message, {@code depth} levels down. Written from the descriptor, with no knowledge
     * of the contract's fields and without protobuf's reflective accessors, which a call never uses.
     */
    static byte[] filled(final Descriptor type, final int depth) {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        try {
            if (depth > 0) {
                for (final FieldDescriptor field : type.getFields()) {
                    if (field.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
                        out.writeByteArray(field.getNumber(), filled(field.getMessageType(), depth - 1));
                    }
                }
            }
            out.flush();
        } catch (final IOException e) {
            throw new UncheckedIOException(e);  // a ByteArrayOutputStream does not throw
        }
        return bytes.toByteArray();
    }
}
