"""Load in a consumer group's explanation (issue 25, ``balance=LOAD``): each member's load and
capacity, each partition's load, and the rule where load decided a placement.

Under ``LOAD`` the sticky assignors keep a partition with its owner while the owner stays within
the load target, and place or move the rest by load per unit of capacity (``load_balanced.py``),
so outside ``sticky`` the rule is ``LOAD`` and the reason gives the figures that decided it:
the member's share of the bound with the partition, and the owner's had it stayed. A share is a
member's load per unit of capacity over the report's bound (1: the bound no answer's peak is
below). A member's load is what it is assigned this round: a withheld partition counts nowhere.

Why apart from ``explain.py``: COUNT answers never reach it, so their explanations keep their
bytes; and the figures are read from the answer and the request's loads, as the other rules are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kassign.assignor.consumer.common import partitions_per_topic
from kassign.assignor.consumer.load_balanced import member_capacities, partition_loads
from kassign.assignor.consumer.model import AssignOptions, ConsumerGroup, TopicPartition
from kassign.assignor.consumer.result import GroupAssignment
from kassign.assignor.load.words import share_of_bound
from kassign.assignor.placement import Rule

__all__ = ["LoadFacts", "load_facts"]


@dataclass(frozen=True, slots=True)
class LoadFacts:
    """What a load-balanced answer's explanation reads: the bound, each partition's load (by
    topic, then partition number), each member's capacity, topics and load assigned this round,
    and its share's words (the same in every reason that names it)."""

    bound: float
    partition_load: Mapping[str, Sequence[float]]
    capacity: Mapping[str, float]
    topics: Mapping[str, frozenset[str]]
    member_load: Mapping[str, float]
    at: Mapping[str, str]  # member -> "m0 at 0.97 of the bound with it"

    def load_of(self, tp: TopicPartition) -> float:
        loads = self.partition_load.get(tp.topic, ())
        return loads[tp.partition] if tp.partition < len(loads) else 0.0

    def share(self, member: str, extra: float = 0.0) -> float:
        """``member``'s load per unit of capacity over the bound, with ``extra`` load added."""
        load = self.member_load.get(member, 0.0) + extra
        return share_of_bound(load, self.capacity.get(member, 0.0), self.bound)

    def rule(
        self, tp: TopicPartition, load: float, member: str | None, previous: Sequence[str]
    ) -> tuple[Rule, str]:
        """The rule and reason of ``tp`` (its ``load``) placed on ``member`` (None: withheld)."""
        owners = [p for p in previous if tp.topic in self.topics.get(p, ())]
        if member is None:
            owner = owners[0] if owners else ", ".join(previous) or "its owner"
            keeping = f" ({owner} at {self.share(owner, load):.2f} of the bound keeping it)"
            return (
                Rule.LOAD,
                f"load: withheld while it moves for load; {owner} revokes it first"
                + (keeping if owners else ""),
            )
        at = self.at[member]
        if member in previous:
            return Rule.STICKY, f"sticky: {member} owned it and keeps it; {at}"
        if owners:
            owner = owners[0]
            keeping = f"{owner}, its owner, would be at {self.share(owner, load):.2f} keeping it"
            return Rule.LOAD, f"load: {at}; {keeping}"
        if previous:
            gone = ", ".join(previous)
            return Rule.LOAD, f"load: its owner {gone} left or unsubscribed; placed by load, {at}"
        return Rule.LOAD, f"load: no owner before; placed by load, {at}"


def load_facts(
    group: ConsumerGroup, assignment: GroupAssignment, options: AssignOptions | None
) -> LoadFacts | None:
    """The facts of a load-balanced answer (its report carries ``load``), None for COUNT's.
    ``options`` are the ones it was assigned with (their loads and capacities)."""
    figures = assignment.report.load
    if figures is None:
        return None
    if options is None:
        raise ValueError("a load-balanced answer is explained with the options it was assigned by")
    topics = partitions_per_topic(group)
    loads = partition_loads(topics, options.loads).tolist()
    partition_load: dict[str, list[float]] = {}
    start = 0
    for topic, count in topics.items():
        partition_load[topic] = loads[start : start + count]
        start += count
    members = sorted(group.members, key=lambda m: m.member_id)
    caps = member_capacities(members, options.capacities).tolist()
    capacity = {m.member_id: c for m, c in zip(members, caps, strict=True)}
    member_load = {m.member_id: 0.0 for m in members}
    for m in assignment.members:
        member_load[m.member_id] = sum(
            partition_load[tp.topic][tp.partition] for tp in m.partitions if tp.topic in topics
        )
    at = {
        m: f"{m} at {share_of_bound(load, capacity[m], figures.bound):.2f} of the bound with it"
        for m, load in member_load.items()
    }
    return LoadFacts(
        bound=figures.bound,
        partition_load=partition_load,
        capacity=capacity,
        topics={m.member_id: frozenset(m.topics) for m in members},
        member_load=member_load,
        at=at,
    )
