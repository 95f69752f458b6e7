"""What the rack-aware optimiser reads from a state, and the checks on what it gives back.

Why a module: ``optimise.py`` reads as the KIP-925 entry points; the bookkeeping they share lives
here - numbering clients (Java UUID order), tasks (``TaskId`` order) and racks (sorted), the
KIP-708 tag classes, and the validation of the solver's standbys. The per-rack count of a task's
partitions with no replica there, and the enablement rules of KIP-925 section 6, are
``cost_tables.py``'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TypeAlias

import kassign_native
import numpy as np
from kassign.assignor.errors import InvalidAssignment, InvalidRequest, SolverError
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.model import ApplicationState, ProcessId, RackAwareStrategy, TaskId
from kassign.assignor.streams.rack.active_flow import ActiveProblem
from kassign.assignor.streams.rack.cost_tables import misses_per_rack, task_table
from kassign.assignor.streams.rack.costs import CostModel, counted_partitions
from kassign.assignor.streams.rack.int_sets import isin, unique
from kassign.assignor.streams.rack.standby_flow import StandbyProblem, native_input
from kassign.assignor.streams.result import TaskType
from kassign.assignor.streams.standby import client_tag_values

__all__ = [
    "Assignment",
    "Diversities",
    "active_owners",
    "active_problem",
    "build_active_problem",
    "build_standby_problem",
    "check_standbys",
    "client_racks",
    "diversity",
    "every_client",
    "holds_state",
    "owners",
    "tag_classes",
]

Assignment = Mapping[ProcessId, AbstractSet[TaskId]]


def active_problem(
    state: ApplicationState,
    tasks: Sequence[TaskId],
    assignment: Assignment,
    *,
    traffic_cost: int,
    non_overlap_cost: int,
    cost_model: CostModel = CostModel.BUILT_IN,
) -> ActiveProblem:
    """The graph input ``optimize_active_tasks`` would solve, without its checks (for benchmarks).

    ``cost_model`` defaults to the built-in assignors' one, whose solve the benchmark measures.
    """
    ordered = sorted(set(tasks))  # TaskId's own order is Kafka's
    index = {pid: i for i, pid in enumerate(state.clients)}
    start = owners(ordered, every_client(state, assignment), index)
    racks = sorted({str(c.rack_id) for c in state.clients.values()})
    misses = misses_per_rack(
        state,
        ordered,
        racks,
        counted=counted_partitions(cost_model, TaskType.ACTIVE),
        required=counted_partitions(CostModel.TASK_ASSIGNMENT_UTILS, TaskType.ACTIVE),
    )
    if isinstance(misses, str):
        raise InvalidRequest(misses, field="tasks.topic_partitions.rack_ids")
    return build_active_problem(
        state, ordered, start, racks, misses, traffic_cost, non_overlap_cost
    )


def build_active_problem(
    state: ApplicationState,
    ordered: list[TaskId],
    start: np.ndarray,
    racks: list[str],
    misses: np.ndarray,
    traffic_cost: int,
    non_overlap_cost: int,
    anchored: np.ndarray | None = None,
) -> ActiveProblem:
    """Number tasks, clients (Java UUID order) and racks (sorted); subtopologies if balancing."""
    subtopology = None
    if state.configs.rack_aware_strategy is RackAwareStrategy.BALANCE_SUBTOPOLOGY:
        keys = [f"{t.named_topology or ''}\0{t.subtopology:011d}" for t in ordered]
        subtopology = np.unique(np.array(keys), return_inverse=True)[1].astype(np.int64)
    return ActiveProblem(
        client_rack=client_racks(state, racks),
        start=start,
        misses=misses,
        traffic_cost=traffic_cost,
        non_overlap_cost=non_overlap_cost,
        subtopology=subtopology,
        anchored=anchored,
    )


def client_racks(state: ApplicationState, racks: list[str]) -> np.ndarray:
    """Each client's rack as an index into ``racks`` (sorted), in the state's client order."""
    rack_of = {r: i for i, r in enumerate(racks)}
    return np.array([rack_of[str(c.rack_id)] for c in state.clients.values()], np.int64)


def build_standby_problem(
    state: ApplicationState,
    rep_task: np.ndarray,
    rep_client: np.ndarray,
    active_of: np.ndarray,
    racks: list[str],
    misses: np.ndarray,
    traffic_cost: int,
    non_overlap_cost: int,
    anchored: np.ndarray | None = None,
    fixed: np.ndarray | None = None,
    room: tuple[np.ndarray, np.ndarray] | None = None,
    classes: tuple[np.ndarray, np.ndarray] | None = None,
    client_rack: np.ndarray | None = None,
) -> StandbyProblem:
    """Number racks (sorted) and KIP-708 tag classes for the replicas given by index
    (``classes``: ``tag_classes`` of ``state.clients``, ``client_rack``: ``client_racks``, if
    the caller has them already)."""
    client_class, class_values = classes or tag_classes(state, list(state.clients))
    return StandbyProblem(
        client_rack=client_racks(state, racks) if client_rack is None else client_rack,
        client_class=client_class,
        class_values=class_values,
        rep_task=rep_task,
        rep_client=rep_client,
        active_client=active_of,
        misses=misses,
        traffic_cost=traffic_cost,
        non_overlap_cost=non_overlap_cost,
        anchored=anchored,
        fixed=fixed,
        may_lose=None if room is None else room[0],
        may_gain=None if room is None else room[1],
    )


def room_arrays(
    clients: Sequence[ProcessId], slack: Mapping[ProcessId, tuple[int, int]] | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """``slack`` (client: how many fewer and more it may end with) as (may_lose, may_gain)
    arrays in ``clients`` order; a client it does not name has no room."""
    if slack is None:
        return None
    return (
        np.array([slack.get(pid, (0, 0))[0] for pid in clients], np.int64),
        np.array([slack.get(pid, (0, 0))[1] for pid in clients], np.int64),
    )


def holds_state(
    state: ApplicationState, tasks: Sequence[TaskId], clients: np.ndarray
) -> np.ndarray:
    """Whether client ``clients[i]`` (index in state order) has local state of ``tasks[i]``:
    the task is stateful and the client ran it or kept a standby of it (its previous tasks,
    KIP-441). A stateless task has no state anywhere."""
    pids, table = list(state.clients), task_table(state)
    return np.array(
        [
            table.is_stateful(t) and t in state.clients[pids[c]].previous_tasks
            for t, c in zip(tasks, clients.tolist())
        ],
        np.bool_,
    )


def every_client(
    state: ApplicationState, assignment: Assignment
) -> dict[ProcessId, frozenset[TaskId]]:
    unknown = [p for p in assignment if p not in state.clients]
    if unknown:
        raise InvalidAssignment("UNKNOWN_PROCESS_ID", f"no such client {min(map(str, unknown))}")
    return {p: frozenset(assignment.get(p, ())) for p in state.clients}


def owners(
    tasks: list[TaskId],
    assignment: Mapping[ProcessId, frozenset[TaskId]],
    index: Mapping[ProcessId, int],
) -> np.ndarray:
    owner = active_owners(tasks, assignment, index)
    if np.any(owner < 0):
        missing = tasks[int(np.flatnonzero(owner < 0)[0])]
        raise InvalidAssignment("ACTIVE_TASK_UNASSIGNED", f"task {missing} is on no client")
    return owner


def active_owners(
    tasks: list[TaskId], assignment: Assignment, index: Mapping[ProcessId, int]
) -> np.ndarray:
    """Client index of each task's active (-1: none); a task active twice is the caller's bug."""
    wanted = {t: i for i, t in enumerate(tasks)}
    owner = [-1] * len(tasks)
    for pid in sorted(assignment, key=lambda p: index[p]):
        checkpoint()
        c = index[pid]
        for t in assignment[pid]:
            i = wanted.get(t)
            if i is None:
                continue
            if owner[i] >= 0:
                raise InvalidAssignment("ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES", f"task {t} twice")
            owner[i] = c
    return np.array(owner, np.int64)


def tag_classes(state: ApplicationState, clients: list[ProcessId]) -> tuple[np.ndarray, np.ndarray]:
    """Each client's tag class and each class's value codes (0: unset), from the KIP-708 layout.

    Coded once per distinct value tuple (a group has a few), and the tuples read in the
    layout's own order where ``clients`` is it (no ``UUID`` hashed per client: issue 24)."""
    tuples = client_tag_values(state, clients)
    distinct = list(dict.fromkeys(tuples))
    width = max((len(v) for v in distinct), default=0)
    codes: list[dict[str, int]] = [{} for _ in range(width)]
    for k in range(width):
        present = sorted({v for t in distinct if (v := t[k]) is not None})
        codes[k] = {v: i + 1 for i, v in enumerate(present)}
    coded = {t: tuple(0 if v is None else codes[k][v] for k, v in enumerate(t)) for t in distinct}
    classes = sorted(set(coded.values()))
    class_of = {c: i for i, c in enumerate(classes)}
    by_tuple = {t: class_of[c] for t, c in coded.items()}
    client_class = np.fromiter(map(by_tuple.__getitem__, tuples), np.int64, len(tuples))
    return client_class, np.array(classes, np.int64).reshape(len(classes), width)


Diversities: TypeAlias = tuple[np.ndarray | None, np.ndarray | None]
"""``diversity`` of a problem's input and of a solution, where already worked out (``None``:
not yet): the loose rounds count both, and the check need not count them again (issue 24)."""


def check_standbys(
    p: StandbyProblem,
    tasks: np.ndarray,
    clients: np.ndarray,
    *,
    diversities: Diversities = (None, None),
) -> None:
    """The solver's standbys keep every guarantee of the input, or the input stands."""
    lose, gain = p.room
    change = np.bincount(clients, minlength=p.client_rack.size) - p.counts
    if np.any(change < -lose) or np.any(change > gain):
        raise SolverError("BAD_RESULT", "per-client standby counts changed")
    if not np.array_equal(
        np.bincount(tasks, minlength=p.active_client.size),
        np.bincount(p.rep_task, minlength=p.active_client.size),
    ):
        raise SolverError("BAD_RESULT", "a task's standby count changed")
    pairs = tasks * p.client_rack.size + clients
    if unique(pairs).size != pairs.size or np.any(p.active_client[tasks] == clients):
        raise SolverError("BAD_RESULT", "a client would hold a task twice")
    if (
        p.fixed is not None
        and not isin(p.rep_task[p.fixed] * p.client_rack.size + p.rep_client[p.fixed], pairs).all()
    ):
        raise SolverError("BAD_RESULT", "a fixed replica moved")
    given, reached = diversities
    if given is None:
        given = diversity(p, p.rep_task, p.rep_client)
    if reached is None:
        reached = diversity(p, tasks, clients)
    if np.any(reached < given):
        raise SolverError("BAD_RESULT", "tag diversity would drop")


def diversity(p: StandbyProblem, tasks: np.ndarray, clients: np.ndarray) -> np.ndarray:
    """Per task and tag key, how many distinct set values its replicas (active included) have.

    Counted by the compiled core over each task's holders (``kassign_native.standby_diversity``:
    the loose rounds and the check ask for it up to four times a solve, and numpy's table of
    flags or sort of pairs was half a millisecond each at 10,000 standbys, issue 24).
    """
    raw = kassign_native.standby_diversity(
        native_input(p),
        np.ascontiguousarray(tasks, np.int64).tobytes(),
        np.ascontiguousarray(clients, np.int64).tobytes(),
    )
    return np.frombuffer(raw, np.int64).reshape(p.active_client.size, p.class_values.shape[1])
