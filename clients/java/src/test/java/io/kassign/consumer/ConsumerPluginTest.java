package io.kassign.consumer;

import static io.kassign.client.Check.equal;
import static io.kassign.client.Check.isTrue;
import static io.kassign.client.Check.raises;
import static io.kassign.consumer.Groups.bytes;
import static io.kassign.consumer.Groups.cluster;
import static io.kassign.consumer.Groups.group;
import static io.kassign.consumer.Groups.member;
import static io.kassign.consumer.Groups.tp;

import com.google.protobuf.ByteString;
import io.kassign.plugin.InvalidAnswer;
import io.kassign.v1.Balance;
import io.kassign.v1.ConsumerAssignRequest;
import io.kassign.v1.ConsumerAssignResponse;
import io.kassign.v1.ConsumerMemberAssignment;
import io.kassign.v1.ConsumerSubscription;
import io.kassign.v1.ConsumerTopic;
import io.kassign.v1.PartitionRuns;
import io.kassign.v1.TopicPartitions;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.RebalanceProtocol;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The consumer plug-in's conversions both ways, its settings and its choice of rebalance protocol. */
final class ConsumerPluginTest {
    private static final String SELF = KassignConsumerAssignor.class.getName();

    static KassignConsumerAssignor assignor(final Map<String, Object> configs) {
        final KassignConsumerAssignor assignor = new KassignConsumerAssignor();
        assignor.configure(configs);
        return assignor;
    }

    @Test
    @DisplayName("request: members in the assignor's order, with rack, owned partitions, generation, user data")
    void requestMembers() {
        final Subscription first = member(List.of("t1", "t0"), "b", List.of(tp("t0", 1)), 7);
        first.setGroupInstanceId(Optional.of("static-1"));
        final Subscription second = new Subscription(List.of("t0"), bytes(1, 2, 3), List.of(), -1, Optional.empty());
        final GroupSubscription group = group("z-member", first, "a-member", second);
        final ConsumerAssignRequest request = GroupToRequest.convert(cluster(Map.of("t0", 2, "t1", 1)), group,
                ConsumerSettings.from(Map.of("group.id", "g1")), RebalanceProtocol.COOPERATIVE);
        equal("g1", request.getGroupId(), "group id from group.id");
        equal("rack-optimal", request.getAssignor(), "default assignor");
        equal(List.of("z-member", "a-member"), request.getMembersList().stream().map(m -> m.getMemberId()).toList(),
                "the map's order, not sorted");
        final ConsumerSubscription z = request.getMembers(0).getSubscription();
        equal("static-1", request.getMembers(0).getGroupInstanceId(), "instance id");
        equal(List.of("t1", "t0"), request.getTopicLists(z.getTopicList()).getTopicsList(),
                "topics as subscribed, in the request's shared lists");
        equal(2, request.getTopicListsCount(), "one list per distinct subscription");
        isTrue(request.getCompactAnswer() && !request.getAssignmentBytes(), "runs asked for, no Kafka bytes");
        equal("b", z.getRackId(), "rack");
        equal(7, z.getGenerationId(), "generation");
        equal("t0", z.getOwnedByTopic(0).getTopic(), "owned topic");
        equal(List.of(1), z.getOwnedByTopic(0).getPartitionsList(), "owned partitions, by topic");
        isTrue(!z.hasUserDataBytes(), "no user data sent when there is none");
        final ConsumerSubscription a = request.getMembers(1).getSubscription();
        equal("", a.getRackId(), "no rack: empty");
        isTrue(!a.hasGenerationId(), "no generation: unset");
        equal(ByteString.copyFrom(new byte[] {1, 2, 3}), a.getUserDataBytes(), "user data bytes");
        equal(io.kassign.v1.RebalanceProtocol.REBALANCE_PROTOCOL_COOPERATIVE, request.getOptions().getProtocol(),
                "protocol");
        equal(5_000L, request.getOptions().getSolverTimeBudgetMs(), "half the default deadline");
        equal(Balance.BALANCE_UNSPECIFIED, request.getOptions().getBalance(), "count: the field left unset");
    }

    @Test
    @DisplayName("request: owned partitions by topic, a run per change of topic, names as UTF-8 bytes shared by members")
    void requestOwnedByTopic() {
        final List<TopicPartition> owned = List.of(tp("t0", 1), tp("t0", 2), tp("tö", 0), tp("t0", 3));
        final GroupSubscription group = group("m1", member(List.of("t0", "tö"), "a", owned, 3),
                "m2", member(List.of("t0", "tö"), "a", List.of(tp("tö", 1)), 3));
        final ConsumerAssignRequest request = GroupToRequest.convert(cluster(Map.of("t0", 4, "tö", 2)), group,
                ConsumerSettings.from(Map.of("group.id", "g1")), RebalanceProtocol.COOPERATIVE);
        final ConsumerSubscription m1 = request.getMembers(0).getSubscription();
        equal(List.of("t0", "tö", "t0"), m1.getOwnedByTopicList().stream().map(TopicPartitions::getTopic).toList(),
                "one entry per run of a topic, in the member's order");
        equal(List.of(List.of(1, 2), List.of(0), List.of(3)),
                m1.getOwnedByTopicList().stream().map(TopicPartitions::getPartitionsList).toList(), "the numbers");
        equal(TopicPartitions.newBuilder().setTopic("tö").addPartitions(0).build().toByteString(),
                m1.getOwnedByTopic(1).toByteString(), "the same bytes as the name set as a String");
        equal(TopicPartitions.newBuilder().setTopic("tö").addPartitions(1).build().toByteString(),
                request.getMembers(1).getSubscription().getOwnedByTopic(0).toByteString(), "the second member's too");
    }

    @Test
    @DisplayName("kassign.balance=load reaches the request's options.balance")
    void balanceLoad() {
        final GroupSubscription group = group("m", member(List.of("t0"), "a", List.of(), 1));
        final ConsumerAssignRequest request = GroupToRequest.convert(cluster(Map.of("t0", 2)), group,
                ConsumerSettings.from(Map.of("kassign.balance", "load", "kassign.consumer.assignor", "sticky")),
                RebalanceProtocol.EAGER);
        equal(Balance.BALANCE_LOAD, request.getOptions().getBalance(), "LOAD sent");
        equal(0, request.getTopics(0).getPartitionLoadsCount(), "no loads: the service's --load-source has them");
        equal(Balance.BALANCE_UNSPECIFIED, GroupToRequest.convert(cluster(Map.of("t0", 2)), group,
                ConsumerSettings.from(Map.of("kassign.balance", "count")), RebalanceProtocol.EAGER).getOptions()
                .getBalance(), "count set explicitly: still unset on the wire, the bytes of before");
    }

    @Test
    @DisplayName("request: subscribed topics sorted, replica racks leader first, '' for no rack, unknown topics left out")
    void requestTopics() {
        final Node noRack = Groups.node(7);
        final List<PartitionInfo> partitions = new ArrayList<>();
        // partition 0: leader broker 2 (b), replicas listed [1, 2, 7]; partition 2 absent from the metadata
        partitions.add(new PartitionInfo("t", 0, Groups.node(2), new Node[] {Groups.node(1), Groups.node(2), noRack},
                new Node[0]));
        partitions.add(new PartitionInfo("t", 1, null, new Node[] {Groups.node(3)}, new Node[0]));
        final Cluster base = cluster(Map.of("u", 1));
        final List<PartitionInfo> all = new ArrayList<>(base.partitionsForTopic("u"));
        all.addAll(partitions);
        all.add(new PartitionInfo("t", 2, Groups.node(1), new Node[] {Groups.node(1)}, new Node[0]));
        final Cluster metadata = new Cluster("c", Groups.NODES, all, Set.of(), Set.of());
        final GroupSubscription group = group("m", member(List.of("u", "missing", "t"), "a", List.of(), 1));
        final ConsumerAssignRequest request = GroupToRequest.convert(metadata, group, ConsumerSettings.defaults(),
                RebalanceProtocol.EAGER);
        equal(List.of("t", "u"), request.getTopicsList().stream().map(ConsumerTopic::getName).toList(),
                "sorted; a topic missing from the metadata is not sent");
        final ConsumerTopic t = request.getTopics(0);
        equal(3, t.getPartitionCount(), "replica_rack_list[i] is partition i's");
        equal(List.of("b", "a", ""), request.getReplicaRackLists(t.getReplicaRackList(0)).getRackIdsList(),
                "leader first, then the others in order");
        equal(List.of("c"), request.getReplicaRackLists(t.getReplicaRackList(1)).getRackIdsList(),
                "no leader: the replicas");
        equal(io.kassign.v1.RebalanceProtocol.REBALANCE_PROTOCOL_EAGER, request.getOptions().getProtocol(), "eager");
    }

    @Test
    @DisplayName("request: replica rack indexes only for a topic with a rack somewhere, a follower's counting; "
            + "none for one whose brokers have no rack or an empty one")
    void requestRackIndexes() {
        final Node bare = new Node(8, "h8", 9092);
        final Node empty = new Node(9, "h9", 9092, "");
        final Cluster metadata = new Cluster("c", List.of(bare, empty, Groups.node(1)), List.of(
                new PartitionInfo("n", 0, bare, new Node[] {bare, empty}, new Node[0]),
                new PartitionInfo("n", 1, empty, new Node[] {empty}, new Node[0]),
                new PartitionInfo("r", 0, bare, new Node[] {bare}, new Node[0]),
                new PartitionInfo("r", 1, bare, new Node[] {bare, Groups.node(1)}, new Node[0])), Set.of(), Set.of());
        final ConsumerAssignRequest request = GroupToRequest.convert(metadata,
                group("m", member(List.of("n", "r"), "a", List.of(), 1)), ConsumerSettings.defaults(),
                RebalanceProtocol.EAGER);
        equal(List.of(), request.getTopics(0).getReplicaRackListList(), "n: no rack on any replica, no indexes");
        final ConsumerTopic r = request.getTopics(1);
        equal(List.of(""), request.getReplicaRackLists(r.getReplicaRackList(0)).getRackIdsList(), "r0: no rack");
        equal(List.of("", "a"), request.getReplicaRackLists(r.getReplicaRackList(1)).getRackIdsList(),
                "r1: the follower's rack");
    }

    @Test
    @DisplayName("eager sticky: the member's last assignment travels in its userData, as Kafka's StickyAssignor sends it")
    void stickyUserData() {
        final KassignConsumerAssignor sticky = assignor(Map.of("kassign.consumer.assignor", "sticky"));
        final StickyAssignor kafka = new StickyAssignor();
        final Assignment last = new Assignment(List.of(tp("t", 0), tp("t", 3)));
        final ConsumerGroupMetadata metadata = new ConsumerGroupMetadata("g", 7, "m", Optional.empty());
        sticky.onAssignment(last, metadata);
        kafka.onAssignment(last, metadata);
        final ByteBuffer ours = sticky.subscriptionUserData(Set.of("t"));
        isTrue(ours != null, "userData sent with the service's sticky");
        equal(kafka.subscriptionUserData(Set.of("t")), ours, "Kafka's bytes: partitions and generation");
        final KassignConsumerAssignor other = assignor(Map.of("kassign.consumer.assignor", "cooperative-sticky"));
        other.onAssignment(last, metadata);
        isTrue(other.subscriptionUserData(Set.of("t")) == null, "none with the other assignors");
    }

    @Test
    @DisplayName("settings: assignor, protocol, co-partitioned topics, budget; malformed values name the key")
    void settings() {
        final ConsumerSettings s = ConsumerSettings.from(Map.of("kassign.consumer.assignor", "range",
                "kassign.consumer.rebalance.protocol", "EAGER", "kassign.consumer.co.partitioned", "a, b;c,d,e",
                "kassign.deadline.ms", 3000, "kassign.group.id", "override", "group.id", "g"));
        equal("range", s.assignor(), "assignor");
        equal(Optional.of(RebalanceProtocol.EAGER), s.onlyProtocol(), "protocol");
        equal(List.of(List.of("a", "b"), List.of("c", "d", "e")), s.coPartitioned(), "co-partitioned sets");
        equal(1500L, s.timeBudgetMs(), "budget: half the deadline");
        equal("override", s.groupId(), "kassign.group.id wins over group.id");
        final String message = raises(ConfigException.class, () -> ConsumerSettings.from(
                Map.of("kassign.consumer.rebalance.protocol", "fast"))).getMessage();
        isTrue(message.contains("kassign.consumer.rebalance.protocol"), "names the key: " + message);
        raises(ConfigException.class, () -> ConsumerSettings.from(Map.of("kassign.consumer.co.partitioned", "a")));
        raises(ConfigException.class, () -> ConsumerSettings.from(Map.of("kassign.deadline.ms", "100",
                "kassign.assignment.time.budget.ms", "100")));
        raises(ConfigException.class, () -> ConsumerSettings.from(Map.of("kassign.tls.client.cert", "c.pem")));
    }

    @Test
    @DisplayName("protocol: the highest one every configured assignor supports, as the coordinator picks it")
    void protocol() {
        equal(RebalanceProtocol.COOPERATIVE, assignor(Map.of("partition.assignment.strategy", SELF)).protocol(),
                "kassign alone: cooperative");
        equal(RebalanceProtocol.EAGER, assignor(Map.of("partition.assignment.strategy",
                SELF + ", " + RangeAssignor.class.getName())).protocol(), "with range: eager");
        equal(RebalanceProtocol.COOPERATIVE, assignor(Map.of("partition.assignment.strategy",
                List.of(KassignConsumerAssignor.class, CooperativeStickyAssignor.class))).protocol(),
                "with cooperative-sticky, as classes: cooperative");
        final KassignConsumerAssignor eager = assignor(Map.of("partition.assignment.strategy", List.of(SELF),
                "kassign.consumer.rebalance.protocol", "eager"));
        equal(RebalanceProtocol.EAGER, eager.protocol(), "restricted to eager");
        equal(List.of(RebalanceProtocol.EAGER), eager.supportedProtocols(), "offers eager only");
        equal(RebalanceProtocol.COOPERATIVE, assignor(Map.of("partition.assignment.strategy",
                List.of(SELF, "com.example.Missing"))).protocol(), "an unloadable class does not decide");
        equal(RebalanceProtocol.EAGER, assignor(Map.of("partition.assignment.strategy", SELF,
                "kassign.consumer.assignor", "range")).protocol(), "Kafka's range on the server: eager");
        raises(ConfigException.class, () -> assignor(Map.of("kassign.consumer.assignor", "sticky",
                "kassign.consumer.rebalance.protocol", "cooperative")));
        equal("kassign", new KassignConsumerAssignor().name(), "protocol name");
    }

    /** The answer's topic table in these tests: runs name a topic by its index here. */
    static final List<String> TOPICS = List.of("t", "u");

    /** The member's partitions as the service answers this plug-in: runs by index into {@code topics}. */
    static ConsumerMemberAssignment runsOf(final String member, final List<TopicPartition> partitions,
                                           final List<String> topics) {
        final PartitionRuns.Builder runs = PartitionRuns.newBuilder();
        String last = null;
        for (final TopicPartition p : partitions) {
            if (!p.topic().equals(last)) {
                last = p.topic();
                runs.addTopics(topics.indexOf(last)).addCounts(0);
            }
            final int run = runs.getCountsCount() - 1;
            runs.setCounts(run, runs.getCounts(run) + 1).addPartitions(p.partition());
        }
        return ConsumerMemberAssignment.newBuilder().setMemberId(member).setAssigned(runs).build();
    }

    /** {@link #runsOf} over {@link #TOPICS}, with Kafka's assignment bytes (user data 9) when asked. */
    static ConsumerMemberAssignment answer(final String member, final List<TopicPartition> partitions,
                                           final boolean withBytes) {
        final ConsumerMemberAssignment runs = runsOf(member, partitions, TOPICS);
        if (!withBytes) {
            return runs;
        }
        final ByteBuffer encoded = ConsumerProtocol.serializeAssignment(new Assignment(partitions, bytes(9)));
        return runs.toBuilder().setAssignment(ByteString.copyFrom(encoded)).build();
    }

    static ConsumerAssignResponse response(final ConsumerMemberAssignment... members) {
        return ConsumerAssignResponse.newBuilder().addAllTopics(TOPICS).addAllMembers(List.of(members)).build();
    }

    private static final Cluster TWO = cluster(Map.of("t", 2));

    @Test
    @DisplayName("answer: the assignment bytes decoded as the member will, user data included")
    void answerApplied() {
        final GroupSubscription group = group("m1", member(List.of("t"), "a", List.of(), 1),
                "m2", member(List.of("t"), "b", List.of(), 1));
        final GroupAssignment result = ResponseToGroup.convert(response(answer("m1", List.of(tp("t", 0)), true),
                answer("m2", List.of(tp("t", 1)), false)), group, TWO, RebalanceProtocol.EAGER);
        final Map<String, Assignment> byMember = new HashMap<>(result.groupAssignment());
        equal(List.of(tp("t", 0)), byMember.get("m1").partitions(), "m1");
        equal(bytes(9), byMember.get("m1").userData(), "user data from the bytes");
        equal(List.of(tp("t", 1)), byMember.get("m2").partitions(), "m2, from its list (no bytes)");
    }

    static ConsumerMemberAssignment runs(final String member, final List<Integer> topics, final List<Integer> counts,
                                         final List<Integer> partitions) {
        return ConsumerMemberAssignment.newBuilder().setMemberId(member).setAssigned(PartitionRuns.newBuilder()
                .addAllTopics(topics).addAllCounts(counts).addAllPartitions(partitions)).build();
    }

    @Test
    @DisplayName("compact answer: runs by topic read into Kafka's Assignment; runs that do not add up refused")
    void compactAnswer() {
        final Cluster metadata = cluster(Map.of("t", 2, "u", 3));
        final GroupSubscription group = group("m1", member(List.of("t", "u"), "a", List.of(), 1),
                "m2", member(List.of("u"), "b", List.of(), 1));
        final ConsumerAssignResponse answer = response(runs("m1", List.of(0, 1), List.of(2, 1), List.of(0, 1, 2)),
                runs("m2", List.of(1), List.of(2), List.of(0, 1)));
        final Map<String, Assignment> byMember = new HashMap<>(
                ResponseToGroup.convert(answer, group, metadata, RebalanceProtocol.EAGER).groupAssignment());
        equal(List.of(tp("t", 0), tp("t", 1), tp("u", 2)), byMember.get("m1").partitions(), "m1's runs");
        equal(List.of(tp("u", 0), tp("u", 1)), byMember.get("m2").partitions(), "m2's run");
        isTrue(byMember.get("m1").userData() == null, "no user data");
        final List<ConsumerMemberAssignment> bad = List.of(
                runs("m2", List.of(2), List.of(2), List.of(0, 1)),        // topic index past the table
                runs("m2", List.of(1), List.of(3), List.of(0, 1)),        // counts past the numbers
                runs("m2", List.of(1), List.of(1), List.of(0, 1)),        // numbers left over
                runs("m2", List.of(1, 1), List.of(2), List.of(0, 1)),     // a topic without a count
                runs("m2", List.of(0), List.of(2), List.of(0, 1)));       // a topic m2 does not read
        for (final ConsumerMemberAssignment m2 : bad) {
            final ConsumerAssignResponse refused = response(answer.getMembers(0), m2);
            raises(InvalidAnswer.class, () -> ResponseToGroup.convert(refused, group, metadata, RebalanceProtocol.EAGER));
        }
    }

    @Test
    @DisplayName("answer refused: unknown, missing or repeated member, double owner, foreign topic, bytes disagreeing"
            + " with the runs")
    void answerRefused() {
        final GroupSubscription group = group("m1", member(List.of("t"), "a", List.of(), 1),
                "m2", member(List.of("t"), "b", List.of(), 1));
        final List<ConsumerAssignResponse> bad = List.of(
                response(answer("m1", List.of(tp("t", 0)), true), answer("x", List.of(tp("t", 1)), true)),
                response(answer("m1", List.of(tp("t", 0), tp("t", 1)), true)),
                response(answer("m1", List.of(tp("t", 0)), true), answer("m1", List.of(), true)),
                response(answer("m1", List.of(tp("t", 0)), true), answer("m2", List.of(tp("t", 0)), true)),
                response(answer("m1", List.of(tp("t", 0)), true), answer("m2", List.of(tp("t", 2)), true)),
                response(answer("m1", List.of(tp("u", 0)), true), answer("m2", List.of(), true)),
                response(mixed(List.of(tp("t", 0)), List.of(tp("t", 0), tp("t", 1))), answer("m2", List.of(), true)));
        for (final ConsumerAssignResponse response : bad) {
            raises(InvalidAnswer.class, () -> ResponseToGroup.convert(response, group, TWO, RebalanceProtocol.EAGER));
        }
    }

    @Test
    @DisplayName("answer refused: members without runs, as a service older than the compact wire answers the"
            + " compact request (its members read as subscribed to nothing)")
    void olderServiceRefused() {
        final GroupSubscription group = group("m1", member(List.of("t"), "a", List.of(), 1),
                "m2", member(List.of("t"), "b", List.of(), 1));
        final ConsumerMemberAssignment listedOnly = ConsumerMemberAssignment.newBuilder().setMemberId("m1")
                .addPartitions(io.kassign.v1.TopicPartition.newBuilder().setTopic("t").setPartition(0)).build();
        for (final ConsumerAssignResponse v1 : List.of(
                response(listedOnly, answer("m2", List.of(tp("t", 1)), false)),
                response(ConsumerMemberAssignment.newBuilder().setMemberId("m1").build(),
                        ConsumerMemberAssignment.newBuilder().setMemberId("m2").build()))) {
            final InvalidAnswer refused = raises(InvalidAnswer.class,
                    () -> ResponseToGroup.convert(v1, group, TWO, RebalanceProtocol.EAGER));
            isTrue(refused.getMessage().contains("predates the compact wire"), refused.getMessage());
        }
    }

    @Test
    @DisplayName("answer refused under COOPERATIVE only: a partition handed over while its owner still claims it")
    void cooperativeHandOver() {
        final GroupSubscription group = group("m1", member(List.of("t"), "a", List.of(tp("t", 0), tp("t", 1)), 3),
                "m2", member(List.of("t"), "b", List.of(), -1));
        final ConsumerAssignResponse direct = response(answer("m1", List.of(tp("t", 0)), true),
                answer("m2", List.of(tp("t", 1)), true));
        raises(InvalidAnswer.class, () -> ResponseToGroup.convert(direct, group, TWO, RebalanceProtocol.COOPERATIVE));
        ResponseToGroup.convert(direct, group, TWO, RebalanceProtocol.EAGER);
        final ConsumerAssignResponse withheld = response(answer("m1", List.of(tp("t", 0)), true),
                answer("m2", List.of(), true));
        equal(2, ResponseToGroup.convert(withheld, group, TWO, RebalanceProtocol.COOPERATIVE).groupAssignment().size(),
                "revoked first, handed over next round: accepted");
    }

    /** m1's answer listing {@code listed} with the bytes of {@code inBytes}. */
    private static ConsumerMemberAssignment mixed(final List<TopicPartition> listed, final List<TopicPartition> inBytes) {
        return answer("m1", listed, false).toBuilder().setAssignment(ByteString.copyFrom(
                ConsumerProtocol.serializeAssignment(new Assignment(inBytes)))).build();
    }

    @Test
    @DisplayName("answer: bytes holding the listed partitions in another order are used as the member reads them; "
            + "bytes or lists repeating a partition are refused")
    void answerBytesOrder() {
        final GroupSubscription group = group("m1", member(List.of("t"), "a", List.of(), 1),
                "m2", member(List.of("t"), "b", List.of(), 1));
        final ConsumerMemberAssignment m2 = answer("m2", List.of(), true);
        final GroupAssignment result = ResponseToGroup.convert(response(mixed(List.of(tp("t", 0), tp("t", 1)),
                List.of(tp("t", 1), tp("t", 0))), m2), group, TWO, RebalanceProtocol.EAGER);
        equal(List.of(tp("t", 1), tp("t", 0)), result.groupAssignment().get("m1").partitions(), "the bytes' order");
        for (final ConsumerMemberAssignment bad : List.of(
                mixed(List.of(tp("t", 0), tp("t", 1)), List.of(tp("t", 0), tp("t", 0))),
                mixed(List.of(tp("t", 0), tp("t", 0)), List.of(tp("t", 0), tp("t", 1))),
                mixed(List.of(tp("t", 0), tp("t", 0)), List.of(tp("t", 0), tp("t", 0))),
                mixed(List.of(tp("t", 0)), List.of(tp("t", 0), tp("t", 1))))) {
            raises(InvalidAnswer.class, () -> ResponseToGroup.convert(response(bad, m2), group, TWO,
                    RebalanceProtocol.EAGER));
        }
    }

    @Test
    @DisplayName("answer under COOPERATIVE: a partition two members claim (a stale generation) may go to either")
    void cooperativeSharedClaim() {
        final GroupSubscription group = group("m1", member(List.of("t"), "a", List.of(tp("t", 0)), 3),
                "m2", member(List.of("t"), "b", List.of(tp("t", 0), tp("t", 1)), 2));
        ResponseToGroup.convert(response(answer("m1", List.of(tp("t", 0)), true), answer("m2", List.of(tp("t", 1)),
                true)), group, TWO, RebalanceProtocol.COOPERATIVE);
        ResponseToGroup.convert(response(answer("m1", List.of(), true), answer("m2", List.of(tp("t", 0), tp("t", 1)),
                true)), group, TWO, RebalanceProtocol.COOPERATIVE);
        raises(InvalidAnswer.class, () -> ResponseToGroup.convert(response(answer("m1", List.of(tp("t", 1)), true),
                answer("m2", List.of(tp("t", 0)), true)), group, TWO, RebalanceProtocol.COOPERATIVE));
    }

    @Test
    @DisplayName("answer: the bytes of every ConsumerProtocolAssignment version read as Kafka reads them, user data "
            + "included; bytes cut short are refused")
    void answerBytesVersions() {
        final GroupSubscription group = group("m1", member(List.of("t"), "a", List.of(), 1),
                "m2", member(List.of("t"), "b", List.of(), 1));
        final ConsumerMemberAssignment m2 = answer("m2", List.of(), true);
        final List<TopicPartition> both = List.of(tp("t", 0), tp("t", 1));
        for (short version = 0; version <= 3; version++) {
            final ByteBuffer encoded = ConsumerProtocol.serializeAssignment(new Assignment(both, bytes(9, 8)), version);
            final ConsumerMemberAssignment m1 = answer("m1", both, false).toBuilder()
                    .setAssignment(ByteString.copyFrom(encoded)).build();
            final Assignment read = ResponseToGroup.convert(response(m1, m2), group, TWO, RebalanceProtocol.EAGER)
                    .groupAssignment().get("m1");
            final Assignment kafka = ConsumerProtocol.deserializeAssignment(m1.getAssignment().asReadOnlyByteBuffer());
            equal(kafka.partitions(), read.partitions(), "partitions, version " + version);
            equal(kafka.userData(), read.userData(), "user data, version " + version);
            final ConsumerMemberAssignment cut = m1.toBuilder()
                    .setAssignment(m1.getAssignment().substring(0, m1.getAssignment().size() - 3)).build();
            raises(RuntimeException.class, () -> ResponseToGroup.convert(response(cut, m2), group, TWO,
                    RebalanceProtocol.EAGER));
        }
    }
}
