"""A builder's answer and the group's result as columns, objects made only when read (issue 24).

At 800 members a fresh sticky call made a ``PartitionList`` per member in the builder, joined
them again into one column for the result and made a ``MemberAssignment`` per member, none of
which the service's encoder reads (it writes the answer from the column). Both are kept here as
the column itself: ``BuiltLists`` is the builder's answer (a ``Mapping`` as before, a member's
list made when looked up), ``AssignedMembers`` the result's members (a ``Sequence`` of
``MemberAssignment``s, each made when first read), equal to the tuples they stand for.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np
from kassign.assignor.consumer.columns import AssignedColumns, Ids, PartitionList, PartitionSpace
from kassign.assignor.consumer.model import TopicPartition

__all__ = ["AssignedMembers", "BuiltLists", "MemberAssignment"]


@dataclass(frozen=True, slots=True)
class MemberAssignment:
    """One member's partitions, and (``cooperative-sticky``) the owned ones it must give up.

    ``revoked``: partitions the member reported owning that go to another member; under the
    cooperative protocol the new owner gets them only in the follow-up rebalance.
    """

    member_id: str
    partitions: Sequence[TopicPartition]  # a tuple, or ids (``PartitionList``)
    revoked: tuple[TopicPartition, ...] = ()


class BuiltLists(Mapping[str, PartitionList]):
    """A builder's answer: member ``members[i]``'s partitions are ``ids[bounds[i]:bounds[i +
    1]]``, ascending; a member's ``PartitionList`` is made when looked up."""

    __slots__ = ("_place", "bounds", "ids", "members", "space")

    def __init__(self, space: PartitionSpace, members: list[str], ids: Ids, bounds: Ids) -> None:
        self.space, self.members, self.ids, self.bounds = space, members, ids, bounds
        self._place = dict(zip(members, range(len(members))))

    def __getitem__(self, member: str) -> PartitionList:
        i = self._place[member]
        return PartitionList(self.space, self.ids[self.bounds[i] : self.bounds[i + 1]])

    def __iter__(self) -> Iterator[str]:
        return iter(self.members)

    def __len__(self) -> int:
        return len(self.members)

    def columns(self, order: Sequence[str]) -> AssignedColumns:
        """The lists of the members ``order`` names, in that order, as one column (a member
        missing here has none): the spans reordered in one gather, no step per member."""
        at = np.fromiter(map(self._place.get, order, [-1] * len(order)), np.int64, len(order))
        starts, sizes = self.bounds[:-1], np.diff(self.bounds)
        start = np.where(at >= 0, starts[at], 0)
        size = np.where(at >= 0, sizes[at], 0)
        ends = np.cumsum(size)
        gather = np.arange(int(ends[-1]) if len(ends) else 0, dtype=np.int64)
        gather += np.repeat(start - (ends - size), size)
        return AssignedColumns(self.space, self.ids[gather], ends)


class AssignedMembers(Sequence[MemberAssignment]):
    """The result's members: member ``ids[i]`` has ``columns``' list ``i`` and ``gone``'s
    revoked partitions (none when absent); each ``MemberAssignment`` made when first read."""

    __slots__ = ("_made", "columns", "gone", "ids")

    def __init__(
        self,
        ids: list[str],
        columns: AssignedColumns,
        gone: Mapping[str, tuple[TopicPartition, ...]],
    ) -> None:
        self.ids, self.columns, self.gone = ids, columns, gone
        self._made: list[MemberAssignment | None] = [None] * len(ids)

    def _member(self, i: int) -> MemberAssignment:
        made = self._made[i]
        if made is None:
            who = self.ids[i]
            listed = PartitionList(self.columns.space, self.columns.member(i))
            made = self._made[i] = MemberAssignment(who, listed, self.gone.get(who, ()))
        return made

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, index: int) -> MemberAssignment: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[MemberAssignment, ...]: ...

    def __getitem__(self, index: int | slice) -> MemberAssignment | tuple[MemberAssignment, ...]:
        if isinstance(index, slice):
            return tuple(map(self._member, range(len(self.ids))[index]))
        return self._member(range(len(self.ids))[index])

    def __iter__(self) -> Iterator[MemberAssignment]:
        return map(self._member, range(len(self.ids)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))

    def revoked_lists(self) -> list[tuple[TopicPartition, ...]]:
        """Each member's revoked partitions, or ``[]`` when no member revokes any."""
        return [self.gone.get(who, ()) for who in self.ids] if any(self.gone.values()) else []
