"""Kafka Streams' ``SubscriptionInfoData`` (the consumer userData), versions 1 to 11, byte-exact.

Layout (big-endian, no flexible versions): version, latestSupportedVersion (v3+, placed second),
processId, prevTasks/standbyTasks (v1-6), userEndPoint (v2+), taskOffsetSums (v7-9 nested per
sub-topology, v10+ flat with a nullable named topology), uniqueField (v8+, int8), errorCode (v9+),
clientTags (v11). The values here mirror the wire, lists in byte order, so ``encode(decode(b))``
gives ``b`` back even where Kafka wrote a ``HashSet``/``HashMap`` order.

Two decisions differ from Kafka's reader (see docs/decoding.md): trailing bytes are an error (Kafka
ignores them), and a version above 11 is an error here; ``peek_versions`` reads only the first two
int32s, as Kafka does for version probing, so the caller can say which version was sent.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar
from uuid import UUID

from kassign.kafka.buffer import Reader, WireError, Writer
from kassign.kafka.offset_sum_columns import OffsetSumColumns, sum_columns

__all__ = [
    "LAST_TASK_LIST_VERSION",
    "LATEST_OFFSET",
    "LATEST_VERSION",
    "UNKNOWN_OFFSET_SUM",
    "ClientTag",
    "PartitionOffsetSum",
    "SubscriptionInfoData",
    "SubtopologyOffsetSums",
    "TaskOffsetSum",
    "WireTaskId",
    "carries_task_lists",
    "decode_subscription_columns",
    "decode_subscription_info",
    "encode_subscription_info",
    "peek_versions",
    "split_task_lists",
    "task_list_sums",
]

LATEST_VERSION = 11
LATEST_OFFSET = -2
"""Offset sum of a task the client runs as an active: caught up by definition (Kafka's
``Task.LATEST_OFFSET``). The one definition; the model and the client import it."""
UNKNOWN_OFFSET_SUM = -3
"""Offset sum of a task whose local state the client cannot measure (``SubscriptionInfo``)."""
LAST_TASK_LIST_VERSION = 6
"""v1-6 carry previous active and standby task lists; v7 on, an offset sum per task."""

_T = TypeVar("_T")


def carries_task_lists(version: int) -> bool:
    """Whether ``version`` lists previous tasks (v1-6) rather than offset sums (v7+)."""
    return version <= LAST_TASK_LIST_VERSION


def task_list_sums(previous: Iterable[_T], standby: Iterable[_T]) -> list[tuple[_T, int]]:
    """v1-6 task lists read as Kafka reads them: previous actives -2, the other tasks -3."""
    return [(t, LATEST_OFFSET) for t in previous] + [(t, UNKNOWN_OFFSET_SUM) for t in standby]


def split_task_lists(sums: Iterable[tuple[_T, int]]) -> tuple[tuple[_T, ...], tuple[_T, ...]]:
    """What Kafka's v1-6 encoder keeps of offset sums: -2 are previous actives, the rest standby.

    The v1-6 rule in one place, with ``task_list_sums`` its inverse up to the values: a sum
    taken through a v1-6 subscription comes back as -2 or -3.
    """
    pairs = list(sums)
    previous = tuple(t for t, s in pairs if s == LATEST_OFFSET)
    return previous, tuple(t for t, s in pairs if s != LATEST_OFFSET)


@dataclass(frozen=True, slots=True)
class WireTaskId:
    """A v1-6 list entry."""

    topic_group_id: int
    partition: int


@dataclass(frozen=True, slots=True)
class PartitionOffsetSum:
    partition: int
    offset_sum: int


@dataclass(frozen=True, slots=True)
class SubtopologyOffsetSums:
    """A v7-9 entry: one sub-topology and its partitions' offset sums."""

    topic_group_id: int
    partitions: tuple[PartitionOffsetSum, ...]


@dataclass(frozen=True, slots=True)
class TaskOffsetSum:
    """A v10+ entry: one task, flat; ``named_topology`` None is written as a null string."""

    topic_group_id: int
    partition: int
    offset_sum: int
    named_topology: str | None = None


@dataclass(frozen=True, slots=True)
class ClientTag:
    """A v11 client tag: UTF-8 text carried in two ``bytes`` fields."""

    key: str
    value: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SubscriptionInfoData:
    """The message as on the wire; fields a version lacks keep their defaults.

    ``user_end_point`` is "" for none: Kafka writes a null endpoint as length 0.
    ``grouped_offset_sums`` is the v7-9 layout, ``task_offset_sums`` the v10+ one.
    """

    version: int
    process_id: UUID
    latest_supported_version: int = -1
    prev_tasks: tuple[WireTaskId, ...] = ()
    standby_tasks: tuple[WireTaskId, ...] = ()
    user_end_point: str = ""
    grouped_offset_sums: tuple[SubtopologyOffsetSums, ...] = ()
    task_offset_sums: tuple[TaskOffsetSum, ...] = ()
    unique_field: int = 0
    error_code: int = 0
    client_tags: tuple[ClientTag, ...] = ()

    def offset_sums(self) -> tuple[TaskOffsetSum, ...]:
        """Every task's offset sum in byte order, as Kafka's ``taskOffsetSums()`` sees them.

        v1-6 have no sums: previous actives read as -2, the other tasks as -3 (unknown).
        """
        if carries_task_lists(self.version):
            return tuple(
                TaskOffsetSum(t.topic_group_id, t.partition, s)
                for t, s in task_list_sums(self.prev_tasks, self.standby_tasks)
            )
        if self.version <= 9:
            return tuple(
                TaskOffsetSum(group.topic_group_id, p.partition, p.offset_sum)
                for group in self.grouped_offset_sums
                for p in group.partitions
            )
        return self.task_offset_sums


def _utf8(raw: bytes, what: str, offset: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WireError(f"{what}: invalid UTF-8", offset) from exc


def _read_text_bytes(r: Reader, what: str) -> str:
    start = r.offset
    raw = r.bytes_(what) or b""  # not nullable: a -1 length already raised
    return _utf8(raw, what, start + 4)


_TASK = struct.Struct(">ii")
_PARTITION_SUM = struct.Struct(">iq")
_FLAT_HEAD = struct.Struct(">iiq")


def _read_task_id(r: Reader) -> WireTaskId:
    return WireTaskId(*r.unpack(_TASK, "TaskId (topicGroupId, partition)"))


def _read_partition_sum(r: Reader) -> PartitionOffsetSum:
    return PartitionOffsetSum(*r.unpack(_PARTITION_SUM, "PartitionToOffsetSum"))


def _read_grouped(r: Reader) -> SubtopologyOffsetSums:
    group = r.int32("topicGroupId")
    return SubtopologyOffsetSums(
        group, r.array(_read_partition_sum, "partitionToOffsetSum", min_size=12)
    )


def _read_flat(r: Reader) -> TaskOffsetSum:
    group, partition, offset_sum = r.unpack(
        _FLAT_HEAD, "TaskOffsetSum (topicGroupId, partition, offsetSum)"
    )
    return TaskOffsetSum(group, partition, offset_sum, r.string("namedTopology", nullable=True))


def _read_tag(r: Reader) -> ClientTag:
    return ClientTag(_read_text_bytes(r, "clientTag key"), _read_text_bytes(r, "clientTag value"))


def peek_versions(data: bytes) -> tuple[int, int] | None:
    """The first two int32s (version, latestSupportedVersion), as Kafka reads a future version."""
    if len(data) < 8:
        return None
    r = Reader(data[:8])
    return r.int32(), r.int32()


def decode_subscription_info(data: bytes) -> SubscriptionInfoData:
    """Decode a whole userData; ``WireError`` (with the byte offset) for anything malformed."""
    r = Reader(data)
    version = r.int32("version")
    if not 1 <= version <= LATEST_VERSION:
        raise WireError(
            f"unknown SubscriptionInfo version {version} (this reads 1-{LATEST_VERSION})", 0
        )
    latest = r.int32("latestSupportedVersion") if version >= 3 else -1
    process_id = r.uuid("processId")
    prev = r.array(_read_task_id, "prevTasks", min_size=8) if version <= 6 else ()
    standby = r.array(_read_task_id, "standbyTasks", min_size=8) if version <= 6 else ()
    end_point = _read_text_bytes(r, "userEndPoint") if version >= 2 else ""
    grouped = r.array(_read_grouped, "taskOffsetSums", min_size=8) if 7 <= version <= 9 else ()
    flat = r.array(_read_flat, "taskOffsetSums", min_size=18) if version >= 10 else ()
    unique = r.int8("uniqueField") if version >= 8 else 0
    error = r.int32("errorCode") if version >= 9 else 0
    tags = r.array(_read_tag, "clientTags", min_size=8) if version >= 11 else ()
    r.expect_end(f"SubscriptionInfo v{version}")
    return SubscriptionInfoData(
        version=version,
        process_id=process_id,
        latest_supported_version=latest,
        prev_tasks=prev,
        standby_tasks=standby,
        user_end_point=end_point,
        grouped_offset_sums=grouped,
        task_offset_sums=flat,
        unique_field=unique,
        error_code=error,
        client_tags=tags,
    )


def decode_subscription_columns(
    data: bytes,
) -> tuple[SubscriptionInfoData, OffsetSumColumns] | None:
    """A v7+ userData with its offset sums as columns, the info's own sum fields left empty;
    ``None`` where a sum names a topology or the version lists tasks (v1-6), not read further:
    ``decode_subscription_info`` reads (or refuses) those. Malformed bytes raise the
    ``WireError`` that reader raises.

    The reading is the compiled core's (``kassign_native.subscription_columns``,
    ``assignor/native/src/subscription_info.rs``: no Python step per field or per sum, issue
    24), so it needs the server's install; the client never decodes these."""
    import kassign_native  # the server's compiled core

    read = kassign_native.subscription_columns(data)
    if read is None:
        return None
    if read is False:
        decode_subscription_info(data)  # raises, naming the fault and its offset
        raise WireError("SubscriptionInfo: malformed", 0)  # both readers refuse the same bytes
    version, latest, process_id, end_point, unique, error, tags, sums = read
    info = SubscriptionInfoData(
        version=version,
        process_id=UUID(bytes=process_id),
        latest_supported_version=latest,
        user_end_point=end_point,
        unique_field=unique,
        error_code=error,
        client_tags=tuple([ClientTag(k, v) for k, v in tags]),
    )
    return info, sum_columns(sums)


def _write_task_id(w: Writer, t: WireTaskId) -> None:
    w.int32(t.topic_group_id)
    w.int32(t.partition)


def _write_partition_sum(w: Writer, p: PartitionOffsetSum) -> None:
    w.int32(p.partition)
    w.int64(p.offset_sum)


def _write_grouped(w: Writer, group: SubtopologyOffsetSums) -> None:
    w.int32(group.topic_group_id)
    w.array(group.partitions, _write_partition_sum)


def _write_flat(w: Writer, t: TaskOffsetSum) -> None:
    w.int32(t.topic_group_id)
    w.int32(t.partition)
    w.int64(t.offset_sum)
    w.string(t.named_topology)


def _write_tag(w: Writer, tag: ClientTag) -> None:
    w.bytes_(tag.key.encode("utf-8"))
    w.bytes_(tag.value.encode("utf-8"))


def encode_subscription_info(info: SubscriptionInfoData) -> bytes:
    """The exact bytes Kafka's encoder writes for these values (fields the version lacks dropped)."""
    v = info.version
    if not 1 <= v <= LATEST_VERSION:
        raise ValueError(f"cannot encode SubscriptionInfo version {v}")
    w = Writer()
    w.int32(v)
    if v >= 3:
        w.int32(info.latest_supported_version)
    w.uuid(info.process_id)
    if v <= 6:
        w.array(info.prev_tasks, _write_task_id)
        w.array(info.standby_tasks, _write_task_id)
    if v >= 2:
        w.bytes_(info.user_end_point.encode("utf-8"))
    if 7 <= v <= 9:
        w.array(info.grouped_offset_sums, _write_grouped)
    if v >= 10:
        w.array(info.task_offset_sums, _write_flat)
    if v >= 8:
        w.int8(info.unique_field)
    if v >= 9:
        w.int32(info.error_code)
    if v >= 11:
        w.array(info.client_tags, _write_tag)
    return w.getvalue()
