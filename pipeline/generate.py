"""Seeded random groups: sizes, racks, replication, tags and lags drawn from given distributions.

Why: simulate and the benchmark need thousands of plausible groups, and a group must come out the
same whatever Spark partition builds it. Each group draws from its own ``random.Random`` seeded by
``(seed, index)`` (string seeds hash with SHA-512, stable across processes and Python runs).

Integer distributions are inclusive uniform ranges ``[low, high]``; lags are exponential with the
given mean. A spec is read from JSON with the field names below, e.g.
``{"clients": [20, 20], "subtopologies": [4, 4], "partitions": [50, 50]}``.
"""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from kassign.assignor.streams.model import (
    LATEST_OFFSET,
    AssignmentConfigs,
    TaskId,
    TaskInfo,
    TaskTopicPartition,
)
from kassign.pipeline.group import Group, SimClient

__all__ = ["GroupSpec", "load_spec", "new_client", "random_group", "spec_from_json"]

Range = tuple[int, int]


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupSpec:
    """The distributions groups are drawn from (ranges inclusive)."""

    clients: Range = (3, 12)
    threads: Range = (1, 3)
    subtopologies: Range = (1, 4)
    partitions: Range = (2, 12)
    stateful_fraction: float = 0.7
    racks: Range = (1, 3)
    replication: Range = (1, 3)
    standbys: Range = (0, 1)
    tags: dict[str, int] = field(default_factory=lambda: {"zone": 3})
    owned_fraction: float = 0.9
    standby_state_fraction: float = 0.5
    lag_mean: float = 20_000.0
    end_offsets: Range = (10_000, 1_000_000)


def spec_from_json(document: dict[str, Any]) -> GroupSpec:
    """A spec from a JSON object; lists become ranges, unknown keys are an error."""
    known = {f.name for f in fields(GroupSpec)}
    unknown = sorted(set(document) - known)
    if unknown:
        raise ValueError(f"unknown spec keys {unknown} (known: {sorted(known)})")
    values: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in document.items()
    }
    return GroupSpec(**values)


def load_spec(path: str | Path | None) -> GroupSpec:
    return GroupSpec() if path is None else spec_from_json(json.loads(Path(path).read_text()))


def _draw(rng: random.Random, bounds: Range) -> int:
    return rng.randint(bounds[0], bounds[1])


def _tasks(rng: random.Random, spec: GroupSpec, racks: list[str]) -> tuple[TaskInfo, ...]:
    tasks = []
    replication = min(_draw(rng, spec.replication), len(racks))
    for sub in range(_draw(rng, spec.subtopologies)):
        stateful = rng.random() < spec.stateful_fraction
        for part in range(_draw(rng, spec.partitions)):
            partitions = [
                TaskTopicPartition(
                    f"s{sub}-in", part, True, False, frozenset(rng.sample(racks, replication))
                )
            ]
            if stateful:
                partitions.append(
                    TaskTopicPartition(
                        f"s{sub}-changelog",
                        part,
                        False,
                        True,
                        frozenset(rng.sample(racks, replication)),
                    )
                )
            tasks.append(
                TaskInfo(
                    id=TaskId(sub, part),
                    stateful=stateful,
                    state_store_names=(f"s{sub}-store",) if stateful else (),
                    topic_partitions=tuple(partitions),
                    changelog_end_offset_sum=_draw(rng, spec.end_offsets) if stateful else 0,
                )
            )
    return tuple(tasks)


def new_client(rng: random.Random, spec: GroupSpec, rack: str, index: int) -> SimClient:
    """A client with no local state, in ``rack``; tag values cycle so every value is used."""
    tags = {
        key: f"{key}-{(index + k) % count}"
        for k, (key, count) in enumerate(sorted(spec.tags.items()))
    }
    return SimClient(
        process_id=uuid.UUID(int=rng.getrandbits(128)),
        threads=_draw(rng, spec.threads),
        rack=rack,
        tags=tags,
    )


def _state(
    rng: random.Random, spec: GroupSpec, tasks: tuple[TaskInfo, ...], clients: list[SimClient]
) -> list[SimClient]:
    """Previous owners and stores: most tasks had an active; some clients hold lagging state."""
    sums: list[dict[TaskId, int]] = [{} for _ in clients]
    for task in tasks:
        order = rng.sample(range(len(clients)), len(clients))
        if rng.random() < spec.owned_fraction:
            sums[order[0]][task.id] = LATEST_OFFSET
        if task.stateful:
            for other in order[1:]:
                if rng.random() < spec.standby_state_fraction:
                    lag = min(
                        int(rng.expovariate(1.0 / spec.lag_mean)), task.changelog_end_offset_sum
                    )
                    sums[other][task.id] = task.changelog_end_offset_sum - lag
    return [
        SimClient(
            process_id=c.process_id, threads=c.threads, rack=c.rack, tags=c.tags, offset_sums=s
        )
        for c, s in zip(clients, sums, strict=True)
    ]


def random_group(spec: GroupSpec, *, seed: int, index: int) -> Group:
    """Group ``index`` of a run seeded ``seed``: the same arguments always give the same group."""
    rng = random.Random(f"kassign-simulate:{seed}:{index}")
    racks = [f"rack-{r}" for r in range(_draw(rng, spec.racks))]
    tasks = _tasks(rng, spec, racks)
    clients = [
        new_client(rng, spec, racks[i % len(racks)], i) for i in range(_draw(rng, spec.clients))
    ]
    standbys = _draw(rng, spec.standbys)
    configs = AssignmentConfigs(
        num_standby_replicas=standbys,
        rack_aware_assignment_tags=tuple(sorted(spec.tags)) if standbys else (),
    )
    return Group(
        group_id=f"sim-{seed}-{index:06d}",
        tasks=tasks,
        clients=tuple(_state(rng, spec, tasks, clients)),
        configs=configs,
        racks=tuple(racks),
    )
