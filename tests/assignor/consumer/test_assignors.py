"""Kafka's own worked examples (the assignors' javadoc) and the report, assignor by assignor."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.consumer import (
    ASSIGNORS,
    KAFKA_ASSIGNORS,
    ConsumerGroup,
    Member,
    RackReason,
    Topic,
    TopicPartition,
    assign,
    consumer_group,
    roundrobin,
)
from kassign.assignor.consumer.common import member_order, partitions_per_topic
from kassign.assignor.consumer.result import group_assignment
from kassign.assignor.consumer.roundrobin import _dealt_to_all, _dealt_to_subscribers
from kassign.assignor.errors import InvalidRequest
from kassign.kafka.consumer_user_data import encode_sticky_user_data


def _tps(*names: str) -> tuple[TopicPartition, ...]:
    """``"t0p1"`` -> TopicPartition("t0", 1), sorted."""
    return tuple(sorted(TopicPartition(n.split("p")[0], int(n.split("p")[1])) for n in names))


def _group(
    subscriptions: dict[str, tuple[str, ...]], partitions: dict[str, int], **claims: bytes
) -> ConsumerGroup:
    return consumer_group(
        [Member(member_id=m, topics=t, user_data=claims.get(m)) for m, t in subscriptions.items()],
        [Topic.without_racks(t, n) for t, n in partitions.items()],
    )


def test_registry_uses_kafkas_names() -> None:
    assert sorted(ASSIGNORS) == [
        "cooperative-sticky",
        "rack-optimal",
        "range",
        "roundrobin",
        "sticky",
    ]
    assert sorted(KAFKA_ASSIGNORS) == ["cooperative-sticky", "range", "roundrobin", "sticky"]
    with pytest.raises(InvalidRequest, match="unknown assignor"):
        assign("uniform", _group({"c": ("t",)}, {"t": 1}))


def test_range_javadoc_example() -> None:
    group = _group({"C0": ("t0", "t1"), "C1": ("t0", "t1")}, {"t0": 3, "t1": 3})
    assert assign("range", group).partitions() == {
        "C0": _tps("t0p0", "t0p1", "t1p0", "t1p1"),
        "C1": _tps("t0p2", "t1p2"),
    }


def test_range_puts_static_members_first() -> None:
    group = consumer_group(
        [
            Member(member_id="a", topics=("t",)),
            Member(member_id="z", topics=("t",), group_instance_id="i"),
        ],
        [Topic.without_racks("t", 3)],
    )
    assert assign("range", group).partitions() == {"a": _tps("tp2"), "z": _tps("tp0", "tp1")}


def test_sticky_javadoc_example_1() -> None:
    every = ("t0", "t1", "t2", "t3")
    group = _group({"C0": every, "C1": every, "C2": every}, dict.fromkeys(every, 2))
    first = {
        "C0": _tps("t0p0", "t1p1", "t3p0"),
        "C1": _tps("t0p1", "t2p0", "t3p1"),
        "C2": _tps("t1p0", "t2p1"),
    }
    for name in ("roundrobin", "sticky"):
        assert assign(name, group).partitions() == first
    # C1 leaves: sticky keeps every surviving partition where it was
    user_data = {
        m: encode_sticky_user_data([(tp.topic, [tp.partition]) for tp in first[m]], 1)
        for m in ("C0", "C2")
    }
    after = _group({"C0": every, "C2": every}, dict.fromkeys(every, 2), **user_data)
    result = assign("sticky", after).partitions()
    assert set(first["C0"]) <= set(result["C0"]) and set(first["C2"]) <= set(result["C2"])
    assert len(result["C0"]) == len(result["C2"]) == 4


def test_sticky_javadoc_example_2() -> None:
    subscriptions = {"C0": ("t0",), "C1": ("t0", "t1"), "C2": ("t0", "t1", "t2")}
    group = _group(subscriptions, {"t0": 1, "t1": 2, "t2": 3})
    assert assign("roundrobin", group).partitions() == {
        "C0": _tps("t0p0"),
        "C1": _tps("t1p0"),
        "C2": _tps("t1p1", "t2p0", "t2p1", "t2p2"),
    }
    assert assign("sticky", group).partitions() == {
        "C0": _tps("t0p0"),
        "C1": _tps("t1p0", "t1p1"),
        "C2": _tps("t2p0", "t2p1", "t2p2"),
    }


def test_cooperative_withholds_a_moving_partition_and_names_its_revoker() -> None:
    topics = [Topic.without_racks("t", 2)]
    owned = TopicPartition("t", 0), TopicPartition("t", 1)
    group = consumer_group(
        [
            Member(member_id="a", topics=("t",), owned_partitions=owned, generation=3),
            Member(member_id="b", topics=("t",), generation=3),
        ],
        topics,
    )
    result = assign("cooperative-sticky", group)
    assert result.partitions() == {"a": _tps("tp0"), "b": ()}
    assert [m.revoked for m in result.members] == [_tps("tp1"), ()]
    assert (result.report.withheld_partitions, result.report.moved_partitions) == (1, 1)


def test_cooperative_general_builder_withholds_what_an_owner_loses() -> None:
    """Unequal subscriptions (the general builder): the partition ``a`` loses to ``b`` is
    withheld this round; a group that owned nothing withholds nothing (found before any
    member's answer is read)."""
    topics = [Topic.without_racks("t", 2), Topic.without_racks("u", 1)]
    owned = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)
    members = [
        Member(member_id="a", topics=("t", "u"), owned_partitions=owned, generation=3),
        Member(member_id="b", topics=("t",), generation=3),
    ]
    result = assign("cooperative-sticky", consumer_group(members, topics))
    assert result.partitions() == {"a": _tps("tp1", "up0"), "b": ()}
    assert [m.revoked for m in result.members] == [_tps("tp0"), ()]
    assert (result.report.withheld_partitions, result.report.moved_partitions) == (1, 1)
    fresh = [Member(member_id="a", topics=("t", "u")), Member(member_id="b", topics=("t",))]
    result = assign("cooperative-sticky", consumer_group(fresh, topics))
    assert result.partitions() == {"a": _tps("tp1", "up0"), "b": _tps("tp0")}
    assert result.report.withheld_partitions == 0


def test_rack_reasons() -> None:
    def reason(member_rack: str | None, partition_racks: tuple[frozenset[str], ...]) -> RackReason:
        group = consumer_group(
            [Member(member_id="m", topics=("t",), rack_id=member_rack)],
            [Topic("t", partition_racks)],
        )
        return assign("sticky", group).report.rack_reason

    a, b, ab = frozenset({"a"}), frozenset({"b"}), frozenset({"a", "b"})
    assert reason(None, (a, b)) is RackReason.NO_MEMBER_RACK
    assert reason("c", (a, b)) is RackReason.NO_SHARED_RACK
    assert reason("a", (ab, ab)) is RackReason.EVERY_RACK_HAS_EVERY_PARTITION
    assert reason("a", (ab, b)) is RackReason.SOME_RACK_LACKS_A_PARTITION
    assert reason("a", (ab, frozenset())) is RackReason.SOME_RACK_LACKS_A_PARTITION


def test_rack_aware_range_keeps_partitions_local_and_counts_the_rest() -> None:
    a, b = frozenset({"a"}), frozenset({"b"})
    group = consumer_group(
        [
            Member(member_id="m1", topics=("t",), rack_id="b"),
            Member(member_id="m2", topics=("t",), rack_id="a"),
        ],
        [Topic("t", (a, b, a, b))],
    )
    result = assign("range", group)
    assert result.partitions() == {"m1": _tps("tp1", "tp3"), "m2": _tps("tp0", "tp2")}
    assert result.report.rack_aware and result.report.cross_rack_partitions == 0
    plain = assign("roundrobin", group)
    assert plain.report.rack_reason is RackReason.NOT_RACK_AWARE
    assert plain.report.cross_rack_partitions == 4


@settings(max_examples=60, deadline=None)
@given(
    counts=st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.integers(0, 9), min_size=1),
    members=st.lists(
        st.tuples(st.booleans(), st.lists(st.sampled_from(["a", "b", "c", "d", "gone"]))),
        min_size=1,
        max_size=7,
    ),
    shuffle=st.randoms(),
)
def test_roundrobin_deals_to_all_as_it_deals_to_subscribers(
    counts: dict[str, int], members: list[tuple[bool, list[str]]], shuffle: random.Random
) -> None:
    """Where every member subscribes to every topic dealt (in any order, with topics beside
    them), dealing ``k mod n`` is the one-at-a-time deal, skipping nobody; where some member
    does not, the deal skips it."""
    group = consumer_group(
        [
            Member(
                member_id=f"m{i}",
                topics=tuple(shuffle.sample(sorted({*counts, *extra}), len({*counts, *extra})))
                if everything
                else tuple(sorted(set(extra))),
                group_instance_id=f"s{i}" if i % 3 == 0 else None,
            )
            for i, (everything, extra) in enumerate(members)
        ],
        [Topic.without_racks(t, n) for t, n in counts.items()],
    )
    circle = member_order(group.members)
    dealt = partitions_per_topic(group)
    expected = _dealt_to_subscribers(circle, dealt)
    assert assign("roundrobin", group).partitions() == {
        m: tuple(tps) for m, tps in expected.items()
    }
    if all(set(dealt) <= set(m.topics) for m in circle):
        assert _dealt_to_all(circle, dealt) == expected


@settings(max_examples=80, deadline=None)
@given(
    racks=st.lists(
        st.lists(st.frozensets(st.sampled_from(["r0", "r1", "r2", "r3"])), max_size=7),
        min_size=1,
        max_size=4,
    ),
    members=st.lists(
        st.tuples(st.sampled_from([None, "r0", "r1", "r5"]), st.lists(st.integers(0, 4))),
        min_size=1,
        max_size=7,
    ),
    table=st.sampled_from([0, 1 << 20]),
)
def test_roundrobins_own_cross_rack_count_is_the_one_per_partition(
    racks: list[list[frozenset[str]]],
    members: list[tuple[str | None, list[int]]],
    table: int,
) -> None:
    """``roundrobin`` counts cross-rack partitions from its takers (or leaves them to
    ``group_assignment`` when its table would be too large: ``table`` 0); either way the
    count is ``group_assignment``'s own, a look-up per assigned partition."""
    group = consumer_group(
        [
            Member(
                member_id=f"m{i}",
                topics=tuple(sorted({f"t{t % len(racks)}" for t in ts})),
                rack_id=rack,
            )
            for i, (rack, ts) in enumerate(members)
        ],
        [Topic(f"t{i}", tuple(sets)) for i, sets in enumerate(racks)],
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(roundrobin, "_TABLE", table)
        got = assign("roundrobin", group)
    counted = group_assignment(
        "roundrobin",
        group,
        {m.member_id: m.partitions for m in got.members},
        claims={},
        rack_reason=RackReason.NOT_RACK_AWARE,
    )
    assert got.report.cross_rack_partitions == counted.report.cross_rack_partitions
