package io.kassign.bench;

import io.kassign.consumer.KassignConsumerAssignor;
import io.kassign.streams.BenchApplications;
import io.kassign.streams.KassignTaskAssignor;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.management.ObjectName;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.RebalanceProtocol;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.TaskAssignmentUtils;
import org.apache.kafka.streams.processor.assignment.TaskAssignor;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;
import org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor;

/**
 * The plug-ins' whole {@code assign()} against the Kafka assignor each replaces, in one JVM, on the
 * same inputs: the ratio a group leader would see. Run by {@code bench/plugin_bench.py}, which
 * starts {@code kassign serve} and passes its target; one line {@code bench JSON} per measure on stdout.
 *
 * <p>Why in the test sources: compiled against Kafka's real jars (the pom's test classpath, the
 * newest Kafka swapped in by the driver), with the Streams inputs made by the tests' own
 * implementations of KIP-924's interfaces. Why interleaved best-of-N: the machine is shared, so only
 * a ratio measured in the same run, alternating which side goes first, means anything.
 *
 * <p>Consumer shapes are Kafka's large-test shapes (every member subscribed to every topic, fresh,
 * no racks), for Kafka's {@code sticky}, {@code cooperative-sticky} and {@code range} against the
 * plug-in asking the service for the same assignor; the answers must be equal. Streams shapes (all
 * tasks stateful, one standby, fresh) time the KIP-924 plug-in (the service's default assignor)
 * against Kafka's KIP-924 StickyTaskAssignor; the answers differ by design, so each is only checked
 * with Kafka's own validation.
 *
 * <p>Arguments: {@code --target HOST:PORT --consumer 50x800x800,... --streams 1000x100,...
 * --assignors sticky,cooperative-sticky,range --scenarios fresh,leave --repeats N --warmup N --deadline-ms N}
 * ({@code leave}: the rebalance after the fresh one, as Kafka assigned it, once the first member has left). Nothing here
 * asserts a time.
 */
public final class PluginBench {
    private PluginBench() {
    }

    public static void main(final String[] args) throws Exception {
        final Map<String, String> options = new HashMap<>(Map.of("--consumer", "50x800x800", "--streams", "",
                "--assignors", "sticky,cooperative-sticky,range", "--repeats", "3", "--warmup", "2",
                "--deadline-ms", "600000", "--scenarios", "fresh"));
        for (int i = 0; i + 1 < args.length; i += 2) {
            options.put(args[i], args[i + 1]);
        }
        final String target = options.get("--target");
        if (target == null) {
            throw new IllegalArgumentException("--target HOST:PORT is required");
        }
        final int repeats = Integer.parseInt(options.get("--repeats"));
        final int warmup = Integer.parseInt(options.get("--warmup"));
        final String deadline = options.get("--deadline-ms");
        final List<String> scenarios = list(options.get("--scenarios"));
        for (final String shape : list(options.get("--consumer"))) {
            final String[] dims = shape.split("x");
            final int topics = Integer.parseInt(dims[0]);
            final int partitions = Integer.parseInt(dims[1]);
            final int members = Integer.parseInt(dims[2]);
            final Cluster cluster = cluster(topics, partitions);
            final GroupSubscription group = fresh(topics, members);
            for (final String name : list(options.get("--assignors"))) {
                for (final String scenario : scenarios) {
                    final GroupSubscription input = switch (scenario) {
                        case "fresh" -> group;
                        case "leave" -> leave(group, kafka(name).assign(cluster, group), name);
                        default -> throw new IllegalArgumentException("no scenario " + scenario);
                    };
                    consumerLine(shape, name, scenario, cluster, input, target, deadline, repeats, warmup);
                }
            }
        }
        for (final String shape : list(options.get("--streams"))) {
            final String[] dims = shape.split("x");
            final ApplicationState state = BenchApplications.fresh(Integer.parseInt(dims[0]),
                    Integer.parseInt(dims[1]), 1);
            streamsLine(shape, state, target, deadline, repeats, warmup);
        }
    }

    private static List<String> list(final String text) {
        return text == null || text.isBlank() ? List.of() : List.of(text.split(","));
    }

    /** {@code topics} topics "t0".. of {@code partitions} partitions each, led by one of three rackless brokers. */
    static Cluster cluster(final int topics, final int partitions) {
        final List<Node> nodes = List.of(new Node(0, "b0", 9092), new Node(1, "b1", 9092), new Node(2, "b2", 9092));
        final List<PartitionInfo> infos = new ArrayList<>(topics * partitions);
        for (int t = 0; t < topics; t++) {
            for (int p = 0; p < partitions; p++) {
                final Node leader = nodes.get((t + p) % 3);
                final Node[] replicas = {leader};
                infos.add(new PartitionInfo("t" + t, p, leader, replicas, replicas));
            }
        }
        return new Cluster("bench", nodes, infos, Set.of(), Set.of());
    }

    /** {@code members} members "consumer-0".., each subscribed to every topic, owning nothing. */
    static GroupSubscription fresh(final int topics, final int members) {
        final List<String> names = new ArrayList<>(topics);
        for (int t = 0; t < topics; t++) {
            names.add("t" + t);
        }
        final Map<String, Subscription> subscriptions = new LinkedHashMap<>();
        for (int m = 0; m < members; m++) {
            subscriptions.put("consumer-" + m, new Subscription(names, null, List.of(), -1, Optional.empty()));
        }
        return new GroupSubscription(subscriptions);
    }

    /**
     * The rebalance after {@code previous} (generation 1) when the first member has left: each other
     * member's owned partitions as its consumer reports them (none under EAGER, which revokes all
     * before joining) and, for Kafka's eager StickyAssignor, which reads its previous assignment from
     * its user data, that user data as Kafka encodes it (a million partitions' worth in the group).
     */
    static GroupSubscription leave(final GroupSubscription fresh, final GroupAssignment previous, final String name) {
        final Map<String, Subscription> subscriptions = new LinkedHashMap<>();
        boolean first = true;
        for (final Map.Entry<String, Subscription> member : fresh.groupSubscription().entrySet()) {
            if (first) {
                first = false;
                continue;
            }
            final String id = member.getKey();
            final List<String> topics = member.getValue().topics();
            final Assignment held = previous.groupAssignment().get(id);
            ByteBuffer userData = null;
            if (name.equals("sticky")) {
                final StickyAssignor sticky = new StickyAssignor();
                sticky.onAssignment(held, new ConsumerGroupMetadata("bench", 1, id, Optional.empty()));
                userData = sticky.subscriptionUserData(Set.copyOf(topics));
            }
            final boolean eager = !kafka(name).supportedProtocols().contains(RebalanceProtocol.COOPERATIVE);
            subscriptions.put(id, new Subscription(topics, userData, eager ? List.of() : held.partitions(), 1,
                    Optional.empty()));
        }
        return new GroupSubscription(subscriptions);
    }

    /**
     * {@code group} with each member's userData in a buffer of its own, unread. Why: Kafka's
     * StickyAssignor reads the userData buffers it is given (their positions end at their limits),
     * and the plug-in, like any reader of a ByteBuffer, reads what remains: handed one group, the
     * side that runs second sees no userData, so an eager {@code sticky} member no memory.
     */
    static GroupSubscription unread(final GroupSubscription group) {
        final Map<String, Subscription> copies = new LinkedHashMap<>();
        for (final Map.Entry<String, Subscription> member : group.groupSubscription().entrySet()) {
            final Subscription s = member.getValue();
            final ByteBuffer userData = s.userData() == null ? null : s.userData().duplicate();
            final Subscription copy = new Subscription(s.topics(), userData, s.ownedPartitions(),
                    s.generationId().orElse(-1), s.rackId());
            copy.setGroupInstanceId(s.groupInstanceId());
            copies.put(member.getKey(), copy);
        }
        return new GroupSubscription(copies);
    }

    static ConsumerPartitionAssignor kafka(final String name) {
        return switch (name) {
            case "sticky" -> new StickyAssignor();
            case "cooperative-sticky" -> new CooperativeStickyAssignor();
            case "range" -> new RangeAssignor();
            default -> throw new IllegalArgumentException("no Kafka assignor " + name);
        };
    }

    private static void consumerLine(final String shape, final String name, final String scenario,
                                     final Cluster cluster,
                                     final GroupSubscription group, final String target, final String deadline,
                                     final int repeats, final int warmup) throws Exception {
        final String groupId = "bench-" + shape + "-" + name + "-" + scenario;
        final KassignConsumerAssignor plugin = new KassignConsumerAssignor();
        plugin.configure(Map.of("group.id", groupId, "kassign.target", target, "kassign.deadline.ms", deadline,
                "kassign.consumer.assignor", name, "partition.assignment.strategy",
                KassignConsumerAssignor.class.getName()));
        final Timed<GroupAssignment> timed = interleaved(() -> unread(group), g -> kafka(name).assign(cluster, g),
                g -> plugin.assign(cluster, g), repeats, warmup);
        final double fallbacks = metric("consumer-assignor", groupId, "fallbacks-total");
        final boolean equal = partitions(timed.kafka()).equals(partitions(timed.plugin()));
        final Map<String, Object> line = new HashMap<>(Map.of("kind", "consumer", "shape", shape, "assignor", name,
                "scenario", scenario, "kafka_ms", timed.kafkaMs(), "plugin_ms", timed.pluginMs(), "equal", equal,
                "fallbacks", fallbacks, "partitions", count(timed.plugin())));
        line.putAll(Map.of("kafka_cpu_ms", timed.kafkaCpuMs(), "plugin_cpu_ms", timed.pluginCpuMs()));
        print(line);
    }

    private static void streamsLine(final String shape, final ApplicationState state, final String target,
                                    final String deadline, final int repeats, final int warmup) throws Exception {
        final String groupId = "bench-streams-" + shape;
        final Map<String, Object> configs = Map.of("application.id", groupId, "kassign.target", target,
                "kassign.deadline.ms", deadline);
        final Timed<TaskAssignment> timed = interleaved(() -> state, s -> {
            final TaskAssignor kafka = new StickyTaskAssignor();
            kafka.configure(configs);
            return kafka.assign(s);
        }, s -> {
            final TaskAssignor plugin = new KassignTaskAssignor();
            plugin.configure(configs);
            return plugin.assign(s);
        }, repeats, warmup);
        final boolean valid = TaskAssignmentUtils.validateTaskAssignment(state, timed.kafka())
                == TaskAssignor.AssignmentError.NONE
                && TaskAssignmentUtils.validateTaskAssignment(state, timed.plugin()) == TaskAssignor.AssignmentError.NONE;
        final Map<String, Object> line = new HashMap<>(Map.of("kind", "streams", "shape", shape, "assignor",
                "KIP-924 sticky", "kafka_ms", timed.kafkaMs(), "plugin_ms", timed.pluginMs(), "valid", valid,
                "fallbacks", metric("task-assignor", groupId, "fallbacks-total")));
        line.putAll(Map.of("kafka_cpu_ms", timed.kafkaCpuMs(), "plugin_cpu_ms", timed.pluginCpuMs()));
        print(line);
    }

    /**
     * Best wall times, and best CPU times of the calling thread: the plug-in's is its JVM's own work
     * (building the request, parsing and converting the answer), the thread being parked during the
     * call, so it can be seen through the load of a shared machine that the wall times are not.
     */
    record Timed<T>(double kafkaMs, T kafka, double pluginMs, T plugin, double kafkaCpuMs, double pluginCpuMs) {
    }

    /**
     * Warm both, then best of {@code repeats} each, alternating which goes first; every call gets
     * its own {@code input}, made before its clock starts (see {@link #unread}).
     */
    static <I, T> Timed<T> interleaved(final Supplier<I> input, final Function<I, T> kafka,
                                       final Function<I, T> plugin, final int repeats, final int warmup) {
        for (int i = 0; i < warmup; i++) {
            kafka.apply(input.get());
            plugin.apply(input.get());
        }
        double kafkaBest = Double.MAX_VALUE;
        double pluginBest = Double.MAX_VALUE;
        double kafkaCpu = Double.MAX_VALUE;
        double pluginCpu = Double.MAX_VALUE;
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        T kafkaAnswer = null;
        T pluginAnswer = null;
        for (int i = 0; i < repeats; i++) {
            for (int side = 0; side < 2; side++) {
                final boolean kafkaTurn = (side == 0) == (i % 2 == 0);
                final I given = input.get();
                System.gc();
                final long cpuStart = threads.getCurrentThreadCpuTime();
                final long start = System.nanoTime();
                final T answer = kafkaTurn ? kafka.apply(given) : plugin.apply(given);
                final double ms = (System.nanoTime() - start) / 1e6;
                final double cpuMs = (threads.getCurrentThreadCpuTime() - cpuStart) / 1e6;
                if (kafkaTurn) {
                    kafkaBest = Math.min(kafkaBest, ms);
                    kafkaCpu = Math.min(kafkaCpu, cpuMs);
                    kafkaAnswer = answer;
                } else {
                    pluginBest = Math.min(pluginBest, ms);
                    pluginCpu = Math.min(pluginCpu, cpuMs);
                    pluginAnswer = answer;
                }
            }
        }
        return new Timed<>(kafkaBest, kafkaAnswer, pluginBest, pluginAnswer, kafkaCpu, pluginCpu);
    }

    /** Each member's partitions, sorted (the order within one member's assignment carries no meaning). */
    private static Map<String, List<String>> partitions(final GroupAssignment assignment) {
        final Map<String, List<String>> result = new TreeMap<>();
        for (final Map.Entry<String, Assignment> member : assignment.groupAssignment().entrySet()) {
            result.put(member.getKey(), member.getValue().partitions().stream().map(TopicPartition::toString)
                    .sorted().toList());
        }
        return result;
    }

    private static int count(final GroupAssignment assignment) {
        return assignment.groupAssignment().values().stream().mapToInt(a -> a.partitions().size()).sum();
    }

    private static double metric(final String type, final String groupId, final String attribute) throws Exception {
        final ObjectName name = new ObjectName("kassign:type=" + type + ",client-id=" + groupId);
        return ((Number) ManagementFactory.getPlatformMBeanServer().getAttribute(name, attribute)).doubleValue();
    }

    private static void print(final Map<String, Object> line) {
        final StringBuilder json = new StringBuilder("{");
        String separator = "";
        for (final Map.Entry<String, Object> field : new TreeMap<>(line).entrySet()) {
            json.append(separator).append('"').append(field.getKey()).append("\": ");
            final Object value = field.getValue();
            json.append(value instanceof String ? "\"" + value + "\"" : String.valueOf(value));
            separator = ", ";
        }
        System.out.println("bench " + json.append('}'));
        System.out.flush();
    }
}
