"""A Kafka Streams answer told: ``group_view`` joins it with what the request said before.

The decoded request gives what each client reported (previous owners, lags, racks, tags); the
answer where each replica went; its ``explanation`` (``AssignRequest.explain``) each replica's
kind (warm-ups told apart from standbys), rule and reason. Without one (a service from before it)
the rest still stands and the rule is left empty.

Moves use the answer's definitions (``AssignmentReport.moves``): an active moved when some client
ran it before and its client now did not; a standby moved when its client reported no state for
it; every warm-up is a move under way.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import fields
from uuid import UUID

from kassign.assignor.streams.model import KafkaStreamsState, TaskInfo
from kassign.assignor.streams.rack.costs import CostModel, counted_partitions
from kassign.assignor.streams.result import TaskType
from kassign.cli import explain_model
from kassign.cli.explain_load import group_load
from kassign.cli.explain_model import ClientView, GroupView, Kind, ReplicaView, TaskView
from kassign.cli.table import task_name
from kassign.server.streams.decode.request import DecodedRequest
from kassign.v1 import assignment_pb2 as pb

__all__ = ["ZONE_TAG", "group_view"]

ZONE_TAG = "zone"
"""The client tag the page groups racks by when ``zone_tag`` is not given and a client has it."""

_KINDS = {
    pb.REPLICA_KIND_ACTIVE: Kind.ACTIVE,
    pb.REPLICA_KIND_STANDBY: Kind.STANDBY,
    pb.REPLICA_KIND_WARM_UP: Kind.WARM_UP,
}


def _zone_tag(
    clients: Sequence[KafkaStreamsState], zone_tag: str | None, tags: Sequence[str]
) -> str:
    if zone_tag is not None:
        return zone_tag
    carried = {k for c in clients for k in c.client_tags}
    if ZONE_TAG in carried:
        return ZONE_TAG
    return next((t for t in tags if t in carried), "")


def _pid(p: UUID) -> str:
    return str(p)


def _client_views(
    decoded: DecodedRequest, response: pb.AssignResponse, zone_tag: str
) -> tuple[ClientView, ...]:
    by_pid = {_pid(p): c for p, c in decoded.state.clients.items()}
    order = {t: i for i, t in enumerate(sorted(decoded.state.tasks))}
    told = {c.process_id: c for c in response.explanation.clients}
    views = []
    for answer in response.clients:
        state = by_pid[answer.process_id]
        load, capacity = _load(told.get(answer.process_id), state.num_threads)
        views.append(
            ClientView(
                process_id=answer.process_id,
                rack=state.rack_id or "",
                zone=state.client_tags.get(zone_tag, "") if zone_tag else "",
                tags=tuple(sorted(state.client_tags.items())),
                threads=state.num_threads,
                members=tuple(answer.member_ids),
                followup_ms=answer.followup_rebalance_deadline_ms,
                previous_active=tuple(
                    str(t) for t in sorted(state.previous_active_tasks, key=order.__getitem__)
                ),
                previous_standby=tuple(
                    str(t) for t in sorted(state.previous_standby_tasks, key=order.__getitem__)
                ),
                load=load,
                capacity=capacity,
            )
        )
    return tuple(views)


def _load(told: pb.ClientExplanation | None, threads: int) -> tuple[float | None, float | None]:
    """A client's load and capacity (balance LOAD), its threads where no capacity is told."""
    if told is None or not told.HasField("load"):
        return None, None
    return told.load, told.capacity if told.HasField("capacity") else float(threads)


def _cross_rack(info: TaskInfo, kind: Kind, rack: str) -> int:
    if not rack:
        return 0
    counted = counted_partitions(
        CostModel.BUILT_IN, TaskType.ACTIVE if kind is Kind.ACTIVE else TaskType.STANDBY
    )
    return sum(
        1 for tp in info.topic_partitions if counted(tp) and tp.rack_ids and rack not in tp.rack_ids
    )


def _partitions(info: TaskInfo) -> tuple[tuple[str, str], ...]:
    rows = []
    for tp in info.topic_partitions:
        roles = [r for r, on in (("source", tp.is_source), ("changelog", tp.is_changelog)) if on]
        racks = " ".join(sorted(tp.rack_ids)) or "unknown"
        rows.append((f"{tp.topic}-{tp.partition}", f"{'/'.join(roles) or 'other'}; racks {racks}"))
    return tuple(rows)


def _placements(response: pb.AssignResponse) -> dict[str, list[tuple[Kind, str]]]:
    """Each task's replicas from the assignment itself: (kind, process id), active first."""
    placed: dict[str, list[tuple[Kind, str]]] = {}
    for client in response.clients:
        for t in client.active_tasks:
            placed.setdefault(task_name(t), []).insert(0, (Kind.ACTIVE, client.process_id))
    for client in response.clients:
        for t in client.standby_tasks:
            placed.setdefault(task_name(t), []).append((Kind.STANDBY, client.process_id))
    return placed


def _explained(response: pb.AssignResponse) -> dict[tuple[str, str], pb.Placement]:
    return {
        (task_name(t.task), p.process_id): p
        for t in response.explanation.tasks
        for p in t.placements
    }


def _replicas(
    info: TaskInfo,
    placed: Sequence[tuple[Kind, str]],
    clients: Mapping[str, KafkaStreamsState],
    explained: Mapping[tuple[str, str], pb.Placement],
) -> tuple[ReplicaView, ...]:
    name = str(info.id)
    owners = {p for p, c in clients.items() if info.id in c.previous_active_tasks}
    views = []
    for kind, pid in placed:
        state = clients[pid]
        why = explained.get((name, pid))
        if kind is Kind.ACTIVE:
            moved = bool(owners) and pid not in owners
        else:
            moved = info.id not in state.previous_tasks
        if why is not None:
            kind = _KINDS.get(why.kind, kind)
            moved = why.moved
        views.append(
            ReplicaView(
                kind=kind,
                process_id=pid,
                moved=moved or kind is Kind.WARM_UP,
                cross_rack=_cross_rack(info, kind, state.rack_id or ""),
                rule=explain_model.rule_word(why.rule) if why is not None else "",
                reason=why.reason if why is not None else "",
            )
        )
    return tuple(views)


def _config_text(value: object) -> str:
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, tuple):
        return ",".join(map(str, value)) or "-"
    return "-" if value is None else str(value)


def group_view(
    decoded: DecodedRequest,
    response: pb.AssignResponse,
    *,
    zone_tag: str | None = None,
) -> GroupView:
    """The answer to ``decoded`` told (deadlines are shown against the request's time);
    ``zone_tag`` the client tag that names a zone (default: ``zone`` when a
    client carries it, else the first ``rack_aware_assignment_tags`` key a client carries)."""
    state = decoded.state
    configs = state.configs
    by_pid = {_pid(p): c for p, c in state.clients.items()}
    process_order = [c.process_id for c in response.clients]
    placed = _placements(response)
    explained = _explained(response)
    zone = _zone_tag(list(state.clients.values()), zone_tag, configs.rack_aware_assignment_tags)
    tasks = []
    for task_id in sorted(state.tasks):
        info = state.tasks[task_id]
        name = str(task_id)
        reported = [
            (pid, by_pid[pid].task_lags[task_id])
            for pid in process_order
            if info.stateful
            and task_id in by_pid[pid].task_lags
            and task_id in by_pid[pid].previous_tasks
        ]
        tasks.append(
            TaskView(
                name=name,
                subtopology=name.rsplit("_", 1)[0],
                stateful=info.stateful,
                end_offset_sum=info.changelog_end_offset_sum,
                previous_active=tuple(
                    p for p in process_order if task_id in by_pid[p].previous_active_tasks
                ),
                previous_standby=tuple(
                    p for p in process_order if task_id in by_pid[p].previous_standby_tasks
                ),
                lags=tuple(reported),
                replicas=_replicas(info, placed.get(name, []), by_pid, explained),
                partitions=_partitions(info),
            )
        )
    return GroupView(
        group_id=decoded.group_id,
        now_ms=state.now_ms,
        assignor=response.report.assignor,
        acceptable_recovery_lag=configs.acceptable_recovery_lag,
        num_standby_replicas=configs.num_standby_replicas,
        explained=response.HasField("explanation"),
        configs=tuple((f.name, _config_text(getattr(configs, f.name))) for f in fields(configs)),
        clients=_client_views(decoded, response, zone),
        tasks=tuple(tasks),
        notes=tuple(response.report.notes),
        load=group_load(response.report),
    )
