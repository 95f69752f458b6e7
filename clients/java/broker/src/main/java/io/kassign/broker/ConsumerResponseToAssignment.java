package io.kassign.broker;

import io.kassign.broker.GroupSpecToConsumerRequest.Topics;
import io.kassign.plugin.InvalidAnswer;
import io.kassign.v1.ConsumerAssignResponse;
import io.kassign.v1.ConsumerMemberAssignment;
import io.kassign.v1.PartitionRuns;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.modern.MemberAssignmentImpl;

/**
 * The service's answer as the coordinator's GroupAssignment, checked before Kafka sees it.
 *
 * <p>Refused ({@link InvalidAnswer}, so the plug-in falls back): a member unknown, listed twice or
 * left out; a member answered without partition runs (a service older than the compact wire the
 * plug-in sends, which reads the members as subscribed to nothing); a partition of a topic not in
 * the request, out of range, of a topic its member does not subscribe to, or given twice; a
 * partition of a subscribed topic given to no one. Partitions the
 * group marks not assignable ({@link GroupSpec#isPartitionAssignable}; only share groups set any in
 * Kafka 4.4) are left out of the result.
 */
final class ConsumerResponseToAssignment {
    private ConsumerResponseToAssignment() {
    }

    /**
     * One topic of the request as the checks see it: who holds each partition (position of the
     * member in the answer + 1; 0 for none) and how many are held. Why arrays and not maps of boxed
     * partitions: a large group's answer lists a million partitions, each looked at once; the
     * answer lists each member's partitions by topic, so a topic is looked up once per run.
     */
    private static final class Held {
        final Uuid id;
        final int[] holder;
        int given;

        Held(final Uuid id, final int count) {
            this.id = id;
            this.holder = new int[count];
        }
    }

    static GroupAssignment convert(final ConsumerAssignResponse response, final GroupSpec group, final Topics topics) {
        final Map<String, MemberAssignment> result = new HashMap<>();
        final String[] ids = new String[response.getMembersCount() + 1];
        final Map<String, Held> held = new HashMap<>();
        topics.ids().forEach((name, id) -> held.put(name, new Held(id, topics.partitions().get(id))));
        final String[] names = response.getTopicsList().toArray(new String[0]);
        final Held[] named = new Held[names.length]; // the answer's topic indexes, looked up once
        for (int t = 0; t < names.length; t++) {
            named[t] = held.get(names[t]);
        }
        // HOMOGENEOUS: Kafka says every member subscribes to the same topics, so whether a topic of
        // the answer is subscribed is asked once, not once per member and run (a million at 1M)
        final byte[] shared = group.subscriptionType() == SubscriptionType.HOMOGENEOUS ? new byte[names.length] : null;
        for (final ConsumerMemberAssignment member : response.getMembersList()) {
            final String id = member.getMemberId();
            if (!group.memberIds().contains(id)) {
                throw new InvalidAnswer("the service assigned partitions to unknown member " + id);
            }
            if (result.containsKey(id)) {
                throw new InvalidAnswer("the service listed member " + id + " twice");
            }
            final int me = result.size() + 1;
            ids[me] = id;
            if (!member.hasAssigned()) {
                throw InvalidAnswer.withoutRuns(id);
            }
            final Member given = new Member(id, me, group, ids, member.getAssigned().getTopicsCount(), shared);
            readRuns(member.getAssigned(), names, named, given);
            result.put(id, new MemberAssignmentImpl(given.partitions));
        }
        for (final String id : group.memberIds()) {
            if (!result.containsKey(id)) {
                throw new InvalidAnswer("the service left out member " + id);
            }
        }
        checkComplete(group, held);
        return new GroupAssignment(result);
    }

    /**
     * One member's partitions as they are read, run by run: each checked and recorded, each run's
     * assignable numbers one set of the map Kafka keeps as it is (not copied).
     */
    private static final class Member {
        static final byte YES = 1;
        static final byte NO = 2;
        final String id;
        final int me;
        final GroupSpec group;
        final String[] ids;
        final Set<Uuid> subscribed;
        /** By the answer's topic index: 0 not asked yet, else {@link #YES} or {@link #NO}; null: ask each time. */
        final byte[] asked;
        /** The member's assignment as the coordinator receives it, topics with none left out. */
        final Map<Uuid, Set<Integer>> partitions;

        Member(final String id, final int me, final GroupSpec group, final String[] ids, final int runs,
               final byte[] asked) {
            this.id = id;
            this.me = me;
            this.group = group;
            this.ids = ids;
            this.subscribed = group.memberSubscription(id).subscribedTopicIds();
            this.asked = asked;
            this.partitions = new HashMap<>((int) (runs / 0.75f) + 1);
        }

        /** Whether the member subscribes to {@code topic}, the answer's topic {@code t}. */
        private boolean subscribes(final int t, final Held topic) {
            if (asked == null) {
                return subscribed.contains(topic.id);
            }
            if (asked[t] == 0) {
                asked[t] = subscribed.contains(topic.id) ? YES : NO;
            }
            return asked[t] == YES;
        }

        /**
         * A run of {@code count} partitions of {@code topic}, the answer's topic {@code t} ({@code name};
         * null when not in the request).
         */
        void take(final int t, final String name, final Held topic, final PartitionRuns runs, final int at,
                  final int count) {
            if (count == 0) {
                return;
            }
            final Held mine = topic != null && subscribes(t, topic) ? topic : null;
            final int[] numbers = new int[count];
            int kept = 0;
            for (int i = 0; i < count; i++) {
                final int p = runs.getPartitions(at + i);
                if (mine == null || p < 0 || p >= mine.holder.length) {
                    throw new InvalidAnswer("the service gave member " + id + " partition " + name + "-"
                            + p + ", not of a topic it subscribes to in the metadata");
                }
                if (mine.holder[p] != 0) {
                    throw new InvalidAnswer("the service gave partition " + name + "-" + p
                            + " to both " + ids[mine.holder[p]] + " and " + id);
                }
                mine.holder[p] = me;
                mine.given++;
                if (group.isPartitionAssignable(mine.id, p)) {
                    numbers[kept++] = p;
                }
            }
            if (kept > 0) {
                add(mine.id, numbers, kept);
            }
        }

        /** The run's set; a topic in two runs of one member (not how the service answers) joined. */
        private void add(final Uuid topic, final int[] numbers, final int size) {
            final Set<Integer> before = partitions.get(topic);
            if (before == null) {
                partitions.put(topic, PartitionNumbers.of(numbers, size));
                return;
            }
            final int[] both = Arrays.copyOf(numbers, size + before.size());
            int n = size;
            for (final int p : before) {
                both[n++] = p;
            }
            partitions.put(topic, PartitionNumbers.of(both, n));
        }
    }

    /**
     * A compact answer's runs (issue 24): run i is counts[i] partitions of topic names[topics[i]],
     * the numbers end to end. Runs that do not add up are refused.
     */
    private static void readRuns(final PartitionRuns runs, final String[] names, final Held[] named,
                                 final Member member) {
        final int total = runs.getPartitionsCount();
        if (runs.getTopicsCount() != runs.getCountsCount()) {
            throw new InvalidAnswer("member " + member.id + "'s runs have " + runs.getTopicsCount()
                    + " topics for " + runs.getCountsCount() + " counts");
        }
        int at = 0;
        for (int r = 0; r < runs.getTopicsCount(); r++) {
            final int topic = runs.getTopics(r);
            final int count = runs.getCounts(r);
            if (topic < 0 || topic >= names.length || count < 0 || count > total - at) {
                throw new InvalidAnswer("member " + member.id + "'s run " + r + " names topic " + topic + " of "
                        + names.length + " with " + count + " partitions, past the answer's lists");
            }
            member.take(topic, names[topic], named[topic], runs, at, count);
            at += count;
        }
        if (at != total) {
            throw new InvalidAnswer("member " + member.id + "'s runs count " + at + " of its " + total + " partitions");
        }
    }

    /** Every partition of every subscribed topic in the metadata has an owner. */
    private static void checkComplete(final GroupSpec group, final Map<String, Held> held) {
        for (final Held topic : new TreeMap<>(held).values()) {
            if (topic.given != topic.holder.length) {
                throw new InvalidAnswer("the service assigned " + topic.given + " of the " + topic.holder.length
                        + " partitions of topic " + topic.id + " (subscribed by " + subscribers(group, topic.id)
                        + " members)");
            }
        }
    }

    private static long subscribers(final GroupSpec group, final Uuid topic) {
        return group.memberIds().stream()
                .filter(m -> group.memberSubscription(m).subscribedTopicIds().contains(topic)).count();
    }
}
