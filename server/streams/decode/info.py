"""The checks of one ``SubscriptionInfo`` (Kafka Streams' userData), whatever shape it came in.

Every thread of a process sends the same userData, so a request checks each distinct one once
(``InfoReports``) and its threads share the result. The checks are split in two steps,
``info_identity`` then ``info_report``, because ``members.decode_member`` checks the member's
owned partitions between them: the error a bad member gets must not depend on what was cached.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from uuid import UUID

from kassign.assignor.errors import InvalidRequest
from kassign.assignor.streams.model import TaskId
from kassign.kafka.subscription_info import (
    LATEST_OFFSET,
    LATEST_VERSION,
    UNKNOWN_OFFSET_SUM,
    carries_task_lists,
    split_task_lists,
    task_list_sums,
)
from kassign.server.streams.decode.offset_sums import (
    ReportedSums,
    checked_columns,
    message_columns,
    split_known,
)
from kassign.server.streams.decode.topology import TaskIds, decode_task_id
from kassign.v1 import assignment_pb2 as pb

__all__ = ["InfoReport", "InfoReports", "info_identity", "info_report", "parse_process_id"]

_UUID_TEXT = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)
_FIRST_NAMED_TOPOLOGY_VERSION = 10
_FIRST_CLIENT_TAGS_VERSION = 11
_FIRST_ENDPOINT_VERSION = 2
_FIRST_LATEST_VERSION_VERSION = 3
_FEW_SUMS = 16
"""Up to this many structured offset sums, the checker (``_offset_sums``) beats the columns:
36 against 60 us at 6 sums, even at 16, 110 against 91 at 32 (issue 24: a 12-task call's
members report 6 each)."""


def parse_process_id(text: str, *, field: str, member: str | None) -> UUID:
    """A process id in canonical UUID text (what Java's ``UUID.toString`` writes)."""
    if not text:
        raise InvalidRequest("process id is missing", field=field, member=member)
    if not _UUID_TEXT.fullmatch(text):
        raise InvalidRequest(f"not a UUID: {text!r}", field=field, member=member)
    return UUID(text)


_PORT = re.compile(r"0*([0-9]{1,5})")
"""A port as Kafka's ``HostInfo`` reads it: ASCII digits (``[0-9]+``), leading zeros allowed.
``str.isdigit`` would also take ``²`` and ``①`` (which ``int`` refuses) and ``٣`` (which it takes)."""


def _check_end_point(text: str, field: str, member: str) -> str | None:
    """Kafka's ``application.server`` is ``host:port``, the port 0-65535; empty means none."""
    if not text:
        return None
    host, sep, port = text.rpartition(":")
    digits = _PORT.fullmatch(port)
    if not sep or not host or digits is None or int(digits[1]) > 65535:
        raise InvalidRequest(
            f"user end point {text!r} is not host:port (port 0-65535 in ASCII digits)",
            field=field,
            member=member,
        )
    return text


def _offset_sums(
    info: pb.SubscriptionInfo, field: str, member: str, known: TaskIds | None
) -> tuple[tuple[TaskId, int], ...]:
    """Offset sums as Kafka's decoder sees them: v1-6 lists become -2 (active) and -3."""
    if carries_task_lists(info.version) and info.task_offset_sums:
        if info.prev_tasks or info.standby_tasks:
            raise InvalidRequest(
                "give prev_tasks/standby_tasks or task_offset_sums, not both",
                field=f"{field}.task_offset_sums",
                member=member,
            )
        # What a v1-6 subscription keeps of offset sums: -2 stays active, the rest read as -3.
        kept = split_task_lists((s.task, s.offset_sum) for s in info.task_offset_sums)
        pairs = [(t, s, "task_offset_sums") for t, s in task_list_sums(*kept)]
    elif carries_task_lists(info.version):
        pairs = [(t, LATEST_OFFSET, "prev_tasks") for t in info.prev_tasks]
        pairs += [(t, UNKNOWN_OFFSET_SUM, "standby_tasks") for t in info.standby_tasks]
    else:
        if info.prev_tasks or info.standby_tasks:
            raise InvalidRequest(
                f"version {info.version} carries task_offset_sums, not prev_tasks/standby_tasks",
                field=f"{field}.prev_tasks",
                member=member,
            )
        pairs = [(s.task, s.offset_sum, "task_offset_sums") for s in info.task_offset_sums]
    # Checked in task order, so which error is named does not depend on the listing order.
    order = sorted(
        range(len(pairs)),
        key=lambda i: (pairs[i][0].named_topology, pairs[i][0].subtopology, pairs[i][0].partition),
    )
    seen: set[TaskId] = set()
    tasks: dict[int, TaskId] = {}
    for i in order:
        raw, offset_sum, name = pairs[i]
        task = decode_task_id(raw, f"{field}.{name}", member, known)
        named_ok = info.version >= _FIRST_NAMED_TOPOLOGY_VERSION
        if task.named_topology is not None and not named_ok:
            raise InvalidRequest(
                f"task {task} has a named topology, which version {info.version} cannot carry",
                field=f"{field}.{name}",
                member=member,
            )
        if offset_sum < 0 and offset_sum not in (LATEST_OFFSET, UNKNOWN_OFFSET_SUM):
            raise InvalidRequest(
                f"offset sum {offset_sum} of task {task}: only -2 and -3 may be negative",
                field=f"{field}.{name}",
                member=member,
            )
        if task in seen:
            raise InvalidRequest(
                f"task {task} reported twice", field=f"{field}.{name}", member=member
            )
        seen.add(task)
        tasks[i] = task
    return tuple((tasks[i], pairs[i][1]) for i in order)


def _columns_checked(info: pb.SubscriptionInfo, known: TaskIds | None) -> ReportedSums | None:
    """v7+ structured sums checked as columns (``offset_sums.py``); ``None`` where the one
    checker runs: task lists given, a named topology, any fault (it names the first), or a
    few sums, which it checks sooner than numpy's steps' fixed cost (``_FEW_SUMS``)."""
    if info.prev_tasks or info.standby_tasks or len(info.task_offset_sums) <= _FEW_SUMS:
        return None
    columns = message_columns(info.task_offset_sums)
    return None if columns is None else checked_columns(columns, known)


def _client_tags(info: pb.SubscriptionInfo, field: str, member: str) -> tuple[tuple[str, str], ...]:
    if info.client_tags and info.version < _FIRST_CLIENT_TAGS_VERSION:
        raise InvalidRequest(
            f"client tags need version 11, got {info.version}",
            field=f"{field}.client_tags",
            member=member,
        )
    tags: dict[str, str] = {}
    for tag in info.client_tags:
        if not tag.key:
            raise InvalidRequest(
                "a client tag key is empty", field=f"{field}.client_tags", member=member
            )
        if tag.key in tags:
            raise InvalidRequest(
                f"client tag {tag.key!r} given twice", field=f"{field}.client_tags", member=member
            )
        tags[tag.key] = tag.value
    return tuple(sorted(tags.items()))


def _check_versions(info: pb.SubscriptionInfo, field: str, member: str) -> int:
    """The member's latest supported version; refuses versions we cannot read (see docs)."""
    if info.version > LATEST_VERSION:
        raise InvalidRequest(
            f"subscription version {info.version} (latest supported {info.latest_supported_version})"
            f" is newer than {LATEST_VERSION}, the latest this service reads",
            field=f"{field}.version",
            member=member,
        )
    if info.version < 1:
        raise InvalidRequest(
            f"unknown subscription version {info.version}", field=f"{field}.version", member=member
        )
    if info.version < _FIRST_LATEST_VERSION_VERSION:
        return -1
    latest = info.latest_supported_version or info.version  # structured: unset means "this version"
    if latest < info.version:
        raise InvalidRequest(
            f"latest supported version {latest} is below the version used, {info.version}",
            field=f"{field}.latest_supported_version",
            member=member,
        )
    return latest


def _check_scalars(info: pb.SubscriptionInfo, field: str, member: str) -> None:
    if not -128 <= info.unique_field <= 127:
        raise InvalidRequest(
            f"unique field {info.unique_field} does not fit a byte",
            field=f"{field}.unique_field",
            member=member,
        )
    if info.user_end_point and info.version < _FIRST_ENDPOINT_VERSION:
        raise InvalidRequest(
            "version 1 carries no user end point", field=f"{field}.user_end_point", member=member
        )


@dataclass(frozen=True, slots=True)
class InfoReport:
    """The checked fields of one ``SubscriptionInfo``: every thread of a process sends the same."""

    process_id: UUID
    version: int
    latest_supported_version: int
    user_end_point: str | None
    offset_sums: ReportedSums  # the topology's tasks only (offset_sums.py)
    client_tags: tuple[tuple[str, str], ...]
    unique_field: int
    error_code: int


InfoReports = dict[bytes, InfoReport]
"""Checked infos by (field path + serialised info), for one request: a process's threads repeat
one userData, which is then checked once. Only successes are kept, so the first member to send
a bad info is still the one named."""


def info_identity(info: pb.SubscriptionInfo, field: str, member: str) -> tuple[UUID, int]:
    """Process id and latest supported version: the info checks that come before the rest."""
    latest = _check_versions(info, field, member)
    _check_scalars(info, field, member)
    return parse_process_id(info.process_id, field=f"{field}.process_id", member=member), latest


def info_report(
    info: pb.SubscriptionInfo,
    identity: tuple[UUID, int],
    field: str,
    member: str,
    known: TaskIds | None,
    reported: ReportedSums | None = None,
) -> InfoReport:
    """The rest of the checks; ``reported``: the offset sums, already checked as columns
    (``offset_sums.checked_columns``: ``info`` then carries none)."""
    end_point = _check_end_point(info.user_end_point, f"{field}.user_end_point", member)
    if reported is None and not carries_task_lists(info.version):
        reported = _columns_checked(info, known)
    if reported is None:
        reported = split_known(_offset_sums(info, field, member, known), known)
    return InfoReport(
        process_id=identity[0],
        version=info.version,
        latest_supported_version=identity[1],
        user_end_point=end_point,
        offset_sums=reported,
        client_tags=_client_tags(info, field, member),
        unique_field=info.unique_field,
        error_code=info.error_code,
    )
