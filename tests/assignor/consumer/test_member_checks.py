"""The group's columns checked at once (``member_checks.plainly_sound``, ``any_claimed``,
``cooperative_members_data``): each says "sound" only where the member-by-member way finds
nothing, and gives the same values where it takes over (issue 24)."""

from __future__ import annotations

import dataclasses

import pytest
from kassign.assignor.claims import OwnedPartitions, TopicPartition, any_claimed
from kassign.assignor.consumer.cooperative_sticky import (
    cooperative_member_data,
    cooperative_members_data,
)
from kassign.assignor.consumer.member_checks import plainly_sound
from kassign.assignor.consumer.model import ConsumerGroup, Member, Topic
from kassign.assignor.consumer.sticky_base import MemberData, member_hash_order, resolve_ownership
from kassign.assignor.shared_objects import distinct_objects

_SHARED = ("a", "b")
_NOTHING = OwnedPartitions()
_GROUP = [Member(member_id=f"m{i}", topics=_SHARED, owned_partitions=_NOTHING) for i in range(4)]


def _with(index: int, **changes: object) -> list[Member]:
    group = list(_GROUP)
    group[index] = dataclasses.replace(group[index], **changes)  # type: ignore[arg-type]
    return group


def test_a_fresh_group_sharing_one_list_is_plainly_sound() -> None:
    assert plainly_sound(_GROUP, {"a", "b"})
    assert plainly_sound(_with(2, topics=("c", "a")), {"a", "b"})  # a legal unknown topic


@pytest.mark.parametrize(
    "group",
    [
        _with(3, member_id="m0"),
        _with(1, member_id=""),
        _with(0, group_instance_id=""),
        [dataclasses.replace(m, group_instance_id="i") for m in _GROUP[:2]],
        _with(2, generation=2**31),
        _with(2, topics=("a", "a")),
        _with(3, topics=("a", "no/slash")),
    ],
    ids=[
        "id-twice",
        "empty-id",
        "empty-instance",
        "instance-twice",
        "generation",
        "topic-twice",
        "illegal",
    ],
)
def test_any_member_fault_sends_the_group_to_the_walk(group: list[Member]) -> None:
    assert not plainly_sound(group, {"a", "b"})


def test_any_claimed_asks_each_distinct_object() -> None:
    owned = OwnedPartitions.sorted_from([TopicPartition("a", 1)])
    assert not any_claimed([_NOTHING] * 5)
    assert not any_claimed([])
    assert any_claimed([_NOTHING, _NOTHING, owned])
    assert any_claimed([owned] * 3)
    assert any_claimed([(), (TopicPartition("a", 0),)])


def test_cooperative_members_data_is_each_members() -> None:
    owned = OwnedPartitions.sorted_from([TopicPartition("a", 1)])
    fresh = _with(1, owned_partitions=owned)
    mixed = _with(2, generation=4, owned_partitions=owned)
    for group in (_GROUP, fresh, mixed, _with(0, user_data=b"\x00\x00\x00\x03")):
        expected = {m.member_id: cooperative_member_data(m) for m in group}
        assert cooperative_members_data(group) == expected
    shared = cooperative_members_data(_GROUP)
    assert len({id(d) for d in shared.values()}) == 1  # one object for the fresh group


def test_distinct_objects_are_by_identity_in_first_seen_order() -> None:
    first, equal = ("a", "b"), tuple("ab")  # equal, another object
    assert first == equal and first is not equal
    assert distinct_objects([]) == []
    assert distinct_objects([first] * 3) == [first]
    found = distinct_objects([first, equal, first])
    assert len(found) == 2 and found[0] is first and found[1] is equal


@pytest.mark.parametrize("size", [30, 49, 400])
def test_hash_ordered_members_keep_their_order_in_the_second_map(size: int) -> None:
    """``resolve_ownership(hash_ordered=True)`` takes ``member_hash_order``'s order for the
    second map past 48 members: the replay's order, as without the flag."""
    group = ConsumerGroup(
        tuple(Member(member_id=f"consumer-{i}-{i * 7919:x}", topics=_SHARED) for i in range(size)),
        {t: Topic.without_racks(t, 4) for t in _SHARED},
    )
    members = member_hash_order(group)
    data = {m.member_id: MemberData(_NOTHING, None) for m in members}
    replayed = resolve_ownership(members, {"a": 4, "b": 4}, data).owned
    kept = resolve_ownership(members, {"a": 4, "b": 4}, data, hash_ordered=True).owned
    assert list(kept) == list(replayed)
    assert (list(kept) == [m.member_id for m in members]) or size <= 48
