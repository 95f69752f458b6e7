package io.kassign.streams;

import java.util.List;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;

/**
 * Large KIP-924 inputs for {@code io.kassign.bench.PluginBench}, made of the tests' own
 * {@link FakeState} implementations of Kafka's interfaces (public here, as FakeState is
 * package-private).
 */
public final class BenchApplications {
    /** Subtopologies the tasks are spread over; each has its own source topic and changelog. */
    static final int SUBTOPOLOGIES = 10;
    /** Every task's changelog end offset sum: a fresh client's lag for it. */
    static final long END_OFFSET_SUM = 10_000L;

    private BenchApplications() {
    }

    /**
     * {@code tasks} stateful tasks over ten subtopologies, {@code clients} clients of two stream
     * threads with no state at all (each lag is the whole end offset sum, as Kafka fills them for a
     * fresh client), {@code standbys} standby replicas, no racks.
     */
    public static ApplicationState fresh(final int tasks, final int clients, final int standbys) {
        final FakeState.App app = new FakeState.App();
        app.configs = FakeState.App.configs(standbys, List.of(), "none");
        final int perSubtopology = Math.max(1, tasks / SUBTOPOLOGIES);
        for (int n = 0; n < tasks; n++) {
            final int subtopology = n / perSubtopology;
            final int partition = n % perSubtopology;
            app.task(FakeState.Task.stateful(new TaskId(subtopology, partition), "store-" + subtopology,
                    FakeState.Partition.source("source-" + subtopology, partition),
                    FakeState.Partition.changelog("app-store-" + subtopology + "-changelog", partition)));
        }
        final Long lag = END_OFFSET_SUM;
        for (int c = 1; c <= clients; c++) {
            final FakeState.Client client = new FakeState.Client(FakeState.pid(c), "c" + c + "-1", "c" + c + "-2");
            for (final TaskId task : app.tasks.keySet()) {
                client.lags.put(task, lag);
            }
            app.client(client);
        }
        return app;
    }
}
