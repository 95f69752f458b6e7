"""Invariants of the four consumer assignors on small random groups (hypothesis).

Kafka guarantees these by construction; the differential suite shows kassign equals Kafka on
seeded groups, these show the invariants hold on groups nobody picked:

- every partition of a subscribed topic goes to exactly one member (cooperative-sticky: or is
  withheld, exactly the partitions changing owner), one that subscribes to it, with two
  exceptions that are Kafka's own, kept on purpose (``test_consumer_vs_kafka`` shows Kafka doing
  both): the sticky assignors' balancing may send a partition back to a previous owner that no
  longer subscribes to its topic (``UNSUBSCRIBED_HOME_GROUP``), and a member subscribed to
  nothing that comes first in hash order can be dealt partitions by the constrained builder
  (``EMPTY_FIRST_GROUP``; such groups are left out here);
- range: per topic, each subscriber gets the floor or the ceiling of partitions/subscribers;
- with equal subscriptions, roundrobin and the sticky assignors' loads differ by at most one;
- same input, same output; topic order never matters, member order not for range/roundrobin;
- cooperative-sticky withholds only partitions another member owned, and each member's revoked
  partitions are ones it owned that go to someone else;
- without racks, feeding the sticky assignors' answer back as the next generation's ownership
  changes nothing (unless it sent a partition to a member that does not read its topic: that
  member must give it up next time).
"""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from kassign.assignor.consumer import (
    ConsumerGroup,
    GroupAssignment,
    Member,
    Topic,
    TopicPartition,
    assign,
    consumer_group,
)
from kassign.assignor.consumer.common import partitions_per_topic
from kassign.assignor.consumer.cooperative_sticky import cooperative_members_data
from kassign.assignor.consumer.sticky import assign_sticky_partitions, sticky_member_data
from kassign.assignor.errors import InvalidAssignment
from kassign.kafka.consumer_user_data import encode_sticky_user_data

RACKS = ("rack-a", "rack-b", "rack-c")
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def groups(draw: st.DrawFn, *, equal: bool = False, racks: bool = True) -> ConsumerGroup:
    """2-10 members over 1-4 topics of 0-9 partitions; claims, generations, userData at random."""
    rack_sets = st.frozensets(st.sampled_from(RACKS), max_size=3) if racks else st.just(frozenset())
    topics = [
        Topic(f"t{i}", tuple(draw(st.lists(rack_sets, max_size=9))))
        for i in range(draw(st.integers(1, 4)))
    ]
    names = [t.name for t in topics] + ["ghost"]
    every = [TopicPartition(t.name, p) for t in topics for p in range(t.partitions)]
    subscription = st.lists(st.sampled_from(names), min_size=1, max_size=5, unique=True)
    shared = draw(subscription)
    members = []
    for i in range(draw(st.integers(2, 10))):
        owned = draw(st.lists(st.sampled_from(every), unique=True, max_size=6)) if every else []
        generation = draw(st.integers(-1, 4))
        members.append(
            Member(
                member_id=f"m{draw(st.integers(0, 99))}-{i}",
                topics=tuple(shared) if equal else tuple(draw(subscription)),
                group_instance_id=draw(st.none() | st.just(f"static-{i}")),
                rack_id=draw(st.none() | st.sampled_from((*RACKS, "rack-z"))) if racks else None,
                owned_partitions=tuple(owned),
                generation=generation,
                user_data=draw(
                    st.none()
                    | st.just(_sticky_user_data(owned, generation))
                    | st.binary(max_size=12)
                ),
            )
        )
    return consumer_group(members, topics)


def _sticky_user_data(owned: list[TopicPartition], generation: int) -> bytes:
    by_topic: dict[str, list[int]] = {}
    for tp in owned:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return encode_sticky_user_data(list(by_topic.items()), generation)


def _assign(name: str, group: ConsumerGroup) -> GroupAssignment:
    """The assignment; groups where Kafka itself throws (``KAFKA_NULL_POINTER``) are skipped."""
    try:
        return assign(name, group)
    except InvalidAssignment:
        assume(False)
        raise


def _claims(name: str, group: ConsumerGroup, member: Member) -> tuple[TopicPartition, ...]:
    """What the member claimed as the assignor reads it (nothing for range and roundrobin)."""
    if name == "sticky":
        return sticky_member_data(group, member).partitions
    if name == "cooperative-sticky":
        return member.owned_partitions
    return ()


def _subscribed_partitions(group: ConsumerGroup) -> set[TopicPartition]:
    return {TopicPartition(t, p) for t, n in partitions_per_topic(group).items() for p in range(n)}


def _target(group: ConsumerGroup) -> dict[str, list[TopicPartition]]:
    """cooperative-sticky's assignment before withholding (the sticky assignment it adjusts)."""
    try:
        return assign_sticky_partitions(group, cooperative_members_data(group.members)).assignment
    except InvalidAssignment:
        assume(False)
        raise


@SETTINGS
@given(groups(), st.sampled_from(("range", "roundrobin", "sticky", "cooperative-sticky")))
def test_every_partition_goes_to_one_subscriber(group: ConsumerGroup, name: str) -> None:
    assume(all(m.topics for m in group.members))  # Kafka's empty-first quirk (module docstring)
    result = _assign(name, group)
    topics = {m.member_id: set(m.topics) for m in group.members}
    claimed = {m.member_id: set(_claims(name, group, m)) for m in group.members}
    given_out = Counter(tp for m in result.members for tp in m.partitions)
    assert all(n == 1 for n in given_out.values())
    for m in result.members:
        strays = [tp for tp in m.partitions if tp.topic not in topics[m.member_id]]
        assert set(strays) <= claimed[m.member_id]  # sent back to a previous owner
    pending = _subscribed_partitions(group) - set(given_out)
    assert len(pending) == result.report.withheld_partitions
    if name != "cooperative-sticky":
        assert not pending


@SETTINGS
@given(groups())
def test_range_gives_each_subscriber_its_share_of_each_topic(group: ConsumerGroup) -> None:
    result = _assign("range", group)
    for topic, count in partitions_per_topic(group).items():
        subscribers = [m.member_id for m in group.members if topic in m.topics]
        shares = {
            m.member_id: sum(1 for tp in m.partitions if tp.topic == topic) for m in result.members
        }
        allowed = {count // len(subscribers), -(-count // len(subscribers))}
        assert all(shares[s] in allowed for s in subscribers)


@SETTINGS
@given(groups(equal=True))
def test_equal_subscriptions_balance_within_one(group: ConsumerGroup) -> None:
    loads = {
        "roundrobin": [len(m.partitions) for m in _assign("roundrobin", group).members],
        "sticky": [len(m.partitions) for m in _assign("sticky", group).members],
        "cooperative-sticky": [len(tps) for tps in _target(group).values()],
    }
    for name, counts in loads.items():
        assert max(counts) - min(counts) <= 1, name


@SETTINGS
@given(
    groups(), st.sampled_from(("range", "roundrobin", "sticky", "cooperative-sticky")), st.randoms()
)
def test_same_input_same_output(group: ConsumerGroup, name: str, rnd: object) -> None:
    result = _assign(name, group)
    assert _assign(name, group) == result
    reordered_topics = consumer_group(group.members, reversed(list(group.topics.values())))
    assert _assign(name, reordered_topics) == result
    if name in ("range", "roundrobin"):
        members = list(group.members)
        rnd.shuffle(members)  # type: ignore[attr-defined]
        assert _assign(name, consumer_group(members, group.topics.values())) == result


@SETTINGS
@given(groups())
def test_cooperative_withholds_and_revokes_only_what_moves(group: ConsumerGroup) -> None:
    result = _assign("cooperative-sticky", group)
    target = _target(group)
    new_owner = {tp: m for m, tps in target.items() for tp in tps}
    owned = {m.member_id: set(m.owned_partitions) for m in group.members}
    withheld = {tp for tps in target.values() for tp in tps} - {
        tp for m in result.members for tp in m.partitions
    }
    for tp in withheld:
        assert any(tp in owned[m] for m in owned if m != new_owner[tp])
    for m in result.members:
        assert set(m.revoked) <= owned[m.member_id]
        assert all(new_owner[tp] != m.member_id for tp in m.revoked)


@SETTINGS
@given(groups(racks=False))
def test_sticky_assignors_keep_their_own_answer(group: ConsumerGroup) -> None:
    assume(all(m.topics for m in group.members))
    topics = {m.member_id: set(m.topics) for m in group.members}
    sticky = _assign("sticky", group)
    target = _target(group)
    answers = [*((m.member_id, m.partitions) for m in sticky.members), *target.items()]
    assume(all(tp.topic in topics[m] for m, tps in answers for tp in tps))  # no stray (above)
    again = [
        Member(
            member_id=m.member_id,
            topics=m.topics,
            group_instance_id=m.group_instance_id,
            user_data=_sticky_user_data(list(mine.partitions), 7),
        )
        for m, mine in zip(group.members, _in_group_order(group, sticky), strict=True)
    ]
    assert _assign("sticky", consumer_group(again, group.topics.values())).partitions() == (
        sticky.partitions()
    )
    owning = [
        Member(
            member_id=m.member_id,
            topics=m.topics,
            owned_partitions=tuple(sorted(target[m.member_id])),
            generation=7,
        )
        for m in group.members
    ]
    cooperative = _assign("cooperative-sticky", consumer_group(owning, group.topics.values()))
    assert cooperative.report.withheld_partitions == 0
    assert {m: list(tps) for m, tps in cooperative.partitions().items()} == {
        m: sorted(tps) for m, tps in target.items()
    }


def _in_group_order(group: ConsumerGroup, result: GroupAssignment) -> list[object]:
    by_id = {m.member_id: m for m in result.members}
    return [by_id[m.member_id] for m in group.members]
