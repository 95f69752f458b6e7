"""decode/members.py: one member's subscription; every bad input an InvalidRequest naming field and member."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.errors import InvalidRequest
from kassign.kafka.subscription_info import encode_subscription_info
from kassign.server.streams.decode import decode_request
from kassign.server.streams.decode.configs import MAX_STANDBY_REPLICAS
from kassign.v1 import assignment_pb2 as pb
from kassign_client.kafka_bytes import info_from_pb

from tests.server.streams.decode.builders import (
    P2,
    RAW_NULL_USER_DATA,
    info,
    invalid,
    member,
    request,
    task,
)
from tests.server.test_vectors import VECTORS


@pytest.mark.parametrize(
    ("req", "field", "who", "says"),
    [
        (request(), "members", None, "at least one member"),
        (request(member("a"), member("a", P2)), "members[1].member_id", "a", "duplicate"),
        (request(member("")), "member_id", None, "empty"),
        (request(pb.MemberSubscription(member_id="a")), "kind", "a", "neither"),
        (
            request(pb.MemberSubscription(member_id="a", subscription=pb.ConsumerSubscription())),
            "subscription.info",
            "a",
            "no Kafka Streams userData",
        ),
        (
            request(pb.MemberSubscription(member_id="a", raw_subscription=RAW_NULL_USER_DATA)),
            "raw_subscription.user_data",
            "a",
            "userData",
        ),
        (
            request(pb.MemberSubscription(member_id="a", raw_subscription=b"\x00")),
            "raw_subscription",
            "a",
            "truncated",
        ),
        (request(member("a", "not-a-uuid")), "subscription.info.process_id", "a", "not a UUID"),
        (request(member("a", "")), "subscription.info.process_id", "a", "missing"),
        (
            request(member("a", rack="r1"), member("b", rack="r2")),
            "subscription.rack_id",
            "b",
            "two racks",
        ),
        (
            request(member("a", user_end_point="h:1"), member("b", user_end_point="h:2")),
            "subscription.info.user_end_point",
            "b",
            "h:2",
        ),
        (
            request(member("a", client_tags=[pb.ClientTag(key="z", value="1")]), member("b")),
            "subscription.info.client_tags",
            "b",
            "client tags",
        ),
        (
            request(member("a", user_end_point="no-port")),
            "subscription.info.user_end_point",
            "a",
            "host:port",
        ),
        (request(member("a", sums={(0, 0): -1})), "subscription.info.task_offset_sums", "a", "-1"),
        (
            request(member("a", sums={(-1, 0): 5})),
            "subscription.info.task_offset_sums",
            "a",
            "negative",
        ),
        (request(member("a", version=12)), "subscription.info.version", "a", "newer than 11"),
        (request(member("a", version=0)), "subscription.info.version", "a", "unknown"),
        (
            request(member("a", latest_supported_version=9)),
            "subscription.info.latest_supported_version",
            "a",
            "below",
        ),
        (request(member("a", unique_field=300)), "subscription.info.unique_field", "a", "byte"),
        (
            request(member("a", owned=(("t", 1), ("t", 1)))),
            "subscription.owned_partitions",
            "a",
            "twice",
        ),
        (
            request(member("a"), tasks=[task(0, 0), task(0, 0)]),
            "tasks[1].id",
            None,
            "duplicate task id 0_0",
        ),
        (request(member("a"), tasks=[pb.TaskInfo()]), "tasks[0].id", None, "missing"),
        (
            request(member("a"), tasks=[task(0, 0, end=-5)]),
            "tasks[0].changelog_end_offset_sum",
            None,
            "negative",
        ),
        (
            request(member("a"), acceptable_recovery_lag=-1),
            "configs.acceptable_recovery_lag",
            None,
            "at least 0",
        ),
        (
            request(member("a"), max_warmup_replicas=0),
            "configs.max_warmup_replicas",
            None,
            "at least 1",
        ),
        (
            request(member("a"), num_standby_replicas=-1),
            "configs.num_standby_replicas",
            None,
            "between",
        ),
        (
            request(member("a"), num_standby_replicas=MAX_STANDBY_REPLICAS + 1),
            "configs.num_standby_replicas",
            None,
            "between",
        ),
        (
            request(member("a"), probing_rebalance_interval_ms=59_999),
            "configs.probing_rebalance_interval_ms",
            None,
            "at least 60000",
        ),
        (
            request(member("a"), rack_aware_assignment_tags=list("abcdef")),
            "configs.rack_aware_assignment_tags",
            None,
            "at most 5",
        ),
        (
            request(member("a"), rack_aware_strategy=99),
            "configs.rack_aware_strategy",
            None,
            "unknown",
        ),
        (request(member("a"), assignor="nope"), "configs.assignor", None, "unknown assignor"),
        (
            request(member("a"), assignment_time_budget_ms=0),
            "configs.assignment_time_budget_ms",
            None,
            "between",
        ),
        (request(member("a"), traffic_cost=-1), "configs.traffic_cost", None, "between"),
        (
            request(member("a"), non_overlap_cost=2**20 + 1),
            "configs.non_overlap_cost",
            None,
            "between",
        ),
    ],
)
def test_bad_input_names_field_and_member(
    req: pb.AssignRequest, field: str, who: str | None, says: str
) -> None:
    err = invalid(req)
    assert (err.field, err.member) == (field, who)
    assert says in str(err)


def test_negative_generation_and_time() -> None:
    m = member("a")
    m.subscription.generation_id = -5
    assert invalid(request(m)).field == "subscription.generation_id"
    m.subscription.generation_id = -1  # Kafka's "unknown"
    assert decode_request(request(m), now_ms=0).members[0].generation_id is None
    req = request(member("a"))
    req.now_ms = -1
    assert invalid(req).field == "now_ms"


def test_bytes_errors_name_the_byte_offset() -> None:
    good = encode_subscription_info(info_from_pb(info()))
    for data, says in [
        (good[:-1], "truncated"),
        (good + b"\x00", "trailing"),
        (b"\x00\x00\x00\x0c\x00\x00\x00\x0d", "12"),
    ]:
        m = pb.MemberSubscription(
            member_id="a", subscription=pb.ConsumerSubscription(info_bytes=data)
        )
        err = invalid(request(m))
        assert err.member == "a" and says in str(err)
        assert err.field == "subscription.info_bytes" + (".version" if says == "12" else "")


@settings(max_examples=200, deadline=None)
@given(raw=st.binary(max_size=120), as_info=st.booleans())
def test_random_bytes_are_a_request_or_invalid_request(raw: bytes, as_info: bool) -> None:
    m = (
        pb.MemberSubscription(member_id="a", subscription=pb.ConsumerSubscription(info_bytes=raw))
        if as_info
        else pb.MemberSubscription(member_id="a", raw_subscription=raw)
    )
    try:
        decode_request(request(m), now_ms=0)
    except InvalidRequest:
        pass


@settings(max_examples=200, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, 500), st.integers(0, 255)), min_size=1, max_size=3))
def test_mutated_kafka_bytes_are_a_request_or_invalid_request(edits: list[tuple[int, int]]) -> None:
    data = bytearray((VECTORS / "consumer_subscription_v3.bin").read_bytes())
    for index, value in edits:
        data[index % len(data)] = value
    try:
        decode_request(
            request(pb.MemberSubscription(member_id="a", raw_subscription=bytes(data))), now_ms=0
        )
    except InvalidRequest:
        pass
