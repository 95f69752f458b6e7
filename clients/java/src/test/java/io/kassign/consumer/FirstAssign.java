package io.kassign.consumer;

import io.kassign.client.KassignClient;
import io.kassign.plugin.Deadline;
import io.kassign.plugin.Prewarm;
import io.kassign.plugin.SharedClients;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.RebalanceProtocol;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;

/**
 * The consumer plug-in's first {@code assign()} in a fresh JVM, for docs/java.md's "The first
 * call's time": {@code java -cp CLASSPATH io.kassign.consumer.FirstAssign HOST:PORT whole|split GAP_MS}
 * configures the plug-in (range, 5 topics x 20 partitions, 10 members), waits GAP_MS (a consumer's
 * first rebalance comes after its JoinGroup, at least {@code group.initial.rebalance.delay.ms}, 3 s
 * by default, for a new group), then times two rounds: {@code whole} the plug-in's
 * {@code assign()}, {@code split} its parts as {@code assign()} runs them (building the request,
 * the shared client, the call, converting the answer), with the classes each loaded. One JVM per
 * run: only the first round is the one measured. Nothing asserts a time.
 */
public final class FirstAssign {
    private FirstAssign() {
    }

    private static long t() {
        return System.nanoTime();
    }

    private static long classes() {
        return ManagementFactory.getClassLoadingMXBean().getTotalLoadedClassCount();
    }

    public static void main(final String[] args) throws Exception {
        final long jvm = t();
        final String mode = args[1];
        final long gap = Long.parseLong(args[2]);
        final Node node = new Node(0, "localhost", 9092);
        final List<PartitionInfo> parts = new ArrayList<>();
        final List<String> topics = new ArrayList<>();
        for (int tp = 0; tp < 5; tp++) {
            topics.add("t" + tp);
            for (int p = 0; p < 20; p++) {
                parts.add(new PartitionInfo("t" + tp, p, node, new Node[] {node}, new Node[] {node}));
            }
        }
        final Cluster cluster = new Cluster("c", List.of(node), parts, Set.of(), Set.of());
        final Map<String, Subscription> members = new HashMap<>();
        for (int m = 0; m < 10; m++) {
            members.put("consumer-" + m, new Subscription(topics));
        }
        final GroupSubscription group = new GroupSubscription(members);
        final KassignConsumerAssignor plugin = new KassignConsumerAssignor();
        final long configureLoaded = classes();
        final long configureStart = t();
        plugin.configure(Map.of("group.id", "first-assign", "kassign.target", args[0], "kassign.deadline.ms", "600000",
                "kassign.consumer.assignor", "range", "partition.assignment.strategy",
                KassignConsumerAssignor.class.getName()));
        System.out.printf("configure %d ms (+%d classes)%n", (t() - configureStart) / 1_000_000,
                classes() - configureLoaded);
        Thread.sleep(gap);
        for (int i = 0; i < 2; i++) {
            long loaded = classes();
            long start = t();
            if (mode.equals("whole")) {
                plugin.assign(cluster, group);
                System.out.printf("round %d: assign %d ms (+%d classes)%n", i, (t() - start) / 1_000_000,
                        classes() - loaded);
                continue;
            }
            Prewarm.calling(plugin.settings().connection());
            final StringBuilder line = new StringBuilder("round " + i + ":");
            final var request = GroupToRequest.convert(cluster, group, plugin.settings(),
                    RebalanceProtocol.COOPERATIVE);
            loaded = part(line, "request", start, loaded);
            start = t();
            final KassignClient client = SharedClients.of(plugin.settings().connection());
            loaded = part(line, "client", start, loaded);
            start = t();
            final var response = client.assignConsumers(request, Duration.ofSeconds(60));
            loaded = part(line, "call", start, loaded);
            start = t();
            ResponseToGroup.convert(response, group, cluster, RebalanceProtocol.COOPERATIVE,
                    Deadline.after(Duration.ofSeconds(60), t()));
            part(line, "answer", start, loaded);
            System.out.println(line);
        }
        System.out.printf("jvm main %d ms%n", (t() - jvm) / 1_000_000);
        System.exit(0);
    }

    /** Appends " NAME N ms (+C)", the time since {@code start} and the classes loaded since {@code loaded}. */
    private static long part(final StringBuilder line, final String name, final long start, final long loaded) {
        final long now = classes();
        line.append(' ').append(name).append(' ').append((t() - start) / 1_000_000).append(" ms (+")
                .append(now - loaded).append(')');
        return now;
    }
}
