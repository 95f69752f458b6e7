"""Why each partition went to its member: a consumer group's assignment explained (issue 17).

Per member its rack and how many partitions it owned and got; per partition its previous
owners, its replicas' racks, its member (none while withheld) and the rule:

- ``STICKY``: a sticky assignor (``sticky``, ``cooperative-sticky``, ``rack-optimal``) left it
  with the member that owned it;
- ``RACK_COST``: rack-aware (KIP-881 mode, or ``rack-optimal``'s solver applied) and the member's
  rack holds a replica;
- ``FALLBACK``: rack-aware, but the member's rack holds none of its replicas;
- ``BALANCE``: the assignor's spread (range's share, round robin's turn, sticky's balancing),
  and partitions withheld while they change owner;
- ``LOAD``: ``balance=LOAD`` (issue 25) placed or moved it by load per unit of capacity; each
  member's load and capacity and each partition's load are told too (``explain_load.py``).

Unlike the Streams room, where each phase's holdings are recorded as it runs, these rules are
read from the answer and the facts the assignors decide on (ownership, racks, rack mode):
Kafka's four are ports that must keep Kafka's answers, and their passes are not instrumented.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kassign.assignor.consumer import sticky
from kassign.assignor.consumer.explain_load import LoadFacts, load_facts
from kassign.assignor.consumer.java_order import java_key
from kassign.assignor.consumer.model import AssignOptions, ConsumerGroup, Member, TopicPartition
from kassign.assignor.consumer.result import GroupAssignment, RackStatus
from kassign.assignor.placement import Rule

__all__ = ["ConsumerExplanation", "MemberStory", "PartitionStory", "explain_consumer"]

STICKY_ASSIGNORS = frozenset({"sticky", "cooperative-sticky", "rack-optimal"})
"""Assignors that keep owned partitions where balance allows (range and roundrobin do not)."""

_SPREAD = {
    "range": "range: the member's share of the topic, members in id order",
    "roundrobin": "roundrobin: the member's turn, partitions in order",
}


@dataclass(frozen=True, slots=True)
class MemberStory:
    member_id: str
    rack_id: str | None
    owned: int
    assigned: int
    load: float | None = None  # balance=LOAD: its partitions' load this round
    capacity: float | None = None  # balance=LOAD


@dataclass(frozen=True, slots=True)
class PartitionStory:
    partition: TopicPartition
    member_id: str | None  # None: withheld this round
    previous_owners: tuple[str, ...]
    replica_racks: tuple[str, ...]
    rule: Rule
    reason: str
    load: float | None = None  # balance=LOAD


@dataclass(frozen=True, slots=True)
class ConsumerExplanation:
    members: tuple[MemberStory, ...]
    partitions: tuple[PartitionStory, ...]


def explain_consumer(
    group: ConsumerGroup, assignment: GroupAssignment, options: AssignOptions | None = None
) -> ConsumerExplanation:
    """The explanation of ``assignment`` (see the module docstring for the rules); ``options``,
    those it was assigned with, are needed for a load-balanced one (its loads, capacities)."""
    facts = load_facts(group, assignment, options)
    member_of = {tp: m.member_id for m in assignment.members for tp in m.partitions}
    claims = dict(_claims(group, assignment.assignor))
    owners: dict[TopicPartition, list[str]] = {}
    for owner, held in claims.items():
        for tp in held:
            owners.setdefault(tp, []).append(owner)
    assigned = assignment.partitions()
    members = tuple(
        MemberStory(
            m.member_id,
            m.rack,
            len(claims[m.member_id]),
            len(assigned.get(m.member_id, ())),
            None if facts is None else facts.member_load.get(m.member_id, 0.0),
            None if facts is None else facts.capacity[m.member_id],
        )
        for m in sorted(group.members, key=lambda m: java_key(m.member_id))
    )
    by_id = {m.member_id: m for m in group.members}
    rack_aware = assignment.report.rack_aware or assignment.report.rack_status is RackStatus.OPTIMAL
    rules = _Rules(assignment.assignor, rack_aware, by_id)
    stories = []
    for tp in _subscribed(group, owners, member_of):
        racks = tuple(sorted(_racks(group, tp)))
        previous = tuple(sorted(owners.get(tp, ()), key=java_key))
        member = member_of.get(tp)
        stories.append(_story(tp, member, previous, racks, rules, facts))
    return ConsumerExplanation(members, tuple(stories))


def _story(
    tp: TopicPartition,
    member: str | None,
    previous: tuple[str, ...],
    racks: tuple[str, ...],
    rules: _Rules,
    facts: LoadFacts | None,
) -> PartitionStory:
    if facts is None:
        rule, reason = rules.of(member, previous, racks)
        return PartitionStory(tp, member, previous, racks, rule, reason)
    load = facts.load_of(tp)
    rule, reason = facts.rule(tp, load, member, previous)
    return PartitionStory(tp, member, previous, racks, rule, reason, load)


@dataclass(frozen=True, slots=True)
class _Rules:
    assignor: str
    rack_aware: bool
    members: Mapping[str, Member]

    def of(
        self, member: str | None, previous: tuple[str, ...], racks: tuple[str, ...]
    ) -> tuple[Rule, str]:
        if member is None:
            owner = ", ".join(previous) or "its owner"
            return (
                Rule.BALANCE,
                f"balance: withheld while it changes owner; {owner} revokes it first",
            )
        if self.assignor in STICKY_ASSIGNORS and member in previous:
            return Rule.STICKY, f"sticky: {member} owned it and keeps it"
        rack = self.members[member].rack if member in self.members else None
        if self.rack_aware and rack and racks:
            if rack in racks:
                return Rule.RACK_COST, f"rack cost: KIP-881, rack {rack} holds a replica"
            return (
                Rule.FALLBACK,
                f"fallback: rack-aware, but rack {rack} holds no replica (racks {', '.join(racks)})",
            )
        spread = _SPREAD.get(self.assignor, f"{self.assignor}: balancing partitions per member")
        moved = f"; moved from {', '.join(previous)}" if previous else ""
        return Rule.BALANCE, f"balance: {spread}{moved}"


def _claims(group: ConsumerGroup, assignor: str) -> list[tuple[str, Sequence[TopicPartition]]]:
    """Each member's previous partitions as the assignor reads them (the report's claims): the
    eager ``sticky`` from its userData, the others from the subscription's owned partitions."""
    if assignor == sticky.NAME:
        names: dict[bytes, str] = {}
        return [
            (m.member_id, sticky.sticky_member_data(group, m, names=names).partitions)
            for m in group.members
        ]
    return [(m.member_id, m.owned_partitions) for m in group.members]


def _racks(group: ConsumerGroup, tp: TopicPartition) -> frozenset[str]:
    topic = group.topics.get(tp.topic)
    if topic is None or tp.partition >= len(topic.partition_racks):
        return frozenset()
    return frozenset(r for r in topic.partition_racks[tp.partition] if r)


def _subscribed(
    group: ConsumerGroup,
    owners: Mapping[TopicPartition, list[str]],
    member_of: Mapping[TopicPartition, str],
) -> list[TopicPartition]:
    """Every partition of a subscribed topic, plus any owned or assigned elsewhere, sorted."""
    topics = {t for m in group.members for t in m.topics if t in group.topics}
    found = {TopicPartition(t, p) for t in topics for p in range(group.topics[t].partitions)}
    return sorted(found | owners.keys() | member_of.keys())
