"""Rack-aware ``range`` (KIP-881) in the compiled core: co-partitioned topics kept together,
the caller's check honoured, inconsistent numbers refused. Kafka's own answers are compared
in ``tests/differential/consumer``."""

from __future__ import annotations

import kassign_native
import numpy as np
import pytest
from kassign.assignor.consumer import Member, Topic, TopicPartition, assign, consumer_group
from kassign.assignor.errors import Interrupted
from kassign.assignor.interrupt import checked

A, B = frozenset({"a"}), frozenset({"b"})


def test_co_partitioned_topics_give_each_partition_number_to_one_member() -> None:
    """``x`` and ``y`` have the same subscribers and partition count: partition ``p`` of both
    goes to one member on a rack holding both (0 to ``a``, 1 to ``b``); 2 and 3 have no such
    rack and are dealt as plain ranges, though on its own ``y`` would have kept them local."""
    members = [
        Member(member_id="m1", topics=("x", "y"), rack_id="a"),
        Member(member_id="m2", topics=("x", "y"), rack_id="b"),
    ]
    topics = [Topic("x", (A, B, A, B)), Topic("y", (A, B, B, A))]
    result = assign("range", consumer_group(members, topics))
    x0, x1, x2, x3 = (TopicPartition("x", p) for p in range(4))
    y0, y1, y2, y3 = (TopicPartition("y", p) for p in range(4))
    assert result.partitions() == {"m1": (x0, x2, y0, y2), "m2": (x1, x3, y1, y3)}
    assert result.report.rack_aware and result.report.cross_rack_partitions == 2
    alone = assign("range", consumer_group(members, topics[1:]))
    assert alone.partitions() == {"m1": (y0, y3), "m2": (y1, y2)}
    assert alone.report.cross_rack_partitions == 0


class Stop(Interrupted):
    pass


def test_the_core_stops_at_the_callers_check() -> None:
    """The co-partitioned pass takes the GIL back for ``checkpoint`` as it goes: what the
    check raises comes out of the call."""
    calls = 0

    def check() -> None:
        nonlocal calls
        calls += 1
        raise Stop

    members = [Member(member_id=f"m{i}", topics=("x", "y"), rack_id="ab"[i % 2]) for i in range(10)]
    topics = [Topic(t, (A, B) * 2_000) for t in ("x", "y")]
    with pytest.raises(Stop), checked(check, every=0):
        assign("range", consumer_group(members, topics))
    assert calls == 1


def _call(passes: list[list[int]], sizes: tuple[int, int] = (2, 2)) -> bytes:
    """Two topics of ``sizes`` partitions, both read by members 0 and 1 (racks 0 and 1),
    every partition on one rack set holding rack 0."""
    total = sum(sizes)
    return kassign_native.range_with_racks(
        offsets=[0, sizes[0], total],
        subscribers=np.array([0, 1, 0, 1], dtype=np.int64).tobytes(),
        subscriber_ends=[2, 4],
        passes=passes,
        member_rack=[0, 1],
        set_of=bytes(8 * total),
        set_has=[True, False],
        racks=2,
        checkpoint=lambda: None,
    )


def test_the_core_refuses_inconsistent_numbers() -> None:
    assert np.frombuffer(_call([[0, 1]]), dtype=np.int64).tolist() == [0, 1, 0, 1]
    with pytest.raises(ValueError, match="inconsistent input"):
        _call([[2]])  # no topic 2
    with pytest.raises(ValueError, match="not co-partitioned"):
        _call([[0, 1]], sizes=(2, 3))
