"""The sticky assignors' general builder, computed by the compiled core (``kassign_native``).

Its answers are Kafka's (tests/differential/consumer); these check what the differential suite
cannot: that the core lets other Python threads run while it computes (it holds no GIL), that
it still stops at the caller's check, and invariants on random unequal groups.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

import kassign_native
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kassign.assignor.consumer import Member, Topic, TopicPartition, assign, consumer_group
from kassign.assignor.errors import Interrupted
from kassign.assignor.interrupt import checked


def _one_owns_everything(topics: int, per_topic: int, members: int) -> dict[str, Any]:
    """A group as the core takes it: the first member owns every partition, the others none,
    all subscribe to every topic but the last, which reads one: thousands of moves."""
    total = topics * per_topic
    return {
        "offsets": [t * per_topic for t in range(topics + 1)],
        "topic_hashes": [t * 7919 for t in range(topics)],
        "rank": list(range(members)),
        "subscription_sets": [list(range(topics)), [0]],
        "subscription_of": [0] * (members - 1) + [1],
        "owned_order": list(range(members)),
        "owned": np.arange(total, dtype=np.int64).tobytes(),
        "owned_ends": [total] * members,
        "previous_generation": [None] * members,
        "previous": b"",
        "previous_ends": [0] * members,
        "member_rack": [-1] * members,
        "set_of": b"",
        "set_has": [],
        "racks": 0,
        # a C function: calling Python code would let the interpreter hand the GIL over
        "checkpoint": int,
    }


@pytest.mark.slow
def test_another_thread_runs_while_the_core_computes() -> None:
    """A thread counting in Python makes progress during the call: with the GIL held it could
    not run at all between the call's start and end (the check it is given runs no Python)."""
    args = _one_owns_everything(topics=20, per_topic=2000, members=400)
    ticks: list[float] = []
    stop = threading.Event()

    def count() -> None:
        while not stop.is_set():
            ticks.append(time.perf_counter())

    counter = threading.Thread(target=count)
    counter.start()
    try:
        time.sleep(0.01)
        started = time.perf_counter()
        ids, ends, _, thrown = kassign_native.general_assignment(**args)
        ended = time.perf_counter()
    finally:
        stop.set()
        counter.join()
    assert thrown is None
    loads = np.diff([0, *ends])
    assert loads.sum() == len(ids) // 8 == 40_000 and loads.max() - loads.min() <= 1
    assert ended - started > 0.05, "too quick to tell: make the group larger"
    # held, the GIL would pass to the counter at most for a moment (a switch interval, 5 ms):
    # its ticks must spread over the call, in most tenths of it
    tenths = {int((t - started) / (ended - started) * 10) for t in ticks if started < t < ended}
    assert len(tenths) >= 7, sorted(tenths)


class Stop(Interrupted):
    pass


def test_the_core_stops_at_the_callers_check() -> None:
    """The core takes the GIL back every few milliseconds for ``checkpoint``; what the check
    raises comes out of the call."""
    calls = 0

    def check() -> None:
        nonlocal calls
        calls += 1
        if calls > 1:
            raise Stop

    members = [Member(member_id=f"m{i}", topics=("t0", "t1") if i else ("t0",)) for i in range(300)]
    owner = Member(
        member_id="owner",
        topics=("t0", "t1"),
        owned_partitions=tuple(TopicPartition(t, p) for t in ("t0", "t1") for p in range(20_000)),
        generation=1,
    )
    topics = [Topic.without_racks(t, 20_000) for t in ("t0", "t1")]
    group = consumer_group([owner, *members], topics)
    started = time.perf_counter()
    with pytest.raises(Stop), checked(check, every=0.001):
        assign("cooperative-sticky", group)
    assert time.perf_counter() - started < 30


SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RACKS = ("a", "b", "c")


@st.composite
def fresh_unequal_groups(draw: st.DrawFn) -> tuple[list[Member], list[Topic]]:
    """2-30 fresh members over 2-6 topics of 1-40 partitions, subscriptions differing, racks
    or none."""
    racks = draw(st.booleans())
    names = [f"t{i}" for i in range(draw(st.integers(2, 6)))]
    topics = [
        Topic(
            n,
            tuple(
                draw(st.frozensets(st.sampled_from(RACKS), max_size=2)) if racks else frozenset()
                for _ in range(draw(st.integers(1, 40)))
            ),
        )
        for n in names
    ]
    subscriptions = st.lists(st.sampled_from(names), min_size=1, unique=True).map(tuple)
    members = [
        Member(
            member_id=f"c{draw(st.integers(0, 999))}-{i}",
            topics=draw(subscriptions),
            rack_id=draw(st.sampled_from(RACKS)) if racks else None,
        )
        for i in range(draw(st.integers(2, 30)))
    ]
    members.append(Member(member_id="extra", topics=(names[0],)))
    members.append(Member(member_id="every", topics=tuple(names)))
    return members, topics


@SETTINGS
@given(fresh_unequal_groups(), st.sampled_from(["sticky", "cooperative-sticky"]))
def test_fresh_general_groups_hold_the_builders_invariants(
    drawn: tuple[list[Member], list[Topic]], name: str
) -> None:
    """Every partition goes to exactly one member, which subscribes to it; two members with
    the same subscription end within one of each other (otherwise the lighter could take a
    partition of the heavier, and balancing would have moved it); the same group, the same
    answer."""
    members, topics = drawn
    group = consumer_group(members, topics)
    result = assign(name, group).partitions()
    subscribed = {m.member_id: set(m.topics) for m in members}
    given_out = Counter(tp for tps in result.values() for tp in tps)
    every = {(t.name, p) for t in topics for p in range(t.partitions)}
    assert set(given_out) == every and set(given_out.values()) == {1}
    assert all(tp[0] in subscribed[m] for m, tps in result.items() for tp in tps)
    by_subscription: dict[frozenset[str], list[int]] = {}
    for m, tps in result.items():
        by_subscription.setdefault(frozenset(subscribed[m]), []).append(len(tps))
    assert all(max(loads) - min(loads) <= 1 for loads in by_subscription.values())
    assert assign(name, group).partitions() == result
