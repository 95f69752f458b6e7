package io.kassign.broker;

import io.kassign.plugin.SharedClients;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.streams.TopologyMetadata;
import org.apache.kafka.coordinator.group.streams.assignor.GroupSpecImpl;
import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;

/**
 * The broker plug-ins' whole {@code assign()} against the Kafka assignor each replaces, in one JVM,
 * on the same inputs: Kafka's own GroupSpec and describer classes (ConsumerGroups, StreamsGroups).
 * Run by {@code bench/broker_plugin_bench.py}, which starts {@code kassign serve} and passes its
 * target; one line {@code bench JSON} per measure on stdout.
 *
 * <p>Consumer shapes {@code TOPICSxPARTITIONSxMEMBERS} (Kafka's large-test shapes: every member
 * subscribed to every topic, no member racks; brokers in three racks, two replicas a partition),
 * each fresh and with a member leaving (the others owning Kafka's fresh answer). {@code uniform}
 * times Kafka's UniformAssignor against the plug-in's default ({@code rack-optimal}): they differ
 * by design, so both must be valid and balanced (member counts within one); {@code range} times
 * Kafka's server-side RangeAssignor against the plug-in asking for {@code range}, equal or at
 * least valid and balanced topic by topic. Streams shapes {@code TASKSxCLIENTS} (ten stateful
 * subtopologies, one standby, fresh members of their own process) time Kafka's streams-group
 * StickyTaskAssignor against the plug-in, both checked valid.
 *
 * <p>Why interleaved best-of-N: the machine is shared, so only a ratio measured in the same run,
 * alternating which side goes first, means anything. Each measure reports wall time (what the
 * coordinator waits) and the JVM's process CPU time (the plug-in's conversions; the service's
 * own CPU is another process's). Nothing here asserts a time.
 *
 * <p>Arguments: {@code --target HOST:PORT --consumer 50x800x800,... --cases fresh,leave
 * --assignors uniform,range --streams 1000x100,... --repeats N --warmup N --deadline-ms N}.
 */
public final class BrokerPluginBench {
    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    private BrokerPluginBench() {
    }

    public static void main(final String[] args) {
        final Map<String, String> options = new HashMap<>(Map.of("--consumer", "50x800x800", "--streams", "",
                "--assignors", "uniform,range", "--cases", "fresh,leave", "--repeats", "3", "--warmup", "2",
                "--deadline-ms", "600000"));
        for (int i = 0; i + 1 < args.length; i += 2) {
            options.put(args[i], args[i + 1]);
        }
        final String target = options.get("--target");
        if (target == null) {
            throw new IllegalArgumentException("--target HOST:PORT is required");
        }
        final Run run = new Run(target, options.get("--deadline-ms"), Integer.parseInt(options.get("--repeats")),
                Integer.parseInt(options.get("--warmup")));
        for (final String shape : list(options.get("--consumer"))) {
            final String[] dims = shape.split("x");
            final int members = Integer.parseInt(dims[2]);
            final ConsumerGroups.Cluster cluster = cluster(Integer.parseInt(dims[0]), Integer.parseInt(dims[1]));
            for (final String name : list(options.get("--assignors"))) {
                for (final String kind : list(options.get("--cases"))) {
                    consumerLine(run, shape, name, kind, cluster, members);
                }
            }
        }
        for (final String shape : list(options.get("--streams"))) {
            final String[] dims = shape.split("x");
            streamsLine(run, shape, Integer.parseInt(dims[0]), Integer.parseInt(dims[1]));
        }
    }

    /** What every line shares: the service, the plug-ins' deadline, the repeats. */
    private record Run(String target, String deadline, int repeats, int warmup) {
    }

    private static List<String> list(final String text) {
        return text == null || text.isBlank() ? List.of() : List.of(text.split(","));
    }

    /** Topics "t000".. of {@code partitions} each, replicas on two of brokers 1-3 (rack-a, -b, -c). */
    static ConsumerGroups.Cluster cluster(final int topics, final int partitions) {
        final List<List<Integer>> replicas = ConsumerGroups.rotating(partitions);
        final Map<String, List<List<Integer>>> layout = new TreeMap<>();
        for (int t = 0; t < topics; t++) {
            layout.put(String.format("t%04d", t), replicas);
        }
        return ConsumerGroups.cluster(layout);
    }

    /** Members "member-0000".. subscribed to every topic, no rack, owning {@code owned}'s partitions. */
    static GroupSpec group(final ConsumerGroups.Cluster cluster, final int members, final GroupAssignment owned) {
        final Uuid[] topics = cluster.ids().values().toArray(new Uuid[0]);
        final Map<String, ConsumerGroups.Member> specs = new LinkedHashMap<>();
        for (int m = 0; m < members; m++) {
            final String id = String.format("member-%04d", m);
            final MemberAssignment held = owned == null ? null : owned.members().get(id);
            final ConsumerGroups.Member member = ConsumerGroups.Member.of(null, topics);
            specs.put(id, held == null ? member : member.owning(held.partitions()));
        }
        return ConsumerGroups.group(specs);
    }

    private static ConsumerGroupPartitionAssignor kafka(final String name) {
        return switch (name) {
            case "uniform" -> new UniformAssignor();
            case "range" -> new RangeAssignor();
            default -> throw new IllegalArgumentException("no Kafka assignor " + name);
        };
    }

    private static void consumerLine(final Run run, final String shape, final String name, final String kind,
                                     final ConsumerGroups.Cluster cluster, final int members) {
        final ConsumerGroupPartitionAssignor kafka = kafka(name);
        final GroupSpec group = "leave".equals(kind)
                ? group(cluster, members - 1, kafka.assign(group(cluster, members, null), cluster.describer()))
                : group(cluster, members, null);
        final String metricsId = "bench-" + shape + "-" + name + "-" + kind;
        final KassignConsumerGroupAssignor plugin = ConsumerGroups.assignor(metricsId, run.target(),
                "kassign.deadline.ms", run.deadline(), ConsumerGroupSettings.ASSIGNOR,
                "uniform".equals(name) ? ConsumerGroupSettings.DEFAULT_ASSIGNOR : name);
        final Timed<GroupAssignment> timed = interleaved(() -> kafka.assign(group, cluster.describer()),
                () -> plugin.assign(group, cluster.describer()), run);
        final boolean equal = ConsumerGroups.sorted(timed.kafka()).equals(ConsumerGroups.sorted(timed.plugin()));
        final boolean valid = consumerValid(timed.kafka(), group, cluster) && consumerValid(timed.plugin(), group, cluster);
        final boolean balanced = "range".equals(name)
                ? balancedByTopic(timed.kafka()) && balancedByTopic(timed.plugin())
                : spread(ConsumerGroups.counts(timed.kafka())) <= 1 && spread(ConsumerGroups.counts(timed.plugin())) <= 1;
        final Map<String, Object> fields = timed.fields(Map.of("kind", "consumer", "shape", shape, "assignor", name,
                "case", kind, "equal", equal, "valid", valid, "balanced", balanced,
                "fallbacks", ConsumerGroups.metric(metricsId, "", "fallbacks-total")));
        fields.putAll(consumerConversions(run, group, cluster, name));
        print(fields);
    }

    private static boolean consumerValid(final GroupAssignment answer, final GroupSpec group,
                                         final ConsumerGroups.Cluster cluster) {
        try {
            ConsumerGroups.assertValid(answer, group, cluster);
            return true;
        } catch (final AssertionError e) {
            System.err.println("invalid: " + e.getMessage());
            return false;
        }
    }

    private static int spread(final List<Integer> counts) {
        return counts.stream().mapToInt(Integer::intValue).max().orElse(0)
                - counts.stream().mapToInt(Integer::intValue).min().orElse(0);
    }

    /** Each topic's partitions spread over the members within one of each other (range's balance). */
    private static boolean balancedByTopic(final GroupAssignment answer) {
        final Map<Uuid, List<Integer>> byTopic = new HashMap<>();
        answer.members().values().forEach(a -> a.partitions().forEach((topic, partitions) ->
                byTopic.computeIfAbsent(topic, t -> new ArrayList<>()).add(partitions.size())));
        final int members = answer.members().size();
        return byTopic.values().stream().allMatch(counts -> {
            final List<Integer> all = new ArrayList<>(counts);
            while (all.size() < members) {
                all.add(0);
            }
            return spread(all) <= 1;
        });
    }

    private static void streamsLine(final Run run, final String shape, final int tasks, final int clients) {
        final Map<String, Integer> partitions = new TreeMap<>();
        final int subtopologies = Math.min(10, tasks);
        for (int s = 0; s < subtopologies; s++) {
            partitions.put(Integer.toString(s), tasks / subtopologies);
        }
        final TopologyMetadata topology = StreamsGroups.topology(partitions, partitions.keySet());
        final Map<String, StreamsGroups.Member> members = new TreeMap<>();
        for (int c = 0; c < clients; c++) {
            members.put(String.format("member-%05d", c),
                    new StreamsGroups.Member(String.format("00000000-0000-0000-0000-%012d", c)));
        }
        final GroupSpecImpl group = StreamsGroups.group(members, 1);
        final String metricsId = "bench-streams-" + shape;
        final KassignStreamsTaskAssignor plugin = new KassignStreamsTaskAssignor();
        plugin.configure(Map.of("node.id", "7", "kassign.target", run.target(), "kassign.deadline.ms", run.deadline(),
                StreamsSettings.GROUP_ID, metricsId));
        final Timed<org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment> timed = interleaved(
                () -> new StickyTaskAssignor().assign(group, topology), () -> plugin.assign(group, topology), run);
        boolean valid;
        try {
            StreamsGroups.assertValid(timed.kafka(), group, topology);
            StreamsGroups.assertValid(timed.plugin(), group, topology);
            valid = true;
        } catch (final AssertionError e) {
            System.err.println("invalid: " + e.getMessage());
            valid = false;
        }
        final Map<String, Object> fields = timed.fields(Map.of("kind", "streams", "shape", shape, "assignor", "sticky",
                "case", "fresh", "valid", valid, "standbys", StreamsGroups.total(timed.plugin(), true),
                "fallbacks", StreamsGroups.metric(metricsId, "fallbacks-total")));
        fields.putAll(streamsConversions(run, group, topology, metricsId));
        print(fields);
    }

    /**
     * The plug-in's own work alone, as this thread's CPU time (best of the repeats, after the
     * warm-ups): building the request from Kafka's inputs, and checking and converting one real
     * answer of the service (asked once). Why apart from the whole assign(): on a shared machine
     * the service's time swamps these, and they are what the JVM adds.
     */
    private static Map<String, Object> consumerConversions(final Run run, final GroupSpec group,
                                                           final ConsumerGroups.Cluster cluster, final String name) {
        final ConsumerGroupSettings settings = ConsumerGroupSettings.from(Map.of("node.id", "7", "kassign.target",
                run.target(), "kassign.deadline.ms", run.deadline(), ConsumerGroupSettings.ASSIGNOR,
                "uniform".equals(name) ? ConsumerGroupSettings.DEFAULT_ASSIGNOR : name));
        final GroupSpecToConsumerRequest.Topics topics = GroupSpecToConsumerRequest.Topics.of(group, cluster.describer());
        final io.kassign.v1.ConsumerAssignResponse response = SharedClients.waitingForReady(settings.connection())
                .assignConsumers(GroupSpecToConsumerRequest.convert(group, cluster.describer(), topics, settings));
        return Map.of("request_cpu_ms", cpuMs(run, () -> GroupSpecToConsumerRequest.convert(group, cluster.describer(),
                        GroupSpecToConsumerRequest.Topics.of(group, cluster.describer()), settings)),
                "answer_cpu_ms", cpuMs(run, () -> ConsumerResponseToAssignment.convert(response, group, topics)));
    }

    private static Map<String, Object> streamsConversions(final Run run, final GroupSpecImpl group,
                                                          final TopologyMetadata describer, final String metricsId) {
        final StreamsSettings settings = StreamsSettings.from(Map.of("node.id", "7", "kassign.target", run.target(),
                "kassign.deadline.ms", run.deadline(), StreamsSettings.GROUP_ID, metricsId));
        final GroupToStreamsRequest.Topology topology = GroupToStreamsRequest.Topology.of(describer);
        final io.kassign.v1.AssignResponse response = SharedClients.waitingForReady(settings.connection())
                .assign(GroupToStreamsRequest.convert(group, topology, settings));
        return Map.of("request_cpu_ms", cpuMs(run, () -> GroupToStreamsRequest.convert(group,
                        GroupToStreamsRequest.Topology.of(describer), settings)),
                "answer_cpu_ms", cpuMs(run, () -> StreamsResponseToAssignment.convert(response, group, topology)));
    }

    private static double cpuMs(final Run run, final Supplier<?> work) {
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        double best = Double.MAX_VALUE;
        for (int i = 0; i < run.warmup() + run.repeats(); i++) {
            System.gc();
            final long start = threads.getCurrentThreadCpuTime();
            work.get();
            final double ms = (threads.getCurrentThreadCpuTime() - start) / 1e6;
            best = i < run.warmup() ? best : Math.min(best, ms);
        }
        return best;
    }

    /** Best wall and JVM CPU times of each side, and each side's last answer. */
    private record Timed<T>(double kafkaMs, double kafkaCpuMs, T kafka, double pluginMs, double pluginCpuMs, T plugin) {
        Map<String, Object> fields(final Map<String, Object> more) {
            final Map<String, Object> all = new TreeMap<>(more);
            all.putAll(Map.of("kafka_ms", kafkaMs, "kafka_cpu_ms", kafkaCpuMs, "plugin_ms", pluginMs,
                    "plugin_cpu_ms", pluginCpuMs));
            return all;
        }
    }

    /** Warm both, then best of {@code repeats} each, alternating which goes first. */
    private static <T> Timed<T> interleaved(final Supplier<T> kafka, final Supplier<T> plugin, final Run run) {
        for (int i = 0; i < run.warmup(); i++) {
            kafka.get();
            plugin.get();
        }
        final double[] best = {Double.MAX_VALUE, Double.MAX_VALUE, Double.MAX_VALUE, Double.MAX_VALUE};
        final List<T> answers = new ArrayList<>(java.util.Collections.nCopies(2, null));
        for (int i = 0; i < run.repeats(); i++) {
            for (int side = 0; side < 2; side++) {
                final int turn = (side == 0) == (i % 2 == 0) ? 0 : 1; // 0 Kafka, 1 the plug-in
                System.gc();
                final long cpu = OS.getProcessCpuTime();
                final long start = System.nanoTime();
                answers.set(turn, (turn == 0 ? kafka : plugin).get());
                best[2 * turn] = Math.min(best[2 * turn], (System.nanoTime() - start) / 1e6);
                best[2 * turn + 1] = Math.min(best[2 * turn + 1], (OS.getProcessCpuTime() - cpu) / 1e6);
            }
        }
        return new Timed<>(best[0], best[1], answers.get(0), best[2], best[3], answers.get(1));
    }

    /** One line {@code bench JSON} (fields sorted; strings quoted, numbers and booleans bare). */
    private static void print(final Map<String, Object> line) {
        System.out.println("bench " + new TreeMap<>(line).entrySet().stream()
                .map(f -> "\"" + f.getKey() + "\": "
                        + (f.getValue() instanceof String ? "\"" + f.getValue() + "\"" : f.getValue()))
                .collect(Collectors.joining(", ", "{", "}")));
        System.out.flush();
    }
}
