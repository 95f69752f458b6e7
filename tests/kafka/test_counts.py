"""``kassign.kafka.counts`` against the decoders: the counts are what decoding would build.

Limits are checked on these counts before decoding (issue 16), so a count below the decoder's
would let a request past a limit, and one above would refuse a request within it.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st
from kassign.kafka.consumer_protocol import (
    ConsumerProtocolSubscription,
    OwnedTopicPartitions,
    decode_consumer_subscription,
    encode_consumer_subscription,
)
from kassign.kafka.counts import SubscriptionCounts, reported_tasks, subscription_counts
from kassign.kafka.subscription_info import SubscriptionInfoData, encode_subscription_info

from tests.kafka.strategies import consumer_subscriptions, subscription_infos

EVERYTHING = 2**31


@given(consumer_subscriptions())
def test_subscription_counts_are_what_the_decoder_builds(sub: ConsumerProtocolSubscription) -> None:
    data = encode_consumer_subscription(sub)
    decoded = decode_consumer_subscription(data)
    counts = subscription_counts(data, topics_stop=EVERYTHING, owned_stop=EVERYTHING)
    assert counts.topics == len(decoded.topics)
    assert counts.owned_entries == len(decoded.owned_partitions)
    assert counts.owned_partitions == sum(len(o.partitions) for o in decoded.owned_partitions)
    start, end = counts.user_data
    assert (data[start:end] if decoded.user_data is not None else b"") == (decoded.user_data or b"")


@given(subscription_infos())
def test_reported_tasks_are_the_offset_sums_the_decoder_builds(info: SubscriptionInfoData) -> None:
    assert reported_tasks(encode_subscription_info(info), EVERYTHING) == len(info.offset_sums())


@given(st.binary(max_size=64), st.integers(0, 8))
def test_any_bytes_are_counted_without_error(data: bytes, stop: int) -> None:
    """Malformed bytes are the decoder's to refuse: a walk returns, whatever it meets."""
    counts = subscription_counts(data, topics_stop=stop, owned_stop=stop)
    assert isinstance(counts, SubscriptionCounts) and min(counts[:3]) >= 0
    assert reported_tasks(data, stop) >= 0


def test_a_count_that_cannot_fit_is_left_to_the_decoder() -> None:
    """Two billion claimed topics in a few bytes: malformed, so counted as none, and the
    decoder's own error names the fault (as it did before the limits)."""
    topics = b"\x00\x03" + (2**31 - 1).to_bytes(4, "big") + b"\x00" * 64
    assert subscription_counts(topics, topics_stop=10, owned_stop=10) == (0, 0, 0, (0, 0))


def test_a_walk_stops_past_its_limit() -> None:
    """A thousand owned entries: the count is read, the walk stops after ``owned_stop``."""
    head = b"\x00\x03\x00\x00\x00\x00\xff\xff\xff\xff"  # no topics, null userData
    entries = (1000).to_bytes(4, "big") + b"\x00\x01t\x00\x00\x00\x01\x00\x00\x00\x07" * 1000
    counts = subscription_counts(head + entries, topics_stop=10, owned_stop=10)
    assert counts.owned_entries == 1000 and 10 < counts.owned_partitions < 1000


@given(
    st.integers(2, 60),
    st.integers(0, 3),
    st.integers(1, 12),
    st.none() | st.tuples(st.integers(0, 59), st.booleans()),
)
def test_owned_entries_of_one_shape_are_counted_as_walked(
    entries: int, count: int, size: int, odd: tuple[int, bool] | None
) -> None:
    """Owned entries whose names share a length and whose partition counts are equal are
    checked at once (strided slices); one entry of another shape, anywhere, sends the count
    back to the walk: both agree with the decoder."""
    owned = [
        OwnedTopicPartitions(f"{i:03d}".ljust(size, "t")[:size], tuple(range(count)))
        for i in range(entries)
    ]
    if odd is not None:
        at, longer = odd[0] % entries, odd[1]
        topic, partitions = owned[at]
        owned[at] = (
            OwnedTopicPartitions(topic + "x", partitions)
            if longer
            else (OwnedTopicPartitions(topic, (*partitions, 99)))
        )
    sub = ConsumerProtocolSubscription(version=3, topics=("a",), owned_partitions=tuple(owned))
    data = encode_consumer_subscription(sub)
    counts = subscription_counts(data, topics_stop=EVERYTHING, owned_stop=EVERYTHING)
    assert counts.owned_entries == entries
    assert counts.owned_partitions == sum(len(o.partitions) for o in owned)


@given(
    consumer_subscriptions(),
    st.integers(0, 300),
    st.lists(st.integers(0, 2**16 - 1), min_size=2, max_size=40),
    st.none() | st.integers(0, 39),
)
def test_topic_names_of_one_length_are_counted_as_walked(
    sub: ConsumerProtocolSubscription, size: int, seeds: list[int], odd: int | None
) -> None:
    """Names of one length are checked at once (two strided slices); one name of another
    length, anywhere, sends the count back to the walk: both agree with the decoder. Sizes past
    255 put a non-zero high byte in every length field."""
    topics = [f"{s:05d}".ljust(size, "x")[:size] for s in seeds]
    if odd is not None:
        topics[odd % len(topics)] += "y"
    sub = replace(sub, topics=tuple(topics))
    data = encode_consumer_subscription(sub)
    counts = subscription_counts(data, topics_stop=EVERYTHING, owned_stop=EVERYTHING)
    decoded = decode_consumer_subscription(data)
    assert counts.topics == len(decoded.topics) == len(topics)
    assert counts.owned_partitions == sum(len(o.partitions) for o in decoded.owned_partitions)
    start, end = counts.user_data
    assert (data[start:end] if decoded.user_data is not None else b"") == (decoded.user_data or b"")
