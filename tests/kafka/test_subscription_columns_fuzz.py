"""The compiled userData reader (``kassign_native.subscription_columns``) on bytes that are not
whole: random, cut short or flipped. It must agree with the Python reader (the columns when
that reads them, its ``WireError`` word for word when it refuses) and never crash."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.kafka.buffer import WireError
from kassign.kafka.subscription_info import (
    SubscriptionInfoData,
    decode_subscription_columns,
    decode_subscription_info,
    encode_subscription_info,
)

from tests.kafka.strategies import subscription_infos


def _agree(data: bytes) -> None:
    try:
        whole: SubscriptionInfoData | None = decode_subscription_info(data)
        refused = None
    except WireError as exc:
        whole, refused = None, str(exc)
    try:
        read = decode_subscription_columns(data)
    except WireError as exc:
        assert str(exc) == refused  # the Python reader's words
        return
    if read is None:  # v1-6 or a named topology: left to the whole read
        assert data[:4] in {i.to_bytes(4, "big") for i in range(1, 12)}
        return
    assert whole is not None, f"the columns read bytes the reader refuses: {refused}"
    info, columns = read
    rows = list(zip(columns.subtopologies, columns.partitions, columns.offset_sums))
    assert rows == [(s.topic_group_id, s.partition, s.offset_sum) for s in whole.offset_sums()]
    assert info == dataclasses.replace(whole, grouped_offset_sums=(), task_offset_sums=())


@settings(max_examples=120, deadline=None)
@given(subscription_infos(plausible=True), st.data())
def test_cut_or_flipped_user_data_reads_as_the_python_reader_reads_it(
    info: SubscriptionInfoData, data: st.DataObject
) -> None:
    raw = bytearray(encode_subscription_info(info))
    cut = data.draw(st.integers(0, len(raw)), label="cut")
    flips = data.draw(
        st.lists(st.tuples(st.integers(0, max(len(raw) - 1, 0)), st.integers(0, 255)), max_size=3)
    )
    for at, value in flips:
        if at < len(raw):
            raw[at] = value
    _agree(bytes(raw[: len(raw) - cut]) if data.draw(st.booleans(), label="cut?") else bytes(raw))


@settings(max_examples=120, deadline=None)
@given(st.binary(max_size=80), st.integers(7, 11))
def test_random_bytes_after_a_version_read_as_the_python_reader_reads_them(
    tail: bytes, version: int
) -> None:
    _agree(version.to_bytes(4, "big") + tail)
    _agree(tail)
