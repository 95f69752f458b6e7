"""decode/kafka_bytes.py: the same subscription structured, as userData bytes or raw gives the same state."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from kassign.server.streams.decode.kafka_bytes import info_to_pb

from tests.kafka.strategies import subscription_infos
from tests.server.streams.decode.builders import (
    P2,
    info,
    outcome,
    three_ways,
)


@pytest.mark.parametrize("version", [1, 2, 6, 7, 9, 10, 11])
def test_structured_and_bytes_give_the_same_state(version: int) -> None:
    message = info(
        P2, sums={(0, 0): -2, (0, 1): 30, (4, 4): 1}, user_end_point="h:1" if version >= 2 else ""
    )
    message.version = version
    if version >= 8:
        message.unique_field = 3
    outcomes = [outcome(r) for r in three_ways(message)]
    assert outcomes[0] == outcomes[1] == outcomes[2]
    assert outcomes[0][0] != "invalid"


@pytest.mark.parametrize("version", [7, 10])
def test_offset_sums_listed_out_of_task_order_decode_like_the_bytes_kafka_groups(
    version: int,
) -> None:
    # Kafka's v7+ encoder groups offset sums by sub-topology, so bytes never keep a listing
    # like this one; the member must not depend on how the sums were listed.
    message = info(P2, sums={(1, 1): -2, (0, 0): -2, (1, 0): 40})
    message.version = version
    outcomes = [outcome(r) for r in three_ways(message)]
    assert outcomes[0] == outcomes[1] == outcomes[2]
    (member,) = outcomes[0][2]
    assert [str(t) for t, _ in member.offset_sums] == ["0_0", "1_0"]  # the topology's
    assert [str(t) for t in member.ignored_first] == ["1_1"]


@settings(max_examples=150, deadline=None)
@given(subscription_infos() | subscription_infos(plausible=True))
def test_any_info_decodes_the_same_structured_or_as_bytes(data: Any) -> None:
    message = info_to_pb(data)
    try:
        ways = three_ways(message)
    except (ValueError, UnicodeError):
        return  # not encodable by Kafka's encoder either (named topology before v10, ...)
    outcomes = [outcome(r) for r in ways]
    assert outcomes[0] == outcomes[1] == outcomes[2]
