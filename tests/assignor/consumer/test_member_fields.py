"""``members_of_fields``: the same ``Member``s as ``Member(...)`` from the same values."""

from __future__ import annotations

import dataclasses
from itertools import repeat

import pytest
from kassign.assignor.claims import OwnedPartitions, TopicPartition
from kassign.assignor.consumer.member_fields import members_of_fields
from kassign.assignor.consumer.model import Member

EXPECTED = [
    Member(member_id="m1", topics=("a", "b"), rack_id="r1"),
    Member(
        member_id="m0",
        topics=("b",),
        group_instance_id="i0",
        owned_partitions=OwnedPartitions.sorted_from([TopicPartition("b", 2)]),
        generation=7,
        user_data=b"\x00\x01",
    ),
]
NAMES = [f.name for f in dataclasses.fields(Member)]


def test_members_of_fields_equal_the_members_init_makes() -> None:
    column = {name: [getattr(m, name) for m in EXPECTED] for name in NAMES}
    made = members_of_fields(column.pop("member_id"), **column)  # type: ignore[arg-type]
    assert made == EXPECTED
    assert [hash(m) for m in made] == [hash(m) for m in EXPECTED]
    assert [dataclasses.astuple(m) for m in made] == [dataclasses.astuple(m) for m in EXPECTED]
    assert made[0].rack == "r1" and made[1].rack is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        made[0].generation = 3  # type: ignore[misc]


def test_members_of_fields_takes_every_field_of_member() -> None:
    assert NAMES[0] == "member_id"
    given = {name: repeat(None) for name in NAMES[1:]}
    assert members_of_fields(["x"], **given)[0].member_id == "x"  # type: ignore[arg-type]
