"""Clients' ``KafkaStreamsState`` from what their consumers reported, a group's at once.

Each distinct offset-sum report is read once (``read_sums``): a client's consumers mostly
send one userData, and a fresh consumer sends none (``NO_SUMS``, shared, as are the empty sets
and a fresh client's ``TaskLags``). The objects are made a field at a time over the whole group
(``slotted.made_by_field``): a ``KafkaStreamsState`` and two ``ConsumerState`` per client made
one by one took 3 ms of a 10,000-task, 1,000-client decode (issue 24). The rules are
``lags.py``'s: sums merged in member-id order, later winning; previous actives the owned tasks
and the ``LATEST_OFFSET`` ones; standbys every other task with state; lags per stateful task.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from kassign.assignor.slotted import made_by_field
from kassign.assignor.streams.lags import TaskLags, lag_for
from kassign.assignor.streams.model import (
    LATEST_OFFSET,
    ConsumerState,
    KafkaStreamsState,
    ProcessId,
    TaskId,
)

__all__ = ["NO_SUMS", "ClientRow", "Consumer", "SumsRead", "client_states", "read_sums"]


@dataclass(frozen=True, slots=True)
class SumsRead:
    """One report's offset sums read once, shared by the consumers that sent it. Read-only."""

    sums: Mapping[TaskId, int]
    reported: frozenset[TaskId]
    """Every task it reported (its consumer's ``previous_stateful``)."""
    latest: frozenset[TaskId]
    """The tasks reported ``LATEST_OFFSET``: running actives."""
    local: Mapping[TaskId, int]
    """The lag of each stateful task it reported (``lag_for``)."""


NO_SUMS = SumsRead(MappingProxyType({}), frozenset(), frozenset(), MappingProxyType({}))
"""No offset sums (a fresh consumer's): one object, shared, never written."""

Consumer = tuple[str, frozenset[TaskId], SumsRead]
"""A consumer: member id, the tasks it owned (its previous actives), its sums read."""

ClientRow = tuple[ProcessId, Sequence[Consumer], str | None, dict[str, str], str | None]
"""A client: process id, consumers in member-id order, rack, tags (kept as given), host."""


def read_sums(sums: Mapping[TaskId, int], end_of: Callable[[TaskId], int | None]) -> SumsRead:
    """``sums`` read once; ``end_of``: a stateful task's end-offset sum, ``None`` for others."""
    if not sums:
        return NO_SUMS
    local = {t: lag_for(s, end) for t, s in sums.items() if (end := end_of(t)) is not None}
    latest = frozenset([t for t, s in sums.items() if s == LATEST_OFFSET])
    return SumsRead(sums, frozenset(sums), latest, local)


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
    return SumsRead(sums, frozenset(sums), latest, local)


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
        merged = _merged([read for _, _, read in consumers])
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
