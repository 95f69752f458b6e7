package io.kassign.server.consumer;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;

/**
 * Reads one assignment per line and writes, per line, the hex of the bytes Kafka's leader sends
 * for it: {@code ConsumerProtocol.serializeAssignment(new Assignment(partitions, userData))},
 * the call {@code ConsumerCoordinator.onLeaderElected} makes for every member.
 *
 * <p>Line format: {@code topic:partition,topic:partition,...;USERDATA}, partitions in the order
 * the assignor listed them (none: empty), USERDATA the user data in hex or {@code -} for null.
 * Topic names never hold ':', ',' or ';' (Kafka allows [a-zA-Z0-9._-] only).
 */
public final class KafkaAssignmentBytes {
    private KafkaAssignmentBytes() {}

    public static void main(String[] args) throws Exception {
        HexFormat hex = HexFormat.of();
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            int split = line.lastIndexOf(';');
            List<TopicPartition> partitions = new ArrayList<>();
            String list = line.substring(0, split);
            if (!list.isEmpty()) {
                for (String entry : list.split(",")) {
                    int colon = entry.lastIndexOf(':');
                    partitions.add(new TopicPartition(
                        entry.substring(0, colon), Integer.parseInt(entry.substring(colon + 1))));
                }
            }
            String data = line.substring(split + 1);
            ByteBuffer userData = data.equals("-") ? null : ByteBuffer.wrap(hex.parseHex(data));
            ByteBuffer encoded = ConsumerProtocol.serializeAssignment(new Assignment(partitions, userData));
            byte[] bytes = new byte[encoded.remaining()];
            encoded.get(bytes);
            out.println(hex.formatHex(bytes));
        }
        out.flush();
    }
}
