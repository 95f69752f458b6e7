"""A Streams shadow call (issue 26): Kafka's answer decoded and checked, then compared.

``AssignRequest.shadow.kafka`` is the assignment the group got from Kafka's own assignor. It may
differ from kassign's in anything an assignor may choose; it may not name a client or a task
the request does not have, nor give a task to two actives: such an answer is INVALID_ARGUMENT
naming ``shadow.kafka[i]...`` and the client. ``journal_answer`` is kassign's answer in the same
message form, for the journal's copy of the request.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from kassign.assignor.errors import InvalidRequest
from kassign.assignor.streams.model import ApplicationState, TaskId
from kassign.assignor.streams.result import KafkaStreamsAssignment, TaskAssignment, task_assignment
from kassign.assignor.streams.shadow import compare
from kassign.server.shadow import comparison_message, once
from kassign.server.streams.decode.info import parse_process_id
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import common_pb2

__all__ = ["comparison", "decode_kafka_answer", "journal_answer"]


def decode_kafka_answer(shadow: pb.StreamsShadow, state: ApplicationState) -> TaskAssignment:
    """Kafka's answer as a ``TaskAssignment`` of ``state``'s clients, checked."""
    clients: dict[Hashable, str] = {}
    actives: dict[Hashable, str] = {}
    answer = []
    for i, client in enumerate(shadow.kafka):
        where = f"shadow.kafka[{i}]"
        given = client.process_id or None
        pid = parse_process_id(client.process_id, field=f"{where}.process_id", member=given)
        name = str(pid)
        if pid not in state.clients:
            raise InvalidRequest(
                "not a client of this group", field=f"{where}.process_id", member=name
            )
        once(clients, pid, f"{where}.process_id", name, "client")
        active = _tasks(client.active_tasks, state, f"{where}.active_tasks", name)
        for j, task in enumerate(active):
            once(actives, task, f"{where}.active_tasks[{j}]", name, f"active task {task}")
        standby = _tasks(client.standby_tasks, state, f"{where}.standby_tasks", name)
        answer.append(KafkaStreamsAssignment.of(pid, active, set(standby)))
    return task_assignment(answer)


def _tasks(
    given: Iterable[pb.TaskId], state: ApplicationState, field: str, member: str
) -> list[TaskId]:
    tasks = []
    for j, task in enumerate(given):
        decoded = TaskId(task.subtopology, task.partition, task.named_topology or None)
        if decoded not in state.tasks:
            raise InvalidRequest(
                f"task {decoded} is not a task of the topology",
                field=f"{field}[{j}]",
                member=member,
            )
        tasks.append(decoded)
    return tasks


def comparison(
    shadow: pb.StreamsShadow,
    state: ApplicationState,
    kafka: TaskAssignment,
    kassign: TaskAssignment,
) -> common_pb2.ShadowComparison:
    """The report's ``shadow``: Kafka's answer against kassign's."""
    return comparison_message(compare(state, kafka, kassign, shadow.kafka_assignor))


def journal_answer(assignment: TaskAssignment) -> list[pb.ClientAssignment]:
    """kassign's answer as ``shadow.kafka`` carries Kafka's: process id, actives, standbys."""
    return [
        pb.ClientAssignment(
            process_id=str(client.process_id),
            active_tasks=[_task(t) for t in client.active],
            standby_tasks=[_task(t) for t in client.standby],
        )
        for client in assignment.assignments
    ]


def _task(task: TaskId) -> pb.TaskId:
    return pb.TaskId(
        subtopology=task.subtopology,
        partition=task.partition,
        named_topology=task.named_topology or "",
    )
