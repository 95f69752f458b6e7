"""One consumer group under drifting loads, count balancing against load balancing, round by round.

Why: both sides run Kafka's default cooperative assignor, ``cooperative-sticky``: ``count`` as
Kafka runs it, ``load`` in its load-aware mode (``balance=LOAD``), each from its own previous
assignment and on the same loads each round (``load_rounds`` runs the rounds and measures
them). A rebalance that withholds partitions (the cooperative protocol's revocation) is
followed at once by the follow-up Kafka triggers; a round's figures are those of its last
assignment, its moves those of all its calls.

Sizes come from ``GroupSpec`` (``kassign.pipeline.generate``): ``clients`` members, each of
capacity ``threads``, subscribed to all of ``subtopologies`` topics of ``partitions``
partitions; loads from ``kassign.pipeline.loads``. Pure: no Spark, errors become rows.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from kassign.assignor.consumer import AssignOptions, Member, Topic, assign, consumer_group
from kassign.assignor.consumer.model import ConsumerGroup, OwnedPartitions
from kassign.assignor.consumer.result import GroupAssignment
from kassign.assignor.load.bound import FloatArray, IntArray
from kassign.assignor.load.figures import Balance
from kassign.pipeline.generate import GroupSpec
from kassign.pipeline.load_rounds import (
    LOAD_COLUMNS,
    MAX_CALLS,
    RoundMeasures,
    Simulated,
    Step,
    round_measures,
    simulated_rows,
)
from kassign.pipeline.loads import LoadModel, load_rng, load_rounds

__all__ = [
    "ASSIGNOR",
    "LOAD_COLUMNS",
    "MAX_CALLS",
    "LoadGroup",
    "RoundMeasures",
    "check_sizes",
    "load_group",
    "load_rows",
    "round_measures",
]

ASSIGNOR = "cooperative-sticky"


@dataclass(frozen=True, slots=True)
class LoadGroup:
    """A group to simulate: topics (name, partitions), each member's capacity (member ``i`` is
    ``member-i``), and every partition's load in each round (topics end to end)."""

    group_id: str
    topics: tuple[tuple[str, int], ...]
    capacities: FloatArray
    loads: tuple[FloatArray, ...]

    @property
    def member_ids(self) -> list[str]:
        return [f"member-{i:05d}" for i in range(len(self.capacities))]

    @property
    def starts(self) -> IntArray:
        """Where each topic's partitions start among all, and (last) how many there are."""
        return np.cumsum([0, *(n for _, n in self.topics)], dtype=np.int64)


def load_group(
    spec: GroupSpec, *, seed: int, index: int, model: LoadModel, rounds: int
) -> LoadGroup:
    """Group ``index`` of a run seeded ``seed``: the same arguments always give the same group."""
    check_sizes(spec)
    rng = random.Random(f"kassign-simulate-loads:{seed}:{index}")
    members = rng.randint(*spec.clients)
    capacities = np.array([rng.randint(*spec.threads) for _ in range(members)], dtype=np.float64)
    topics = tuple(
        (f"topic-{t}", rng.randint(*spec.partitions))
        for t in range(rng.randint(*spec.subtopologies))
    )
    loads = load_rounds(sum(n for _, n in topics), model, load_rng(seed, index), rounds)
    return LoadGroup(f"sim-{seed}-{index:06d}", topics, capacities, loads)


def check_sizes(spec: GroupSpec) -> None:
    """The spec's ranges a load simulation reads; ``ValueError`` naming the key at fault."""
    for key, least in (("clients", 1), ("threads", 1), ("subtopologies", 1), ("partitions", 1)):
        low, high = getattr(spec, key)
        if not least <= low <= high:
            raise ValueError(
                f"spec {key} [{low}, {high}]: a range [low, high], low at least {least}"
            )


def _consumer_group(group: LoadGroup, owners: IntArray, generation: int) -> ConsumerGroup:
    """The group as its leader sees it: every member subscribed to every topic, owning
    ``owners``' partitions (the cooperative protocol's owned partitions)."""
    names = tuple(name for name, _ in group.topics)
    starts = group.starts
    order = np.argsort(owners, kind="stable")  # partitions by owner, ascending within one
    bounds = np.searchsorted(owners[order], np.arange(len(group.capacities) + 1))
    members = []
    for i, member_id in enumerate(group.member_ids):
        held = order[bounds[i] : bounds[i + 1]]
        cuts = np.searchsorted(held, starts)
        runs = [
            (name, (held[cuts[k] : cuts[k + 1]] - starts[k]).tolist())
            for k, name in enumerate(names)
            if cuts[k + 1] > cuts[k]
        ]
        members.append(
            Member(
                member_id=member_id,
                topics=names,
                owned_partitions=OwnedPartitions(runs),
                generation=generation,
            )
        )
    return consumer_group(members, (Topic.without_racks(n, p) for n, p in group.topics))


def _owners(group: LoadGroup, result: GroupAssignment) -> IntArray:
    starts = group.starts
    start = {name: int(starts[k]) for k, (name, _) in enumerate(group.topics)}
    index = {member_id: i for i, member_id in enumerate(group.member_ids)}
    owners = np.full(int(starts[-1]), -1, dtype=np.int64)
    for member in result.members:
        places = [start[tp.topic] + tp.partition for tp in member.partitions]
        owners[places] = index[member.member_id]
    return owners


def _options(group: LoadGroup, balance: Balance, loads: FloatArray) -> AssignOptions:
    if balance is Balance.COUNT:
        return AssignOptions()
    cuts = group.starts
    return AssignOptions(
        balance=Balance.LOAD,
        loads={
            name: loads[cuts[k] : cuts[k + 1]].tolist() for k, (name, _) in enumerate(group.topics)
        },
        capacities=dict(zip(group.member_ids, group.capacities.tolist(), strict=True)),
    )


def _rebalance(
    group: LoadGroup, options: AssignOptions, owners: IntArray, generation: int
) -> tuple[IntArray, int, int]:
    """A round's calls: the owners after it, partitions moved, calls made."""
    moved = calls = 0
    while True:
        calls += 1
        result = assign(ASSIGNOR, _consumer_group(group, owners, generation + calls), options)
        moved += result.report.moved_partitions
        owners = _owners(group, result)
        if not result.report.withheld_partitions or calls == MAX_CALLS:
            return owners, moved, calls


def _consumer_run(group: LoadGroup) -> Callable[[Balance], Step]:
    """A fresh run of ``group`` under a balance: from nothing owned, each round's calls from
    the owners the last round left."""

    def start(balance: Balance) -> Step:
        owners = np.full(len(group.loads[0]), -1, dtype=np.int64)
        number = 0

        def step(loads: FloatArray) -> tuple[IntArray, int, int]:
            nonlocal owners, number
            number += 1
            options = _options(group, balance, loads)
            owners, moved, calls = _rebalance(group, options, owners, number * MAX_CALLS)
            return owners, moved, calls

        return step

    return start


def load_rows(
    *, seed: int, index: int, spec: GroupSpec, model: LoadModel, rounds: int
) -> list[dict[str, Any]]:
    """Every round of consumer group ``index`` under count then load balancing."""

    def make() -> Simulated:
        group = load_group(spec, seed=seed, index=index, model=model, rounds=rounds)
        return Simulated(group.group_id, group.capacities, group.loads, _consumer_run(group))

    head = {"group_index": index, "seed": seed, "kind": "consumer", "assignor": ASSIGNOR}
    return simulated_rows(head, f"sim-{seed}-{index:06d}", make)
