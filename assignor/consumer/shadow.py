"""Shadow mode for a consumer group (issue 26): an answer's figures, and two compared.

Both answers are measured by the report's own counts (``result.group_assignment``: a partition
read across racks, an owned partition now another's) against the claims the configured assignor
reads (``load_balanced.claims_of``: eager ``sticky``'s userData, else the owned partitions), and
the load peak by the load core's ``peak_ratio`` over the same loads and capacities balance LOAD
uses (docs/shadow.md). Pure: no clock, no protobuf.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from kassign.assignor.consumer.common import partitions_per_topic
from kassign.assignor.consumer.load_balanced import claims_of, member_capacities, partition_loads
from kassign.assignor.consumer.model import AssignOptions, ConsumerGroup, TopicPartition
from kassign.assignor.consumer.result import RackReason, group_assignment
from kassign.assignor.load.bound import peak_ratio
from kassign.assignor.shadow import Comparison, Figures, differing, spread

__all__ = ["Answer", "compare", "figures"]

Answer = Mapping[str, Sequence[TopicPartition]]
"""An answer: member id -> its partitions (a member left out gets none)."""


def figures(group: ConsumerGroup, assignor: str, options: AssignOptions, answer: Answer) -> Figures:
    """``answer``'s figures on ``group``, moves counted against what ``assignor`` reads as each
    member's previous partitions; ``max_load`` only where ``options`` carries loads."""
    members = sorted(group.members, key=lambda m: m.member_id)
    counted = group_assignment(
        assignor,
        group,
        {m: answer[m] for m in answer},
        claims=claims_of(assignor, group, members),
        rack_reason=RackReason.NOT_RACK_AWARE,
    ).report
    most, least = spread(len(answer.get(m.member_id, ())) for m in members)
    return Figures(
        cross_rack_partitions=counted.cross_rack_partitions,
        moved=counted.moved_partitions,
        max_per_member=most,
        min_per_member=least,
        max_load=None if options.loads is None else _peak(group, options, answer),
    )


def compare(
    group: ConsumerGroup,
    assignor: str,
    options: AssignOptions,
    kafka: Answer,
    kassign: Answer,
    kafka_assignor: str,
) -> Comparison:
    """Kafka's answer against kassign's: both measured, and the members whose partitions differ."""
    differ = differing(_held(group, kafka), _held(group, kassign))
    return Comparison(
        kafka_assignor=kafka_assignor,
        kafka=figures(group, assignor, options, kafka),
        kassign=figures(group, assignor, options, kassign),
        same=differ == 0,
        differing_members=differ,
    )


def _held(group: ConsumerGroup, answer: Answer) -> dict[str, frozenset[TopicPartition]]:
    held = {m.member_id: frozenset[TopicPartition]() for m in group.members}
    held.update((m, frozenset(tps)) for m, tps in answer.items())
    return held


def _peak(group: ConsumerGroup, options: AssignOptions, answer: Answer) -> float:
    """The most loaded member's load per unit of capacity (``peak_ratio``); a partition no
    member is given (withheld, cooperative) loads nobody."""
    topics = partitions_per_topic(group)
    loads = partition_loads(topics, options.loads)
    members = sorted(group.members, key=lambda m: m.member_id)
    caps = member_capacities(members, options.capacities)
    starts = dict(zip(topics, np.cumsum([0, *topics.values()]).tolist(), strict=False))
    owners = np.full(len(loads), -1, dtype=np.int64)
    for index, member in enumerate(members):
        for topic, partition in answer.get(member.member_id, ()):
            start = starts.get(topic)
            if start is not None and partition < topics[topic]:
                owners[start + partition] = index
    given = owners >= 0
    return peak_ratio(loads[given], caps, owners[given])
