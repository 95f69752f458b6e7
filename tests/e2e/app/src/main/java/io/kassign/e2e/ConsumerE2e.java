package io.kassign.e2e;

import java.io.BufferedWriter;
import java.io.FileReader;
import java.io.IOException;
import java.io.Reader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.management.ObjectName;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The consumer-group end-to-end test's JVM side (tests/e2e/test_consumer_e2e.py), real Kafka clients only.
 *
 * <pre>
 *   topics BOOTSTRAP NAME=1,2;2,3;...   create topics with these replicas per partition (leader first)
 *   produce BOOTSTRAP RATE TOPIC...      records r0, r1, ... (key = value = id) round-robin over the topics,
 *                                        RATE a second, until SIGTERM; then flushes and prints the count
 *   consumer PROPERTIES                  a KafkaConsumer in a group, until SIGTERM
 * </pre>
 *
 * The consumer writes each record it processes to {@code e2e.records} ("topic partition offset value"),
 * commits after each batch, and commits what it processed of a partition in onPartitionsRevoked before
 * giving it up: every record is processed exactly once across the group. It logs one line per
 * callback, the same lines as tests/e2e/consumer_py.py:
 * {@code E2E revoked|revoked-on-close|owned member=ID gen=N partitions=t-0,t-1}, and on exit
 * {@code E2E closed assignments=N fallbacks=N} from the plug-in's JMX metrics. For the cluster benchmark
 * (bench/cluster): {@code e2e.bench.ms} adds a {@code BENCH} line of bytes received per broker that often,
 * and {@code -De2e.pad=N} pads the producer's values.
 */
public final class ConsumerE2e {
    private ConsumerE2e() {}

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "topics" -> topics(args[1], List.of(args).subList(2, args.length));
            case "produce" -> produce(args[1], Integer.parseInt(args[2]), List.of(args).subList(3, args.length));
            case "consumer" -> consumer(args[1]);
            default -> throw new IllegalArgumentException("unknown command " + args[0]);
        }
    }

    private static void say(String line) {
        System.out.println("E2E " + line + " at " + System.currentTimeMillis());
        System.out.flush();
    }

    private static void topics(String bootstrap, List<String> specs) throws InterruptedException, ExecutionException {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(props)) {
            List<NewTopic> topics = new ArrayList<>();
            List<String> names = new ArrayList<>();
            for (String spec : specs) {
                String[] parts = spec.split("=", 2);
                Map<Integer, List<Integer>> replicas = new HashMap<>();
                String[] partitions = parts[1].split(";");
                for (int p = 0; p < partitions.length; p++) {
                    List<Integer> brokers = new ArrayList<>();
                    for (String b : partitions[p].split(",")) {
                        brokers.add(Integer.parseInt(b));
                    }
                    replicas.put(p, brokers);
                }
                topics.add(new NewTopic(parts[0], replicas));
                names.add(parts[0]);
            }
            admin.createTopics(topics).all().get();
            // every partition led and known to the broker answering: the consumers' metadata is complete
            long deadline = System.currentTimeMillis() + 60_000;
            while (true) {
                boolean ready = true;
                for (TopicDescription d : admin.describeTopics(names).allTopicNames().get().values()) {
                    for (TopicPartitionInfo p : d.partitions()) {
                        ready &= p.leader() != null && p.isr().size() == p.replicas().size();
                    }
                }
                if (ready) {
                    break;
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("topics not ready within 60 s");
                }
                Thread.sleep(100);
            }
        }
        say("topics " + String.join(" ", specs));
    }

    private static void produce(String bootstrap, int perSecond, List<String> topics) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch done = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stop.set(true);
            try {
                done.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        AtomicLong acked = new AtomicLong();
        AtomicReference<Exception> failed = new AtomicReference<>();
        long sent = 0;
        // bench/cluster: -De2e.pad=N adds ":" and N bytes to each value, so fetched bytes are records
        int pad = Integer.getInteger("e2e.pad", 0);
        String padding = pad > 0 ? ":" + "x".repeat(pad) : "";
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            long started = System.nanoTime();
            say("producing");
            while (!stop.get()) {
                long due = (System.nanoTime() - started) * perSecond / 1_000_000_000L;
                for (; sent < due; sent++) {
                    String id = "r" + sent;
                    producer.send(new ProducerRecord<>(topics.get((int) (sent % topics.size())), id, id + padding), (m, e) -> {
                        if (e != null) {
                            failed.compareAndSet(null, e);
                        } else {
                            acked.incrementAndGet();
                        }
                    });
                }
                Thread.sleep(10);
            }
            producer.flush();
        }
        if (failed.get() != null || acked.get() != sent) {
            say("produce failed: " + acked.get() + " of " + sent + " acked: " + failed.get());
            done.countDown();
            Runtime.getRuntime().halt(1);
        }
        say("produced " + sent);
        done.countDown();
    }

    private static String ids(Collection<TopicPartition> partitions) {
        TreeSet<String> sorted = new TreeSet<>();
        for (TopicPartition p : partitions) {
            sorted.add(p.topic() + "-" + p.partition());
        }
        return String.join(",", sorted);
    }

    private static void consumer(String propertiesFile) throws Exception {
        Properties props = new Properties();
        try (Reader r = new FileReader(propertiesFile)) {
            props.load(r);
        }
        List<String> topics = List.of(((String) props.remove("e2e.topics")).split(","));
        Path records = Path.of((String) props.remove("e2e.records"));
        // bench/cluster: a BENCH line of bytes received per broker every so many ms (0: none)
        long benchMs = Long.parseLong((String) props.getOrDefault("e2e.bench.ms", "0"));
        props.remove("e2e.bench.ms");
        String group = props.getProperty("group.id");
        KafkaConsumer<String, String> consumer =
                new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
        AtomicBoolean closing = new AtomicBoolean();
        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            closing.set(true);
            consumer.wakeup();
            try {
                closed.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        // the next offset to process of each partition this member has processed records of
        Map<TopicPartition, OffsetAndMetadata> processed = new HashMap<>();
        try (BufferedWriter out = Files.newBufferedWriter(records, StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
            consumer.subscribe(topics, new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
                    Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
                    for (TopicPartition p : revoked) {
                        if (processed.containsKey(p)) {
                            commit.put(p, processed.get(p));
                        }
                    }
                    try {
                        consumer.commitSync(commit);
                    } catch (RuntimeException e) {
                        say("commit-failed on revoke " + member() + " " + e);
                    }
                    // forgotten: should the partition come back, its next owner has moved on, and this
                    // member's old offset, committed again with a later batch, would rewind the group
                    processed.keySet().removeAll(revoked);
                    say((closing.get() ? "revoked-on-close" : "revoked") + " " + member() + " partitions=" + ids(revoked));
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> added) {
                    say("owned " + member() + " partitions=" + ids(consumer.assignment()));
                }

                private String member() {
                    return "member=" + consumer.groupMetadata().memberId() + " gen="
                            + consumer.groupMetadata().generationId();
                }
            });
            long benchAt = System.currentTimeMillis() + benchMs;
            while (!closing.get()) {
                if (benchMs > 0 && System.currentTimeMillis() >= benchAt) {
                    benchAt += benchMs;
                    bench(consumer);
                }
                List<ConsumerRecord<String, String>> batch = new ArrayList<>();
                try {
                    consumer.poll(Duration.ofMillis(200)).forEach(batch::add);
                } catch (WakeupException e) {
                    break;
                }
                if (batch.isEmpty()) {
                    continue;
                }
                for (ConsumerRecord<String, String> record : batch) {
                    out.write(record.topic() + " " + record.partition() + " " + record.offset() + " " + record.value());
                    out.newLine();
                    processed.put(new TopicPartition(record.topic(), record.partition()),
                            new OffsetAndMetadata(record.offset() + 1));
                }
                out.flush();
                try {
                    Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>(processed);
                    commit.keySet().retainAll(consumer.assignment());
                    consumer.commitSync(commit);
                } catch (RebalanceInProgressException | WakeupException e) {
                    // a rebalance is under way: a partition this member gives up is committed in
                    // onPartitionsRevoked, the others with the next batch
                    if (e instanceof WakeupException) {
                        break;
                    }
                }
            }
            try {
                Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>(processed);
                commit.keySet().retainAll(consumer.assignment());
                consumer.commitSync(commit);
            } catch (RuntimeException e) {
                say("commit-failed before close " + e); // onPartitionsRevoked commits again on close
            }
            if (benchMs > 0) {
                bench(consumer);
            }
            consumer.close(Duration.ofSeconds(10));
        }
        say("closed " + metrics(group));
        closed.countDown();
    }

    /** bench/cluster's line: the bytes this member received from each broker so far. */
    private static void bench(KafkaConsumer<String, String> consumer) {
        System.out.println("BENCH {\"at\":" + System.currentTimeMillis() + ",\"main\":"
                + NodeBytes.json(consumer.metrics(), id -> true) + "}");
        System.out.flush();
    }

    /** The plug-in's JMX metrics for this group: "assignments=N fallbacks=N". */
    private static String metrics(String group) throws Exception {
        ObjectName name = new ObjectName("kassign:type=consumer-assignor,client-id=" + group);
        var server = ManagementFactory.getPlatformMBeanServer();
        if (!server.isRegistered(name)) {
            return "metrics unregistered";
        }
        return "assignments=" + ((Number) server.getAttribute(name, "assignments-total")).longValue()
                + " fallbacks=" + ((Number) server.getAttribute(name, "fallbacks-total")).longValue();
    }
}
