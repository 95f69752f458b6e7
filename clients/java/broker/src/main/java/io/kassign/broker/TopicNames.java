package io.kassign.broker;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Topic names for the topic ids the broker's assignor API gives, read off the rebalance path.
 *
 * <p>Why: Kafka 4.4's {@code GroupSpec} and {@code SubscribedTopicDescriber} name topics only by
 * id, while the service's load source (Prometheus) labels partitions by topic name. {@link #known}
 * never blocks: it answers from the last listing and notes the ids it could not name; a daemon
 * thread lists the cluster's topics ({@link Source}, Kafka's Admin in production) once at
 * {@link #start} (broker start: the topics that exist then are named before their groups'
 * rebalances), soon after an unnamed id is asked for (at most once per {@code minGapMs}) and
 * every {@code refreshMs}. Memory is bounded: the names are the latest listing's (a deleted topic
 * is dropped), at most {@value #MAX_IDS}; on a larger cluster only the ids some group asked for.
 */
final class TopicNames implements AutoCloseable {
    /** At most this many ids are named: beyond most clusters' topics, far beyond their groups'. */
    static final int MAX_IDS = 100_000;
    /** The wait before another listing after a failed one. */
    static final long RETRY_MS = 30_000L;

    private static final Logger LOG = LoggerFactory.getLogger(TopicNames.class);

    /** Every topic of the cluster, id to name; may throw (the broker unreachable, not authorised). */
    interface Source extends AutoCloseable {
        Map<Uuid, String> list() throws Exception;

        @Override
        void close();
    }

    private final Source source;
    private final long refreshMs;
    private final long minGapMs;
    private final LongSupplier clockMs;
    private final ScheduledExecutorService refresher;
    /** Ids some group asked for, named or not; read by the refresher. */
    private final Set<Uuid> wanted = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean soon = new AtomicBoolean();
    /** A retry after a failed listing is pending: apart from {@link #soon}, so an ask still lists at once. */
    private final AtomicBoolean retrying = new AtomicBoolean();
    private volatile Map<Uuid, String> names = Map.of();
    private volatile long lastListedMs = Long.MIN_VALUE / 2;
    private volatile String lastFailure = "";

    TopicNames(final Source source, final long refreshMs, final long minGapMs, final LongSupplier clockMs) {
        this.source = source;
        this.refreshMs = refreshMs;
        this.minGapMs = minGapMs;
        this.clockMs = clockMs;
        this.refresher = Background.daemon("kassign-topic-names");
        refresher.scheduleWithFixedDelay(this::refresh, refreshMs, refreshMs, TimeUnit.MILLISECONDS);
    }

    /** The first listing, at once on the refresher's thread. */
    void start() {
        refresher.execute(this::refresh);
    }

    /**
     * The names known of {@code ids} (those without one are left out), at once; an id not named
     * yet is wanted and a listing is scheduled, so a later assignment finds it.
     */
    Map<Uuid, String> known(final Collection<Uuid> ids) {
        final Map<Uuid, String> current = names;
        final Map<Uuid, String> found = new HashMap<>();
        boolean missing = false;
        for (final Uuid id : ids) {
            final String name = current.get(id);
            if (name != null) {
                found.put(id, name);
            } else if (wanted.size() < MAX_IDS || wanted.contains(id)) {
                wanted.add(id); // named by the next listing, or dropped by it if the cluster lacks it
                missing = true;
            }
        }
        if (missing) { // closed meanwhile: ids stay unnamed
            Background.once(refresher, soon, this::refresh, Math.max(0L, lastListedMs + minGapMs - clockMs.getAsLong()));
        }
        return found;
    }

    /**
     * One listing: its names replace the known ones (all of them, or on a cluster of more than
     * {@value #MAX_IDS} topics the wanted ones); wanted ids it lacks are forgotten.
     */
    void refresh() {
        soon.set(false);
        lastListedMs = clockMs.getAsLong();
        final Map<Uuid, String> listed;
        try {
            listed = source.list();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (final Exception e) { // names stay as they were; ids go on being sent unnamed
            final String failure = e.toString();
            if (!failure.equals(lastFailure)) {
                LOG.warn("kassign: listing topics for their names failed, tried again in {} ms or when a group "
                        + "names a topic not known yet: {}", Math.min(refreshMs, RETRY_MS), failure);
                lastFailure = failure;
            }
            retrySoon();
            return;
        }
        lastFailure = "";
        wanted.retainAll(listed.keySet());
        final Map<Uuid, String> kept;
        if (listed.size() <= MAX_IDS) {
            kept = listed;
        } else {
            kept = new HashMap<>();
            for (final Uuid id : wanted) {
                kept.put(id, listed.get(id));
            }
        }
        final int before = names.size();
        names = Map.copyOf(kept);
        if (kept.size() != before) { // topics created or deleted: rare, and what an operator asks after
            LOG.info("kassign: the names of {} topics are known (were {})", kept.size(), before);
        }
    }

    /** After a failed listing (the broker still starting, say): another within 30 s, not {@code refreshMs}. */
    private void retrySoon() {
        Background.once(refresher, retrying, () -> {
            retrying.set(false);
            refresh();
        }, Math.min(refreshMs, RETRY_MS));
    }

    /** How many ids are named now (tests, the INFO line). */
    int size() {
        return names.size();
    }

    /** Stops the refresher and closes the source (the Admin client); waits for neither. */
    @Override
    public void close() {
        refresher.shutdownNow();
        source.close();
        names = Map.of();
        wanted.clear();
    }

    boolean isClosed() {
        return refresher.isShutdown();
    }
}
