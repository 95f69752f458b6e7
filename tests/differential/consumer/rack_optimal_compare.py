"""``rack-optimal`` beside Kafka's four assignors on the differential suite's groups.

For every group and every Kafka assignor whose answer is a valid assignment (it did not throw,
and gave partitions only to members that subscribe to their topics: Kafka's sticky builders do
not always, see docs/consumer-assignors.md), compare with ``rack-optimal`` (eager, default
options) on the same group:

- *balance*: max - min partitions over the members that can take any (members subscribed only
  to topics without partitions have none whatever the assignor);
- *cross-rack*: partitions whose member has a rack holding none of their replicas;
- *moves*: partitions some member reported owning (the subscription's owned partitions) that go
  to a member that did not.

Kafka's ``cooperative-sticky`` withholds moving partitions; its *target* (the answer before
withholding) is compared, read from kassign's equal implementation once its delivered answer is
checked equal to Kafka's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kassign.assignor.consumer import ConsumerGroup, TopicPartition, assign
from kassign.assignor.consumer.common import partitions_per_topic
from kassign.assignor.consumer.cooperative_sticky import cooperative_members_data
from kassign.assignor.consumer.sticky import assign_sticky_partitions

from tests.differential.consumer import oracle
from tests.differential.consumer.groups import GeneratedGroup, for_kassign

__all__ = ["Comparison", "compare"]

Owners = dict[TopicPartition, str]


@dataclass
class Comparison:
    """Totals and per-group findings for one Kafka assignor."""

    groups: int = 0
    invalid: int = 0
    ours_cross: int = 0
    theirs_cross: int = 0
    ours_moves: int = 0
    theirs_moves: int = 0
    worse_balance: list[int] = field(default_factory=list)  # seeds: ours spread > theirs
    more_cross_same_balance: list[int] = field(default_factory=list)  # must stay empty
    fewer_cross_worse_balance: int = 0  # Kafka bought locality with balance

    def row(self, name: str) -> str:
        return (
            f"| {name} | {self.groups} | {self.invalid} | {self.ours_cross} | {self.theirs_cross}"
            f" | {self.fewer_cross_worse_balance} | {self.ours_moves} | {self.theirs_moves} |"
        )


def compare(
    groups: Sequence[GeneratedGroup], kafka: Mapping[str, Sequence[oracle.KafkaAnswer]]
) -> dict[str, Comparison]:
    out = {name: Comparison() for name in kafka}
    for i, g in enumerate(groups):
        cg = for_kassign(g, "cooperative-sticky")
        ours = {tp: m.member_id for m in assign("rack-optimal", cg).members for tp in m.partitions}
        for name, answers in kafka.items():
            theirs = _kafka_owners(g, name, answers[i])
            _add(out[name], g.seed, cg, ours, theirs)
    return out


def _kafka_owners(g: GeneratedGroup, name: str, answer: oracle.KafkaAnswer) -> Owners | None:
    if answer.error is not None:
        return None
    owners = {TopicPartition(t, p): m for m, tps in answer.members.items() for t, p in tps}
    if name != "cooperative-sticky":
        return owners
    cg = for_kassign(g, name)
    delivered = {tp: m.member_id for m in assign(name, cg).members for tp in m.partitions}
    if delivered != owners:
        raise AssertionError(f"seed {g.seed}: kassign's cooperative-sticky differs from Kafka's")
    target = assign_sticky_partitions(cg, cooperative_members_data(cg.members)).assignment
    return {tp: m for m, tps in target.items() for tp in tps}


def _add(c: Comparison, seed: int, cg: ConsumerGroup, ours: Owners, theirs: Owners | None) -> None:
    topics = {m.member_id: set(m.topics) for m in cg.members}
    if theirs is None or any(tp.topic not in topics[m] for tp, m in theirs.items()):
        c.invalid += 1
        return
    c.groups += 1
    ours_spread, theirs_spread = _spread(cg, ours), _spread(cg, theirs)
    ours_cross, theirs_cross = _cross(cg, ours), _cross(cg, theirs)
    c.ours_cross += ours_cross
    c.theirs_cross += theirs_cross
    c.ours_moves += _moves(cg, ours)
    c.theirs_moves += _moves(cg, theirs)
    if ours_spread > theirs_spread:
        c.worse_balance.append(seed)
    elif ours_cross > theirs_cross:
        if ours_spread == theirs_spread:
            c.more_cross_same_balance.append(seed)
        else:
            c.fewer_cross_worse_balance += 1


def _spread(cg: ConsumerGroup, owners: Owners) -> int:
    available = partitions_per_topic(cg)
    live = [m.member_id for m in cg.members if any(t in available for t in m.topics)]
    loads = Counter(owners.values())
    return max((loads[m] for m in live), default=0) - min((loads[m] for m in live), default=0)


def _cross(cg: ConsumerGroup, owners: Owners) -> int:
    rack = {m.member_id: m.rack for m in cg.members}
    return sum(
        1
        for tp, m in owners.items()
        if (r := rack[m]) is not None and r not in cg.topics[tp.topic].partition_racks[tp.partition]
    )


def _moves(cg: ConsumerGroup, owners: Owners) -> int:
    claimants: dict[TopicPartition, set[str]] = {}
    for m in cg.members:
        for tp in m.owned_partitions:
            claimants.setdefault(tp, set()).add(m.member_id)
    return sum(1 for tp, ms in claimants.items() if tp in owners and owners[tp] not in ms)
