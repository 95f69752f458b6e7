package io.kassign.consumer;

import static io.kassign.consumer.Groups.cluster;
import static io.kassign.consumer.Groups.group;
import static io.kassign.consumer.Groups.member;

import io.kassign.client.ClientTest;
import io.kassign.streams.FallingBack;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * A consumer group leader and a Kafka Streams application whose kassign target does not answer:
 * each plug-in falls back once and counts it, then the JVM stays up until its standard input
 * closes, so that a JMX exporter agent loaded into it can be scraped
 * (tests/java/test_jmx_exporter.py). Argument: the group id (the application id too).
 */
public final class FallbackMain {
    private FallbackMain() {
    }

    public static void main(final String[] args) throws IOException {
        final KassignConsumerAssignor assignor = ConsumerPluginTest.assignor(Map.of("group.id", args[0],
                // refused at once: a deadline long enough for a loaded machine keeps the cause UNAVAILABLE
                "kassign.target", "127.0.0.1:" + ClientTest.freePort(), "kassign.deadline.ms", 60_000,
                "kassign.retry.max.attempts", 1));
        assignor.assign(cluster(Map.of("t", 2)), group("m1", member(List.of("t"), "a", List.of(), -1)));
        FallingBack.once(args[0], ClientTest.freePort());
        System.out.println("fell back");
        System.out.flush();
        while (System.in.read() != -1) {
            // wait for the test to close stdin
        }
    }
}
