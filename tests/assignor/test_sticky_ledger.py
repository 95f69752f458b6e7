"""The sticky book's task pairs, read from the holdings, answer as Kafka's ``TaskPairs``
(every pair recorded as a task joins a client) does, whatever the order of the gifts."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.streams.model import ApplicationState, ProcessId, TaskId
from kassign.assignor.streams.result import TaskType
from kassign.assignor.streams.sticky_ledger import ClientBook

from tests.assignor.strategies import app_states


class _KafkaPairs:
    """Kafka's ``TaskPairs``: a set of unordered pairs, capped at every possible pair."""

    def __init__(self, n_tasks: int) -> None:
        self.pairs: set[frozenset[TaskId]] = set()
        self.max_pairs = n_tasks * (n_tasks - 1) // 2

    def has_new_pair(self, task: TaskId, held: set[TaskId]) -> bool:
        if len(self.pairs) >= self.max_pairs:
            return False
        return any(frozenset((task, other)) not in self.pairs for other in held)


@settings(max_examples=150, deadline=None)
@given(app_states(), st.randoms(use_true_random=False))
def test_new_pairs_are_kafkas(state: ApplicationState, rng: random.Random) -> None:
    book = ClientBook(state)
    kafka = _KafkaPairs(len(state.tasks))
    held: dict[ProcessId, set[TaskId]] = {pid: set() for pid in state.clients}
    tasks, clients = list(state.tasks), list(state.clients)
    for _ in range(min(40, 3 * len(tasks))):
        task, pid = rng.choice(tasks), rng.choice(clients)
        if task in held[pid]:
            continue
        kafka.pairs.update(frozenset((task, other)) for other in held[pid])
        held[pid].add(task)
        book.give(task, pid, rng.choice((TaskType.ACTIVE, TaskType.STANDBY)))
        for other in tasks:  # the book is only asked about clients not holding the task
            for c in clients:
                if other not in held[c]:
                    assert book.has_new_pair(other, c) == kafka.has_new_pair(other, held[c])
