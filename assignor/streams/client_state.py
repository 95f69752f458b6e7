"""Clients' ``KafkaStreamsState`` from what their consumers reported, a group's at once.

Each distinct offset-sum report is read once, every report's at once (``read_reports``: the
group's sums and end-offset sums as columns, the lags one numpy step, ``lags.lag_column``;
a Python step per reported task took a quarter of a 10,000-task next round's decode): a
client's consumers mostly send one userData, and a fresh consumer sends none (``NO_SUMS``,
shared, as are the empty sets and a fresh client's ``TaskLags``). The objects are made a field at a time over the whole group
(``slotted.made_by_field``): a ``KafkaStreamsState`` and two ``ConsumerState`` per client made
one by one took 3 ms of a 10,000-task, 1,000-client decode (issue 24). The rules are
``lags.py``'s: sums merged in member-id order, later winning; previous actives the owned tasks
and the ``LATEST_OFFSET`` ones; standbys every other task with state; lags per stateful task.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, compress, repeat
from types import MappingProxyType
from typing import Any

import numpy as np
from kassign.assignor.slotted import made_by_field
from kassign.assignor.streams.lags import TaskLags, lag_column
from kassign.assignor.streams.model import (
    LATEST_OFFSET,
    UNKNOWN_OFFSET_SUM,
    ConsumerState,
    KafkaStreamsState,
    ProcessId,
    TaskId,
)

__all__ = [
    "NO_SUMS",
    "STATELESS",
    "ClientRow",
    "Consumer",
    "ReportColumns",
    "SumsRead",
    "client_states",
    "read_reports",
    "report_columns",
]


@dataclass(frozen=True, slots=True)
class SumsRead:
    """One report's offset sums read once, shared by the consumers that sent it. Read-only."""

    sums: Sequence[tuple[TaskId, int]]
    """The report's (task, offset sum) pairs, each task once (merged with ``dict.update``)."""
    reported: frozenset[TaskId]
    """Every task it reported (its consumer's ``previous_stateful``)."""
    latest: frozenset[TaskId]
    """The tasks reported ``LATEST_OFFSET``: running actives."""
    local: Mapping[TaskId, int]
    """The lag of each stateful task it reported (``lags.lag_column``)."""


NO_SUMS = SumsRead((), frozenset(), frozenset(), MappingProxyType({}))
"""No offset sums (a fresh consumer's): one object, shared, never written."""
_NONE: frozenset[TaskId] = frozenset()

Consumer = tuple[str, frozenset[TaskId], SumsRead]
"""A consumer: member id, the tasks it owned (its previous actives), its sums read."""

ClientRow = tuple[ProcessId, Sequence[Consumer], str | None, dict[str, str], str | None]
"""A client: process id, consumers in member-id order, rack, tags (kept as given), host."""

STATELESS = -(2**63)
"""A reported task's end-offset sum where it has none (stateless, or not the topology's):
below every end-offset sum, which are never negative."""


def _column(values: Sequence[int]) -> np.ndarray[Any, Any]:
    """``values`` as int64, or as Python ints where one is past a Java long or below -3
    (a library caller's; the decoder refuses those), so ``lag_column`` never wraps."""
    if not values:
        return np.zeros(0, dtype=np.int64)
    try:
        column = np.array(values, dtype=np.int64)
    except OverflowError:
        return np.array(values, dtype=object)
    return column if column.min() >= UNKNOWN_OFFSET_SUM else np.array(values, dtype=object)


@dataclass(frozen=True, slots=True)
class ReportColumns:
    """Distinct reports' offset sums as group-wide columns, report after report."""

    reports: Sequence[Sequence[tuple[TaskId, int]]]
    """Each report's (task, offset sum) pairs, each task once: its read keeps them."""
    tasks: Sequence[TaskId]
    sums: np.ndarray[Any, Any]
    """int64, or Python ints (``report_columns``)."""
    ends: np.ndarray[Any, Any]
    """Each row's task's end-offset sum, ``STATELESS`` where it has none (int64, or Python
    ints past a long)."""
    stops: Sequence[int]
    """Where each report's rows end."""


def report_columns(
    reports: Sequence[Sequence[tuple[TaskId, int]]], end_offset_sums: Mapping[TaskId, int]
) -> ReportColumns:
    """``reports`` as columns; ``end_offset_sums``: the stateful tasks' (never negative)."""
    stops = np.cumsum([len(r) for r in reports], dtype=np.intp).tolist()
    pairs = list(chain.from_iterable(reports))
    tasks, values = (list(c) for c in zip(*pairs)) if pairs else ([], [])
    ends = list(map(end_offset_sums.get, tasks, repeat(STATELESS)))
    try:
        column = np.array(ends, dtype=np.int64)
    except OverflowError:  # an end past a long (a library caller's): Python ints
        column = np.array(ends, dtype=object)
    return ReportColumns(reports, tasks, _column(values), column, stops)


def read_reports(columns: ReportColumns) -> list[SumsRead]:
    """Each report read, every report's at once: the lags of the whole group as one column
    (``lag_column``), each read's sets and lags made from slices of it."""
    reports, tasks, sums, ends = columns.reports, columns.tasks, columns.sums, columns.ends
    if not len(sums):
        return [NO_SUMS] * len(reports)
    if sums.dtype == object or ends.dtype == object:  # both as Python ints: no row wraps
        sums, ends = sums.astype(object), ends.astype(object)
    stateful = ends != STATELESS
    lags = lag_column(sums[stateful], ends[stateful]).tolist()
    latest = sums == LATEST_OFFSET
    stops = np.array(columns.stops, dtype=np.intp)
    sizes = stops.copy()
    sizes[1:] -= stops[:-1]  # not np.diff(prepend=): 13 us of a 12-task call's few
    group = np.repeat(np.arange(len(reports)), sizes)
    stateful_tasks = list(compress(tasks, stateful.tobytes()))
    latest_tasks = list(compress(tasks, latest.tobytes()))
    stateful_stops = np.cumsum(np.bincount(group[stateful], minlength=len(reports))).tolist()
    latest_stops = np.cumsum(np.bincount(group[latest], minlength=len(reports))).tolist()
    kept: list[int] = []
    reported, found, local = [], [], []
    start, at, first = 0, 0, 0
    for i, stop in enumerate(columns.stops):
        if stop == start:
            continue
        until, last = stateful_stops[i], latest_stops[i]
        kept.append(i)
        reported.append(frozenset(tasks[start:stop]))
        found.append(frozenset(latest_tasks[first:last]) if last > first else _NONE)
        local.append(dict(zip(stateful_tasks[at:until], lags[at:until])))
        start, at, first = stop, until, last
    fields: dict[str, Sequence[object]] = {"sums": [reports[i] for i in kept], "local": local}
    reads = made_by_field(SumsRead, {**fields, "reported": reported, "latest": found}, len(kept))
    out = [NO_SUMS] * len(reports)
    for i, read in zip(kept, reads):
        out[i] = read
    return out


def _merged(reads: Sequence[SumsRead]) -> SumsRead:
    """Reads of one client merged in the given (member-id) order, later winning, as
    ``lags.merge_offset_sums``; a lag depends on its task's sum alone, so lags merge alike."""
    distinct = [r for r in reads if r is not NO_SUMS]
    if not distinct:
        return NO_SUMS
    if all(r is distinct[0] for r in distinct):
        return distinct[0]
    sums: dict[TaskId, int] = {}
    local: dict[TaskId, int] = {}
    for read in distinct:
        sums.update(read.sums)
        local.update(read.local)
    latest = frozenset([t for t, s in sums.items() if s == LATEST_OFFSET])
    return SumsRead(tuple(sums.items()), frozenset(sums), latest, local)


def _consumer_states(rows: Sequence[ClientRow]) -> list[tuple[ConsumerState, ...]]:
    """Every row's consumers as ``ConsumerState``s, made a field at a time."""
    flat = [c for row in rows for c in row[1]]
    columns: dict[str, Sequence[object]] = {
        "member_id": [c[0] for c in flat],
        "previous_active": [c[1] for c in flat],
        "previous_stateful": [c[2].reported for c in flat],
    }
    states = made_by_field(ConsumerState, columns, len(flat))
    out, at = [], 0
    for row in rows:
        out.append(tuple(states[at : at + len(row[1])]))
        at += len(row[1])
    return out


def client_states(
    rows: Sequence[ClientRow],
    end_offset_sums: Mapping[TaskId, int],
    no_lags: TaskLags | None = None,
) -> list[KafkaStreamsState]:
    """Each row's client. ``end_offset_sums`` names every stateful task; ``no_lags``: a
    caller's ``TaskLags`` of no local state over it, shared by clients that reported none."""
    empty = no_lags if no_lags is not None else TaskLags.of_known(end_offset_sums, {})
    actives, standbys, lags = [], [], []
    for row in rows:
        consumers = row[1]
        reads = [c[2] for c in consumers]
        # one userData's consumers share one read (equal reads merge to either)
        merged = reads[0] if reads.count(reads[0]) == len(reads) else _merged(reads)
        owned = [o for _, o, _ in consumers if o]
        active = merged.latest.union(*owned) if owned else merged.latest
        actives.append(active)
        standbys.append(merged.reported - active if merged.reported else merged.reported)
        lags.append(TaskLags.of_known(end_offset_sums, merged.local) if merged.local else empty)
    columns: dict[str, Sequence[object]] = {
        "process_id": [row[0] for row in rows],
        "consumers": _consumer_states(rows),
        "previous_active_tasks": actives,
        "previous_standby_tasks": standbys,
        "task_lags": lags,
        "rack_id": [row[2] for row in rows],
        "client_tags": [row[3] for row in rows],
        "host_info": [row[4] for row in rows],
    }
    return made_by_field(KafkaStreamsState, columns, len(rows))
