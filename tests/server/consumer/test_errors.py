"""Every bad input ends as INVALID_ARGUMENT naming the field and the member, through a real server."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import grpc
import pytest
from kassign.kafka.consumer_user_data import encode_sticky_user_data
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb
from kassign.v1 import consumer_pb2_grpc

from tests.server.consumer.requests import member_index, racked_group, structured
from tests.server.running import in_process

Edit = Callable[[cpb.ConsumerAssignRequest], None]


@pytest.fixture(scope="module")
def stub() -> Iterator[consumer_pb2_grpc.ConsumerAssignmentServiceStub]:
    with in_process() as (_, target), grpc.insecure_channel(target) as channel:
        yield consumer_pb2_grpc.ConsumerAssignmentServiceStub(channel)


def _set(attr: str, value: object) -> Edit:
    return lambda r: setattr(r, attr, value)


def _sub(member: str, edit: Callable[[pb.ConsumerSubscription], None]) -> Edit:
    return lambda r: edit(structured(r, member))


def _member(member: str, edit: Callable[[pb.MemberSubscription], None]) -> Edit:
    return lambda r: edit(r.members[member_index(r, member)])


def _raw(member: str, data: bytes) -> Edit:
    return _member(member, lambda m: setattr(m, "raw_subscription", data))


def _owned(topic: str, partition: int) -> Callable[[pb.ConsumerSubscription], None]:
    return lambda s: s.owned_partitions.add(topic=topic, partition=partition)


def _sticky_user_data(data: bytes) -> Callable[[pb.ConsumerSubscription], None]:
    return lambda s: setattr(s, "user_data_bytes", data)


def _duplicate_member(r: cpb.ConsumerAssignRequest) -> None:
    r.members.add().CopyFrom(r.members[1])


def _topic_twice(r: cpb.ConsumerAssignRequest) -> None:
    r.topics.add().CopyFrom(r.topics[0])


def _instances(r: cpb.ConsumerAssignRequest) -> None:
    r.members[0].group_instance_id = "same"
    r.members[3].group_instance_id = "same"


def _audit_only(r: cpb.ConsumerAssignRequest) -> None:
    """The members reading audit read nothing else: no member reads orders and audit both."""
    for m in r.members:
        if "audit" in m.subscription.topics:
            del m.subscription.topics[:]
            m.subscription.topics.append("audit")


def _co_partitioned(*topics: str) -> Edit:
    return lambda r: r.options.co_partitioned.add(topics=list(topics))


# v3 with a null userData and owned partition orders-99 (not in the metadata)
RAW_BAD_OWNED = (
    b"\x00\x03" + b"\x00\x00\x00\x01\x00\x06orders" + b"\xff\xff\xff\xff"
    b"\x00\x00\x00\x01\x00\x06orders\x00\x00\x00\x01\x00\x00\x00\x63" + b"\x00\x00\x00\x01\xff\xff"
)
BAD_STICKY = encode_sticky_user_data([("orders", [0, 0])], 3)

CASES: dict[str, tuple[str, Edit, str, str | None]] = {
    # name: (assignor, edit, field, member)
    "no assignor": ("range", _set("assignor", ""), "assignor", None),
    "unknown assignor": ("range", _set("assignor", "fastest"), "assignor", None),
    "no members": ("range", lambda r: r.ClearField("members"), "members", None),
    "empty member id": (
        "range",
        _member("m2", lambda m: setattr(m, "member_id", "")),
        "member_id",
        None,
    ),
    "member twice": ("range", _duplicate_member, "member_id", "m1"),
    "instance id twice": ("sticky", _instances, "group_instance_id", "m3"),
    "no subscription": (
        "range",
        _member("m2", lambda m: m.ClearField("subscription")),
        "kind",
        "m2",
    ),
    "structured Streams info": (
        "range",
        _sub("m4", lambda s: s.info.CopyFrom(pb.SubscriptionInfo(version=11))),
        "subscription.info",
        "m4",
    ),
    "topic subscribed twice": (
        "range",
        _sub("m2", lambda s: s.topics.append("orders")),
        "subscription.topics",
        "m2",
    ),
    "illegal topic name": (
        "range",
        _sub("m5", lambda s: s.topics.append("a/b")),
        "subscription.topics",
        "m5",
    ),
    "owned partition out of range": (
        "cooperative-sticky",
        _sub("m5", _owned("orders", 12)),
        "subscription.owned_partitions",
        "m5",
    ),
    "negative owned partition": (
        "cooperative-sticky",
        _sub("m6", _owned("audit", -1)),
        "subscription.owned_partitions",
        "m6",
    ),
    "owned partition twice": (
        "range",
        _sub("m0", lambda s: s.owned_partitions.append(s.owned_partitions[0])),
        "subscription.owned_partitions",
        "m0",
    ),
    "truncated raw subscription": (
        "range",
        _raw("m3", b"\x00\x03\x00\x00"),
        "raw_subscription",
        "m3",
    ),
    "negative raw version": ("range", _raw("m3", b"\xff\xff"), "raw_subscription", "m3"),
    "raw owned partition out of range": (
        "range",
        _raw("m1", RAW_BAD_OWNED),
        "raw_subscription.owned_partitions",
        "m1",
    ),
    "sticky userData repeats a partition": (
        "sticky",
        _sub("m6", _sticky_user_data(BAD_STICKY)),
        "subscription.user_data_bytes",
        "m6",
    ),
    "raw sticky userData repeats a partition": (
        "sticky",
        _raw(
            "m6",
            b"\x00\x00\x00\x00\x00\x01\x00\x06orders"
            + len(BAD_STICKY).to_bytes(4, "big")
            + BAD_STICKY,
        ),
        "raw_subscription.user_data",
        "m6",
    ),
    "topic listed twice": ("range", _topic_twice, "topics[3]", None),
    "illegal topic in metadata": (
        "range",
        lambda r: setattr(r.topics[1], "name", "bad topic"),
        "topics[1].name",
        None,
    ),
    "unknown protocol": (
        "range",
        lambda r: setattr(r.options, "protocol", 7),
        "options.protocol",
        None,
    ),
    "co-partitioned topic repeated": (
        "range",
        _co_partitioned("orders", "orders", "audit"),
        "options.co_partitioned[0].topics",
        None,
    ),
    "a topic in two co-partitioned sets": (
        "rack-optimal",
        lambda r: (_co_partitioned("orders", "payments")(r), _co_partitioned("audit", "orders")(r)),
        "options.co_partitioned[1]",
        None,
    ),
    "a co-partitioned topic nobody reads": (
        "rack-optimal",
        _co_partitioned("orders", "unread"),
        "options.co_partitioned[0]",
        None,
    ),
    "co-partitioned topics nobody reads together": (
        "rack-optimal",
        lambda r: (_audit_only(r), _co_partitioned("orders", "audit")(r)),
        "options.co_partitioned",
        None,
    ),
    "negative stickiness": (
        "rack-optimal",
        lambda r: setattr(r.options, "stickiness_cost", -0.5),
        "options.stickiness_cost",
        None,
    ),
    "infinite stickiness": (
        "rack-optimal",
        lambda r: setattr(r.options, "stickiness_cost", float("inf")),
        "options.stickiness_cost",
        None,
    ),
    "zero budget": (
        "range",
        lambda r: setattr(r.options, "solver_time_budget_ms", 0),
        "options.solver_time_budget_ms",
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_is_invalid_argument_naming_field_and_member(stub, name: str) -> None:  # type: ignore[no-untyped-def]
    assignor, edit, field, member = CASES[name]
    request = racked_group(assignor)
    edit(request)
    with pytest.raises(grpc.RpcError) as error:
        stub.Assign(request, timeout=30)
    assert error.value.code() is grpc.StatusCode.INVALID_ARGUMENT, error.value.details()
    metadata = dict(error.value.trailing_metadata())
    assert metadata["kassign-field"] == field, error.value.details()
    assert metadata.get("kassign-member") == member
    assert field in error.value.details()
    if member is not None:
        assert repr(member) in error.value.details()


def test_every_case_is_valid_without_its_edit(stub) -> None:  # type: ignore[no-untyped-def]
    """The cases fail for their edit alone: the same requests without it are answered."""
    for assignor in sorted({a for a, _, _, _ in CASES.values()}):
        assert len(stub.Assign(racked_group(assignor), timeout=30).members) == 7
