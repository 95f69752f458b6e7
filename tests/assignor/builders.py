"""Small-group builders (``client``, ``state``, ``tasks``) and a sticky-assignor group strategy.

Shared by the standby, sticky, thread and validation tests. ``shuffled`` is the one in
``tests.assignor.strategies``: it keeps the shuffled order (no re-sorting), so an assignor that
follows its input order gives another answer and the order-independence tests fail.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from uuid import UUID

from hypothesis import strategies as st
from kassign.assignor.streams.model import (
    ApplicationState,
    AssignmentConfigs,
    ConsumerState,
    KafkaStreamsState,
    TaskId,
    TaskInfo,
    application_state,
)

from tests.assignor.strategies import shuffled

__all__ = ["app_states", "client", "pid", "shuffled", "state", "tasks"]


def pid(n: int) -> UUID:
    """Process id number ``n``: ids sort by ``n`` in Java order too (small positive halves)."""
    return UUID(int=n)


def tasks(spec: str) -> list[TaskId]:
    """``"0_0 0_1 1_0"`` -> task ids."""
    pairs = (part.split("_") for part in spec.split())
    return [TaskId(int(sub), int(partition)) for sub, partition in pairs]


def client(
    n: int,
    *,
    threads: int = 1,
    active: Iterable[TaskId] = (),
    standby: Iterable[TaskId] = (),
    tags: Mapping[str, str] | None = None,
    rack: str | None = None,
) -> KafkaStreamsState:
    return KafkaStreamsState(
        process_id=pid(n),
        consumers=tuple(ConsumerState(f"c{n}-{i}") for i in range(threads)),
        previous_active_tasks=frozenset(active),
        previous_standby_tasks=frozenset(standby),
        client_tags=dict(tags or {}),
        rack_id=rack,
    )


def state(
    clients: Iterable[KafkaStreamsState],
    stateful: Iterable[TaskId] = (),
    stateless: Iterable[TaskId] = (),
    **configs: object,
) -> ApplicationState:
    infos = [TaskInfo(t, True) for t in stateful] + [TaskInfo(t, False) for t in stateless]
    return application_state(infos, clients, AssignmentConfigs(**configs))  # type: ignore[arg-type]


@st.composite
def app_states(
    draw: st.DrawFn, *, max_clients: int = 6, max_tasks: int = 12, tagged: bool | None = None
) -> ApplicationState:
    """Random groups: clients with 1-3 threads, previous tasks, optional zone/cluster tags."""
    n_clients = draw(st.integers(1, max_clients))
    n_sub = draw(st.integers(1, 3))
    n_part = draw(st.integers(1, max(1, max_tasks // n_sub)))
    all_tasks = [TaskId(s, p) for s in range(n_sub) for p in range(n_part)]
    stateful = draw(st.sets(st.sampled_from(all_tasks)))
    use_tags = draw(st.booleans()) if tagged is None else tagged
    ids = draw(
        st.lists(st.integers(1, 2**128 - 1), min_size=n_clients, max_size=n_clients, unique=True)
    )
    clients = []
    for n in ids:
        prev = draw(st.sets(st.sampled_from(all_tasks), max_size=4))
        prev_standby = (
            draw(
                st.sets(
                    st.sampled_from(sorted(stateful, key=lambda t: t.sort_key) or all_tasks),
                    max_size=3,
                )
            )
            - prev
        )
        tags = {}
        if use_tags:
            tags = {"zone": draw(st.sampled_from("abc")), "cluster": draw(st.sampled_from("xy"))}
        threads = draw(st.integers(1, 3))
        clients.append(
            KafkaStreamsState(
                process_id=UUID(int=n),
                consumers=tuple(ConsumerState(f"m{n}-{i}") for i in range(threads)),
                previous_active_tasks=frozenset(prev),
                previous_standby_tasks=frozenset(prev_standby),
                client_tags=tags,
            )
        )
    infos = [TaskInfo(t, t in stateful) for t in all_tasks]
    configs = AssignmentConfigs(
        assignor="sticky",
        num_standby_replicas=draw(st.integers(0, 2)),
        rack_aware_assignment_tags=("zone", "cluster") if use_tags else (),
    )
    return application_state(infos, clients, configs)
