"""Consumer explanations (issue 17): each partition's rule follows what decided its member."""

from __future__ import annotations

from kassign.assignor.consumer import Member, Topic, TopicPartition, assign, consumer_group
from kassign.assignor.consumer.explain import ConsumerExplanation, explain_consumer
from kassign.assignor.placement import Rule


def _explained(name: str, members: list[Member], topics: list[Topic]) -> ConsumerExplanation:
    group = consumer_group(members, topics)
    return explain_consumer(group, assign(name, group))


def _story(explanation: ConsumerExplanation, partition: int) -> tuple[str | None, Rule, str]:
    s = next(s for s in explanation.partitions if s.partition == TopicPartition("t", partition))
    return s.member_id, s.rule, s.reason


def _owned(name: str) -> ConsumerExplanation:
    """Member a owned all four partitions; b joins."""
    owned = tuple(TopicPartition("t", p) for p in range(4))
    members = [Member(member_id="a", topics=("t",), owned_partitions=owned)]
    members.append(Member(member_id="b", topics=("t",)))
    return _explained(name, members, [Topic.without_racks("t", 4)])


def test_sticky_where_the_owner_keeps_it_else_balance() -> None:
    sticky = _owned("cooperative-sticky")
    assert _story(sticky, 0)[:2] == ("a", Rule.STICKY)
    withheld = [s for s in sticky.partitions if s.member_id is None]
    assert len(withheld) == 2 and all(s.rule is Rule.BALANCE for s in withheld)
    assert "revokes it first" in withheld[0].reason
    ranged = _owned("range")  # range is not sticky: a keeps 0 and 1 by its share
    assert _story(ranged, 0)[:2] == ("a", Rule.BALANCE)
    assert _story(ranged, 2)[:2] == ("b", Rule.BALANCE)


def _racked(racks: tuple[str | None, str | None]) -> ConsumerExplanation:
    """Partitions 0, 1, 3 in rack r1, 2 in r2; member a in racks[0], b in racks[1]."""
    members = [
        Member(member_id="a", topics=("t",), rack_id=racks[0]),
        Member(member_id="b", topics=("t",), rack_id=racks[1]),
    ]
    layout = tuple(frozenset({r}) for r in ("r1", "r1", "r2", "r1"))
    return _explained("range", members, [Topic("t", layout)])


def test_rack_cost_where_a_member_shares_the_rack_fallback_where_none_can() -> None:
    racked = _racked(("r1", "r2"))
    rules = {s.partition.partition: (s.member_id, s.rule) for s in racked.partitions}
    assert rules[2] == ("b", Rule.RACK_COST)
    assert sorted(rule for _, rule in rules.values() if rule is Rule.FALLBACK) == [Rule.FALLBACK]
    (fallback,) = [s for s in racked.partitions if s.rule is Rule.FALLBACK]
    assert fallback.member_id == "b" and "rack r2 holds no replica" in fallback.reason
    unracked = _racked((None, None))
    assert {s.rule for s in unracked.partitions} == {Rule.BALANCE}


def test_members_and_partitions_listed() -> None:
    explanation = _racked(("r1", "r2"))
    assert [(m.member_id, m.rack_id, m.assigned) for m in explanation.members] == [
        ("a", "r1", 2),
        ("b", "r2", 2),
    ]
    assert [s.replica_racks for s in explanation.partitions] == [("r1",), ("r1",), ("r2",), ("r1",)]
