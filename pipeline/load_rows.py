"""One consumer group under drifting loads, count balancing against load balancing, round by round.

Why: issue 25's question for an operator is what balancing load buys (a lower peak: the busiest
member's load per unit of capacity over the mean) and what it costs (partitions moved as loads
drift). Both sides run Kafka's default cooperative assignor, ``cooperative-sticky``: ``count``
as Kafka runs it, ``load`` in its load-aware mode (``balance=LOAD``), each from its own previous
assignment and on the same loads each round. A rebalance that withholds partitions (the
cooperative protocol's revocation) is followed at once by the follow-up Kafka triggers; a
round's figures are those of its last assignment, its moves those of all its calls.

Sizes come from ``GroupSpec`` (``kassign.pipeline.generate``): ``clients`` members, each of
capacity ``threads``, subscribed to all of ``subtopologies`` topics of ``partitions``
partitions; loads from ``kassign.pipeline.loads``. Pure: no Spark, errors become rows.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from kassign.assignor.consumer import AssignOptions, Member, Topic, assign, consumer_group
from kassign.assignor.consumer.model import ConsumerGroup, OwnedPartitions
from kassign.assignor.consumer.result import GroupAssignment
from kassign.assignor.load.bound import FloatArray, IntArray, lower_bound, member_loads
from kassign.assignor.load.figures import Balance
from kassign.pipeline.generate import GroupSpec
from kassign.pipeline.loads import LoadModel, drifted, load_rng, zipf_loads

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
MAX_CALLS = 8
"""Rebalances in one round at most: the first and its follow-ups while partitions are withheld."""
LOAD_COLUMNS = (
    "group_id",
    "group_index",
    "seed",
    "config",
    "assignor",
    "round",
    "members",
    "partitions",
    "max_load",
    "mean_load",
    "max_over_mean",
    "bound",
    "peak_over_bound",
    "moved",
    "rebalances",
    "assign_cpu_seconds",
    "error",
)
_BALANCES: Sequence[Balance] = (Balance.COUNT, Balance.LOAD)
"""Kafka's answer first, then its load-aware mode: the report's order."""


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


@dataclass(frozen=True, slots=True)
class RoundMeasures:
    """One round's figures, loads per unit of capacity: the busiest member's (``max_load``),
    total over total capacity (``mean_load``), the bound no assignment beats, and the moves."""

    max_load: float
    mean_load: float
    bound: float
    moved: int
    rebalances: int

    def row(self) -> dict[str, Any]:
        return {
            "max_load": self.max_load,
            "mean_load": self.mean_load,
            "max_over_mean": self.max_load / self.mean_load if self.mean_load else 0.0,
            "bound": self.bound,
            "peak_over_bound": self.max_load / self.bound if self.bound else 0.0,
            "moved": self.moved,
            "rebalances": self.rebalances,
        }


def round_measures(
    loads: FloatArray, capacities: FloatArray, owners: IntArray, *, moved: int, rebalances: int
) -> RoundMeasures:
    """The figures of ``owners`` (a member index per partition; -1, withheld, counts nowhere)."""
    placed = owners >= 0
    per_member = member_loads(loads[placed], owners[placed], len(capacities)) / capacities
    return RoundMeasures(
        max_load=float(per_member.max()) if len(per_member) else 0.0,
        mean_load=float(loads.sum() / capacities.sum()) if len(capacities) else 0.0,
        bound=lower_bound(loads, capacities),
        moved=moved,
        rebalances=rebalances,
    )


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
    draws = load_rng(seed, index)
    loads = [zipf_loads(sum(n for _, n in topics), model.exponent, draws)]
    for _ in range(rounds - 1):
        loads.append(drifted(loads[-1], model.drift, draws))
    return LoadGroup(f"sim-{seed}-{index:06d}", topics, capacities, tuple(loads))


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


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:500]


def _balance_rows(group: LoadGroup, balance: Balance) -> list[dict[str, Any]]:
    """Every round under one balance, from nothing owned; a failure ends it with an error row."""
    owners = np.full(len(group.loads[0]), -1, dtype=np.int64)
    rows: list[dict[str, Any]] = []
    for number, loads in enumerate(group.loads, start=1):
        started = time.process_time()
        try:
            owners, moved, calls = _rebalance(
                group, _options(group, balance, loads), owners, number * MAX_CALLS
            )
        except Exception as exc:  # noqa: BLE001 - a failed assignment is an error row
            rows.append({"config": balance.value, "round": number, "error": _error_text(exc)})
            break
        measures = round_measures(loads, group.capacities, owners, moved=moved, rebalances=calls)
        seconds = time.process_time() - started
        rows.append(
            {
                "config": balance.value,
                "round": number,
                **measures.row(),
                "assign_cpu_seconds": seconds,
                "error": "",
            }
        )
    return rows


_EMPTY = {**RoundMeasures(0.0, 0.0, 0.0, 0, 0).row(), "assign_cpu_seconds": 0.0}


def load_rows(
    *, seed: int, index: int, spec: GroupSpec, model: LoadModel, rounds: int
) -> list[dict[str, Any]]:
    """Every round of group ``index`` under count then load balancing (``LOAD_COLUMNS``); a
    group the spec cannot make (``check_sizes``) is an error row per balance."""
    head: dict[str, Any] = {"group_index": index, "seed": seed, "assignor": ASSIGNOR}
    try:
        group = load_group(spec, seed=seed, index=index, model=model, rounds=rounds)
    except ValueError as exc:
        failed = {"group_id": f"sim-{seed}-{index:06d}", "members": 0, "partitions": 0}
        return [
            _ordered({**head, **failed, **_EMPTY, "config": b.value, "round": 1, "error": str(exc)})
            for b in _BALANCES
        ]
    head |= {
        "group_id": group.group_id,
        "members": len(group.capacities),
        "partitions": len(group.loads[0]),
    }
    return [
        _ordered({**head, **_EMPTY, **row})
        for balance in _BALANCES
        for row in _balance_rows(group, balance)
    ]


def _ordered(row: dict[str, Any]) -> dict[str, Any]:
    return {c: row[c] for c in LOAD_COLUMNS}
