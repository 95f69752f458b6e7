"""Shadow mode's consumer-group figures (issue 26) on a group where the right numbers are
obvious: two members in racks r0 and r1, topic t's partitions 0-1 on r0 and 2-3 on r1, each
member owning its rack's two."""

from __future__ import annotations

from kassign.assignor.consumer.model import (
    AssignOptions,
    Balance,
    ConsumerGroup,
    Member,
    Topic,
    TopicPartition,
    consumer_group,
)
from kassign.assignor.consumer.shadow import compare, figures

P0, P1, P2, P3 = (TopicPartition("t", p) for p in range(4))
KEPT = {"m0": (P0, P1), "m1": (P2, P3)}
CROSSED = {"m0": (P0, P2), "m1": (P1, P3)}


def _group(*, third: bool = False) -> ConsumerGroup:
    racks = (frozenset({"r0"}),) * 2 + (frozenset({"r1"}),) * 2
    members = [
        Member(member_id="m0", topics=("t",), rack_id="r0", owned_partitions=(P0, P1)),
        Member(member_id="m1", topics=("t",), rack_id="r1", owned_partitions=(P2, P3)),
    ]
    if third:  # a new member without a rack: never cross-rack, as the report counts
        members.append(Member(member_id="m2", topics=("t",)))
    return consumer_group(members, [Topic("t", racks)])


def test_owned_partitions_kept_move_nothing_and_read_locally() -> None:
    got = figures(_group(), "range", AssignOptions(), KEPT)
    assert (got.moved, got.cross_rack_partitions) == (0, 0)
    assert (got.max_per_member, got.min_per_member) == (2, 2)
    assert got.max_load is None and got.standbys_moved == 0


def test_swapped_partitions_move_and_read_across_racks() -> None:
    got = figures(_group(), "range", AssignOptions(), CROSSED)
    assert (got.moved, got.cross_rack_partitions) == (2, 2)


def test_a_member_given_nothing_is_the_minimum_and_a_rackless_one_never_crosses() -> None:
    answer = {"m0": (P0,), "m1": (P2, P3), "m2": (P1,)}
    got = figures(_group(third=True), "range", AssignOptions(), answer)
    assert (got.moved, got.cross_rack_partitions) == (1, 0)  # P1 to m2, which has no rack
    assert (got.max_per_member, got.min_per_member) == (2, 1)
    piled = figures(_group(third=True), "range", AssignOptions(), {"m0": (P0, P1, P2, P3)})
    assert (piled.max_per_member, piled.min_per_member) == (4, 0)


def test_a_withheld_partition_is_nobodys_yet() -> None:
    """Cooperative: P1 taken from m0 but given to nobody this round is not another's."""
    got = figures(_group(), "cooperative-sticky", AssignOptions(), {"m0": (P0,), "m1": (P2, P3)})
    assert got.moved == 0 and (got.max_per_member, got.min_per_member) == (2, 1)


def test_max_load_per_unit_of_capacity_where_loads_are_known() -> None:
    options = AssignOptions(
        balance=Balance.LOAD, loads={"t": [3.0, 1.0, 3.0, 1.0]}, capacities={"m1": 2.0}
    )
    assert figures(_group(), "range", options, KEPT).max_load == 4.0  # m0: 3 + 1 on capacity 1
    assert figures(_group(), "range", options, CROSSED).max_load == 6.0  # m0: 3 + 3


def test_comparison_counts_the_members_whose_partitions_differ() -> None:
    compared = compare(_group(third=True), "range", AssignOptions(), CROSSED, KEPT, "range")
    assert (compared.same, compared.differing_members) == (False, 2)  # m2 empty in both
    assert compared.kafka.moved == 2 and compared.kassign.moved == 0
    itself = compare(_group(), "range", AssignOptions(), KEPT, dict(KEPT), "range")
    assert itself.same and itself.differing_members == 0 and itself.kafka == itself.kassign
