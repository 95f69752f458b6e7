"""``kassign next REQUEST ANSWER``: the group's next rebalance request, from this one's answer.

Why: a what-if ("what does removing this client do?") needs the request the group leader would
send next, and that request carries the first answer's ownership. A copy of the first request
edited by hand still carries the ownership from *before* the first answer, so its answer counts
moves against the wrong past and ``explain --diff`` lists moves that never happen.

What the next request says, per client, as Kafka Streams reports it after the rebalance (the
pipeline's ``after_rebalance`` makes the same assumption):

- the answer's actives run there: offset sum ``LATEST_OFFSET`` (-2), or ``prev_tasks`` (v1-6);
- its standbys and warm-ups have caught up: the task's changelog end offset sum;
- other state it reported stays on disk at the offset it had (an active it gave up: the end);
- each member owns the source partitions of its active tasks; a set generation goes up by one.

``--remove PID`` drops a client's members, ``--add PID`` adds a fresh client shaped like the
first (or ``--like PID``): its members, threads, rack and tags, with no state and nothing owned.
``now_ms`` moves to the answer's earliest follow-up, or on by the probing interval. Members sent
as Kafka's bytes come out structured. Streams requests only.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from uuid import UUID

from google.protobuf import json_format
from kassign.assignor.ordering import process_key
from kassign.cli.messages import read_request
from kassign.kafka.buffer import WireError
from kassign.kafka.consumer_protocol import SubscriptionDecoder
from kassign.kafka.subscription_info import LATEST_OFFSET, decode_subscription_info
from kassign.server.streams.decode.kafka_bytes import info_to_pb, subscription_to_pb
from kassign.v1 import assignment_pb2 as pb

__all__ = ["NextError", "add_parser", "next_request"]

_TaskKey = tuple[str, int, int]
_NO_DEADLINE = (1 << 63) - 1
_PROBING_DEFAULT_MS = 600_000
_FIRST_OFFSET_SUM_VERSION = 7  # v1-6 report prev_tasks and standby_tasks instead


class NextError(ValueError):
    """The answer is not this request's, or ``--add``/``--remove`` name no possible client."""


def _key(task: pb.TaskId) -> _TaskKey:
    return (task.named_topology, task.subtopology, task.partition)


def _task(key: _TaskKey) -> pb.TaskId:
    return pb.TaskId(named_topology=key[0], subtopology=key[1], partition=key[2])


def _structured(member: pb.MemberSubscription) -> pb.MemberSubscription:
    """The member with its subscription and userData as messages (Kafka's bytes decoded)."""
    out = pb.MemberSubscription(member_id=member.member_id)
    out.group_instance_id = member.group_instance_id
    try:
        if member.WhichOneof("kind") == "raw_subscription":
            out.subscription.CopyFrom(
                subscription_to_pb(SubscriptionDecoder().decode(member.raw_subscription))
            )
        else:
            out.subscription.CopyFrom(member.subscription)
        sub = out.subscription
        if sub.WhichOneof("user_data") == "info_bytes":
            sub.info.CopyFrom(info_to_pb(decode_subscription_info(sub.info_bytes)))
    except WireError as exc:
        raise NextError(f"member {member.member_id}: {exc}") from exc
    if sub.WhichOneof("user_data") != "info":
        raise NextError(f"member {member.member_id}: no Kafka Streams userData (SubscriptionInfo)")
    return out


def _state_after(
    info: pb.SubscriptionInfo, client: pb.ClientAssignment, end: dict[_TaskKey, int]
) -> dict[_TaskKey, int]:
    """The client's offset sums once the answer ran: actives latest, standbys caught up."""
    if info.version >= _FIRST_OFFSET_SUM_VERSION or not info.version:
        before = {_key(s.task): s.offset_sum for s in info.task_offset_sums}
    else:
        before = {_key(t): LATEST_OFFSET for t in info.prev_tasks}
        before |= {_key(t): end.get(_key(t), 0) for t in info.standby_tasks}
    sums = {t: (end[t] if s == LATEST_OFFSET else s) for t, s in before.items() if t in end}
    sums |= {_key(t): end[_key(t)] for t in client.standby_tasks if _key(t) in end}
    sums |= {_key(t): LATEST_OFFSET for t in client.active_tasks}
    return dict(sorted(sums.items()))


def _report(info: pb.SubscriptionInfo, sums: dict[_TaskKey, int]) -> None:
    """Write ``sums`` into ``info`` the way its version carries them."""
    del info.task_offset_sums[:], info.prev_tasks[:], info.standby_tasks[:]
    if info.version >= _FIRST_OFFSET_SUM_VERSION or not info.version:
        info.task_offset_sums.extend(
            pb.TaskOffsetSum(task=_task(t), offset_sum=s) for t, s in sums.items()
        )
        return
    info.prev_tasks.extend(_task(t) for t, s in sums.items() if s == LATEST_OFFSET)
    info.standby_tasks.extend(_task(t) for t, s in sums.items() if s != LATEST_OFFSET)


def _next_member(
    member: pb.MemberSubscription,
    client: pb.ClientAssignment,
    end: dict[_TaskKey, int],
    owned: Sequence[pb.TopicPartition],
) -> pb.MemberSubscription:
    out = _structured(member)
    sub = out.subscription
    _report(sub.info, _state_after(sub.info, client, end))
    del sub.owned_partitions[:]
    sub.owned_partitions.extend(owned)
    if sub.HasField("generation_id"):
        sub.generation_id += 1
    return out


def _fresh(template: list[pb.MemberSubscription], process_id: str) -> list[pb.MemberSubscription]:
    """A new client shaped like ``template``'s members: no state, nothing owned."""
    old = template[0].subscription.info.process_id
    members = []
    for n, member in enumerate(template, start=1):
        out = pb.MemberSubscription()
        out.CopyFrom(member)
        out.member_id = (
            member.member_id.replace(old, process_id)
            if old in member.member_id
            else f"{process_id}-{n}"
        )
        out.group_instance_id = ""
        sub = out.subscription
        sub.ClearField("generation_id")
        del sub.owned_partitions[:]
        sub.info.process_id = process_id
        sub.info.user_end_point = ""
        _report(sub.info, {})
        members.append(out)
    return members


def _canonical(process_id: str, flag: str) -> str:
    try:
        return str(UUID(process_id))
    except ValueError:
        raise NextError(f"{flag} {process_id!r}: not a process id (a UUID)") from None


def _next_now(request: pb.AssignRequest, answer: pb.AssignResponse) -> int:
    """The answer's earliest follow-up, else one probing interval on; 0 (the server's) stays."""
    if not request.now_ms:
        return 0
    deadlines = [
        c.followup_rebalance_deadline_ms
        for c in answer.clients
        if 0 < c.followup_rebalance_deadline_ms < _NO_DEADLINE
    ]
    if deadlines:
        return min(deadlines)
    configs = request.configs
    interval = (
        configs.probing_rebalance_interval_ms
        if configs.HasField("probing_rebalance_interval_ms")
        else _PROBING_DEFAULT_MS
    )
    return request.now_ms + interval


def next_request(
    request: pb.AssignRequest,
    answer: pb.AssignResponse,
    *,
    remove: Sequence[str] = (),
    add: Sequence[str] = (),
    like: str | None = None,
) -> pb.AssignRequest:
    """The request of the rebalance after ``answer``, with clients removed and added."""
    if answer.error != pb.ASSIGNMENT_ERROR_NONE:
        raise NextError(f"ANSWER failed validation ({pb.AssignmentError.Name(answer.error)})")
    members = [_structured(m) for m in request.members]
    by_client: dict[str, list[pb.MemberSubscription]] = {}
    for member in members:
        by_client.setdefault(member.subscription.info.process_id, []).append(member)
    clients = {c.process_id: c for c in answer.clients}
    if missing := sorted(by_client.keys() - clients.keys()):
        raise NextError(f"ANSWER has no client {missing[0]}: is it this REQUEST's answer?")
    gone = {_canonical(p, "--remove") for p in remove}
    if unknown := sorted(gone - by_client.keys()):
        raise NextError(f"--remove {unknown[0]}: no such client; clients: {' '.join(by_client)}")
    joining = [_canonical(p, "--add") for p in add]
    if taken := sorted(set(joining) & by_client.keys()):
        raise NextError(f"--add {taken[0]}: that client is already there")
    if len(set(joining)) < len(joining):
        raise NextError("--add names the same client twice")
    shape = (
        _canonical(like, "--like") if like else min(by_client, key=lambda p: process_key(UUID(p)))
    )
    if shape not in by_client:
        raise NextError(f"--like {shape}: no such client")
    end = {_key(t.id): t.changelog_end_offset_sum for t in request.tasks if t.stateful}
    owned = {m.member_id: m.active_partitions for m in answer.members}
    out = pb.AssignRequest()
    out.CopyFrom(request)
    del out.members[:]
    for member in members:
        pid = member.subscription.info.process_id
        if pid not in gone:
            out.members.append(
                _next_member(member, clients[pid], end, owned.get(member.member_id, []))
            )
    for pid in joining:
        out.members.extend(_fresh(by_client[shape], pid))
    out.now_ms = _next_now(request, answer)
    return out


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``next``."""
    p = subparsers.add_parser(
        "next",
        help="write the next rebalance's request from a request and its answer (for what-ifs)",
        description="The request the group leader sends at the next rebalance, once ANSWER ran:"
        " each client's actives latest, its standbys caught up, each member owning its actives'"
        " partitions. Then `kassign explain --diff REQUEST NEXT` shows only real moves.",
    )
    p.add_argument("request", metavar="REQUEST", help="AssignRequest as protobuf JSON, - for stdin")
    p.add_argument("answer", metavar="ANSWER", help="its AssignResponse (kassign assign's JSON)")
    p.add_argument(
        "--remove", action="append", default=[], metavar="PROCESS_ID", help="drop this client"
    )
    p.add_argument(
        "--add", action="append", default=[], metavar="PROCESS_ID", help="add a fresh client"
    )
    p.add_argument(
        "--like",
        metavar="PROCESS_ID",
        help="the client --add copies the shape of (default: the first in process order)",
    )
    p.add_argument("-o", "--output", metavar="OUT", help="write here (default: stdout)")
    p.set_defaults(func=run_next)


def run_next(args: argparse.Namespace) -> int:
    request = read_request(args.request)
    answer = json_format.Parse(Path(args.answer).read_text(encoding="utf-8"), pb.AssignResponse())
    try:
        out = next_request(request, answer, remove=args.remove, add=args.add, like=args.like)
    except NextError as exc:
        print(f"kassign: {exc}", file=sys.stderr)
        return 2
    text = json_format.MessageToJson(out, indent=2) + "\n"
    if args.output is None:
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text, encoding="utf-8")
    return 0
