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

from collections.abc import Sequence
from dataclasses import dataclass

from kassign.assignor.claims import shared_claims
from kassign.assignor.errors import InvalidRequest
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.model import ApplicationState, Balance, TaskLoads
from kassign.server.limits import DEFAULT_LIMITS, RequestLimits
from kassign.server.streams.decode import limits as checks
from kassign.server.streams.decode.clients import decoded_clients, listed
from kassign.server.streams.decode.configs import decode_configs
from kassign.server.streams.decode.info import InfoReports
from kassign.server.streams.decode.member_read import decoded_group, read_members
from kassign.server.streams.decode.members import DecodedMember, TopicPartition, decode_member
from kassign.server.streams.decode.topology import Topology, decode_topology, task_columns
from kassign.v1 import assignment_pb2 as pb

__all__ = ["DecodedMember", "DecodedRequest", "TopicPartition", "decode_request"]


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


def _shared_partitions(reports: Sequence[DecodedMember], notes: list[str]) -> None:
    """Two members claiming one partition (a zombie, say) is allowed, as in Kafka, but noted."""
    claims = [r.owned_partitions for r in reports]
    if not any(map(len, claims)):  # a fresh group's: nothing to share
        return
    shared = shared_claims(claims)
    if not shared:  # the usual group's: no member's claims walked
        return
    owners: dict[TopicPartition, list[str]] = {}
    for r in reports:
        for topic, numbers in r.owned_partitions.runs:
            for partition in shared[topic].intersection(numbers) if topic in shared else ():
                owners.setdefault(TopicPartition(topic, partition), []).append(r.member_id)
    for tp in sorted(owners):
        notes.append(
            f"partition {tp.topic}-{tp.partition} is owned by members {listed(owners[tp])}"
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
    group = None if read is None else decoded_group(read, topology.interned())
    del read
    reports, checked = group if group is not None else (None, None)
    if reports is None:  # the walk: it names the first fault, if any
        reports = _members(request.members, topology)
        checks.check_members(reports, limits)
    notes: list[str] = []
    by_process: dict[int, list[DecodedMember]] = {}  # by the id's number: an int hashes in C
    for r in reports:
        by_process.setdefault(r.process_id.int, []).append(r)
        if r.error_code:
            notes.append(f"member {r.member_id!r} reported error code {r.error_code}")
    clients = decoded_clients(by_process.values(), topology, notes, checked)
    del checked, group  # the sums' columns: the clients hold what they need
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
