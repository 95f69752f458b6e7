"""A Streams request's clients: its decoded members grouped by process id, each process one
``KafkaStreamsState`` (Kafka's leader does the same in ``StreamsPartitionAssignor.assign``).

Members of one process must agree on the user end point and the client tags (two values mean
two processes share an id: an ``InvalidRequest`` naming the member and the field); members
without a rack leave the client's rack unknown, with a note. What a member reported that
Kafka ignores (offset sums of tasks the topology lacks, owned partitions no task reads) is
noted. Each distinct offset-sum report is read once, every report's at once
(``client_state.read_reports``: the group's lags one column): the members of one process
mostly send one userData, and a fresh group's members send none, which every fresh client
shares (issue 24: a dict, a set and a report object per member and client took a fifth of a
10,000-task call's decode; a Python step per reported task, 20,000 in its next round, a
quarter of that round's decode).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

import numpy as np
from kassign.assignor.errors import InvalidRequest
from kassign.assignor.ordering import process_key
from kassign.assignor.streams.client_state import (
    NO_SUMS,
    STATELESS,
    ClientRow,
    Consumer,
    ReportColumns,
    SumsRead,
    client_states,
    read_reports,
    report_columns,
)
from kassign.assignor.streams.lags import TaskLags
from kassign.assignor.streams.model import KafkaStreamsState, TaskId
from kassign.server.streams.decode.members import DecodedMember
from kassign.server.streams.decode.offset_sums import CheckedGroups
from kassign.server.streams.decode.owned_tasks import OwnedTasks, owned_tasks, stray_names
from kassign.server.streams.decode.topology import Topology

__all__ = ["LISTED", "decoded_clients", "listed"]

T = TypeVar("T")
LISTED = 10  # notes name at most this many tasks or partitions


def listed(items: Iterable[object], count: int | None = None) -> str:
    """Items for a note, cut after ``LISTED``; ``count``: how many there are, when ``items``
    holds only the first ``LISTED``."""
    names = [str(i) for i in items]
    total = len(names) if count is None else count
    more = f" and {total - LISTED} more" if total > LISTED else ""
    return ", ".join(names[:LISTED]) + more


def _one_value(reports: Sequence[DecodedMember], values: Sequence[T], what: str, name: str) -> T:
    """The value every member of one process reported; two values mean two processes share an id."""
    for report, value in zip(reports, values):
        if value != values[0]:
            raise InvalidRequest(
                f"process {report.process_id} reports {what} {values[0]!r} "
                f"(member {reports[0].member_id!r}) and {value!r}",
                field=f"{report.info_field}.{name}",
                member=report.member_id,
            )
    return values[0]


def _rack(reports: Sequence[DecodedMember], notes: list[str]) -> str | None:
    """The client's rack; members without one leave it unknown, as Kafka's rack check does."""
    racks = sorted({r.rack_id for r in reports if r.rack_id is not None})
    if len(racks) > 1:
        other = next(r for r in reports if r.rack_id == racks[1])
        raise InvalidRequest(
            f"process {reports[0].process_id} reports two racks: {racks[0]!r} and {racks[1]!r}",
            field=f"{other.subscription_field}.rack_id",
            member=other.member_id,
        )
    if racks and any(r.rack_id is None for r in reports):
        missing = [r.member_id for r in reports if r.rack_id is None]
        notes.append(
            f"process {reports[0].process_id}: members {listed(missing)} report no rack while "
            f"others report {racks[0]!r}; the client's rack is treated as unknown"
        )
        return None
    return racks[0] if racks else None


class _Builder:
    """What the clients of one request share: each distinct report read once (by the
    identity of its offset sums: members sending one userData share them), each distinct
    tag list as one dict, one ``TaskLags`` of no local state."""

    def __init__(
        self,
        topology: Topology,
        notes: list[str],
        owned: dict[str, OwnedTasks],
        reads: dict[int, SumsRead],
    ) -> None:
        """``owned``: each owning member's tasks and strays, by member id (``owned_tasks``);
        ``reads``: each distinct report read, by the identity of its sums (``_reads``)."""
        self.topology, self.notes, self.owned, self.reads = topology, notes, owned, reads
        self.tags: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
        self.no_lags = TaskLags.of_known(topology.end_offset_sums, {})
        self._sources: dict[str, dict[int, TaskId]] | None = None

    def consumer(self, report: DecodedMember) -> Consumer:
        """A member's offset sums (the decoder kept only the topology's tasks) and owned
        tasks; what was dropped is noted."""
        read = self.reads[id(report.offset_sums)] if report.offset_sums else NO_SUMS
        if report.ignored_sums:
            self.notes.append(
                f"member {report.member_id!r}: ignored offset sums of {report.ignored_sums} "
                f"task(s) the topology does not have: "
                f"{listed(report.ignored_first, report.ignored_sums)}"
            )
        owned = self.owned.get(report.member_id)
        if owned is None:  # e.g. consumer protocol v0, or v1-6 userData: its own actives
            return report.member_id, read.latest, read
        active, stray = owned
        if stray:
            if self._sources is None:
                self._sources = self.topology.source_topics
            named = stray_names(report.owned_partitions, self._sources, LISTED)
            self.notes.append(
                f"member {report.member_id!r}: ignored {stray} owned partition(s) no task "
                "reads: " + listed(named, stray)
            )
        return report.member_id, active, read

    def client(self, reports: Sequence[DecodedMember]) -> ClientRow:
        first = reports[0]
        end_point, tags, rack = first.user_end_point, first.client_tags, first.rack_id
        uniform = True
        for r in reports[1:]:
            if r.user_end_point != end_point or r.client_tags != tags:
                ends = [r.user_end_point for r in reports]
                _one_value(reports, ends, "user end point", "user_end_point")
                _one_value(reports, [r.client_tags for r in reports], "client tags", "client_tags")
            uniform = uniform and r.rack_id == rack
        consumers = [self.consumer(r) for r in reports]
        shared = self.tags.get(tags)
        if shared is None:
            shared = self.tags[tags] = dict(tags)
        rack = rack if uniform else _rack(reports, self.notes)
        return first.process_id, consumers, rack, shared, end_point


def _columns(checked: CheckedGroups, topology: Topology) -> ReportColumns:
    """The compiled read's checked sums as the clients' columns: each row's end-offset sum
    read from the table's column by the row the check found (no lookup per task)."""
    assert checked.rows is not None  # checked against the topology
    rows = checked.rows
    stateful = np.frombuffer(topology.stateful, dtype=np.uint8)[rows].astype(np.bool_)
    ends = np.where(stateful, np.frombuffer(topology.ends, dtype=np.int64)[rows], STATELESS)
    return ReportColumns(checked.kept, checked.tasks, checked.sums, ends, checked.stops)


def _reads(
    ordered: Sequence[Sequence[DecodedMember]],
    topology: Topology,
    checked: CheckedGroups | None,
) -> dict[int, SumsRead]:
    """Each distinct offset-sum report read, by the identity of its sums (the members of one
    userData share them), every report's at once (``client_state.read_reports``); from
    ``checked``'s columns where the compiled read gave them, else from the members' pairs."""
    if checked is not None:
        if not len(checked.sums):  # a fresh group's
            return {}
        columns = _columns(checked, topology)
    else:
        distinct = {id(r.offset_sums): r.offset_sums for ms in ordered for r in ms if r.offset_sums}
        if not distinct:
            return {}
        columns = report_columns(list(distinct.values()), topology.stateful_ends())
    return dict(zip(map(id, columns.reports), read_reports(columns)))


def decoded_clients(
    by_process: Iterable[list[DecodedMember]],
    topology: Topology,
    notes: list[str],
    checked: CheckedGroups | None = None,
) -> list[KafkaStreamsState]:
    """Each process's members (in member-id order) as one client, in Java UUID order;
    ``checked``: their distinct userData's offset sums as the compiled read checked them
    (``member_read.decoded_group``), else read from the members."""
    ordered = sorted(by_process, key=lambda members: process_key(members[0].process_id))
    owning = [r for members in ordered for r in members if len(r.owned_partitions.numbers)]
    found = owned_tasks([r.owned_partitions for r in owning], topology)
    owned = {r.member_id: f for r, f in zip(owning, found)}
    builder = _Builder(topology, notes, owned, _reads(ordered, topology, checked))
    rows = [builder.client(members) for members in ordered]
    return client_states(rows, topology.end_offset_sums, builder.no_lags)
