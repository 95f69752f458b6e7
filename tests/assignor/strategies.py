"""Hypothesis strategies for random Kafka Streams groups, shared by the assignor tests.

``app_states()`` draws an ``ApplicationState``: 1-``max_clients`` clients with 1-4 threads,
optional racks and KIP-708 tags, stateful and stateless sub-topologies, a random previous
assignment, and offset sums turned into lags by ``kassign.assignor.streams.lags`` (so lags are what a real
decoder would produce). ``shuffled(state, seed)`` rebuilds the same group from its parts in
another order, to check that the input order cannot change an answer.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from uuid import UUID

from hypothesis import strategies as st
from kassign.assignor.streams.lags import ConsumerReport, kafka_streams_state
from kassign.assignor.streams.model import (
    LATEST_OFFSET,
    UNKNOWN_OFFSET_SUM,
    ApplicationState,
    AssignmentConfigs,
    KafkaStreamsState,
    TaskId,
    TaskInfo,
    application_state,
)

__all__ = ["app_states", "client_state", "configs", "shuffled", "task_infos", "uuid_for"]

ZONES = ("zone-a", "zone-b", "zone-c")
CLUSTERS = ("k8s-1", "k8s-2")
RACKS = ("rack-1", "rack-2", "rack-3")
END_OFFSETS = (0, 50, 5_000, 20_000, 1_000_000)


def uuid_for(i: int) -> UUID:
    """A readable process id for scenario tests: ``00000000-0000-0000-0000-00000000000i``."""
    return UUID(int=i)


def client_state(
    process_id: UUID,
    threads: int,
    offset_sums: dict[TaskId, int],
    end_offset_sums: dict[TaskId, int],
    *,
    owned_active: frozenset[TaskId] = frozenset(),
    rack_id: str | None = None,
    client_tags: dict[str, str] | None = None,
) -> KafkaStreamsState:
    """A client whose ``threads`` consumers split its offset sums and owned tasks round-robin."""
    members = [f"{process_id}-c{i}" for i in range(threads)]
    sums: list[dict[TaskId, int]] = [{} for _ in members]
    owned: list[set[TaskId]] = [set() for _ in members]
    for i, task in enumerate(sorted(offset_sums)):
        sums[i % threads][task] = offset_sums[task]
    for i, task in enumerate(sorted(owned_active)):
        owned[i % threads].add(task)
    reports = [ConsumerReport(m, sums[i], frozenset(owned[i])) for i, m in enumerate(members)]
    return kafka_streams_state(
        process_id, reports, end_offset_sums, rack_id=rack_id, client_tags=client_tags
    )


@st.composite
def task_infos(
    draw: st.DrawFn, max_subtopologies: int = 3, max_partitions: int = 4
) -> list[TaskInfo]:
    """Sub-topologies of 1-``max_partitions`` tasks, each stateful (with end offsets) or not."""
    tasks: list[TaskInfo] = []
    for sub in range(draw(st.integers(1, max_subtopologies))):
        stateful = draw(st.booleans())
        for p in range(draw(st.integers(1, max_partitions))):
            end = draw(st.sampled_from(END_OFFSETS)) if stateful else 0
            stores = (f"store-{sub}",) if stateful else ()
            tasks.append(TaskInfo(TaskId(sub, p), stateful, stores, (), end))
    return tasks


@st.composite
def configs(draw: st.DrawFn, max_standbys: int = 2) -> AssignmentConfigs:
    """HA configs: standbys, warm-ups, recovery lag and (sometimes) KIP-708 tag keys."""
    tags = draw(st.sampled_from([(), ("zone",), ("zone", "cluster")]))
    return AssignmentConfigs(
        acceptable_recovery_lag=draw(st.sampled_from([0, 100, 10_000])),
        max_warmup_replicas=draw(st.integers(1, 3)),
        num_standby_replicas=draw(st.integers(0, max_standbys)),
        probing_rebalance_interval_ms=600_000,
        rack_aware_assignment_tags=tags,
    )


def _offset_sum(draw: st.DrawFn, end: int, role: str) -> int:
    if role == "active":
        return draw(st.sampled_from([LATEST_OFFSET, LATEST_OFFSET, LATEST_OFFSET, end]))
    return draw(
        st.one_of(st.integers(0, end + 10), st.sampled_from([UNKNOWN_OFFSET_SUM, end, end + 7]))
    )


@st.composite
def app_states(
    draw: st.DrawFn,
    max_clients: int = 6,
    max_standbys: int = 2,
    with_tags: bool = True,
    now_ms: int = 1_000,
) -> ApplicationState:
    """A random group with a random previous assignment (see the module docstring)."""
    tasks = draw(task_infos())
    cfg = draw(configs(max_standbys=max_standbys))
    ids = draw(st.lists(st.uuids(), min_size=1, max_size=max_clients, unique=True))
    end_offsets = {t.id: t.changelog_end_offset_sum for t in tasks if t.stateful}
    use_racks = draw(st.booleans())
    sums: dict[UUID, dict[TaskId, int]] = {p: {} for p in ids}
    owned: dict[UUID, set[TaskId]] = {p: set() for p in ids}
    for task in tasks:
        owner = draw(st.one_of(st.none(), st.sampled_from(ids)))
        if owner is not None:
            owned[owner].add(task.id)
        if not task.stateful:
            continue
        if owner is not None:
            sums[owner][task.id] = _offset_sum(draw, task.changelog_end_offset_sum, "active")
        for other in draw(st.lists(st.sampled_from(ids), max_size=2, unique=True)):
            if other != owner:
                sums[other][task.id] = _offset_sum(draw, task.changelog_end_offset_sum, "standby")
    clients = []
    for p in ids:
        tags = (
            {"zone": draw(st.sampled_from(ZONES)), "cluster": draw(st.sampled_from(CLUSTERS))}
            if with_tags and cfg.rack_aware_assignment_tags
            else {}
        )
        clients.append(
            client_state(
                p,
                draw(st.integers(1, 4)),
                sums[p],
                end_offsets,
                owned_active=frozenset(owned[p]),
                rack_id=draw(st.sampled_from(RACKS)) if use_racks else None,
                client_tags=tags,
            )
        )
    return application_state(tasks, clients, cfg, now_ms=now_ms)


def shuffled(state: ApplicationState, seed: int) -> ApplicationState:
    """The same group with its task and client mappings in a shuffled order.

    Built directly (not through ``application_state``, which sorts) so an assignor that
    iterates its input without sorting it shows up as a different answer.
    """
    rnd = random.Random(seed)
    tasks: Sequence[TaskInfo] = rnd.sample(list(state.tasks.values()), len(state.tasks))
    clients = rnd.sample(list(state.clients.values()), len(state.clients))
    return ApplicationState(
        tasks={t.id: t for t in tasks},
        clients={c.process_id: c for c in clients},
        configs=state.configs,
        now_ms=state.now_ms,
    )
