package io.kassign.broker;

import java.util.Collection;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The source topics of the broker's KIP-1071 streams groups, read off the rebalance path, so the
 * streams plug-in can send each task's source partitions under balance LOAD.
 *
 * <p>Why: Kafka 4.4's streams assignor API ({@code GroupSpec}, {@code TopologyDescriber}) names
 * neither the group nor any source topic, while the service's load source weighs a task by its
 * source partitions' series, labelled by topic name. The group's description (Kafka's Admin
 * {@code describeStreamsGroups}) has both; the assignor's group is found by its member ids (UUIDs
 * the clients make), which the description lists too. {@link #find} never blocks: it answers from
 * the last description and, for a group it cannot match, asks a daemon thread to describe the
 * cluster's streams groups soon (at least {@code askDelayMs} later, so the coordinator has written
 * the group, and at most once per {@code minGapMs}); the thread also describes every
 * {@code refreshMs} while the plug-in asks. Memory is bounded: the last description only (a group
 * gone is forgotten), at most {@value #MAX_GROUPS} groups and {@value #MAX_MEMBERS} member ids.
 */
final class StreamsSources implements AutoCloseable {
    /** At most this many streams groups are described. */
    static final int MAX_GROUPS = 10_000;
    /** At most this many member ids are indexed (the groups beyond are left out). */
    static final int MAX_MEMBERS = 100_000;
    /** The least wait from an ask to its describing: the coordinator writes the group after assign returns. */
    static final long ASK_DELAY_MS = 500L;
    /** The wait before describing again after a failure. */
    static final long RETRY_MS = 30_000L;

    private static final Logger LOG = LoggerFactory.getLogger(StreamsSources.class);

    /** A source topic (a repartition topic included) and its partition count. */
    record SourceTopic(String name, int partitions) {
    }

    /** One described streams group: its members' ids and each subtopology's source topics. */
    record Group(String groupId, Set<String> members, Map<String, List<SourceTopic>> subtopologies) {
    }

    /** The cluster's streams groups, described; may throw (the broker unreachable, not authorised). */
    interface Source extends AutoCloseable {
        List<Group> describe(int maxGroups) throws Exception;

        @Override
        void close();
    }

    private final Source source;
    private final long minGapMs;
    private final long askDelayMs;
    private final LongSupplier clockMs;
    private final ScheduledExecutorService describer;
    private final AtomicBoolean soon = new AtomicBoolean();
    private final AtomicBoolean retrying = new AtomicBoolean();
    /** Something asked since the last describing: the periodic one runs only then. */
    private final AtomicBoolean used = new AtomicBoolean();
    private volatile Map<String, Group> byMember = Map.of();
    private volatile long lastDescribedMs = Long.MIN_VALUE / 2;
    private volatile String lastFailure = "";

    StreamsSources(final Source source, final long refreshMs, final long minGapMs, final long askDelayMs,
                   final LongSupplier clockMs) {
        this.source = source;
        this.minGapMs = minGapMs;
        this.askDelayMs = askDelayMs;
        this.clockMs = clockMs;
        this.describer = Background.daemon("kassign-streams-sources");
        describer.scheduleWithFixedDelay(() -> {
            if (used.get()) {
                refresh();
            }
        }, refreshMs, refreshMs, TimeUnit.MILLISECONDS);
    }

    /**
     * The described group most of {@code members} belong to (ties: the least group id), at once,
     * when it describes every one of {@code subtopologies}; else empty, and a describing is
     * scheduled, so a later assignment finds it.
     */
    Optional<Group> find(final Collection<String> members, final Collection<String> subtopologies) {
        used.set(true);
        final Optional<Group> found = match(byMember, members);
        if (found.isPresent() && found.get().subtopologies().keySet().containsAll(subtopologies)) {
            return found;
        }
        askSoon();
        return Optional.empty();
    }

    /** The group most of {@code members} are indexed to; ties go to the least group id. */
    static Optional<Group> match(final Map<String, Group> index, final Collection<String> members) {
        final Map<Group, Integer> hits = new IdentityHashMap<>(); // a Group's own hash reads every member
        for (final String member : members) {
            final Group group = index.get(member);
            if (group != null) {
                hits.merge(group, 1, Integer::sum);
            }
        }
        Group best = null;
        int most = 0;
        for (final Map.Entry<Group, Integer> hit : hits.entrySet()) {
            final Group group = hit.getKey();
            if (hit.getValue() > most || hit.getValue() == most && group.groupId().compareTo(best.groupId()) < 0) {
                best = group;
                most = hit.getValue();
            }
        }
        return Optional.ofNullable(best);
    }

    /** Member id to group, at most {@value #MAX_MEMBERS} ids; a group that would pass it is left out whole. */
    static Map<String, Group> index(final List<Group> groups) {
        final Map<String, Group> index = new HashMap<>();
        for (final Group group : groups) {
            if (index.size() + group.members().size() > MAX_MEMBERS) {
                continue;
            }
            group.members().forEach(member -> index.put(member, group));
        }
        return Map.copyOf(index);
    }

    private void askSoon() {
        Background.once(describer, soon, this::refresh,
                Math.max(askDelayMs, lastDescribedMs + minGapMs - clockMs.getAsLong()));
    }

    /** One describing: its groups replace the known ones whole. */
    void refresh() {
        soon.set(false);
        used.set(false);
        lastDescribedMs = clockMs.getAsLong();
        final List<Group> described;
        try {
            described = source.describe(MAX_GROUPS);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (final Exception e) { // the groups stay as they were; tasks go on without sources
            final String failure = e.toString();
            if (!failure.equals(lastFailure)) {
                LOG.warn("kassign: describing the streams groups for their source topics failed, tried again "
                        + "within {} ms: {}", RETRY_MS, failure);
                lastFailure = failure;
            }
            retrySoon();
            return;
        }
        lastFailure = "";
        final int before = groups();
        byMember = index(described);
        if (groups() != before) { // groups formed or gone: rare, and what an operator asks after
            LOG.info("kassign: the source topics of {} streams groups are known (were {})", groups(), before);
        }
    }

    private void retrySoon() {
        Background.once(describer, retrying, () -> {
            retrying.set(false);
            refresh();
        }, RETRY_MS);
    }

    /** How many groups are known now (tests, the INFO line). */
    int groups() {
        return (int) byMember.values().stream().map(Group::groupId).distinct().count();
    }

    /** Stops the describer and closes the source; waits for neither. */
    @Override
    public void close() {
        describer.shutdownNow();
        source.close();
        byMember = Map.of();
    }

    boolean isClosed() {
        return describer.isShutdown();
    }
}
