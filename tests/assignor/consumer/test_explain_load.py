"""Consumer explanations under ``balance=LOAD`` (issue 25): members' loads and capacities, and a
``LOAD`` rule with the figures where load decided a placement; COUNT answers tell no load."""

from __future__ import annotations

import pytest
from kassign.assignor.consumer import Member, Topic, TopicPartition, consumer_group
from kassign.assignor.consumer.api import assign
from kassign.assignor.consumer.explain import ConsumerExplanation, explain_consumer
from kassign.assignor.consumer.model import AssignOptions, ConsumerGroup
from kassign.assignor.load.figures import Balance
from kassign.assignor.placement import Rule
from kassign.kafka.consumer_user_data import encode_sticky_user_data

LOADS = {"t": [6.0, 2.0, 2.0, 2.0]}
BY_LOAD = AssignOptions(balance=Balance.LOAD, loads=LOADS)


def _eager(claims: dict[str, list[int]]) -> ConsumerGroup:
    """Eager ``sticky``: each member's claims in its userData."""
    members = [
        Member(
            member_id=m,
            topics=("t",),
            user_data=encode_sticky_user_data([("t", ps)], 1) if ps else None,
        )
        for m, ps in claims.items()
    ]
    return consumer_group(members, [Topic.without_racks("t", 4)])


def _explained(
    name: str, group: ConsumerGroup, options: AssignOptions = BY_LOAD
) -> ConsumerExplanation:
    return explain_consumer(group, assign(name, group, options), options)


def _by_partition(e: ConsumerExplanation) -> dict[int, tuple[str | None, Rule, str]]:
    return {s.partition.partition: (s.member_id, s.rule, s.reason) for s in e.partitions}


def test_what_load_moved_names_load_and_the_owner_it_would_overload() -> None:
    """m0 owned all four; m1 joins. By count m0 would keep 0 and 1 (load 8); by load it keeps
    the hot one alone (6, the bound) and the three light ones go to m1."""
    e = _explained("sticky", _eager({"m0": [0, 1, 2, 3], "m1": []}))
    told = _by_partition(e)
    assert told[0] == (
        "m0",
        Rule.STICKY,
        "sticky: m0 owned it and keeps it; m0 at 1.00 of the bound with it",
    )
    for p in (1, 2, 3):
        assert told[p] == (
            "m1",
            Rule.LOAD,
            "load: m1 at 1.00 of the bound with it; m0, its owner, would be at 1.33 keeping it",
        )
    assert [(m.member_id, m.load, m.capacity) for m in e.members] == [
        ("m0", 6.0, 1.0),
        ("m1", 6.0, 1.0),
    ]
    assert [s.load for s in e.partitions] == LOADS["t"]


def test_count_balance_tells_no_load_and_keeps_its_rules() -> None:
    group = _eager({"m0": [0, 1, 2, 3], "m1": []})
    counted = _explained("sticky", group, AssignOptions())
    assert {s.rule for s in counted.partitions} == {Rule.STICKY, Rule.BALANCE}
    assert all(m.load is None and m.capacity is None for m in counted.members)
    assert all(s.load is None and "load" not in s.reason for s in counted.partitions)
    assert counted == explain_consumer(group, assign("sticky", group))


def test_capacity_and_unowned_partitions() -> None:
    """Nobody owned anything: every partition is placed by load; m0 weighs twice."""
    group = _eager({"m0": [], "m1": []})
    options = AssignOptions(balance=Balance.LOAD, loads=LOADS, capacities={"m0": 2.0})
    e = _explained("sticky", group, options)
    assert {s.rule for s in e.partitions} == {Rule.LOAD}
    assert all(s.reason.startswith("load: no owner before; placed by load, ") for s in e.partitions)
    loads = {m.member_id: (m.load, m.capacity) for m in e.members}
    assert loads["m0"][1] == 2.0 and loads["m1"][1] == 1.0
    assert sum(load for load, _ in loads.values() if load is not None) == sum(LOADS["t"])
    bound = 12.0 / 3.0  # total load over total capacity; the heaviest (6) / largest capacity is 3
    share = {m: load / cap / bound for m, (load, cap) in loads.items() if load and cap}
    for s in e.partitions:
        assert f"{s.member_id} at {share[s.member_id or '']:.2f} of the bound with it" in s.reason


def test_a_withheld_partition_names_load_and_what_its_owner_would_carry() -> None:
    owned = tuple(TopicPartition("t", p) for p in range(4))
    members = [
        Member(member_id="m0", topics=("t",), owned_partitions=owned),
        Member(member_id="m1", topics=("t",)),
    ]
    group = consumer_group(members, [Topic.without_racks("t", 4)])
    told = _by_partition(_explained("cooperative-sticky", group))
    assert told[0][:2] == ("m0", Rule.STICKY)
    for p in (1, 2, 3):
        member, rule, reason = told[p]
        assert member is None and rule is Rule.LOAD
        assert reason.startswith("load: withheld while it moves for load; m0 revokes it first")
        assert "(m0 at 1.33 of the bound keeping it)" in reason  # 6 kept + 2 of 6


def test_a_load_answer_needs_its_options() -> None:
    group = _eager({"m0": [], "m1": []})
    with pytest.raises(ValueError, match="options"):
        explain_consumer(group, assign("sticky", group, BY_LOAD))
