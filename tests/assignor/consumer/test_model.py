"""``consumer_group`` refuses what no real group sends, naming the field and the member."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.consumer import Member, Topic, TopicPartition, consumer_group
from kassign.assignor.consumer.model import as_topic_partitions, check_partitions, topic_partitions
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


_CLAIMS = st.lists(
    st.builds(TopicPartition, st.sampled_from(["t0", "t1", "t2", "bad topic"]), st.integers(-1, 4)),
    max_size=8,
)


@settings(max_examples=300)
@given(_CLAIMS)
def test_claims_are_checked_as_walked_one_by_one(claims: list[TopicPartition]) -> None:
    """``check_partitions``'s set and min/max passes refuse what the walk refuses (the first
    fault in claim order) and accept what it accepts; topics of 2, 3 and 5 partitions."""
    topics = {t.name: t for t in (Topic.without_racks(f"t{i}", n) for i, n in enumerate((2, 3, 5)))}

    def walked() -> str | None:
        seen: set[TopicPartition] = set()
        for tp in claims:
            if tp.topic not in topics and " " in tp.topic:
                return f"illegal topic name {tp.topic!r}"
            if tp in seen:
                return f"{tp} listed twice"
            seen.add(tp)
            count = topics[tp.topic].partitions if tp.topic in topics else 2**31 - 1
            if not 0 <= tp.partition < count:
                return f"{tp} is not a partition of the topic"
        return None

    try:
        check_partitions(claims, topics, field="owned_partitions", member="m")
    except InvalidRequest as exc:
        assert (exc.reason, exc.field, exc.member) == (walked(), "owned_partitions", "m")
    else:
        assert walked() is None


def test_partitions_built_in_bulk_are_topic_partitions() -> None:
    built = as_topic_partitions([("t0", 1), ("t1", 0)]) + tuple(topic_partitions("t2", range(2)))
    expected = (
        TopicPartition("t0", 1),
        TopicPartition("t1", 0),
        TopicPartition("t2", 0),
        TopicPartition("t2", 1),
    )
    assert built == expected
    assert all(
        type(tp) is TopicPartition and tp.topic == e.topic
        for tp, e in zip(built, expected, strict=True)
    )
