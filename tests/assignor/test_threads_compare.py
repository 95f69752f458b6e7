"""The compiled thread distribution against the Python spread it replaces, on random groups."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.streams import threads
from kassign.assignor.streams.lags import TaskLags
from kassign.assignor.streams.model import (
    ApplicationState,
    ConsumerState,
    KafkaStreamsState,
    TaskId,
    TaskInfo,
    TaskTable,
)
from kassign.assignor.streams.result import KafkaStreamsAssignment, TaskAssignment

from tests.assignor.builders import pid

_TASKS = [TaskId(s, p) for s in range(3) for p in range(5)] + [
    TaskId(0, 1, "named"),
    TaskId(2, 0, "named"),
]
_ABSENT = [TaskId(7, 0), TaskId(0, 9, "gone")]
_NAMES = ["a", "b", "m1", "m10", "m2", "z", "\u00e9", "B"]


@st.composite
def _groups(draw: st.DrawFn) -> tuple[ApplicationState, TaskAssignment]:
    topology = draw(st.lists(st.sampled_from(_TASKS), min_size=1, unique=True))
    stateful = {t: draw(st.booleans()) for t in topology}
    ends = {t: draw(st.integers(0, 50)) for t in topology if stateful[t]}
    infos = [TaskInfo(t, stateful[t], changelog_end_offset_sum=ends.get(t, 0)) for t in topology]
    table = draw(st.booleans())
    tasks = TaskTable.of(infos) if table else {i.id: i for i in infos}
    pool = topology + _ABSENT
    clients, given = [], []
    for n in range(draw(st.integers(1, 3))):
        names = draw(st.lists(st.sampled_from(_NAMES), min_size=1, max_size=5, unique=True))
        consumers = tuple(
            ConsumerState(
                f"{m}{n}",
                frozenset(draw(st.lists(st.sampled_from(pool), max_size=6))),
                frozenset(draw(st.lists(st.sampled_from(pool), max_size=6))),
            )
            for m in names
        )
        reported = draw(st.lists(st.sampled_from(topology), max_size=8, unique=True))
        local = {t: draw(st.sampled_from([-3, -2, 0, 3, 40, 2**40])) for t in reported}
        if table and draw(st.booleans()):
            lags: object = TaskLags(
                tasks.end_offset_sums(),  # type: ignore[union-attr]
                local,
            )
        else:
            lags = local  # a library caller's dict: a task it lacks has no lag
        clients.append(KafkaStreamsState(pid(n + 1), consumers, task_lags=lags))  # type: ignore[arg-type]
        absent = _ABSENT if draw(st.booleans()) else []
        active = draw(st.lists(st.sampled_from(topology + absent), max_size=12))
        standby = draw(
            st.lists(st.sampled_from([t for t in topology if stateful[t]] or topology), max_size=8)
        )
        given.append(KafkaStreamsAssignment(pid(n + 1), tuple(active), tuple(standby)))
    if draw(st.booleans()):
        given.append(KafkaStreamsAssignment(pid(9), tuple(topology[:2])))  # an unknown client
    state = ApplicationState(tasks=tasks, clients={c.process_id: c for c in clients})
    return state, TaskAssignment(tuple(given))


@settings(max_examples=400, deadline=None)
@given(_groups())
def test_the_compiled_pass_is_the_python_spread(
    group: tuple[ApplicationState, TaskAssignment],
) -> None:
    state, assignment = group
    assert threads.distribute_tasks(state, assignment) == threads.python_distribute_tasks(
        state, assignment
    )
