"""The reports' cross-rack counts (``rack_counts``) equal a count partition by partition, over
the assigned partitions and over the claims, whichever way they are counted: as ids (claims on
assigned topics), partition by partition (a claim on a topic nobody subscribes to), from
``RackSetIds`` or from the topics' ``frozenset``s, topics sharing one layout or not."""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping

import pytest
from kassign.assignor.consumer import (
    ConsumerGroup,
    Member,
    Topic,
    TopicPartition,
    assign,
    consumer_group,
)
from kassign.assignor.consumer.sticky import sticky_members_data
from kassign.kafka.consumer_user_data import encode_sticky_user_data

RACKS = ("a", "b", "c")


def _misses(group: ConsumerGroup, held: Mapping[str, Collection[TopicPartition]]) -> int:
    rack = {m.member_id: m.rack for m in group.members}
    return sum(
        rack[m] is not None and rack[m] not in group.topics[tp.topic].partition_racks[tp.partition]
        for m, tps in held.items()
        for tp in tps
    )


def _group(seed: int, assignor: str, *, shared: bool, outside: bool) -> ConsumerGroup:
    """Members with and without racks, each claiming a random share of the partitions
    (distinct), through its user data (``sticky``) or owned partitions; ``outside``: one
    more topic in the metadata that nobody subscribes to, claimed too."""
    rng = random.Random(seed)
    sizes = [rng.randint(1, 12) for _ in range(4)]
    layout = tuple(frozenset(rng.sample(RACKS, rng.randint(0, 2))) for _ in range(max(sizes)))
    topics = [
        Topic(f"t{i}", layout[:n] if shared else tuple(frozenset(s) for s in layout[:n]))
        for i, n in enumerate(sizes)
    ]
    if outside:
        topics.append(Topic("lonely", layout[:3]))
    every = [TopicPartition(t.name, p) for t in topics for p in range(t.partitions)]
    rng.shuffle(every)
    subscribed = tuple(t.name for t in topics if t.name != "lonely")
    members = []
    for i in range(rng.randint(2, 7)):
        claimed = sorted(every[i::7][: rng.randint(0, 6)])
        rack = rng.choice((*RACKS, None))
        if assignor == "sticky":
            by_topic: dict[str, list[int]] = {}
            for tp in claimed:
                by_topic.setdefault(tp.topic, []).append(tp.partition)
            data = encode_sticky_user_data(sorted(by_topic.items()), 1)
            members.append(
                Member(member_id=f"m{i}", topics=subscribed, rack_id=rack, user_data=data)
            )
        else:
            members.append(
                Member(
                    member_id=f"m{i}",
                    topics=subscribed,
                    rack_id=rack,
                    owned_partitions=tuple(claimed),
                    generation=1,
                )
            )
    return consumer_group(members, topics)


def _claims(group: ConsumerGroup, assignor: str) -> dict[str, list[TopicPartition]]:
    if assignor != "sticky":
        return {m.member_id: list(m.owned_partitions) for m in group.members}
    data = sticky_members_data(group, group.members)
    return {m: list(d.partitions) for m, d in data.items()}


@pytest.mark.parametrize("assignor", ["sticky", "cooperative-sticky"])
@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("outside", [True, False])
def test_cross_rack_counts_are_the_partitions_counted_one_by_one(
    assignor: str, shared: bool, outside: bool
) -> None:
    before = after = 0
    for seed in range(25):
        group = _group(seed, assignor, shared=shared, outside=outside)
        result = assign(assignor, group)
        report = result.report
        assert report.cross_rack_partitions_before == _misses(group, _claims(group, assignor))
        assigned = {m.member_id: list(m.partitions) for m in result.members}
        assert report.cross_rack_partitions == _misses(group, assigned)
        before += report.cross_rack_partitions_before
        after += report.cross_rack_partitions
    assert before > 0 and after > 0  # the groups do read across racks
