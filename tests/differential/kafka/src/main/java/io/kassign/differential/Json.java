package io.kassign.differential;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.OptionalInt;

/**
 * Reading kassign's protobuf JSON, and the batch loop both main classes share: one JSON line in,
 * one out, a failure reported on its own line so that the batch goes on.
 */
final class Json {

    static final ObjectMapper MAPPER = new ObjectMapper();

    /** One input line's answer; may throw, the loop reports it as {@code {"error": trace}}. */
    @FunctionalInterface
    interface LineHandler {
        ObjectNode answer(JsonNode line) throws Exception;
    }

    private Json() {
    }

    static void eachLine(final LineHandler handler) throws IOException {
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        final PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8)));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            ObjectNode answer;
            try {
                answer = handler.answer(MAPPER.readTree(line));
            } catch (final Exception | Error e) {
                final StringWriter trace = new StringWriter();
                e.printStackTrace(new PrintWriter(trace));
                answer = MAPPER.createObjectNode().put("error", trace.toString());
            }
            out.println(MAPPER.writeValueAsString(answer));
        }
        out.flush();
    }

    static TaskId taskId(final JsonNode id) {
        final int subtopology = (int) asLong(id.get("subtopology"), 0);
        final int partition = (int) asLong(id.get("partition"), 0);
        final String topology = id.path("namedTopology").asText("");
        return topology.isEmpty() ? new TaskId(subtopology, partition) : new TaskId(subtopology, partition, topology);
    }

    static TopicPartition topicPartition(final JsonNode p) {
        return new TopicPartition(p.path("topic").asText(), (int) asLong(p.get("partition"), 0));
    }

    static OptionalInt optionalInt(final JsonNode n) {
        return n == null || n.isNull() ? OptionalInt.empty() : OptionalInt.of((int) asLong(n, 0));
    }

    /** Protobuf JSON writes int64 as a string and omits zero values. */
    static long asLong(final JsonNode n, final long dflt) {
        if (n == null || n.isNull() || n.isMissingNode()) {
            return dflt;
        }
        return n.isTextual() ? Long.parseLong(n.asText()) : n.asLong();
    }
}
