"""An ``AssignRequest`` against the server's ``RequestLimits``, before and after decoding.

``check_request`` runs before anything is decoded: it counts members, tasks and their
partitions from the message's lengths, and each member's owned partitions and reported tasks
from its structured fields or from the arrays' lengths in its Kafka bytes
(``kassign.kafka.counts``), so nothing is built for a request past a limit. ``check_members``
checks what only decoding reveals (the strings inside Kafka's bytes), and ``check_answer``
refuses a request whose answer would not fit the server's largest message, estimated from the
decoded counts before the assignor runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import accumulate

from kassign.assignor.streams.model import ApplicationState, TaskId
from kassign.kafka.counts import reported_tasks, subscription_counts
from kassign.server.limits import (
    LimitExceeded,
    RequestLimits,
    check_count,
    check_size,
    check_text,
    entry_bytes,
    varint_bytes,
)
from kassign.server.streams.decode.members import DecodedMember
from kassign.server.streams.decode.topology import TaskColumns
from kassign.v1 import assignment_pb2 as pb

__all__ = ["answer_bytes", "check_answer", "check_members", "check_request"]


def _longest(texts: Iterable[str]) -> str:
    """The longest of ``texts`` (distinct ones: a set is built in C)."""
    return max(set(texts), key=len, default="")


def _check_tasks(count: int, columns: TaskColumns, limits: RequestLimits) -> None:
    """The tasks' count, their partitions' running count and each task's longest string, as
    the compiled read measured them; the first task past a limit is named (its partitions
    before its strings)."""
    check_count(count, limits, "tasks", "tasks", field="tasks")
    counts, longest = columns.counts, columns.longest
    if sum(counts) <= limits.partitions and max(longest, default=0) <= limits.string_bytes:
        return
    for i, (partitions, size) in enumerate(zip(accumulate(counts), longest)):
        if partitions > limits.partitions:
            check_count(partitions, limits, "partitions", "topic partitions", field=f"tasks[{i}]")
        check_size(size, limits, field=f"tasks[{i}]")


def _info_counts(info: pb.SubscriptionInfo, field: str, member: str, limits: RequestLimits) -> int:
    check_text(info.process_id, limits, field=f"{field}.process_id", member=member)
    return len(info.prev_tasks) + len(info.standby_tasks) + len(info.task_offset_sums)


def _member_counts(
    member: pb.MemberSubscription, field: str, limits: RequestLimits, stop: tuple[int, int]
) -> tuple[int, int]:
    """The member's owned partitions and reported tasks, counted without decoding anything."""
    who = member.member_id
    check_text(who, limits, field=f"{field}.member_id")
    check_text(member.group_instance_id, limits, field=f"{field}.group_instance_id", member=who)
    if member.WhichOneof("kind") == "raw_subscription":
        raw = member.raw_subscription
        counts = subscription_counts(raw, topics_stop=limits.partitions, owned_stop=stop[0])
        check_count(
            counts.topics, limits, "partitions", "subscribed topics", field=field, member=who
        )
        start, end = counts.user_data
        owned = max(counts.owned_partitions, counts.owned_entries)
        return owned, reported_tasks(memoryview(raw)[start:end], stop[1])
    sub = member.subscription
    which = sub.WhichOneof("user_data")
    reported = 0
    if which == "info":
        reported = _info_counts(sub.info, f"{field}.subscription.info", who, limits)
    elif which == "info_bytes":
        reported = reported_tasks(sub.info_bytes, stop[1])
    return len(sub.owned_partitions), reported


def check_request(
    request: pb.AssignRequest, limits: RequestLimits, tasks: TaskColumns, *, members: bool = True
) -> None:
    """Counts and ids of ``request`` within ``limits``; ``LimitExceeded`` names the first past.
    ``tasks``: the request's tasks as read from its bytes (``topology.task_columns``);
    ``members``: False where the compiled member read found every member's within them
    (``member_read.read_members``), so none would be named."""
    check_text(request.group_id, limits, field="group_id")
    check_text(request.configs.assignor, limits, field="configs.assignor")
    check_text(_longest(request.configs.rack_aware_assignment_tags), limits, field="configs")
    check_count(len(request.members), limits, "members", "members", field="members")
    _check_tasks(len(request.tasks), tasks, limits)
    if not members:
        return
    owned = reported = 0
    for i, member in enumerate(request.members):
        field = f"members[{i}]"
        stop = (limits.owned_partitions - owned, limits.reported_tasks - reported)
        more_owned, more_reported = _member_counts(member, field, limits, stop)
        owned, reported = owned + more_owned, reported + more_reported
        if owned > limits.owned_partitions or reported > limits.reported_tasks:  # else both fit
            who = member.member_id
            check_count(
                owned, limits, "owned_partitions", "owned partitions", field=field, member=who
            )
            check_count(
                reported, limits, "reported_tasks", "reported tasks", field=field, member=who
            )


def check_members(members: Sequence[DecodedMember], limits: RequestLimits) -> None:
    """The strings a member's Kafka bytes carried, now decoded (rack, end point, tags)."""
    for m in members:
        texts = [m.rack_id or "", m.user_end_point or "", _longest(m.topics)]
        texts += [text for tag in m.client_tags for text in tag]
        check_text(_longest(texts), limits, field=m.subscription_field, member=m.member_id)


def _id_body(task: TaskId) -> int:
    """The task's ``pb.TaskId`` body (proto3 leaves zeros and "" out)."""
    body = (1 + varint_bytes(task[1]) if task[1] else 0) + (
        1 + varint_bytes(task[2]) if task[2] else 0
    )
    if task[0]:
        size = len(task.named_topology.encode("utf-8"))  # type: ignore[union-attr]
        body += 1 + varint_bytes(size) + size
    return body


def answer_bytes(state: ApplicationState) -> int:
    """The answer's size, from the lists it must hold: every task placed once as an active and,
    if stateful, once per standby replica (``num_standby_replicas``, at most one per other
    client); each placement lists the task in its client and its member, with its source
    partitions. Ids, reports and framing come on top."""
    standbys = _copies(state) - 1
    names: dict[str, int] = {}  # a topic's name field, by topic
    total = 0
    for task in state.tasks.values():
        size = 2 * entry_bytes(_id_body(task.id))
        for p in task.topic_partitions:
            if p.is_source:
                name = names.get(p.topic)
                if name is None:
                    length = len(p.topic.encode("utf-8"))
                    name = names[p.topic] = 1 + varint_bytes(length) + length
                size += entry_bytes(name + (1 + varint_bytes(p.partition) if p.partition else 0))
        total += size * (1 + (standbys if task.stateful else 0))
    return total


def _copies(state: ApplicationState) -> int:
    """How many times the answer lists a stateful task: once active, once per standby replica."""
    return 1 + min(state.configs.num_standby_replicas, max(len(state.clients) - 1, 0))


def check_answer(
    state: ApplicationState, limits: RequestLimits, request_bytes: int | None = None
) -> None:
    """Refuse a request whose answer would be larger than the server may send.

    ``request_bytes``, the request's size, skips the estimate when it cannot pass the limit
    (most calls): each copy of a task in the estimate takes at most twice the task's entry in
    the request (its id twice, its source partitions once, each smaller than in the request, which
    also says ``is_source``), so the estimate is at most ``2 * copies * request_bytes``. The
    decoder passes the bytes it read (``len(data)``, never fewer than protobuf's ``ByteSize``
    of the message they parse to: overlong varints, defaults written and fields sent twice only
    add), so the estimate is skipped only where it would have been.
    """
    if request_bytes is not None and 2 * _copies(state) * request_bytes <= limits.answer_bytes:
        return
    estimate = answer_bytes(state)
    if estimate > limits.answer_bytes:
        standbys = state.configs.num_standby_replicas
        raise LimitExceeded(
            f"the answer would take at least {estimate:,} bytes ({len(state.tasks):,} tasks, "
            f"{standbys} standby replicas, {len(state.clients):,} clients), more than the "
            f"largest message, {limits.answer_bytes:,} bytes",
            limit="answer_bytes",
            field="tasks",
        )
