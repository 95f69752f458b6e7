package io.kassign.client;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.util.JsonFormat;
import io.kassign.v1.AssignRequest;
import io.kassign.v1.AssignResponse;
import io.kassign.v1.ConsumerAssignRequest;

/** Protobuf JSON (the canonical proto3 mapping) for requests and responses, as the Python CLI reads and writes it. */
public final class ProtoJson {
    private ProtoJson() {
    }

    /** Parses an AssignRequest; unknown fields are an error, so a typo does not pass silently. */
    public static AssignRequest parseRequest(final String json) throws InvalidProtocolBufferException {
        final AssignRequest.Builder builder = AssignRequest.newBuilder();
        JsonFormat.parser().merge(json, builder);
        return builder.build();
    }

    /** Parses a ConsumerAssignRequest (a line of the server's consumer journal); unknown fields are an error. */
    public static ConsumerAssignRequest parseConsumerRequest(final String json) throws InvalidProtocolBufferException {
        final ConsumerAssignRequest.Builder builder = ConsumerAssignRequest.newBuilder();
        JsonFormat.parser().merge(json, builder);
        return builder.build();
    }

    public static AssignResponse parseResponse(final String json) throws InvalidProtocolBufferException {
        final AssignResponse.Builder builder = AssignResponse.newBuilder();
        JsonFormat.parser().merge(json, builder);
        return builder.build();
    }

    /** lowerCamelCase field names, default values left out (proto3 JSON defaults). */
    public static String print(final MessageOrBuilder message) {
        try {
            return JsonFormat.printer().print(message);
        } catch (final InvalidProtocolBufferException e) {
            // Only Any fields with unknown types fail to print; our messages have none.
            throw new IllegalStateException("cannot print " + message.getClass().getSimpleName(), e);
        }
    }
}
