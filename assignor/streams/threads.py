"""Thread distribution: each client's tasks spread over its consumers (stream threads).

Kafka's ``StreamsPartitionAssignor.assignTasksToThreads``, run three times per client with a
shared per-consumer count, so the total stays balanced: stateful actives, then standbys, then
stateless actives. Each run

- first gives every consumer the tasks it had before (least lag first, then task id), up to
  ``floor(total so far / consumers)`` tasks;
- then deals the remaining tasks, in task order, to consumers still under that floor, in
  member-id order, round-robin (which interleaves sub-topologies);
- then gives what is left one each to consumers at the floor, to a previous owner first.

"Had before" for a stateful task is the consumer's ``previous_stateful`` (plus
``previous_active``), ordered by the client's lag; for a stateless task it is
``previous_active``, which Kafka ignores: keeping it avoids a needless cooperative revocation
and cannot unbalance, as the floor still caps it. Where Kafka walks a ``PriorityQueue``'s
internal array or a hash set we walk task order.

The compiled core runs it (``kassign_native.thread_distribution``, ``assignor/native/src/
threads.rs``; issue 24): the whole group in one pass over the tasks as rows of the task
table, the clients' consumers as columns, without the GIL, and every ``MemberAssignment``
made there (per client in Python it took 20 ms of a 10,000-task call). It is bounded by the
group's tasks and what its consumers had, a few milliseconds at 100,000 tasks: the caller's
``checkpoint`` runs once before it, not inside.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence

from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.lags import local_lags
from kassign.assignor.streams.model import (
    ApplicationState,
    KafkaStreamsState,
    TaskId,
    TaskInfo,
    TaskTable,
)
from kassign.assignor.streams.result import KafkaStreamsAssignment, MemberAssignment, TaskAssignment
from kassign_native import thread_distribution

__all__ = ["distribute_tasks", "spread_over_consumers"]

_NOT_IN_TOPOLOGY = 2
"""A row's kind for a task the topology lacks (``thread_distribution``'s third kind)."""


def distribute_tasks(
    state: ApplicationState, assignment: TaskAssignment
) -> tuple[MemberAssignment, ...]:
    """Every consumer's tasks (interface 3), sorted by member id; unknown clients are skipped.

    A task the topology lacks (only in a library caller's rejected assignment) is spread with
    the stateless actives and never kept from before.
    """
    checkpoint()
    ids, kinds = _rows(state.tasks)
    clients = state.clients if type(state.clients) is dict else dict(state.clients)
    members = thread_distribution(
        ids, kinds, assignment.assignments, clients, MemberAssignment, local_lags
    )
    if members is None:
        ids, kinds = _with_unknown(ids, kinds, assignment.assignments)
        members = thread_distribution(
            ids, kinds, assignment.assignments, clients, MemberAssignment, local_lags
        )
    if members is None:  # cannot happen: every listed task now has a row
        raise ValueError("thread distribution: a listed task has no row")
    return members


def _rows(tasks: Mapping[TaskId, TaskInfo]) -> tuple[tuple[TaskId, ...], bytes]:
    """The tasks in task order and a kind each (1 stateful, 0 stateless): a table's columns."""
    if isinstance(tasks, TaskTable):
        return tasks.ids, tasks.stateful_flags
    ids = tuple(sorted(tasks))
    return ids, bytes(tasks[t].stateful for t in ids)


def _with_unknown(
    ids: tuple[TaskId, ...], kinds: bytes, given: Iterable[KafkaStreamsAssignment]
) -> tuple[tuple[TaskId, ...], bytes]:
    """``_rows`` with the tasks ``given`` lists that the topology lacks, in task order."""
    known = dict(zip(ids, kinds, strict=True))
    listed = {t for a in given for t in (*a.active, *a.standby)}
    merged = tuple(sorted(known.keys() | listed))
    return merged, bytes(known.get(t, _NOT_IN_TOPOLOGY) for t in merged)


_Plan = dict[str, list[TaskId]]


def python_distribute_tasks(
    state: ApplicationState, assignment: TaskAssignment
) -> tuple[MemberAssignment, ...]:
    """Every consumer's tasks (interface 3), sorted by member id; unknown clients are skipped."""
    members: list[MemberAssignment] = []
    stateful: frozenset[TaskId] | None = None  # once per call, and only if a client needs it
    for client_assignment in assignment.assignments:
        checkpoint()
        client = state.clients.get(client_assignment.process_id)
        if client is None or not client.consumers:
            continue
        if len(client.consumers) == 1:
            members.append(_one_consumer(client, client_assignment))
            continue
        if stateful is None:
            stateful = frozenset(state.stateful_tasks)
        members.extend(_distribute_client(state, stateful, client, client_assignment))
    return tuple(sorted(members, key=_member_id))


def _member_id(member: MemberAssignment) -> str:
    return member.member_id


def _one_consumer(client: KafkaStreamsState, given: KafkaStreamsAssignment) -> MemberAssignment:
    """A client of one consumer: it gets every task, whatever it had (each run's floor is all of
    them), so neither its history nor the split by state is read."""
    return MemberAssignment(
        member_id=client.consumers[0].member_id,
        process_id=client.process_id,
        active=tuple(_sorted_once(given.active)),
        standby=tuple(_sorted_once(given.standby)),
    )


def _sorted_once(tasks: Sequence[TaskId]) -> Sequence[TaskId]:
    """``tasks`` sorted, each once: ``tasks`` itself when it already is (an assignor's answer
    is), rather than rebuilt."""
    return tasks if _increasing(tasks) else sorted(set(tasks))


def _increasing(tasks: Sequence[TaskId]) -> bool:
    """Whether ``tasks`` is sorted with no task twice, by comparisons in C (no hashing)."""
    return all(map(operator.lt, tasks, tasks[1:]))


def _distribute_client(
    state: ApplicationState,
    stateful: frozenset[TaskId],
    client: KafkaStreamsState,
    given: KafkaStreamsAssignment,
) -> list[MemberAssignment]:
    consumers = sorted(client.consumer_ids)
    stateful_before, stateless_before = _previous_by_consumer(state, stateful, client)
    counts = {member: 0 for member in consumers}
    active = spread_over_consumers(
        [t for t in given.active if t in stateful], consumers, counts, stateful_before
    )
    standby = spread_over_consumers(list(given.standby), consumers, counts, stateful_before)
    stateless = spread_over_consumers(
        [t for t in given.active if t not in stateful], consumers, counts, stateless_before
    )
    return [
        MemberAssignment(
            member_id=member,
            process_id=client.process_id,
            active=tuple(sorted(active[member] + stateless[member])),
            standby=tuple(sorted(standby[member])),
        )
        for member in consumers
    ]


def _previous_by_consumer(
    state: ApplicationState, stateful: frozenset[TaskId], client: KafkaStreamsState
) -> tuple[dict[str, list[TaskId]], dict[str, list[TaskId]]]:
    """Per consumer: stateful tasks it had by (lag, task), stateless actives it had by task.

    The client's threads mostly report the same state, so the (lag, task) order is sorted once
    for the client and each consumer's list filtered from it (a subset of a total order).
    """
    if not any(c.previous_stateful or c.previous_active for c in client.consumers):
        return {}, {}  # a fresh client: nothing to keep
    lags = client.task_lags
    tasks = state.tasks.keys()
    had = {c.member_id: c.previous_stateful | c.previous_active for c in client.consumers}
    with_lag = {t for ts in had.values() for t in ts if t in stateful and t in lags}
    lag_order = sorted(with_lag, key=lambda t: (lags[t], t))
    by_lag: dict[str, list[TaskId]] = {}
    by_task: dict[str, list[TaskId]] = {}
    for consumer in client.consumers:
        mine = had[consumer.member_id]
        by_lag[consumer.member_id] = [t for t in lag_order if t in mine]
        by_task[consumer.member_id] = sorted(
            t for t in consumer.previous_active if t in tasks and t not in stateful
        )
    return by_lag, by_task


def spread_over_consumers(
    tasks: Sequence[TaskId],
    consumers: Sequence[str],
    counts: dict[str, int],
    previous: Mapping[str, Sequence[TaskId]],
) -> _Plan:
    """One run of the three-step spread (module docstring); ``counts`` is updated in place.

    ``counts`` is the caller's scratch: tasks each consumer got in earlier runs for the client.
    """
    plan: _Plan = {member: [] for member in consumers}
    if not tasks:
        return plan
    floor = (sum(counts.values()) + len(tasks)) // len(consumers)
    skipped_owner: dict[TaskId, str] = {}
    if not previous:  # nobody keeps anything: every consumer under the floor is dealt to
        to_fill = [member for member in consumers if counts[member] < floor]
        ordered = _sorted_once(tasks)
    else:
        open_tasks = set(tasks)
        to_fill = []
        for member in consumers:
            target = floor - counts[member]
            for task in previous.get(member, ()):
                if task not in open_tasks:
                    continue
                if len(plan[member]) < target:
                    plan[member].append(task)
                    open_tasks.discard(task)
                else:
                    skipped_owner[task] = member  # a later consumer overwrites, as Kafka's does
            if len(plan[member]) < target:
                to_fill.append(member)
        ordered = sorted(open_tasks)
    dealt = _deal_up_to_floor(plan, counts, floor, to_fill, ordered)
    if dealt < len(ordered):
        _deal_the_rest(plan, counts, floor, consumers, skipped_owner, set(ordered[dealt:]))
    for member in consumers:
        counts[member] += len(plan[member])
    return plan


def _deal_up_to_floor(
    plan: _Plan,
    counts: Mapping[str, int],
    floor: int,
    to_fill: list[str],
    ordered: Sequence[TaskId],
) -> int:
    """Round-robin the open tasks, in task order, over consumers still under the floor; how
    many of ``ordered`` (its first ones) were dealt.

    Dealt one task at a time: each round gives the next task to each consumer still under the
    floor, in ``to_fill`` order. While the same consumers take part, ``k`` rounds over ``w``
    of them are the next ``k * w`` tasks, the ``i``-th consumer's every ``w``-th from ``i``
    (a slice), so the rounds go a block at a time, a block per change of who takes part.
    """
    needs = {member: floor - counts[member] - len(plan[member]) for member in to_fill}
    taking, start, rounds = to_fill, 0, 0
    while taking and start < len(ordered):
        width = len(taking)
        until = min(needs[member] for member in taking)
        block = ordered[start : start + (until - rounds) * width]
        for i, member in enumerate(taking):
            plan[member].extend(block[i::width])
        start += len(block)
        rounds = until
        taking = [member for member in taking if needs[member] > rounds]
    return start


def _deal_the_rest(
    plan: _Plan,
    counts: Mapping[str, int],
    floor: int,
    consumers: Sequence[str],
    skipped_owner: Mapping[TaskId, str],
    open_tasks: set[TaskId],
) -> None:
    """One more task each for consumers at the floor: previous owners first, then in order."""
    at_floor = [m for m in consumers if len(plan[m]) + counts[m] == floor]
    for task in sorted(skipped_owner):
        member = skipped_owner[task]
        if member in at_floor and task in open_tasks:
            plan[member].append(task)
            open_tasks.discard(task)
            at_floor.remove(member)
    for task in sorted(open_tasks):
        if at_floor:
            member = at_floor.pop(0)
        else:  # cannot happen with balanced earlier runs; stay total rather than fail
            member = min(consumers, key=lambda m: (len(plan[m]) + counts[m], m))
        plan[member].append(task)
    open_tasks.clear()
