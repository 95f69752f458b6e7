"""The builder's answer and the result's members as columns (``assigned``): the same lists,
in the order asked, as the objects they stand for."""

from __future__ import annotations

import pickle

import numpy as np
from kassign.assignor.claims import TopicPartition
from kassign.assignor.consumer.assigned import AssignedMembers, BuiltLists, MemberAssignment
from kassign.assignor.consumer.columns import PartitionSpace

SPACE = PartitionSpace.of({"a": 3, "b": 2})  # ids 0-2: a-0..a-2, 3-4: b-0, b-1
A0, A1, A2, B0, B1 = (
    TopicPartition(t, p) for t, p in (("a", 0), ("a", 1), ("a", 2), ("b", 0), ("b", 1))
)


def built() -> BuiltLists:
    """``x`` has a-1 and b-0, ``y`` nothing, ``z`` a-0, a-2 and b-1 (builder order)."""
    ids = np.array([1, 3, 0, 2, 4], dtype=np.int64)
    return BuiltLists(SPACE, ["x", "y", "z"], ids, np.array([0, 2, 2, 5], dtype=np.int64))


def test_built_lists_read_as_a_mapping_of_each_members_partitions() -> None:
    lists = built()
    assert list(lists) == ["x", "y", "z"] and len(lists) == 3
    assert dict(lists) == {"x": (A1, B0), "y": (), "z": (A0, A2, B1)}
    assert lists.get("w") is None


def test_built_lists_columns_follow_the_order_asked_and_skip_no_member() -> None:
    columns = built().columns(["z", "w", "x", "y"])  # "w" is not in the answer: nothing
    assert columns.ids.tolist() == [0, 2, 4, 1, 3]
    assert columns.ends.tolist() == [3, 3, 5, 5]
    assert built().columns([]).ids.tolist() == []


def test_assigned_members_equal_the_tuple_they_stand_for() -> None:
    columns = built().columns(["x", "y", "z"])
    members = AssignedMembers(["x", "y", "z"], columns, {"z": (A0,)})
    expected = (
        MemberAssignment("x", (A1, B0)),
        MemberAssignment("y", ()),
        MemberAssignment("z", (A0, A2, B1), (A0,)),
    )
    assert members == expected and expected == members and tuple(members) == expected
    assert hash(members) == hash(expected) and len(members) == 3
    assert members[-1] == expected[-1] and members[1:] == expected[1:]
    assert members[0] is members[0]  # made once
    assert members != expected[:2] and members != (*expected[:2], MemberAssignment("z", ()))
    assert members.revoked_lists() == [(), (), (A0,)]
    assert AssignedMembers(["x", "y", "z"], columns, {}).revoked_lists() == []
    assert pickle.loads(pickle.dumps(members)) == expected
