"""Seeded rack-aware (KIP-925) groups for ``test_rack_aware_vs_kafka``, as kassign ``AssignRequest``s.

Why a generator of its own: the groups of ``groups.py`` carry no replica racks and strategy
``none``. Here every topic partition has replicas on known racks and every client a rack, so both
Kafka's ``RackAwareTaskAssignor`` and kassign's optimiser run. The histories are ``groups.py``'s
(``HISTORIES``: fresh, random, scale-out, scale-in, roll, probing), picked by ``seed``.

A group, all from ``random.Random(seed)``:

- size: mostly small (6-40 tasks on 2-6 clients) and medium (40-150 tasks on 5-15 clients), a few
  large (150-400 tasks on 15-40 clients), and the two ends exactly: 6 tasks on 2 clients, 400
  tasks on 40 clients (``_SIZES``);
- 1-5 sub-topologies; each reads one source topic (``in-<s>``), a quarter of them two
  (``in-<s>-b``, co-partitioned); stateful ones (70%) write one changelog
  (``app-store-<s>-changelog``), a fifth of them two (``app-agg-<s>-changelog``);
- 2-4 racks; every partition replicated 1-3 times, on distinct racks while the replication
  allows, else on every rack and some twice;
- 1-4 threads per client; each client on a rack that holds replicas, except 7% on ``rack-z``,
  which holds none;
- KIP-708 tags half the time (``zone``, equal to the rack in half of those groups, and/or
  ``cluster``), configured as ``rack_aware_assignment_tags``;
- 0-2 standbys; strategy ``min_traffic`` or ``balance_subtopology`` (the latter rarer on large
  groups, ``_LARGE_BALANCE``); ``traffic_cost`` and
  ``non_overlap_cost`` left to the assignor's default half the time, else each set (1-20, 0-10)
  or not; assignor ``high_availability`` or ``sticky``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from uuid import UUID

from kassign.v1 import assignment_pb2 as pb
from kassign_client import build

from tests.differential.groups import (
    Client,
    Group,
    TaskInfoFor,
    Topology,
    topology_with,
    with_random_history,
)

__all__ = ["NO_REPLICA_RACK", "RACKS", "Layout", "rack_group"]

RACKS = ("rack-a", "rack-b", "rack-c", "rack-d")
NO_REPLICA_RACK = "rack-z"
"""A client rack where no partition has a replica: every partition it reads is cross-rack."""

_SIZES = {  # name: (weight, (min tasks, max tasks), (min clients, max clients))
    "smallest": (2, (6, 6), (2, 2)),
    "small": (57, (6, 40), (2, 6)),
    "medium": (38, (40, 150), (5, 15)),
    "large": (2, (150, 400), (15, 40)),
    "largest": (1, (400, 400), (40, 40)),
}
"""Large groups are few on purpose: Kafka takes 0.5-17 s on each (its standby swaps go pair by pair
of clients, its active graphs are solved by cycle cancelling), 10-50 ms on a small or medium one."""
_LARGE_BALANCE = 0.2
"""How often a large group takes ``balance_subtopology`` (a smaller one half the time): Kafka's
cycle cancelling on its larger graph takes up to 27 s on one such group."""


@dataclass(frozen=True, slots=True)
class Layout:
    """Which topics each sub-topology reads and writes, and the racks of every partition's replicas."""

    sources: tuple[tuple[str, ...], ...]
    changelogs: tuple[tuple[str, ...], ...]
    racks: dict[tuple[str, int], tuple[str, ...]]

    def task_info(self, topology: Topology, task: tuple[int, int]) -> pb.TaskInfo:
        """``groups.with_history``'s ``task_info``: the task's partitions with their racks."""
        s, p = task
        topics = self.sources[s] + self.changelogs[s]
        return build.task(
            s,
            p,
            source=self.sources[s],
            changelog=self.changelogs[s],
            racks={t: self.racks[(t, p)] for t in topics},
            end_offset_sum=topology.end_offsets.get(task, 0),
        )


def _size(rng: random.Random) -> tuple[str, int, int]:
    """One of ``_SIZES``: its name, a number of tasks and of clients."""
    name = rng.choices(list(_SIZES), weights=[w for w, _, _ in _SIZES.values()])[0]
    _, tasks, clients = _SIZES[name]
    return name, rng.randint(*tasks), rng.randint(*clients)


def _topology(rng: random.Random, tasks: int) -> Topology:
    """``tasks`` tasks over 1-5 sub-topologies, stateful and end offsets as ``groups.py``'s."""
    subtopologies = rng.randint(1, min(5, tasks))
    cuts = sorted(rng.sample(range(1, tasks), subtopologies - 1))
    partitions = tuple(b - a for a, b in zip([0, *cuts], [*cuts, tasks], strict=True))
    return topology_with(rng, partitions)


def _replica_racks(rng: random.Random, racks: Sequence[str], replication: int) -> tuple[str, ...]:
    """Distinct racks while ``replication`` allows; past that every rack, and some twice."""
    if replication <= len(racks):
        return tuple(rng.sample(list(racks), replication))
    return (*rng.sample(list(racks), len(racks)), *rng.choices(racks, k=replication - len(racks)))


def _layout(
    rng: random.Random, topology: Topology, racks: Sequence[str], replication: int
) -> Layout:
    sources = tuple(
        (f"in-{s}", f"in-{s}-b") if rng.random() < 0.25 else (f"in-{s}",)
        for s in range(len(topology.partitions))
    )
    changelogs = tuple(
        ()
        if not stateful
        else (f"app-store-{s}-changelog", f"app-agg-{s}-changelog")
        if rng.random() < 0.2
        else (f"app-store-{s}-changelog",)
        for s, stateful in enumerate(topology.stateful)
    )
    replicas = {
        (topic, p): _replica_racks(rng, racks, replication)
        for s, n in enumerate(topology.partitions)
        for topic in sources[s] + changelogs[s]
        for p in range(n)
    }
    return Layout(sources, changelogs, replicas)


def _clients(rng: random.Random, n: int, racks: Sequence[str]) -> tuple[list[Client], list[str]]:
    """Clients on racks (7% on ``NO_REPLICA_RACK``), tagged half the time; the tag keys."""
    keys = sorted(rng.sample(["zone", "cluster"], rng.randint(1, 2))) if rng.random() < 0.5 else []
    zone_is_rack = rng.random() < 0.5
    zones = [f"zone-{v}" for v in range(rng.randint(1, 4))]
    clusters = [f"cluster-{v}" for v in range(rng.randint(1, 3))]
    clients = []
    for _ in range(n):
        rack = NO_REPLICA_RACK if rng.random() < 0.07 else rng.choice(list(racks))
        values = {
            "zone": f"zone-{rack}" if zone_is_rack else rng.choice(zones),
            "cluster": rng.choice(clusters),
        }
        clients.append(
            Client(
                UUID(int=rng.getrandbits(128), version=4),
                rng.randint(1, 4),
                {k: values[k] for k in keys},
                rack,
            )
        )
    return clients, keys


def _costs(rng: random.Random) -> dict[str, int]:
    """Explicit costs half the time (each one set or left to the default), else none."""
    if rng.random() < 0.5:
        return {}
    costs = {"traffic_cost": rng.randint(1, 20), "non_overlap_cost": rng.randint(0, 10)}
    return {k: v for k, v in costs.items() if rng.random() < 0.8}


def rack_group(seed: int) -> Group:
    """One rack-aware group (module docstring); ``seed`` alone rebuilds it."""
    rng = random.Random(seed)
    size, tasks, n_clients = _size(rng)
    racks = RACKS[: rng.randint(2, 4)]
    replication = rng.randint(1, 3)
    topology = _topology(rng, tasks)
    layout = _layout(rng, topology, racks, replication)
    clients, keys = _clients(rng, n_clients, racks)
    assignor = rng.choice(["high_availability", "sticky"])
    balance = _LARGE_BALANCE if size.startswith("large") else 0.5
    strategy = "balance_subtopology" if rng.random() < balance else "min_traffic"
    costs = _costs(rng)
    configs = build.configs(
        assignor=assignor,
        rack_aware_strategy=strategy,
        rack_aware_assignment_tags=keys,
        acceptable_recovery_lag=rng.choice([0, 10, 100, 1_000, 10_000]),
        max_warmup_replicas=rng.randint(1, 5),
        num_standby_replicas=rng.randint(0, 2),
        probing_rebalance_interval_ms=rng.choice([60_000, 600_000]),
        **costs,
    )
    task_info: TaskInfoFor = layout.task_info
    detail = (
        f", {assignor} {strategy}, costs={costs or 'default'}, replica racks={list(racks)}"
        f" x{replication}, tasks={tasks}"
    )
    return with_random_history(
        seed, rng, clients, topology, configs, tags=keys, task_info=task_info, detail=detail
    )
