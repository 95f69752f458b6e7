"""Total orders that match Kafka's, so our deterministic choices fall where Kafka's do.

Kafka sorts process ids with Java's ``UUID.compareTo``: the most-significant long first, then the
least-significant one, each compared as a *signed* 64-bit number. Python's ``uuid.UUID`` compares
the 128-bit value unsigned, which differs whenever a half has its top bit set.
"""

from __future__ import annotations

from collections.abc import Iterable
from uuid import UUID

__all__ = ["process_key", "sorted_processes"]

_FLIP = (1 << 127) | (1 << 63)
"""Each 64-bit half's sign bit: flipped, unsigned order of a half is its signed order."""


def process_key(process_id: UUID) -> int:
    """Sort key of a process id in Java ``UUID.compareTo`` order (signed halves): the 128-bit
    value with both halves' sign bits flipped, one int (a tuple of two cost a third of
    sorting 5,000 clients; issue 24)."""
    return process_id.int ^ _FLIP


def sorted_processes(process_ids: Iterable[UUID]) -> list[UUID]:
    """Process ids in Kafka's order."""
    return sorted(process_ids, key=process_key)
