"""Shadow mode's figures (issue 26): one answer measured, and two answers compared.

A plug-in in shadow mode gives its group Kafka's own assignor's answer and asks kassign for its
own off the rebalance's path; the service measures both the same way, with these types, so an
operator sees what kassign would have changed (docs/shadow.md). Each room measures an answer in
its own module (``streams/shadow.py``, ``consumer/shadow.py``), reusing the definitions its
report already counts with; what they share is here.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["Comparison", "Figures", "differing", "spread"]

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, slots=True, kw_only=True)
class Figures:
    """One answer's figures (the contract's ``ShadowFigures``; docs/shadow.md defines each).

    ``max_load`` is ``None`` where loads are unknown; ``standbys_moved`` and
    ``standbys_sharing_rack_or_tag`` are Streams' only (0 for a consumer group)."""

    cross_rack_partitions: int = 0
    moved: int = 0
    standbys_moved: int = 0
    max_per_member: int = 0
    min_per_member: int = 0
    max_load: float | None = None
    standbys_sharing_rack_or_tag: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """Kafka's answer against kassign's for one rebalance."""

    kafka_assignor: str
    kafka: Figures
    kassign: Figures
    same: bool
    differing_members: int


def spread(counts: Iterable[int]) -> tuple[int, int]:
    """The most and the least of ``counts`` (one per member), (0, 0) for a group of none."""
    listed = list(counts)
    return (max(listed), min(listed)) if listed else (0, 0)


def differing(one: Mapping[K, object], other: Mapping[K, object]) -> int:
    """How many members get something different in ``one`` and ``other``, two answers that
    each map every member of the group (a member given nothing too) to what it gets."""
    return sum(1 for m, got in one.items() if other.get(m) != got)
