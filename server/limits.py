"""Per-request limits: what one call may ask of a worker, checked before the work that costs.

A request's cost grows with what it counts, not with its bytes: a 15 MB raw subscription with 4
million owned partitions took 38 s and 2.7 GB, 10^6 tasks 1.3 GB (issue 16). So each room counts
its request (the structured fields by their lengths, Kafka's bytes by their arrays' lengths,
``kassign.kafka.counts``) before decoding it, and refuses one past a limit with
``INVALID_ARGUMENT`` naming the limit and the ``kassign serve`` option that sets it
(``LimitExceeded``; trailing metadata ``kassign-limit``). The answer's size is estimated from the
decoded counts before assigning (``answer_bytes``: the server's largest message), so a request
whose answer cannot be sent is refused at once rather than after the work (docs/operations.md,
*Limits*).
"""

from __future__ import annotations

from dataclasses import dataclass

from kassign.assignor.errors import InvalidRequest

__all__ = [
    "DEFAULT_LIMITS",
    "LIMIT_OPTIONS",
    "LimitExceeded",
    "RequestLimits",
    "check_count",
    "check_text",
    "entry_bytes",
    "varint_bytes",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestLimits:
    """What one request may hold (defaults: ten to twenty times the benches' largest groups).

    ``members``: members of the group; ``tasks``: tasks of the topology, and the subscribed
    topics of any one consumer; ``partitions``: the topology's topic partitions, or the consumer
    metadata's partitions; ``owned_partitions``: owned partitions, over all members;
    ``reported_tasks``: tasks Streams members report (offset sums, v1-6 task lists), over all
    members; ``string_bytes``: UTF-8 bytes of any one id, name or rack; ``answer_bytes``: the
    answer's estimated size (the server's largest message).
    """

    members: int = 10_000
    tasks: int = 100_000
    partitions: int = 1_000_000
    owned_partitions: int = 1_000_000
    reported_tasks: int = 2_000_000
    string_bytes: int = 1_024
    answer_bytes: int = 64 * 1024 * 1024


DEFAULT_LIMITS = RequestLimits()

LIMIT_OPTIONS = {
    "members": "--max-members",
    "tasks": "--max-tasks",
    "partitions": "--max-partitions",
    "owned_partitions": "--max-owned-partitions",
    "reported_tasks": "--max-reported-tasks",
    "string_bytes": "--max-string-bytes",
    "answer_bytes": "--max-message-mb",
}
"""Each limit's ``kassign serve`` option, named in every refusal."""


class LimitExceeded(InvalidRequest):
    """A request past one of the server's limits: ``limit`` names it (``RequestLimits``),
    ``excess`` says what was past it; ``kassign assign`` words its own refusal from them."""

    def __init__(self, message: str, *, limit: str, field: str, member: str | None = None) -> None:
        super().__init__(
            f"{message}: over this server's limit ({LIMIT_OPTIONS[limit]})",
            field=field,
            member=member,
        )
        self.limit = limit
        self.excess = message


def check_count(
    count: int,
    limits: RequestLimits,
    limit: str,
    what: str,
    *,
    field: str,
    member: str | None = None,
) -> None:
    """``count`` of ``what`` must not pass ``limits``' ``limit``."""
    allowed: int = getattr(limits, limit)
    if count > allowed:
        raise LimitExceeded(
            f"{count:,} {what}, more than {allowed:,}", limit=limit, field=field, member=member
        )


def check_text(
    text: str | bytes, limits: RequestLimits, *, field: str, member: str | None = None
) -> None:
    """An id, name or rack must fit ``string_bytes`` UTF-8 bytes (its excerpt is not quoted:
    the field and member name it)."""
    if len(text) * (1 if isinstance(text, bytes) else 4) <= limits.string_bytes:
        return  # fits even at four bytes a character
    size = len(text) if isinstance(text, bytes) else len(text.encode("utf-8", "surrogatepass"))
    check_size(size, limits, field=field, member=member)


def check_size(size: int, limits: RequestLimits, *, field: str, member: str | None = None) -> None:
    """A string's ``size`` in UTF-8 bytes must fit ``string_bytes`` (``check_text``'s test,
    for strings measured elsewhere: the Streams topology's, by the compiled read)."""
    if size > limits.string_bytes:
        raise LimitExceeded(
            f"a string of {size:,} bytes, more than {limits.string_bytes:,}",
            limit="string_bytes",
            field=field,
            member=member,
        )


def varint_bytes(value: int) -> int:
    """Bytes of ``value`` as a protobuf varint (negative int32s take ten)."""
    if value < 0:
        return 10
    return max(1, (value.bit_length() + 6) // 7)


def entry_bytes(body: int) -> int:
    """Bytes of an embedded message of ``body`` bytes as an entry of a repeated field: its
    tag (fields 1-15: one byte), its length, its body."""
    return 1 + varint_bytes(body) + body
