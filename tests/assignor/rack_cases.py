"""Builders shared by the rack-aware tests: small states, costs computed the slow way, Kafka's swap.

Everything here is written for clarity, not speed: the tests compare the optimiser against it.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from hypothesis import strategies as st
from kassign.assignor.streams.model import (
    ApplicationState,
    AssignmentConfigs,
    ConsumerState,
    KafkaStreamsState,
    ProcessId,
    RackAwareStrategy,
    TaskId,
    TaskInfo,
    TaskTopicPartition,
    application_state,
)
from kassign.assignor.streams.tags import tag_layout

Assignment = Mapping[ProcessId, frozenset[TaskId]]


def pid(n: int) -> ProcessId:
    return uuid.UUID(int=n + 1)


def task_info(tid: TaskId, racks: Iterable[Iterable[str]], *, stateful: bool = True) -> TaskInfo:
    """A task whose i-th partition has replicas in ``racks[i]``; stateful ones log every partition."""
    parts = tuple(
        TaskTopicPartition(f"topic{i}", tid.partition, True, stateful, frozenset(r))
        for i, r in enumerate(racks)
    )
    return TaskInfo(tid, stateful, ("store",) if stateful else (), parts)


def client(n: int, rack: str | None, **tags: str) -> KafkaStreamsState:
    return KafkaStreamsState(pid(n), (ConsumerState(f"m{n}"),), rack_id=rack, client_tags=tags)


def state_of(
    tasks: Iterable[TaskInfo],
    clients: Iterable[KafkaStreamsState],
    strategy: RackAwareStrategy = RackAwareStrategy.MIN_TRAFFIC,
    **configs: object,
) -> ApplicationState:
    return application_state(
        tasks,
        clients,
        AssignmentConfigs(rack_aware_strategy=strategy, **configs),  # type: ignore[arg-type]
    )


def misses(state: ApplicationState, task: TaskId, process: ProcessId, *, standby: bool) -> int:
    rack = state.clients[process].rack_id
    parts = state.tasks[task].topic_partitions
    return sum(1 for tp in parts if (tp.is_changelog or not standby) and rack not in tp.rack_ids)


def cost(
    state: ApplicationState,
    placed: Assignment,
    start: Assignment,
    traffic: int,
    overlap: int,
    *,
    standby: bool = False,
    only: frozenset[TaskId] | None = None,
) -> int:
    """KIP-925 cost of ``placed`` against ``start``, task by task."""
    total = 0
    for p, tasks in placed.items():
        for t in tasks:
            if only is not None and t not in only:
                continue
            total += traffic * misses(state, t, p, standby=standby)
            total += overlap * (t not in start.get(p, frozenset()))
    return total


def counts(assignment: Assignment, only: frozenset[TaskId] | None = None) -> dict[ProcessId, int]:
    return {p: len(ts if only is None else ts & only) for p, ts in assignment.items()}


def brute_force_active(
    state: ApplicationState, start: Assignment, traffic: int, overlap: int, *, balance: bool
) -> int:
    """Cheapest count-keeping re-placement of every task in ``start`` (tiny inputs only)."""
    order = [t for p in sorted(start) for t in sorted(start[p])]
    slots = [p for p in sorted(start) for _ in start[p]]
    best = None
    for perm in set(itertools.permutations(slots)):
        placed: dict[ProcessId, set[TaskId]] = {p: set() for p in start}
        for t, p in zip(order, perm, strict=True):
            placed[p].add(t)
        frozen = {p: frozenset(ts) for p, ts in placed.items()}
        if balance and not within_subtopology_bounds(frozen, start):
            continue
        value = cost(state, frozen, start, traffic, overlap)
        best = value if best is None else min(best, value)
    assert best is not None
    return best


def within_subtopology_bounds(placed: Assignment, start: Assignment) -> bool:
    """KIP-925 4.B.II: subtopology s has at most ceil(S[s] * C[c] / n) tasks on client c."""
    n = sum(len(ts) for ts in start.values())
    sizes: dict[tuple[str | None, int], int] = {}
    for ts in start.values():
        for t in ts:
            sizes[(t.named_topology, t.subtopology)] = (
                sizes.get((t.named_topology, t.subtopology), 0) + 1
            )
    for p, ts in placed.items():
        for key, size in sizes.items():
            on = sum(1 for t in ts if (t.named_topology, t.subtopology) == key)
            if on > -(-size * len(start[p]) // n):
                return False
    return True


@dataclass(frozen=True)
class Small:
    """A random small group: tasks, clients, a valid start and standbys."""

    state: ApplicationState
    active: dict[ProcessId, frozenset[TaskId]]
    standby: dict[ProcessId, frozenset[TaskId]]


@st.composite
def small_groups(
    draw: st.DrawFn, max_tasks: int = 7, max_clients: int = 5, tags: bool = False
) -> Small:
    rack_names = ["a", "b", "c"][: draw(st.integers(1, 3))]
    subsets = [frozenset(s) for n in (1, 2) for s in itertools.combinations(["a", "b", "c"], n)]
    n_tasks = draw(st.integers(1, max_tasks))
    n_clients = draw(st.integers(2, max_clients))
    tasks = [
        task_info(
            TaskId(draw(st.integers(0, 2)), i),
            draw(st.lists(st.sampled_from(subsets), min_size=1, max_size=2)),
        )
        for i in range(n_tasks)
    ]
    zones = ["z1", "z2"]
    clients = [
        client(
            j,
            draw(st.sampled_from(rack_names)),
            **({"zone": draw(st.sampled_from(zones))} if tags else {}),
        )
        for j in range(n_clients)
    ]
    strategy = draw(
        st.sampled_from([RackAwareStrategy.MIN_TRAFFIC, RackAwareStrategy.BALANCE_SUBTOPOLOGY])
    )
    extra = {"rack_aware_assignment_tags": ("zone",)} if tags else {}
    state = state_of(tasks, clients, strategy, num_standby_replicas=1, **extra)
    pids = list(state.clients)
    owner = {t.id: draw(st.sampled_from(pids)) for t in tasks}
    active = {p: frozenset(t for t, o in owner.items() if o == p) for p in pids}
    standby: dict[ProcessId, frozenset[TaskId]] = {p: frozenset() for p in pids}
    for t, o in owner.items():
        others = [p for p in pids if p != o]
        chosen = draw(st.sampled_from(others))
        standby[chosen] = standby[chosen] | {t}
    return Small(state, active, standby)


def kafka_standby_swaps(
    state: ApplicationState,
    active: Assignment,
    standby: Assignment,
    traffic: int,
    overlap: int,
) -> dict[ProcessId, frozenset[TaskId]]:
    """Kafka's standby optimiser as a reference: pairwise optimal swaps, at most four rounds.

    Pairs of clients on different racks in client order; a standby may move between two clients
    only if the destination holds no copy of the task and both carry the same tags (the rack is
    the tag when none is configured, as in Kafka, so then nothing moves).
    Each pair's movable standbys are re-placed optimally keeping both clients' counts; the cost
    counts "non overlap" against the placement at the start of that pair's step, as Kafka does.
    """
    current = {p: set(ts) for p, ts in standby.items()}
    pids = list(state.clients)
    tags = tag_layout(state).values  # Kafka's tags, or the rack standing in for them (KIP-925 D)
    for _ in range(4):
        moved = False
        for i, j in itertools.combinations(range(len(pids)), 2):
            a, b = pids[i], pids[j]
            if state.clients[a].rack_id == state.clients[b].rack_id or tags[a] != tags[b]:
                continue
            holds = {p: current[p] | set(active.get(p, ())) for p in (a, b)}
            mov_a = sorted(t for t in current[a] if t not in holds[b])
            mov_b = sorted(t for t in current[b] if t not in holds[a])
            if not mov_a or not mov_b:
                continue
            pool = sorted(mov_a + mov_b)

            best = min(
                itertools.combinations(pool, len(mov_a)),
                key=lambda to_a, a=a, b=b, pool=pool: (
                    sum(
                        traffic * misses(state, t, a if t in to_a else b, standby=True)
                        + overlap * (t not in current[a if t in to_a else b])
                        for t in pool
                    ),
                    to_a,
                ),
            )
            if set(best) != set(mov_a):
                current[a] = (current[a] - set(mov_a)) | set(best)
                current[b] = (current[b] - set(mov_b)) | (set(pool) - set(best))
                moved = True
        if not moved:
            break
    return {p: frozenset(ts) for p, ts in current.items()}


def diversity(
    state: ApplicationState, active: Assignment, standby: Assignment
) -> dict[TaskId, tuple[int, ...]]:
    """Per task, distinct set values of each KIP-708 tag key (rack if none) over its replicas (active included)."""
    values = tag_layout(state).values
    width = len(next(iter(values.values()), ()))
    holders: dict[TaskId, list[ProcessId]] = {}
    for assignment in (active, standby):
        for p, ts in assignment.items():
            for t in ts:
                holders.setdefault(t, []).append(p)
    return {
        t: tuple(len({values[p][k] for p in ps} - {None}) for k in range(width))
        for t, ps in holders.items()
    }
