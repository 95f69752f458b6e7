"""A group's compact claims as the reader's columns, kept whole for one call.

Eager ``sticky`` reads every member's userData in one compiled call, which hands back the
group's entries as columns (``kassign.kafka.runs.EntryColumns``). The claims check and the
partition space's column of ids both need each claimed number's topic; taken here from those
columns once (issue 24: each had made its own pass over the members' arrays, rejoining them
and their topic tuples, about 2 ms each at 1,000 members with racks).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from kassign.assignor.claims import OwnedPartitions, per_number
from kassign.kafka.runs import EntryColumns

__all__ = ["GroupClaims"]


@dataclass(frozen=True, slots=True, eq=False)
class GroupClaims:
    """Every member's claims end to end: member ``i``'s are ``claims[i]``, its numbers the next
    ``sizes[i]`` of ``numbers``, each of topic ``names[topic[k]]`` (arrays read-only)."""

    claims: tuple[OwnedPartitions, ...]
    names: tuple[str, ...]
    topic: npt.NDArray[np.int64]
    numbers: npt.NDArray[np.intc]
    sizes: list[int]

    @staticmethod
    def of(claims: Sequence[OwnedPartitions], read: EntryColumns) -> GroupClaims:
        """``claims`` as made from ``read``, one per member (a member ``read`` gave no entries
        may hold any empty claims object)."""
        counts = np.frombuffer(read.counts_raw, dtype=np.int64)
        numbers = np.frombuffer(read.numbers_raw, dtype=np.intc)
        topic = per_number(np.frombuffer(read.topic_raw, dtype=np.int64), counts, len(numbers))
        sizes = np.diff(np.frombuffer(read.number_ends, dtype=np.int64), prepend=0).tolist()
        return GroupClaims(tuple(claims), tuple(read.names), topic, numbers, sizes)

    def holds(self, claims: Sequence[object]) -> bool:
        """Whether ``claims`` are these, the same objects in the same order."""
        return len(claims) == len(self.claims) and all(map(operator.is_, claims, self.claims))
