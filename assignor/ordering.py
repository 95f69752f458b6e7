"""Total orders that match Kafka's, so our deterministic choices fall where Kafka's do.

Kafka sorts process ids with Java's ``UUID.compareTo``: the most-significant long first, then the
least-significant one, each compared as a *signed* 64-bit number. Python's ``uuid.UUID`` compares
the 128-bit value unsigned, which differs whenever a half has its top bit set.
"""

from __future__ import annotations

from collections.abc import Iterable
from uuid import UUID

__all__ = ["process_key", "sorted_processes"]

_HALF = 1 << 64
_SIGN = 1 << 63


def process_key(process_id: UUID) -> tuple[int, int]:
    """Sort key of a process id in Java ``UUID.compareTo`` order (signed halves)."""
    hi, lo = process_id.int >> 64, process_id.int & (_HALF - 1)
    return (hi - _HALF if hi >= _SIGN else hi, lo - _HALF if lo >= _SIGN else lo)


def sorted_processes(process_ids: Iterable[UUID]) -> list[UUID]:
    """Process ids in Kafka's order."""
    return sorted(process_ids, key=process_key)
