"""``consumer_group`` refuses what no real group sends, naming the field and the member."""

from __future__ import annotations

import pytest
from kassign.assignor.consumer import Member, Topic, TopicPartition, consumer_group
from kassign.assignor.errors import InvalidRequest

TOPICS = [Topic.without_racks("t0", 2)]


def _member(**fields: object) -> Member:
    return Member(**{"member_id": "m", "topics": ("t0",), **fields})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("members", "field", "member"),
    [
        ([], "members", None),
        ([_member(member_id="")], "member_id", None),
        ([_member(), _member()], "member_id", "m"),
        ([_member(topics=("t0", "t0"))], "topics", "m"),
        ([_member(topics=("bad topic",))], "topics", "m"),
        ([_member(group_instance_id="")], "group_instance_id", "m"),
        (
            [_member(group_instance_id="i"), _member(member_id="n", group_instance_id="i")],
            "group_instance_id",
            "n",
        ),
        ([_member(generation=2**31)], "generation", "m"),
        ([_member(owned_partitions=(TopicPartition("t0", 2),))], "owned_partitions", "m"),
        ([_member(owned_partitions=(TopicPartition("t0", -1),))], "owned_partitions", "m"),
        (
            [_member(owned_partitions=(TopicPartition("t0", 0), TopicPartition("t0", 0)))],
            "owned_partitions",
            "m",
        ),
    ],
)
def test_refused(members: list[Member], field: str, member: str | None) -> None:
    with pytest.raises(InvalidRequest) as raised:
        consumer_group(members, TOPICS)
    assert (raised.value.field, raised.value.member) == (field, member)


def test_accepted_as_kafka_accepts_it() -> None:
    group = consumer_group(
        [
            _member(topics=("t0", "gone"), owned_partitions=(TopicPartition("gone", 7),)),
            _member(member_id="n", topics=(), rack_id=""),
        ],
        [Topic.without_racks("t1", 0), *TOPICS],
    )
    assert list(group.topics) == ["t0", "t1"]  # sorted by name
    assert [m.member_id for m in group.members] == ["m", "n"]  # arrival order kept
    assert group.members[1].rack is None  # an empty rack is no rack
    assert group.partition_count("gone") == 0 and group.partition_count("t1") == 0


def test_refuses_a_topic_listed_twice() -> None:
    with pytest.raises(InvalidRequest, match="listed twice"):
        consumer_group([_member()], [*TOPICS, *TOPICS])
