"""KIP-441 lags: how far each client's local state is from the head of each stateful task.

Each consumer reports, per task it has state for, the sum of its changelog offsets (or
``LATEST_OFFSET`` -2 for a task it runs as an active, ``UNKNOWN_OFFSET_SUM`` -3 when it cannot
tell); the leader knows each task's changelog end-offset sum. The lag of a client on a task is:

- ``LATEST_OFFSET`` (-2) when it runs the task: always caught up;
- ``UNKNOWN_OFFSET_SUM`` (-3) when unknown: never caught up;
- the end-offset sum when it has no state (it must restore everything), and also when its
  offset sum is *above* the end offset (the state is corrupt and must be rebuilt);
- otherwise end-offset sum minus offset sum.

A client is caught up on a task when its lag is within ``acceptable_recovery_lag`` (or -2).
These are the rules of Kafka's ``ClientState.computeTaskLags`` and the HA assignor's
``tasksToCaughtUpClients``. ``TaskLags`` stores one client's lags sparsely (only tasks it has
state for), so a 10,000-task group with 1,000 clients does not hold ten million numbers.
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import Any

import numpy as np
import numpy.typing as npt
from kassign.assignor.streams.lag_rows import BoolArray, IntArray, reported_rows, verdicts
from kassign.assignor.streams.model import (
    LATEST_OFFSET,
    UNKNOWN_OFFSET_SUM,
    KafkaStreamsState,
    ProcessId,
    TaskId,
)

__all__ = [
    "UNBOUNDED_RECOVERY_LAG",
    "CatchUpIndex",
    "ConsumerReport",
    "TaskLags",
    "compute_lags",
    "is_caught_up",
    "kafka_streams_state",
    "lag_column",
    "lag_for",
    "local_lags",
    "merge_offset_sums",
    "previous_tasks",
]

UNBOUNDED_RECOVERY_LAG = 2**63 - 1
"""Java's ``Long.MAX_VALUE``: as ``acceptable_recovery_lag`` it makes every client caught up."""


def lag_for(offset_sum: int, end_offset_sum: int) -> int:
    """One client's lag on one task from its offset sum (0 when it has no local state)."""
    if offset_sum == LATEST_OFFSET:
        return LATEST_OFFSET
    if offset_sum == UNKNOWN_OFFSET_SUM:
        return UNKNOWN_OFFSET_SUM
    if offset_sum > end_offset_sum:
        return end_offset_sum  # state ahead of the changelog: corrupt, restore from scratch
    return end_offset_sum - offset_sum


def lag_column(
    offset_sums: np.ndarray[Any, Any], ends: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any]:
    """``lag_for`` of each row, a whole group's at once (the decoder's reports: 20,000 a
    10,000-task next round, a Python step each before). Columns of int64 (the decoder's
    checked sums: no row can wrap) or of Python ints (``dtype=object``), the same steps."""
    special = (offset_sums == LATEST_OFFSET) | (offset_sums == UNKNOWN_OFFSET_SUM)
    restore = np.where(offset_sums > ends, ends, ends - offset_sums)
    return np.where(special, offset_sums, restore)


def compute_lags(
    offset_sums: Mapping[TaskId, int], end_offset_sums: Mapping[TaskId, int]
) -> dict[TaskId, int]:
    """The client's lag on every stateful task (the keys of ``end_offset_sums``)."""
    return {task: lag_for(offset_sums.get(task, 0), end) for task, end in end_offset_sums.items()}


def previous_tasks(
    offset_sums: Mapping[TaskId, int], *, owned_active: Iterable[TaskId] = ()
) -> tuple[frozenset[TaskId], frozenset[TaskId]]:
    """(previous active, previous standby) of a client.

    Active: what it owned (``owned_active``, from owned partitions) plus every task reported
    as ``LATEST_OFFSET``. Standby: every other task it has local state for (KIP-441 counts any
    local state that is not a running active as a standby).
    """
    active = frozenset(owned_active) | {t for t, s in offset_sums.items() if s == LATEST_OFFSET}
    return active, frozenset(offset_sums) - active


def is_caught_up(lag: int, acceptable_recovery_lag: int) -> bool:
    """Whether a client with this lag may take the task as an active without a long restore."""
    if lag == LATEST_OFFSET or acceptable_recovery_lag >= UNBOUNDED_RECOVERY_LAG:
        return True
    return 0 <= lag <= acceptable_recovery_lag


class TaskLags(Mapping[TaskId, int]):
    """One client's lag on every stateful task, stored as "the end-offset sum unless local".

    Reads like a ``dict`` over every stateful task; ``local`` holds only the tasks the client
    has state for (the others lag by the full end-offset sum). Equal to a plain ``dict`` with
    the same items.
    """

    __slots__ = ("_end_offset_sums", "_local")

    def __init__(
        self,
        end_offset_sums: Mapping[TaskId, int],
        local: Mapping[TaskId, int],
        *,
        known: bool = False,
    ) -> None:
        """``known``: the caller kept only tasks of ``end_offset_sums`` in ``local`` already."""
        self._end_offset_sums = end_offset_sums
        self._local: Mapping[TaskId, int] = (
            dict(local) if known else {t: lag for t, lag in local.items() if t in end_offset_sums}
        )

    @classmethod
    def of_known(
        cls, end_offset_sums: Mapping[TaskId, int], local: Mapping[TaskId, int]
    ) -> TaskLags:
        """``local`` kept as given, not copied (read-only; tasks of ``end_offset_sums`` only)."""
        lags = cls.__new__(cls)
        lags._end_offset_sums, lags._local = end_offset_sums, local
        return lags

    @property
    def local(self) -> Mapping[TaskId, int]:
        """Lags of the tasks this client has local state for."""
        return self._local

    def __getitem__(self, task: TaskId) -> int:
        lag = self._local.get(task)
        return self._end_offset_sums[task] if lag is None else lag

    def __contains__(self, task: object) -> bool:
        """A dict lookup; ``Mapping``'s default goes through ``__getitem__`` and an exception.
        A local task is stateful, so found there first (the table's mapping bisects: the
        thread distribution asks of every task a client had, 20,000 a 10,000-task call)."""
        return task in self._local or task in self._end_offset_sums

    def __iter__(self) -> Iterator[TaskId]:
        return iter(self._end_offset_sums)

    def __len__(self) -> int:
        return len(self._end_offset_sums)

    def __repr__(self) -> str:
        return f"TaskLags(local={self._local!r}, tasks={len(self)})"


def local_lags(lags: Mapping[TaskId, int]) -> Mapping[TaskId, int]:
    """The lags that may differ from "no local state"; the whole mapping unless it is sparse.

    Assignors read this instead of every entry: a task missing here lags by its end-offset sum.
    """
    return lags.local if isinstance(lags, TaskLags) else lags


@dataclass(frozen=True, slots=True)
class ConsumerReport:
    """What one consumer of a client said: its offset sums and the tasks it owned."""

    member_id: str
    task_offset_sums: Mapping[TaskId, int] = field(default_factory=dict)
    owned_active: frozenset[TaskId] = frozenset()


def merge_offset_sums(reports: Iterable[ConsumerReport]) -> dict[TaskId, int]:
    """A client's offset sums: its consumers' reports merged, in member-id order, later winning.

    Kafka's ``ClientState`` merges with ``putAll`` in the order it walks the group's
    subscriptions (a hash map); we fix that order to the member ids so the result is
    reproducible. Consumers of one client normally report disjoint tasks, so it rarely matters.
    """
    merged: dict[TaskId, int] = {}
    for report in sorted(reports, key=lambda r: r.member_id):
        merged.update(report.task_offset_sums)
    return merged


def kafka_streams_state(
    process_id: ProcessId,
    reports: Iterable[ConsumerReport],
    end_offset_sums: Mapping[TaskId, int],
    *,
    rack_id: str | None = None,
    client_tags: Mapping[str, str] | None = None,
    host_info: str | None = None,
) -> KafkaStreamsState:
    """A client's read-only state from its consumers' reports.

    ``end_offset_sums`` names every stateful task of the topology; the caller drops reports of
    tasks the topology no longer has.
    """
    from kassign.assignor.streams.client_state import (  # builds on us
        client_states,
        read_reports,
        report_columns,
    )

    ordered = sorted(reports, key=lambda r: r.member_id)
    sums = [tuple(r.task_offset_sums.items()) for r in ordered]
    reads = read_reports(report_columns(sums, end_offset_sums))
    consumers = [(r.member_id, frozenset(r.owned_active), read) for r, read in zip(ordered, reads)]
    tags = dict(client_tags or {})
    return client_states([(process_id, consumers, rack_id, tags, host_info)], end_offset_sums)[0]


class CatchUpIndex:
    """Who is caught up on which stateful task, in index space, built once per assignment.

    Clients are ``0..C-1`` in process order, tasks ``0..T-1`` in task order. Only lags that
    may differ from the end-offset sum are stored (``local_lags``), as rows grouped by task
    (``lag_rows.py``), so building costs what the clients reported, not tasks x clients, and
    a whole group's pairs are answered at once (``pair_lags``, ``movable``); a pair alone by
    bisecting the rows (``_row``). Read-only after construction (but for that bisection's
    list, made at its first use).
    """

    __slots__ = ("_codes", "_default", "_end", "_n_clients", "_r")

    def __init__(
        self,
        tasks: Sequence[TaskId],
        end_offset_sums: Iterable[int],
        *,
        client_lags: Sequence[Mapping[TaskId, int]],
        acceptable_recovery_lag: int,
    ) -> None:
        self._n_clients = len(client_lags)
        self._codes: list[int] | None = None
        unbounded = acceptable_recovery_lag >= UNBOUNDED_RECOVERY_LAG
        self._end: IntArray = np.array(array("q", end_offset_sums), dtype=np.int64)  # Java longs
        # a client that did not report a task lags by its end-offset sum: that one's verdict
        self._default = verdicts(self._end, acceptable_recovery_lag, unbounded=unbounded)
        # Only what clients reported is stored (a task nobody reported is read from ``_end``):
        # 100,000 tasks must not cost 100,000 empty dicts and sets (issue 16).
        self._r = reported_rows(
            tasks,
            [local_lags(lags) for lags in client_lags],
            self._end,
            self._default,
            acceptable_recovery_lag,
            unbounded=unbounded,
        )

    def pair_lags(self, clients: IntArray, tasks: IntArray) -> tuple[npt.NDArray[Any], BoolArray]:
        """Each (client, task) pair's lag and whether it is caught up: its reported row's,
        found by one ``searchsorted`` of the pairs' codes (sorted first: a search in order
        reads the rows in order, 4x faster for a group's 10,000 pairs), else its task's
        end-offset sum's."""
        r = self._r
        code = tasks * self._n_clients + clients
        order = np.argsort(code)
        at = np.empty_like(code)
        at[order] = np.searchsorted(r.code, code[order])
        hit = at < r.code.size
        hit[hit] = r.code[at[hit]] == code[hit]
        rows = at[hit]
        lags = self._end[tasks].astype(r.lags.dtype)
        lags[hit] = r.lags[rows]
        caught = self._default[tasks]
        caught[hit] = r.caught[rows]
        return lags, caught

    def movable(self, clients: IntArray, tasks: IntArray) -> BoolArray:
        """Kafka's movement trigger, for each (client, task) pair: not caught up there, and
        some client lags strictly less (the task's least lag, ``Rows.least``)."""
        lags, caught = self.pair_lags(clients, tasks)
        less = np.asarray(self._r.least[tasks] < lags, dtype=bool)
        moves: BoolArray = ~caught & less
        return moves

    def _row(self, client: int, task: int) -> int:
        """The row of the client's reported lag on the task, -1 when not reported: one
        bisection of the row codes as a list (made at the first such question: the explanation
        and the load mode ask pair by pair, where a numpy call each cost 20 us, not 1)."""
        codes = self._codes
        if codes is None:
            codes = self._codes = self._r.code.tolist()
        code = task * self._n_clients + client
        row = bisect_left(codes, code)
        return row if row < len(codes) and codes[row] == code else -1

    def lag(self, client: int, task: int) -> int:
        row = self._row(client, task)
        return int(self._end[task] if row < 0 else self._r.lags[row])

    def is_caught_up(self, client: int, task: int) -> bool:
        row = self._row(client, task)
        return bool(self._default[task] if row < 0 else self._r.caught[row])

    def has_more_caught_up_than(self, client: int, task: int) -> bool:
        """``movable`` of one pair."""
        least = int(self._r.least[task])
        return not self.is_caught_up(client, task) and least < self.lag(client, task)

    def caught_up_pairs(self, clients: Sequence[int], tasks: Sequence[int]) -> list[bool]:
        """``is_caught_up`` of each (client, task) pair, the pairs at once."""
        if len(clients) != len(tasks):
            raise ValueError(f"{len(clients)} clients for {len(tasks)} tasks")
        pairs = np.array(clients, dtype=np.int64), np.array(tasks, dtype=np.int64)
        verdicts: list[bool] = self.pair_lags(*pairs)[1].tolist()
        return verdicts

    def reports_any(self) -> bool:
        """Whether some client reported a lag that may differ from a task's end-offset sum:
        without one no client is more caught up than another on any task, so no KIP-441
        movement can be planned (a fresh group; issue 24: the assignor skips the passes)."""
        return bool(self._r.code.size)

    def reported_among(self, tasks: Iterable[int]) -> list[int]:
        """The tasks of ``tasks`` some client reported a lag for, ascending: only those can
        have a more caught-up client (``movable`` is false for the rest, whose every client
        lags by the end-offset sum)."""
        reported: list[int] = np.flatnonzero(self._r.stop > self._r.start).tolist()
        return sorted(set(reported).intersection(tasks))

    def num_caught_up(self, task: int) -> int:
        """How many clients are caught up on the task (orders Kafka's movement queue)."""
        return int(self._r.counts[task])

    def caught_up_column(self) -> IntArray:
        """``num_caught_up`` of every task as a column (read-only): a task nobody reported
        is its default times the clients (a fresh 100,000-task group reports none)."""
        counts = self._r.counts.view()
        counts.flags.writeable = False
        return counts

    def caught_up_counts(self) -> list[int]:
        """``caught_up_column`` as a list."""
        counts: list[int] = self._r.counts.tolist()
        return counts

    def _reporters(self, task: int) -> tuple[list[int], list[int], list[bool]]:
        """The clients that reported the task (ascending), their lags and verdicts."""
        r = self._r
        start, stop = int(r.start[task]), int(r.stop[task])
        return (
            r.clients[start:stop].tolist(),
            r.lags[start:stop].tolist(),
            r.caught[start:stop].tolist(),
        )

    def caught_up(self, task: int) -> list[int]:
        """The caught-up clients, ascending (every unreported client too when the changelog
        is short enough, which is why this is a list built on demand, not stored)."""
        clients, _, caught = self._reporters(task)
        if not self._default[task]:
            return list(compress(clients, caught))
        not_caught = set(clients) - set(compress(clients, caught))
        return [c for c in range(self._n_clients) if c not in not_caught]

    def by_lag(self, task: int) -> Iterator[int]:
        """Every client, least lag first, ties by process order: Kafka's ``tasksToClientByLag``.

        The raw lag is the key, as Kafka's ``comparingLong(lagFor)``: so an unknown offset sum
        (-3) ranks ahead of every real lag. Running actives (-2) are always caught up and are
        chosen before this ranking is consulted. Lazy: callers stop at the first fit.
        """
        clients, lags, _ = self._reporters(task)
        reported = sorted(zip(lags, clients, strict=True))
        end, local = int(self._end[task]), set(clients)
        rest = ((end, c) for c in range(self._n_clients) if c not in local)
        return (c for _, c in heapq.merge(reported, rest))
