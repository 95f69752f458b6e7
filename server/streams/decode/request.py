"""An ``AssignRequest`` as the assignor's ``ApplicationState``, checked, or ``InvalidRequest``.

The request is read in four steps: the configs, the topology (tasks and their source
partitions), each member's subscription (``members.py``; bytes are decoded there), then the
clients: members grouped by process id, each member a consumer. Kafka's leader does the same in
``StreamsPartitionAssignor.assign``; where Kafka silently ignores something (offset sums of tasks
the topology does not know, owned partitions no task reads) we ignore it too and say so in
``notes``. Everything else that Kafka could not assign, or that can only be a mistake, is an
``InvalidRequest`` naming the member and the field (docs/decoding.md lists the rules).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import TypeVar
from uuid import UUID

from kassign.assignor.claims import OwnedPartitions, shared_claims
from kassign.assignor.errors import InvalidRequest
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.ordering import process_key
from kassign.assignor.streams.lags import ConsumerReport, kafka_streams_state
from kassign.assignor.streams.model import (
    LATEST_OFFSET,
    ApplicationState,
    Balance,
    KafkaStreamsState,
    TaskId,
    TaskLoads,
)
from kassign.server.limits import DEFAULT_LIMITS, RequestLimits
from kassign.server.streams.decode import limits as checks
from kassign.server.streams.decode.configs import decode_configs
from kassign.server.streams.decode.info import InfoReports
from kassign.server.streams.decode.member_read import decoded_members, read_members
from kassign.server.streams.decode.members import DecodedMember, TopicPartition, decode_member
from kassign.server.streams.decode.topology import Topology, decode_topology, task_columns
from kassign.v1 import assignment_pb2 as pb

__all__ = ["DecodedMember", "DecodedRequest", "TopicPartition", "decode_request"]

T = TypeVar("T")
_LISTED = 10  # notes name at most this many tasks or partitions


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodedRequest:
    """The assignor's input plus what the service reports back: members and decoding notes."""

    state: ApplicationState
    members: tuple[DecodedMember, ...]  # sorted by member id
    notes: tuple[str, ...] = ()
    group_id: str = ""
    load_source: str = ""
    """Where the state's task loads came from (``LoadFigures.source``): "request", the
    server's load source ("prometheus", ``source_loads``), or "" (none: every task weighs 1)."""
    load_notes: tuple[str, ...] = ()
    """What the load source did, for the report's notes (``source_loads``)."""


def _listed(items: Iterable[object], count: int | None = None) -> str:
    """Items for a note, cut after ``_LISTED``; ``count``: how many there are, when ``items``
    holds only the first ``_LISTED``."""
    names = [str(i) for i in items]
    total = len(names) if count is None else count
    more = f" and {total - _LISTED} more" if total > _LISTED else ""
    return ", ".join(names[:_LISTED]) + more


def _owned_tasks(
    owned: OwnedPartitions, topology: Topology
) -> tuple[frozenset[TaskId], int, list[str]]:
    """The tasks ``owned`` feeds, how many of its partitions feed none, and the first
    ``_LISTED`` of those; a topic no task reads is passed over whole (a member may claim
    millions of partitions; issue 16)."""
    tasks: set[TaskId] = set()
    stray, named = 0, list[str]()
    for topic, numbers in owned.runs:
        sources = topology.source_topics.get(topic, {})
        found = [sources[p] for p in numbers if p in sources] if sources else []
        tasks.update(found)
        stray += len(numbers) - len(found)
        missing = (p for p in numbers if p not in sources)
        named += [f"{topic}-{p}" for p in islice(missing, max(_LISTED - len(named), 0))]
    return frozenset(tasks), stray, named


def _members(raw: Sequence[pb.MemberSubscription], topology: Topology) -> tuple[DecodedMember, ...]:
    if not raw:
        raise InvalidRequest("a group needs at least one member", field="members")
    seen: set[str] = set()
    known = topology.interned()
    infos: InfoReports = {}
    reports = []
    for i, member in enumerate(raw):
        if member.member_id in seen:
            raise InvalidRequest(
                "duplicate member id", field=f"members[{i}].member_id", member=member.member_id
            )
        seen.add(member.member_id)
        checkpoint()
        reports.append(decode_member(member, known, infos))
    return tuple(sorted(reports, key=lambda r: r.member_id))


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
            f"process {reports[0].process_id}: members {_listed(missing)} report no rack while others "
            f"report {racks[0]!r}; the client's rack is treated as unknown"
        )
        return None
    return racks[0] if racks else None


def _consumer(report: DecodedMember, topology: Topology, notes: list[str]) -> ConsumerReport:
    """A member's offset sums (the decoder kept only the topology's tasks) and owned tasks;
    what was dropped is noted."""
    sums = dict(report.offset_sums)
    if report.ignored_sums:
        notes.append(
            f"member {report.member_id!r}: ignored offset sums of {report.ignored_sums} task(s) "
            f"the topology does not have: {_listed(report.ignored_first, report.ignored_sums)}"
        )
    owned = report.owned_partitions
    active, stray, named = _owned_tasks(owned, topology) if owned else (frozenset(), 0, [])
    if stray:
        notes.append(
            f"member {report.member_id!r}: ignored {stray} owned partition(s) no task reads: "
            + _listed(named, stray)
        )
    if not report.owned_partitions:  # e.g. consumer protocol v0, or v1-6 userData: its own actives
        active = frozenset(t for t, s in sums.items() if s == LATEST_OFFSET)
    return ConsumerReport(report.member_id, sums, active)


def _client(
    reports: Sequence[DecodedMember], topology: Topology, notes: list[str]
) -> KafkaStreamsState:
    end_point = _one_value(
        reports, [r.user_end_point for r in reports], "user end point", "user_end_point"
    )
    tags = _one_value(reports, [r.client_tags for r in reports], "client tags", "client_tags")
    return kafka_streams_state(
        reports[0].process_id,
        [_consumer(r, topology, notes) for r in reports],
        topology.end_offset_sums,
        rack_id=_rack(reports, notes),
        client_tags=dict(tags),
        host_info=end_point,
    )


def _shared_partitions(reports: Sequence[DecodedMember], notes: list[str]) -> None:
    """Two members claiming one partition (a zombie, say) is allowed, as in Kafka, but noted."""
    shared = shared_claims([r.owned_partitions for r in reports])
    owners: dict[TopicPartition, list[str]] = {}
    for r in reports:
        for topic, numbers in r.owned_partitions.runs:
            for partition in shared[topic].intersection(numbers) if topic in shared else ():
                owners.setdefault(TopicPartition(topic, partition), []).append(r.member_id)
    for tp in sorted(owners):
        notes.append(
            f"partition {tp.topic}-{tp.partition} is owned by members {_listed(owners[tp])}"
        )


def _task_loads(topology: Topology, balance: Balance, notes: list[str]) -> TaskLoads:
    """The tasks' loads, kept whatever the balance (the pipeline's what-if grids may switch it
    on); the assignors read them only with ``LOAD``, and a note says when they are ignored (as
    the consumer room does with partition loads)."""
    given = topology.loads
    if balance is not Balance.LOAD and (given.loads or given.state_bytes):
        notes.append("task loads and state bytes ignored: balance is COUNT (configs.balance)")
    return given


def decode_request(
    request: pb.AssignRequest,
    *,
    now_ms: int,
    default_budget_ms: int | None = None,
    budget_cap_ms: int | None = None,
    limits: RequestLimits = DEFAULT_LIMITS,
    data: bytes | None = None,
) -> DecodedRequest:
    """The request as ``ApplicationState``; ``now_ms`` is the caller's resolved clock;
    ``budget_cap_ms`` bounds the solver budget by the call's deadline (``calls.Deadline``);
    ``limits`` are checked before decoding, and the answer's size before returning. ``data``:
    the request's bytes as received, whence the compiled core reads the tasks (issue 24;
    callers holding only the message have it serialised once for that read)."""
    if request.now_ms < 0:
        raise InvalidRequest(f"negative time {request.now_ms}", field="now_ms")
    data = request.SerializeToString() if data is None else data
    tasks = task_columns(data)
    read = read_members(data, limits)
    checks.check_request(request, limits, tasks, members=read is None)
    configs = decode_configs(
        request.configs, default_budget_ms=default_budget_ms, budget_cap_ms=budget_cap_ms
    )
    topology = decode_topology(tasks)
    del tasks
    reports = None if read is None else decoded_members(read, topology.interned())
    del read
    if reports is None:  # the walk: it names the first fault, if any
        reports = _members(request.members, topology)
        checks.check_members(reports, limits)
    notes: list[str] = []
    by_process: dict[UUID, list[DecodedMember]] = {}
    for r in reports:
        by_process.setdefault(r.process_id, []).append(r)
        if r.error_code:
            notes.append(f"member {r.member_id!r} reported error code {r.error_code}")
    clients = [_client(by_process[p], topology, notes) for p in sorted(by_process, key=process_key)]
    _shared_partitions(reports, notes)
    # Tasks (the topology's dict) and clients are already in their canonical order.
    state = ApplicationState(
        topology.tasks,
        {c.process_id: c for c in clients},
        configs,
        now_ms,
        _task_loads(topology, configs.balance, notes),
    )
    checks.check_answer(state, limits, len(data))  # ByteSize took 6-15 ms of a big request
    return DecodedRequest(
        state=state,
        members=reports,
        notes=tuple(notes),
        group_id=request.group_id,
        load_source="request" if topology.loads.loads else "",
    )
