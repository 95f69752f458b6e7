"""The two least-loaded picks of standby placement agree (``standby_heap``).

``FewGroups`` (int keys, a scan of the groups) replaced ``LeastLoaded`` (tuple keys, a heap of
groups) for few groups; the placement tests and the differential suites mostly see few groups,
so this drives both with the same random polls and checks every pick is the same.
"""

from __future__ import annotations

import random

import pytest
from kassign.assignor.streams.standby_heap import FewGroups, LeastLoaded, TagGroups, picker


@pytest.mark.parametrize("seed", range(40))
def test_few_groups_picks_as_least_loaded(seed: int) -> None:
    rng = random.Random(seed)
    clients, groups = rng.randint(1, 30), rng.randint(1, 6)
    group = [rng.randrange(groups) for _ in range(clients)]
    capacities = [rng.randint(1, 6) for _ in range(clients)]
    counts = [rng.randint(0, 12) for _ in range(clients)]
    heap = LeastLoaded(capacities, counts, group, groups)
    few = FewGroups(capacities, counts, group, groups)
    for _ in range(300):
        holding = set(rng.sample(range(clients), rng.randint(0, min(3, clients))))
        barred = rng.getrandbits(groups) if rng.random() < 0.7 else 0
        assert few.poll(holding, barred) == heap.poll(holding, barred)


def test_picker_keeps_the_heap_for_many_groups_or_many_threads() -> None:
    many = TagGroups.of([(str(i),) for i in range(20)], 1)
    assert isinstance(picker([1] * 20, [0] * 20, many), LeastLoaded)
    few = TagGroups.of([("a",), ("b",)], 1)
    assert isinstance(picker([1, 2], [0, 0], few), FewGroups)
    assert isinstance(picker([1, 1 << 10], [0, 0], few), LeastLoaded)
