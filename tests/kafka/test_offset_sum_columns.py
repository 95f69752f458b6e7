"""kafka/offset_sum_columns.py: offset sums read as columns hold what the dataclass read holds."""

from __future__ import annotations

import dataclasses
from uuid import UUID

import pytest
from hypothesis import given, settings
from kassign.kafka.buffer import WireError
from kassign.kafka.subscription_info import (
    PartitionOffsetSum,
    SubscriptionInfoData,
    SubtopologyOffsetSums,
    TaskOffsetSum,
    decode_subscription_columns,
    decode_subscription_info,
    encode_subscription_info,
)

from tests.kafka.strategies import subscription_infos


def _rows(data: bytes) -> tuple[SubscriptionInfoData, list[tuple[int, int, int]]] | None:
    read = decode_subscription_columns(data)
    if read is None:
        return None
    info, columns = read
    return info, list(zip(columns.subtopologies, columns.partitions, columns.offset_sums))


@settings(max_examples=150, deadline=None)
@given(subscription_infos() | subscription_infos(plausible=True))
def test_columns_hold_the_sums_and_the_rest_as_decoded(info: SubscriptionInfoData) -> None:
    data = encode_subscription_info(info)
    sums = decode_subscription_info(data).offset_sums()
    read = _rows(data)
    if info.version <= 6 or any(s.named_topology is not None for s in sums):
        assert read is None
        return
    assert read is not None
    rest, rows = read
    assert rows == [(s.topic_group_id, s.partition, s.offset_sum) for s in sums]
    assert rest == dataclasses.replace(info, grouped_offset_sums=(), task_offset_sums=())


@pytest.mark.parametrize("version", [9, 11])
def test_long_arrays_are_read_across_chunks(version: int) -> None:
    n = 2_500  # over two of the reader's chunks
    grouped = (SubtopologyOffsetSums(3, tuple(PartitionOffsetSum(p, p * 7) for p in range(n))),)
    flat = tuple(TaskOffsetSum(p % 5, p, -2 if p % 2 else p) for p in range(n))
    info = SubscriptionInfoData(
        version=version,
        process_id=UUID(int=9),
        latest_supported_version=11,
        grouped_offset_sums=grouped if version == 9 else (),
        task_offset_sums=flat if version == 11 else (),
    )
    read = _rows(encode_subscription_info(info))
    assert read is not None
    assert read[1] == [(s.topic_group_id, s.partition, s.offset_sum) for s in info.offset_sums()]


def test_a_named_topology_after_a_chunk_sends_the_caller_back() -> None:
    sums = tuple(TaskOffsetSum(0, p, 1) for p in range(1_500)) + (TaskOffsetSum(0, 9_999, 1, "t"),)
    data = encode_subscription_info(
        SubscriptionInfoData(version=10, process_id=UUID(int=1), task_offset_sums=sums)
    )
    assert decode_subscription_columns(data) is None
    assert decode_subscription_info(data).task_offset_sums == sums


@pytest.mark.parametrize("cut", [1, 12, 100])
def test_truncated_sums_are_refused(cut: int) -> None:
    info = SubscriptionInfoData(
        version=9,
        process_id=UUID(int=1),
        grouped_offset_sums=(SubtopologyOffsetSums(0, (PartitionOffsetSum(1, 2),) * 20),),
    )
    with pytest.raises(WireError):
        decode_subscription_columns(encode_subscription_info(info)[:-cut])
