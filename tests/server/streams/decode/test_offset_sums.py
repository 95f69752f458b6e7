"""decode/offset_sums.py: sums of tasks the topology lacks are dropped as they are decoded."""

from __future__ import annotations

import tracemalloc
from uuid import UUID

import pytest
from kassign.assignor.streams.model import TaskId
from kassign.kafka.subscription_info import (
    PartitionOffsetSum,
    SubscriptionInfoData,
    SubtopologyOffsetSums,
    decode_subscription_info,
    encode_subscription_info,
)
from kassign.server.streams.decode import decode_request
from kassign.server.streams.decode.kafka_bytes import info_to_pb

from tests.server.streams.decode.builders import P1, member, request, task, three_ways
from tests.server.streams.decode.builders import info as info_message


@pytest.mark.parametrize("way", [0, 1, 2])  # structured, userData bytes, raw subscription
def test_a_member_keeps_only_the_topologys_sums_and_counts_the_others(way: int) -> None:
    sent = three_ways(info_message(P1, sums={(9, 1): 2, (0, 0): 5, (7, 7): 3, (0, 1): -2}))[way]
    decoded = decode_request(sent, now_ms=1)
    (got,) = decoded.members
    assert got.offset_sums == ((TaskId(0, 0), 5), (TaskId(0, 1), -2))
    assert (got.ignored_sums, got.ignored_first) == (2, (TaskId(7, 7), TaskId(9, 1)))
    assert (
        "member 'a': ignored offset sums of 2 task(s) the topology does not have: 7_7, 9_1"
        in decoded.notes
    )


def test_the_note_names_ten_ignored_tasks_in_task_order() -> None:
    sums = {(5, p): 1 for p in range(30, 0, -1)}
    decoded = decode_request(request(member("a", sums=sums)), now_ms=1)
    assert decoded.members[0].ignored_first == tuple(TaskId(5, p) for p in range(1, 11))
    assert decoded.notes == (
        "member 'a': ignored offset sums of 30 task(s) the topology does not have: "
        + ", ".join(f"5_{p}" for p in range(1, 11))
        + " and 20 more",
    )


def test_a_topology_of_named_tasks_only_keeps_no_unnamed_sum() -> None:
    """The columns' check then searches an empty list of the topology's unnamed tasks."""
    named = task(0, 0)
    named.id.named_topology = "n"
    sent = request(member("a", sums={(0, 0): 5, (1, 2): 3}), tasks=[named])
    (got,) = decode_request(sent, now_ms=1).members
    assert (got.offset_sums, got.ignored_sums) == ((), 2)
    assert got.ignored_first == (TaskId(0, 0), TaskId(1, 2))


@pytest.mark.parametrize("as_bytes", [True, False])
def test_a_member_reporting_many_sums_keeps_no_object_per_sum(as_bytes: bool) -> None:
    n = 20_000 if as_bytes else 8_000  # messages take longer to build
    groups = tuple(
        SubtopologyOffsetSums(g, tuple(PartitionOffsetSum(p, 10) for p in range(1_000)))
        for g in range(n // 1_000)
    )
    data = encode_subscription_info(
        SubscriptionInfoData(
            version=9, process_id=UUID(P1), latest_supported_version=11, grouped_offset_sums=groups
        )
    )
    sent = request(member("a"))
    if as_bytes:
        sent.members[0].subscription.info_bytes = data
    else:
        sent.members[0].subscription.info.CopyFrom(info_to_pb(decode_subscription_info(data)))
    tracemalloc.start()
    try:
        decoded = decode_request(sent, now_ms=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 120 * n  # about 500 bytes a sum when each became a TaskId and a pair
    assert decoded.members[0].ignored_sums == n - 3  # 0_0, 0_1 and 1_0 are the topology's
