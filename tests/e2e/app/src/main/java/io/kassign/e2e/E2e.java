package io.kassign.e2e;

import java.io.FileReader;
import java.io.IOException;
import java.io.Reader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * The end-to-end test's JVM side (tests/e2e/test_streams_e2e.py), real Kafka clients only.
 *
 * <pre>
 *   app PROPERTIES                     a Kafka Streams instance: count per key, input to output
 *   topics BOOTSTRAP NAME:PARTITIONS...  create topics (existing ones are fine)
 *   produce BOOTSTRAP TOPIC KEYS PER_KEY  KEYS*PER_KEY records, keys k0..k(KEYS-1)
 *   counts BOOTSTRAP TOPIC TIMEOUT_MS  the output's last count per key, read_committed
 * </pre>
 *
 * The app prints one {@code E2E assignment} line whenever its threads' tasks change and one
 * {@code E2E state} line per state change, so the test reads who owns what from the log. With
 * {@code e2e.bench.ms} set, BenchProbe adds the cluster benchmark's {@code BENCH} lines (bench/cluster).
 */
public final class E2e {
    private E2e() {}

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "app" -> app(args[1]);
            case "topics" -> topics(args[1], List.of(args).subList(2, args.length));
            case "produce" -> produce(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]));
            case "counts" -> counts(args[1], args[2], Long.parseLong(args[3]));
            default -> throw new IllegalArgumentException("unknown command " + args[0]);
        }
    }

    private static void say(String line) {
        System.out.println("E2E " + line + " at " + System.currentTimeMillis());
        System.out.flush();
    }

    private static void app(String propertiesFile) throws IOException, InterruptedException {
        Properties props = new Properties();
        try (Reader r = new FileReader(propertiesFile)) {
            props.load(r);
        }
        String input = (String) props.remove("e2e.input");
        String output = (String) props.remove("e2e.output");
        // bench/cluster's probe: a BENCH line of the client's own metrics every so many ms (0: none)
        long benchMs = Long.parseLong((String) props.getOrDefault("e2e.bench.ms", "0"));
        props.remove("e2e.bench.ms");

        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
                .groupByKey()
                .count(Materialized.as("counts"))
                .toStream()
                .to(output, Produced.with(Serdes.String(), Serdes.Long()));

        KafkaStreams streams = new KafkaStreams(builder.build(props), props);
        streams.setStateListener((now, before) -> say("state " + before + "->" + now));
        streams.setUncaughtExceptionHandler(e -> {
            say("uncaught " + e);
            e.printStackTrace(System.out);
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse
                    .SHUTDOWN_CLIENT;
        });
        ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "e2e-assignment-poller");
            t.setDaemon(true);
            return t;
        });
        String[] last = {""};
        poller.scheduleWithFixedDelay(() -> {
            try {
                Set<String> active = new TreeSet<>();
                Set<String> standby = new TreeSet<>();
                for (ThreadMetadata thread : streams.metadataForLocalThreads()) {
                    ids(thread.activeTasks(), active);
                    ids(thread.standbyTasks(), standby);
                }
                String now = "active=" + String.join(",", active) + " standby=" + String.join(",", standby);
                if (!now.equals(last[0])) {
                    last[0] = now;
                    say("assignment " + now);
                }
            } catch (RuntimeException e) {
                // metadataForLocalThreads throws while the client is not yet started or closing
            }
        }, 0, 200, TimeUnit.MILLISECONDS);
        if (benchMs > 0) {
            BenchProbe.attach(streams, input, benchMs);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> streams.close(Duration.ofSeconds(5))));
        streams.start();
        Thread.currentThread().join();
    }

    private static void ids(Collection<TaskMetadata> tasks, Set<String> into) {
        for (TaskMetadata task : tasks) {
            into.add(task.taskId().toString());
        }
    }

    private static void topics(String bootstrap, List<String> specs) throws InterruptedException, ExecutionException {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(props)) {
            List<NewTopic> topics = new ArrayList<>();
            for (String spec : specs) {
                String[] parts = spec.split(":");
                topics.add(new NewTopic(parts[0], Integer.parseInt(parts[1]), (short) 1));
            }
            for (var entry : admin.createTopics(topics).values().entrySet()) {
                try {
                    entry.getValue().get();
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw e;
                    }
                }
            }
        }
        say("topics " + String.join(" ", specs));
    }

    private static void produce(String bootstrap, String topic, int keys, int perKey) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < perKey; i++) {
                for (int k = 0; k < keys; k++) {
                    producer.send(new ProducerRecord<>(topic, "k" + k, "v" + i));
                }
            }
            producer.flush();
        }
        say("produced " + (long) keys * perKey + " to " + topic);
    }

    private static void counts(String bootstrap, String topic, long timeoutMs) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        Map<String, Long> counts = new TreeMap<>();
        try (KafkaConsumer<String, Long> consumer =
                new KafkaConsumer<>(props, new StringDeserializer(), new LongDeserializer())) {
            List<TopicPartition> partitions = new ArrayList<>();
            consumer.partitionsFor(topic, Duration.ofMillis(timeoutMs))
                    .forEach(p -> partitions.add(new TopicPartition(topic, p.partition())));
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            long deadline = System.currentTimeMillis() + timeoutMs;
            while (System.currentTimeMillis() < deadline) {
                boolean done = true;
                for (TopicPartition p : partitions) {
                    done &= consumer.position(p) >= end.get(p);
                }
                if (done) {
                    break;
                }
                for (ConsumerRecord<String, Long> record : consumer.poll(Duration.ofMillis(200))) {
                    counts.put(record.key(), record.value());
                }
            }
        }
        StringBuilder json = new StringBuilder("{");
        counts.forEach((k, v) -> json.append(json.length() > 1 ? ", " : "").append('"').append(k).append("\": ").append(v));
        System.out.println("COUNTS " + json.append('}'));
    }
}
