"""``balance=LOAD`` on the consumer assignors (issue 25): valid, balanced by load, sticky,
cooperative, and clear about bad figures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.consumer import Member, Topic, TopicPartition, consumer_group
from kassign.assignor.consumer.api import assign
from kassign.assignor.consumer.model import AssignOptions, ConsumerGroup
from kassign.assignor.errors import InvalidRequest
from kassign.assignor.load import lower_bound
from kassign.assignor.load.figures import Balance
from kassign.kafka.consumer_user_data import encode_sticky_user_data

LOAD = Balance.LOAD


def group(
    subscriptions: Mapping[str, Sequence[str]],
    partitions: Mapping[str, int],
    owned: Mapping[str, Sequence[TopicPartition]] | None = None,
) -> ConsumerGroup:
    owned = owned or {}
    return consumer_group(
        [
            Member(member_id=m, topics=tuple(ts), owned_partitions=tuple(owned.get(m, ())))
            for m, ts in subscriptions.items()
        ],
        [Topic.without_racks(t, n) for t, n in partitions.items()],
    )


def member_loads(result: object, loads: Mapping[str, Sequence[float]]) -> dict[str, float]:
    return {
        m: sum(loads.get(tp.topic, [1.0] * 1000)[tp.partition] for tp in tps)
        for m, tps in result.partitions().items()  # type: ignore[attr-defined]
    }


def test_a_hot_partition_gets_a_member_to_itself() -> None:
    loads = {"a": [30.0, 1, 1, 1, 1, 1, 1, 1, 1, 1]}
    g = group({"m0": ["a"], "m1": ["a"], "m2": ["a"]}, {"a": 10})
    by_load = assign("sticky", g, AssignOptions(balance=LOAD, loads=loads))
    by_count = assign("sticky", g)
    assert max(member_loads(by_load, loads).values()) == 30.0  # the bound: the hot partition
    assert max(member_loads(by_count, loads).values()) > 30.0  # Kafka's: it shares a member
    hot = next(m for m, tps in by_load.partitions().items() if TopicPartition("a", 0) in tps)
    assert len(by_load.partitions()[hot]) == 1
    assert by_load.report.load is not None
    assert by_load.report.load.bound == 30.0 and by_load.report.load.peak == 30.0


def test_capacity_weighs_members() -> None:
    g = group({"big": ["a"], "small": ["a"]}, {"a": 12})
    result = assign("rack-optimal", g, AssignOptions(balance=LOAD, capacities={"big": 3.0}))
    assert {m: len(tps) for m, tps in result.partitions().items()} == {"big": 9, "small": 3}


@st.composite
def groups(draw: st.DrawFn) -> tuple[ConsumerGroup, dict[str, list[float]]]:
    topics = {f"t{i}": draw(st.integers(1, 6)) for i in range(draw(st.integers(1, 3)))}
    names = sorted(topics)
    subs = {
        f"m{i}": draw(
            st.lists(st.sampled_from(names), min_size=1, max_size=len(names), unique=True)
        )
        for i in range(draw(st.integers(1, 4)))
    }
    loads = {
        t: draw(st.lists(st.floats(0, 100), min_size=n, max_size=n)) for t, n in topics.items()
    }
    return group(subs, topics), loads


@settings(max_examples=60, deadline=None)
@given(groups(), st.sampled_from(["sticky", "cooperative-sticky", "rack-optimal"]))
def test_every_partition_once_to_a_subscriber(
    drawn: tuple[ConsumerGroup, dict[str, list[float]]], name: str
) -> None:
    g, loads = drawn
    result = assign(name, g, AssignOptions(balance=LOAD, loads=loads))
    subscribed = {m.member_id: set(m.topics) for m in g.members}
    seen = [tp for tps in result.partitions().values() for tp in tps]
    assert len(seen) == len(set(seen))
    wanted = {
        TopicPartition(t, p)
        for ts in subscribed.values()
        for t in ts
        for p in range(g.partition_count(t))
    }
    assert set(seen) == wanted
    for m, tps in result.partitions().items():
        assert all(tp.topic in subscribed[m] for tp in tps)
    again = assign(name, g, AssignOptions(balance=LOAD, loads=loads))
    assert again == result


def test_a_balanced_group_keeps_its_partitions() -> None:
    rng = np.random.default_rng(3)
    loads = {"a": (1000.0 / (rng.permutation(200) + 1) ** 0.9).tolist()}
    subs = {f"m{i}": ["a"] for i in range(4)}
    first = assign(
        "cooperative-sticky", group(subs, {"a": 200}), AssignOptions(balance=LOAD, loads=loads)
    )
    owned = {m: list(tps) for m, tps in first.partitions().items()}
    drifted = {"a": [w * f for w, f in zip(loads["a"], rng.uniform(0.95, 1.05, 200), strict=True)]}
    again = assign(
        "cooperative-sticky",
        group(subs, {"a": 200}, owned),
        AssignOptions(balance=LOAD, loads=drifted),
    )
    assert again.report.moved_partitions <= 10
    assert again.report.load is not None
    bound = lower_bound(np.array(drifted["a"]), np.ones(4))
    assert again.report.load.peak <= 1.02 * bound


def test_cooperative_withholds_what_moves() -> None:
    # m0 owns everything; m1 joins: what goes to m1 is revoked from m0 and withheld this round
    owned = {"m0": [TopicPartition("a", p) for p in range(4)]}
    g = group({"m0": ["a"], "m1": ["a"]}, {"a": 4}, owned)
    result = assign("cooperative-sticky", g, AssignOptions(balance=LOAD))
    members = {m.member_id: m for m in result.members}
    assert members["m1"].partitions == ()
    assert len(members["m0"].revoked) == 2
    assert result.report.withheld_partitions == 2


def test_eager_sticky_reads_its_claims_from_user_data() -> None:
    # {0, 2} and {1, 3} is balanced (6 and 6); a fresh placement would make {0, 1} and {2, 3}
    loads = {"a": [5.0, 1, 1, 5]}
    fresh = assign(
        "sticky",
        group({"m0": ["a"], "m1": ["a"]}, {"a": 4}),
        AssignOptions(balance=LOAD, loads=loads),
    )
    claimed = {"m0": (0, 2), "m1": (1, 3)}
    assert {
        m: tuple(tp.partition for tp in tps) for m, tps in fresh.partitions().items()
    } != claimed
    members = [
        Member(member_id=m, topics=("a",), user_data=encode_sticky_user_data([("a", list(ps))], 1))
        for m, ps in claimed.items()
    ]
    g = consumer_group(members, [Topic.without_racks("a", 4)])
    result = assign("sticky", g, AssignOptions(balance=LOAD, loads=loads))
    assert {
        m: tuple(tp.partition for tp in tps) for m, tps in result.partitions().items()
    } == claimed
    assert result.report.moved_partitions == 0


@pytest.mark.parametrize(
    ("name", "options", "field", "member"),
    [
        ("range", AssignOptions(balance=LOAD), "options.balance", None),
        (
            "sticky",
            AssignOptions(balance=LOAD, loads={"a": [1.0]}),
            "topics[a].partition_loads",
            None,
        ),
        (
            "sticky",
            AssignOptions(balance=LOAD, loads={"a": [1.0, -2.0]}),
            "topics[a].partition_loads",
            None,
        ),
        (
            "sticky",
            AssignOptions(balance=LOAD, capacities={"m1": 0.0}),
            "subscription.capacity",
            "m1",
        ),
    ],
)
def test_bad_figures_name_their_field(
    name: str, options: AssignOptions, field: str, member: str | None
) -> None:
    g = group({"m0": ["a"], "m1": ["a"]}, {"a": 2})
    with pytest.raises(InvalidRequest) as caught:
        assign(name, g, options)
    assert caught.value.field == field
    assert caught.value.member == member


def racked_group(
    members: int, partitions: int, owned: Mapping[str, Sequence[TopicPartition]] | None = None
) -> ConsumerGroup:
    """3 racks, members spread over them, partition p's replicas on the two racks other than
    p % 3 (KIP-881's switch on: some rack lacks some partition)."""
    racks = ("r0", "r1", "r2")
    replicas = tuple(frozenset(r for r in racks if r != racks[p % 3]) for p in range(partitions))
    owned = owned or {}
    return consumer_group(
        [
            Member(
                member_id=f"m{i}",
                topics=("a",),
                rack_id=racks[i % 3],
                owned_partitions=tuple(owned.get(f"m{i}", ())),
            )
            for i in range(members)
        ],
        [Topic(name="a", partition_racks=replicas)],
    )


@pytest.mark.parametrize("name", ["sticky", "cooperative-sticky", "rack-optimal"])
def test_racks_are_weighed_at_the_same_peak(name: str) -> None:
    rng = np.random.default_rng(4)
    loads = {"a": (1000.0 / (rng.permutation(600) + 1) ** 0.9).tolist()}
    options = AssignOptions(balance=LOAD, loads=loads)
    g = racked_group(9, 600)
    blind = consumer_group([replace(m, rack_id=None) for m in g.members], list(g.topics.values()))
    by_rack, without = assign(name, g, options), assign(name, blind, options)
    racks = {m.member_id: m.rack for m in g.members}
    crossing = sum(
        racks[m] not in g.topics["a"].partition_racks[tp.partition]
        for m, tps in without.partitions().items()
        for tp in tps
    )
    assert crossing > 100  # racks unseen: about a third read across
    assert by_rack.report.cross_rack_partitions == 0
    assert by_rack.report.load is not None and without.report.load is not None
    assert by_rack.report.load.peak <= 1.01 * by_rack.report.load.bound


def test_cooperative_sticky_keeps_what_rack_optimal_moves_home() -> None:
    # m0 (rack r0) owns partition 0, whose replicas are on r1 and r2; m1 (r1) owns 1, m2 (r2) 2
    owned = {f"m{i}": [TopicPartition("a", i)] for i in range(3)}
    loads = {"a": [5.0, 5.0, 5.0, 0.0, 0.0, 0.0]}
    g = racked_group(3, 6, owned)
    options = AssignOptions(balance=LOAD, loads=loads)
    kept = assign("cooperative-sticky", g, options)
    assert kept.report.moved_partitions == 0
    assert kept.report.cross_rack_partitions_before == 3  # each one's own partition is foreign
    assert kept.report.cross_rack_partitions == 3
    home = assign("rack-optimal", g, options)
    assert home.report.cross_rack_partitions == 0
    assert home.report.moved_partitions == 3
    assert home.report.load is not None and home.report.load.peak == 5.0


def test_past_the_time_budget_the_count_answer_stands() -> None:
    rng = np.random.default_rng(6)
    loads = {"a": (1000.0 / (rng.permutation(3000) + 1) ** 0.9).tolist()}
    g = group({f"m{i}": ["a"] for i in range(5)}, {"a": 3000})
    tight = AssignOptions(balance=LOAD, loads=loads, time_budget_s=0.001)
    for name in ("sticky", "rack-optimal"):
        result = assign(name, g, tight)
        assert result.partitions() == assign(name, g).partitions()
        assert result.report.load is not None
        assert result.report.load.peak > 1.05 * result.report.load.bound  # counts, not loads
        assert any("TIME_BUDGET" in note for note in result.report.notes)
        roomy = assign(name, g, replace(tight, time_budget_s=2.0))
        assert roomy.report.notes == ()
        assert roomy.report.load is not None
        assert roomy.report.load.peak <= 1.01 * roomy.report.load.bound
