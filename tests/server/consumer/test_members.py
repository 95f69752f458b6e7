"""The members read for the whole group at once (``members.py``): the first member at fault
is named, with the fault a walk in member order finds first, raw and structured alike."""

from __future__ import annotations

import pytest
from kassign.assignor.errors import InvalidRequest
from kassign.server.consumer import members as member_reads
from kassign.server.consumer.decode import decode_request
from kassign.server.consumer.member_columns import member_columns, request_bytes
from kassign.server.consumer.members import _plain_compact, decode_members
from kassign.server.consumer.owned_wire import owned_of
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

_TOPICS = [cpb.ConsumerTopic(name="t", partition_count=4)]


def _good(who: str) -> pb.MemberSubscription:
    return pb.MemberSubscription(member_id=who, subscription=pb.ConsumerSubscription(topics=["t"]))


def _listed_twice(who: str) -> pb.MemberSubscription:
    sub = pb.ConsumerSubscription(topics=["t"], topic_list=0)
    return pb.MemberSubscription(member_id=who, subscription=sub)


def _info(who: str) -> pb.MemberSubscription:
    sub = pb.ConsumerSubscription(topic_list=7, info=pb.SubscriptionInfo())
    return pb.MemberSubscription(member_id=who, subscription=sub)


def _bad_raw(who: str) -> pb.MemberSubscription:
    return pb.MemberSubscription(member_id=who, raw_subscription=b"\x00\x03\xff")


def _error(*members: pb.MemberSubscription) -> InvalidRequest:
    request = cpb.ConsumerAssignRequest(
        assignor="range",
        members=members,
        topics=_TOPICS,
        topic_lists=[cpb.TopicList(topics=["t"])],
    )
    with pytest.raises(InvalidRequest) as caught:
        decode_request(request)
    return caught.value


@pytest.mark.parametrize(
    ("members", "member", "field"),
    [
        ((_good("a"), _bad_raw("b"), _listed_twice("c")), "b", "raw_subscription"),
        ((_good("a"), _listed_twice("b"), _bad_raw("c")), "b", "subscription.topic_list"),
        ((_info("a"), _listed_twice("b")), "a", "subscription.info"),  # info before its topics
        ((_good("a"), pb.MemberSubscription(member_id="b"), _info("c")), "b", "kind"),
    ],
    ids=["raw-first", "structured-first", "within-a-member", "no-kind"],
)
def test_the_first_member_at_fault_is_named(
    members: tuple[pb.MemberSubscription, ...], member: str, field: str
) -> None:
    error = _error(*members)
    assert (error.member, error.field) == (member, field)


def test_an_empty_member_id_comes_before_a_later_fault() -> None:
    error = _error(_good("a"), _good(""), _bad_raw("c"))
    assert (error.member, error.field) == (None, "member_id")


def _compact(who: str, **fields: object) -> pb.MemberSubscription:
    sub = pb.ConsumerSubscription(topic_list=0, **fields)  # type: ignore[arg-type]
    return pb.MemberSubscription(member_id=who, subscription=sub)


@pytest.mark.parametrize(
    "members",
    [
        (_compact("a"), _compact("b"), _compact("c")),
        (_compact("a", rack_id="r"), _compact("b", generation_id=3), _compact("c")),
        (_compact("b", user_data_bytes=b"\x01"), _compact("a", info_bytes=b"\x02")),
    ],
    ids=["fresh", "racks-generations", "user-data"],
)
def test_a_plain_compact_group_reads_as_member_by_member(
    members: tuple[pb.MemberSubscription, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plug-in's group (shared lists, nothing owned) read column by column gives what the
    general read gives: the same members, user data paths and compact fields."""
    columns = member_columns(request_bytes(members), members)
    lists = [("t",)]
    plain = decode_members(columns, lists, owned_of(columns))
    assert _plain_compact(columns, owned_of(columns), len(lists))
    monkeypatch.setattr(member_reads, "_plain_compact", lambda *_: False)
    assert decode_members(columns, lists, owned_of(columns)) == plain


def test_a_group_with_a_fault_is_not_plain() -> None:
    for members in ((_compact("a"), _compact("")), (_compact("a"), _compact("b", topics=["t"]))):
        columns = member_columns(request_bytes(members), members)
        assert not _plain_compact(columns, owned_of(columns), 1)
    members = (
        _compact("a"),
        pb.MemberSubscription(member_id="b", subscription=pb.ConsumerSubscription(topic_list=1)),
    )
    columns = member_columns(request_bytes(members), members)
    assert not _plain_compact(columns, owned_of(columns), 1)
