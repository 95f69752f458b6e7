"""Hypothesis strategies for the wire formats: any value a version can carry, edge values included."""

from __future__ import annotations

from typing import TypeVar
from uuid import UUID

from hypothesis import strategies as st
from kassign.kafka.consumer_protocol import ConsumerProtocolSubscription, OwnedTopicPartitions
from kassign.kafka.subscription_info import (
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
T = TypeVar("T")


# Values a real Kafka Streams client sends: small ids, -2/-3 or real offset sums, host:port.
PLAUSIBLE_IDS = st.integers(0, 40)
PLAUSIBLE_SUMS = st.sampled_from([-2, -3]) | st.integers(0, 300)
PLAUSIBLE_TEXT = st.sampled_from(["", "host-1:8080"])


def _tuples(elements: st.SearchStrategy[T]) -> st.SearchStrategy[tuple[T, ...]]:
    return st.lists(elements, max_size=6).map(tuple)


def _tags(plausible: bool) -> st.SearchStrategy[tuple[ClientTag, ...]]:
    if not plausible:
        return _tuples(st.builds(ClientTag, TEXT, TEXT))
    keys = st.dictionaries(st.sampled_from(["zone", "cluster", "rack"]), TEXT, max_size=3)
    return keys.map(lambda tags: tuple(ClientTag(k, v) for k, v in tags.items()))


@st.composite
def subscription_infos(
    draw: st.DrawFn, version: int | None = None, *, plausible: bool = False
) -> SubscriptionInfoData:
    """Any ``SubscriptionInfoData`` of ``version`` (1-11 when None); absent fields at defaults.

    ``plausible`` keeps values to what a real client sends, so decoding mostly succeeds.
    """
    v = draw(st.integers(1, 11)) if version is None else version
    ids, sums, text = (
        (PLAUSIBLE_IDS, PLAUSIBLE_SUMS, PLAUSIBLE_TEXT) if plausible else (INT32, INT64, TEXT)
    )
    task_ids = st.builds(WireTaskId, ids, ids)
    grouped = st.builds(
        SubtopologyOffsetSums, ids, _tuples(st.builds(PartitionOffsetSum, ids, sums))
    )
    named = st.none() | (st.just("topo") if plausible else TEXT)
    flat = st.builds(TaskOffsetSum, ids, ids, sums, named)
    latest = st.integers(v, 11) if plausible else INT32
    return SubscriptionInfoData(
        version=v,
        process_id=draw(UUIDS),
        latest_supported_version=draw(latest) if v >= 3 else -1,
        prev_tasks=draw(_tuples(task_ids)) if v <= 6 else (),
        standby_tasks=draw(_tuples(task_ids)) if v <= 6 else (),
        user_end_point=draw(text) if v >= 2 else "",
        grouped_offset_sums=draw(_tuples(grouped)) if 7 <= v <= 9 else (),
        task_offset_sums=draw(_tuples(flat)) if v >= 10 else (),
        unique_field=draw(INT8) if v >= 8 else 0,
        error_code=draw(INT32) if v >= 9 else 0,
        client_tags=draw(_tags(plausible)) if v >= 11 else (),
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
