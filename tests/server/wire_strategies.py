"""Hypothesis strategies for the wire formats: any value a version can carry, edge values included."""

from __future__ import annotations

from uuid import UUID

from hypothesis import strategies as st

from server.wire.consumer_protocol import ConsumerProtocolSubscription, OwnedTopicPartitions
from server.wire.subscription_info import (
    ClientTag,
    PartitionOffsetSum,
    SubscriptionInfoData,
    SubtopologyOffsetSums,
    TaskOffsetSum,
    WireTaskId,
)

INT8 = st.integers(-(2**7), 2**7 - 1)
INT16 = st.integers(-(2**15), 2**15 - 1)
INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
# Text that UTF-8 can carry (no lone surrogates), short enough for an int16 length.
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
UUIDS = st.builds(UUID, int=st.integers(0, 2**128 - 1))
SMALL = {"max_size": 6}


def _task_ids() -> st.SearchStrategy[WireTaskId]:
    return st.builds(WireTaskId, INT32, INT32)


def _grouped() -> st.SearchStrategy[SubtopologyOffsetSums]:
    partitions = st.lists(st.builds(PartitionOffsetSum, INT32, INT64), **SMALL).map(tuple)
    return st.builds(SubtopologyOffsetSums, INT32, partitions)


def _flat() -> st.SearchStrategy[TaskOffsetSum]:
    return st.builds(TaskOffsetSum, INT32, INT32, INT64, st.none() | TEXT)


@st.composite
def subscription_infos(draw: st.DrawFn, version: int | None = None) -> SubscriptionInfoData:
    """Any ``SubscriptionInfoData`` of ``version`` (1-11 when None); absent fields at defaults."""
    v = draw(st.integers(1, 11)) if version is None else version
    tuples = lambda s: st.lists(s, **SMALL).map(tuple)
    return SubscriptionInfoData(
        version=v,
        process_id=draw(UUIDS),
        latest_supported_version=draw(INT32) if v >= 3 else -1,
        prev_tasks=draw(tuples(_task_ids())) if v <= 6 else (),
        standby_tasks=draw(tuples(_task_ids())) if v <= 6 else (),
        user_end_point=draw(TEXT) if v >= 2 else "",
        grouped_offset_sums=draw(tuples(_grouped())) if 7 <= v <= 9 else (),
        task_offset_sums=draw(tuples(_flat())) if v >= 10 else (),
        unique_field=draw(INT8) if v >= 8 else 0,
        error_code=draw(INT32) if v >= 9 else 0,
        client_tags=draw(tuples(st.builds(ClientTag, TEXT, TEXT))) if v >= 11 else (),
    )


@st.composite
def consumer_subscriptions(
    draw: st.DrawFn, version: int | None = None
) -> ConsumerProtocolSubscription:
    """Any ``ConsumerProtocolSubscription`` whose header is ``version`` (0-3 when None)."""
    v = draw(st.integers(0, 3)) if version is None else version
    body = min(v, 3)
    owned = st.builds(OwnedTopicPartitions, TEXT, st.lists(INT32, **SMALL).map(tuple))
    return ConsumerProtocolSubscription(
        version=v,
        topics=tuple(draw(st.lists(TEXT, **SMALL))),
        user_data=draw(st.none() | st.binary(max_size=40)),
        owned_partitions=tuple(draw(st.lists(owned, **SMALL))) if body >= 1 else (),
        generation_id=draw(INT32) if body >= 2 else -1,
        rack_id=draw(st.none() | TEXT) if body >= 3 else None,
    )
