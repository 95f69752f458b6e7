"""Seeded random Kafka Streams groups for the differential test, as kassign ``AssignRequest``s.

Why random and many: kassign's high-availability assignor must make Kafka's choice wherever
Kafka's order decides (client order by signed UUID, task order, queue order, tie-breaks), and
those orders only show on groups of varied shape. Every group comes from ``random.Random(seed)``
alone, so a failure names a seed that rebuilds its request exactly.

A group has a *history*: which client ran each task before (a previous active, reported as its
consumer's owned source partition and an offset sum of -2, Kafka's ``LATEST_OFFSET``) and which
clients kept state for it (an offset sum giving a lag that is caught up, lagging, the whole
changelog, ahead of the end offset, or unknown, -3). Clients that left still shape the history
(their tasks have no previous owner in the group); clients that joined have none. A "probing"
group is the next round of a random one: its history is kassign's answer to that round, with
the warm-ups and standbys part way through restoring, as a probing rebalance finds them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias
from uuid import UUID

from kassign.server.streams.servicer import assign_request
from kassign.v1 import assignment_pb2 as pb
from kassign_client import build
from kassign_client.build import LATEST_OFFSET, UNKNOWN_OFFSET_SUM

__all__ = [
    "Client",
    "Group",
    "TaskInfoFor",
    "Topology",
    "group",
    "large_group",
    "plain_task",
    "topology_with",
    "with_history",
    "with_random_history",
]

NOW_MS = 1_000_000
HISTORIES = ("fresh", "random", "scale-out", "scale-in", "roll", "probing")


@dataclass(frozen=True, slots=True)
class Client:
    """One Kafka Streams instance: its process id, consumers (threads), KIP-708 tags, rack id."""

    process_id: UUID
    threads: int
    tags: dict[str, str]
    rack: str = ""


@dataclass(frozen=True, slots=True)
class Topology:
    """Sub-topologies: partition counts, which are stateful, changelog end offset sums."""

    partitions: tuple[int, ...]
    stateful: tuple[bool, ...]
    end_offsets: dict[tuple[int, int], int]

    def tasks(self) -> list[tuple[int, int]]:
        return [(s, p) for s, n in enumerate(self.partitions) for p in range(n)]

    def is_stateful(self, task: tuple[int, int]) -> bool:
        return self.stateful[task[0]]


@dataclass(slots=True)
class History:
    """Previous actives (task -> client index) and offset sums (client -> task -> sum)."""

    active: dict[tuple[int, int], int] = field(default_factory=dict)
    offsets: dict[int, dict[tuple[int, int], int]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Group:
    """A generated group: the request and a one-line description for failure messages."""

    seed: int
    request: pb.AssignRequest
    shape: str


def _client_tags(rng: random.Random) -> tuple[list[str], list[list[str]]]:
    """KIP-708 tag keys (none half the time) and the values each key takes."""
    if rng.random() < 0.5:
        return [], []
    keys = rng.sample(["zone", "cluster", "rack-row"], rng.randint(1, 2))
    return sorted(keys), [[f"{k}-{v}" for v in range(rng.randint(1, 4))] for k in sorted(keys)]


def _clients(rng: random.Random, n: int, keys: list[str], values: list[list[str]]) -> list[Client]:
    return [
        Client(
            UUID(int=rng.getrandbits(128), version=4),
            rng.randint(1, 4),
            {k: rng.choice(vs) for k, vs in zip(keys, values, strict=True)},
        )
        for _ in range(n)
    ]


def _topology(rng: random.Random) -> Topology:
    return topology_with(rng, tuple(rng.randint(1, 32) for _ in range(rng.randint(1, 5))))


def topology_with(rng: random.Random, partitions: tuple[int, ...]) -> Topology:
    """Sub-topologies of these partition counts: 70% stateful (at least one, mostly), changelog
    end offsets empty, small or large."""
    stateful = tuple(rng.random() < 0.7 for _ in partitions)
    if not any(stateful):
        stateful = (True, *stateful[1:]) if rng.random() < 0.8 else stateful
    ends = {
        (s, p): rng.choice([0, rng.randint(1, 200), rng.randint(1_000, 200_000)])
        for s, n in enumerate(partitions)
        for p in range(n)
        if stateful[s]
    }
    return Topology(partitions, stateful, ends)


def _offset_sum(rng: random.Random, end: int, acceptable_lag: int) -> int:
    """A standby's offset sum: caught up, lagging, nothing restored, ahead of the end, unknown."""
    kind = rng.choices(
        ["caught-up", "lagging", "empty", "ahead", "unknown"], weights=[5, 5, 2, 1, 1]
    )[0]
    if kind == "caught-up":
        return max(0, end - rng.randint(0, acceptable_lag))
    if kind == "lagging":
        return max(0, end - rng.randint(acceptable_lag + 1, acceptable_lag + 1 + 2 * end + 10))
    if kind == "empty":
        return 0
    if kind == "ahead":
        return end + rng.randint(1, 50)
    return UNKNOWN_OFFSET_SUM


def _random_history(
    rng: random.Random, topology: Topology, owners: int, *, acceptable_lag: int, standbys: int
) -> History:
    """Each task ran on a random previous client (some on none); a few others kept its state."""
    history = History()
    for task in topology.tasks():
        if rng.random() < 0.9:
            history.active[task] = rng.randrange(owners)
        if not topology.is_stateful(task):
            continue
        end = topology.end_offsets[task]
        holders = rng.sample(range(owners), min(owners, rng.randint(0, standbys + 1)))
        for c in holders:
            if history.active.get(task) != c:
                sums = history.offsets.setdefault(c, {})
                sums[task] = _offset_sum(rng, end, acceptable_lag)
    return history


def _next_round_history(
    rng: random.Random, first: pb.AssignRequest, clients: Sequence[Client], topology: Topology
) -> History:
    """kassign's answer to ``first`` as the history: its actives ran, its standbys restored some."""
    index = {str(c.process_id): i for i, c in enumerate(clients)}
    acceptable_lag = first.configs.acceptable_recovery_lag
    history = History()
    for c in assign_request(first).response.clients:
        for t in c.active_tasks:
            history.active[(t.subtopology, t.partition)] = index[c.process_id]
        for t in c.standby_tasks:
            task = (t.subtopology, t.partition)
            sums = history.offsets.setdefault(index[c.process_id], {})
            sums[task] = _offset_sum(rng, topology.end_offsets[task], acceptable_lag)
    return history


TaskInfoFor: TypeAlias = Callable[[Topology, tuple[int, int]], pb.TaskInfo]
"""Makes one task's ``TaskInfo`` (partitions, racks) from the topology and its (sub-topology,
partition)."""


def plain_task(topology: Topology, task: tuple[int, int]) -> pb.TaskInfo:
    """One source topic ``in-<s>`` and, when stateful, one changelog, with no rack ids."""
    s, p = task
    return build.task(
        s,
        p,
        source=[f"in-{s}"],
        changelog=[f"app-store-{s}-changelog"] if topology.stateful[s] else [],
        end_offset_sum=topology.end_offsets.get((s, p), 0),
    )


def with_history(
    *,
    seed: int,
    clients: Sequence[Client],
    topology: Topology,
    history: History,
    configs: pb.AssignmentConfigs,
    shape: str,
    drop_owned: float = 0.05,
    task_info: TaskInfoFor | None = None,
) -> Group:
    """The request: ``history`` indexes ``clients``; indices past the end are clients that left.
    ``task_info`` makes each task's ``TaskInfo`` (default ``plain_task``: one source topic
    ``in-<s>``, one changelog ``app-store-<s>-changelog`` when stateful, no racks); a previous
    active's consumer owned every source partition of its task."""
    rng = random.Random(seed ^ 0x5EED)
    infos = {task: (task_info or plain_task)(topology, task) for task in topology.tasks()}
    tasks = list(infos.values())
    sources = {
        task: [(tp.topic, tp.partition) for tp in info.topic_partitions if tp.is_source]
        for task, info in infos.items()
    }
    members = []
    for index, client in enumerate(clients):
        member_ids = [
            f"{client.process_id}-StreamThread-{n}-consumer" for n in range(1, client.threads + 1)
        ]
        owned: dict[str, list[tuple[str, int]]] = {}
        sums: dict[str, int] = {}
        for task, owner in sorted(history.active.items()):
            if owner != index:
                continue
            if rng.random() >= drop_owned:  # an owned partition lost in a cooperative round
                owned.setdefault(rng.choice(member_ids), []).extend(sources[task])
            if topology.is_stateful(task):
                sums[f"{task[0]}_{task[1]}"] = LATEST_OFFSET
        for task, offset_sum in history.offsets.get(index, {}).items():
            sums[f"{task[0]}_{task[1]}"] = offset_sum
        members.append(
            build.client(
                client.process_id,
                threads=member_ids,
                owned_partitions=owned,
                offset_sums=sums,
                tags=client.tags,
                rack=client.rack,
                topics=sorted({topic for tps in sources.values() for topic, _ in tps}),
            )
        )
    request = build.request(members, tasks, configs=configs, group_id=f"g{seed}", now_ms=NOW_MS)
    return Group(seed, request, shape)


def group(seed: int) -> Group:
    """One group: 2-30 clients, 1-5 sub-topologies of 1-32 partitions, 0-2 standbys, tags or not."""
    rng = random.Random(seed)
    keys, values = _client_tags(rng)
    clients = _clients(rng, rng.randint(2, 30), keys, values)
    topology = _topology(rng)
    standbys = rng.randint(0, 2)
    acceptable_lag = rng.choice([0, 10, 100, 1_000, 10_000])
    configs = build.configs(
        assignor="high_availability",
        acceptable_recovery_lag=acceptable_lag,
        max_warmup_replicas=rng.randint(1, 5),
        num_standby_replicas=standbys,
        probing_rebalance_interval_ms=rng.choice([60_000, 600_000]),
        rack_aware_assignment_tags=keys,
    )
    return with_random_history(seed, rng, clients, topology, configs, tags=keys)


def large_group(seed: int) -> Group:
    """A load-test-sized group (as ``bench/ghz/data``): 8-40 clients of 1-8 threads, each with a
    rack id half the time, 2-6 sub-topologies of 33-200 partitions (at most ~1,200 tasks), 1-2
    standbys, no tags. Racks never steer Kafka's HA standbys, nor kassign's unless the request sets
    ``standby_rack_spread``."""
    rng = random.Random(seed)
    racks = [f"rack-{r}" for r in "abc"] if rng.random() < 0.5 else []
    clients = [
        Client(
            UUID(int=rng.getrandbits(128), version=4),
            rng.choice([1, 2, 4, 4, 8]),
            {},
            rng.choice(racks) if racks else "",
        )
        for _ in range(rng.randint(8, 40))
    ]
    subtopologies = rng.randint(2, 6)
    partitions = tuple(
        rng.randint(33, min(200, 1_200 // subtopologies)) for _ in range(subtopologies)
    )
    stateful = tuple(s % 2 == 1 or rng.random() < 0.3 for s in range(subtopologies))
    ends = {
        (s, p): rng.randint(1_000, 1_000_000)
        for s, n in enumerate(partitions)
        for p in range(n)
        if stateful[s]
    }
    configs = build.configs(
        assignor="high_availability",
        acceptable_recovery_lag=rng.choice([1_000, 10_000]),
        max_warmup_replicas=rng.randint(1, 5),
        num_standby_replicas=rng.randint(1, 2),
        probing_rebalance_interval_ms=600_000,
    )
    return with_random_history(
        seed, rng, clients, Topology(partitions, stateful, ends), configs, tags=[]
    )


def with_random_history(
    seed: int,
    rng: random.Random,
    clients: Sequence[Client],
    topology: Topology,
    configs: pb.AssignmentConfigs,
    *,
    tags: list[str],
    task_info: TaskInfoFor | None = None,
    detail: str = "",
) -> Group:
    """The group with a history of the kind ``seed`` picks (``HISTORIES``), drawn from ``rng``;
    ``task_info`` as ``with_history`` takes it, ``detail`` ends the shape line."""
    standbys = configs.num_standby_replicas
    acceptable_lag = configs.acceptable_recovery_lag
    kind = HISTORIES[seed % len(HISTORIES)]
    n = len(clients)
    if kind == "fresh":
        history = History()
    elif kind == "scale-out":  # the last third joined: they own nothing yet
        history = _random_history(
            rng, topology, max(1, n - n // 3 - 1), acceptable_lag=acceptable_lag, standbys=standbys
        )
    elif kind == "scale-in":  # some previous owners (indices >= n) have left
        history = _random_history(
            rng, topology, n + rng.randint(1, 5), acceptable_lag=acceptable_lag, standbys=standbys
        )
    else:  # "random", "roll", "probing": every current client may have run something
        history = _random_history(
            rng, topology, n, acceptable_lag=acceptable_lag, standbys=standbys
        )
    if kind == "probing":
        first = with_history(
            seed=seed,
            clients=clients,
            topology=topology,
            history=history,
            configs=configs,
            shape="",
            task_info=task_info,
        )
        history = _next_round_history(rng, first.request, clients, topology)
    racks = sorted({c.rack for c in clients if c.rack})
    shape = (
        f"seed={seed} {kind}: {n} clients, threads={[c.threads for c in clients]}, "
        f"partitions={list(topology.partitions)}, stateful={list(topology.stateful)}, "
        f"standbys={standbys}, tags={tags}, acceptable_lag={acceptable_lag}, "
        f"max_warmups={configs.max_warmup_replicas}"
        + (f", racks={racks}" if racks else "")
        + detail
    )
    return with_history(
        seed=seed,
        clients=clients,
        topology=topology,
        history=history,
        configs=configs,
        shape=shape,
        drop_owned=0.2 if kind == "roll" else 0.05,
        task_info=task_info,
    )
