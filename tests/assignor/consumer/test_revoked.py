"""``moving_away`` over ids (an answer of ``PartitionList``s: the group's claims as one
column) gives what it gives over objects: each member's owned partitions that go to another
member, in claim order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.claims import OwnedPartitions, TopicPartition
from kassign.assignor.consumer.columns import PartitionSpace
from kassign.assignor.consumer.model import Member, Topic, consumer_group
from kassign.assignor.consumer.revoked import moving_away

COUNTS = {"a": 4, "b": 3}
PARTITIONS = [TopicPartition(t, p) for t, n in COUNTS.items() for p in range(n)]
MEMBERS = [f"m{i}" for i in range(4)]

owned = st.lists(
    st.sampled_from([*PARTITIONS, TopicPartition("x", 0)]), unique=True, max_size=5
)  # "x": a topic outside the metadata, never assigned


@settings(deadline=None, max_examples=120)
@given(
    st.lists(st.tuples(owned, st.booleans()), min_size=len(MEMBERS), max_size=len(MEMBERS)),
    st.lists(st.sampled_from([*MEMBERS, "gone"]), min_size=len(PARTITIONS)),
)
def test_over_ids_as_over_objects(
    claims: list[tuple[list[TopicPartition], bool]], owners: list[str]
) -> None:
    members = [
        Member(
            member_id=m,
            topics=tuple(COUNTS),
            owned_partitions=OwnedPartitions((tp.topic, [tp.partition]) for tp in tps)
            if compact
            else tuple(tps),
        )
        for m, (tps, compact) in zip(MEMBERS, claims, strict=True)
    ]
    group = consumer_group(members, [Topic.without_racks(t, n) for t, n in COUNTS.items()])
    given_to = {m: [tp for tp, o in zip(PARTITIONS, owners) if o == m] for m in MEMBERS[1:]}
    space = PartitionSpace.of(COUNTS)  # m0 is not in the answer; "gone" partitions nobody's
    as_ids = {m: space.partitions(space.ids(tps)) for m, tps in given_to.items()}
    assert moving_away(group, as_ids) == moving_away(
        group, {m: tuple(t) for m, t in given_to.items()}
    )
