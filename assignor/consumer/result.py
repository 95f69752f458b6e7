"""The consumer assignors' output: each member's partitions, and a report of what happened.

Output only, frozen, built once by ``group_assignment`` from an assignor's scratch state.
Members are listed in member-id order (Java ``String`` order), partitions sorted.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np
from kassign.assignor.claims import any_claimed
from kassign.assignor.consumer.assigned import AssignedMembers, BuiltLists, MemberAssignment
from kassign.assignor.consumer.columns import (
    AssignedColumns,
    Ids,
    PartitionList,
    PartitionSpace,
)
from kassign.assignor.consumer.java_order import java_sorted
from kassign.assignor.consumer.model import (
    ConsumerGroup,
    Member,
    TopicPartition,
    claims_on,
)
from kassign.assignor.consumer.rack_counts import (
    as_sequence,
    cross_rack_claims,
    cross_rack_ids,
    local_count,
)
from kassign.assignor.load.figures import LoadFigures

__all__ = [
    "AssignmentReport",
    "GroupAssignment",
    "MemberAssignment",
    "RackReason",
    "RackStatus",
    "group_assignment",
    "one_space",
]

_TOPIC, _PARTITION = operator.itemgetter(0), operator.itemgetter(1)
_MEMBER_ID = operator.attrgetter("member_id")
_NO_IDS: Ids = np.zeros(0, dtype=np.int64)


class RackReason(enum.Enum):
    """Why rack-aware assignment (KIP-881) was on or off; the value reads as a sentence.

    Off reasons are listed from "nothing to match" to "nothing to gain", the order in which
    ``range`` (which decides per topic) reports the most telling one.
    """

    NOT_RACK_AWARE = "the assignor does not use racks"
    NO_MEMBER_RACK = "no member has a rack"
    NO_SHARED_RACK = "no member's rack holds a replica"
    EVERY_RACK_HAS_EVERY_PARTITION = "every partition has a replica in every rack"
    SOME_RACK_LACKS_A_PARTITION = "some partition has no replica in some rack"

    @property
    def enables(self) -> bool:
        return self is RackReason.SOME_RACK_LACKS_A_PARTITION


class RackStatus(enum.Enum):
    """What kassign's own assignor's solver did (``rack-optimal``); Kafka's four have none."""

    OFF = "not kassign's optimiser"
    OPTIMAL = "the solver's optimum was applied"
    FALLBACK = "the solver failed or ran out of time: a valid balanced assignment stands"


@dataclass(frozen=True, slots=True, kw_only=True)
class AssignmentReport:
    """What the assignment did, for logs and metrics; never needed to apply it.

    - ``moved_partitions``: partitions some member claimed that now go to a member that did not
      claim them (claims as the assignor reads them: ``sticky`` from its user data, the others
      from the subscription's owned partitions); withheld ones included;
    - ``cross_rack_partitions``: assigned partitions whose member has a rack that holds none of
      their replicas; ``cross_rack_partitions_before`` the same count over the claims (claims
      on partitions missing from the metadata count for nothing);
    - ``withheld_partitions``: (``cooperative-sticky``) partitions changing owner that nobody
      gets this round, so their old owner can revoke them first;
    - ``rack_status``, ``solver_reason``: (``rack-optimal``) whether its solver's optimum was
      applied, and if not why. ``rack_aware``/``rack_reason`` are then the mode Kafka's sticky
      assignors would have chosen on the group;
    - ``load``: (``balance=LOAD``, issue 25) the bound, the peak and the mean load per unit of
      capacity; ``notes``: what the caller may not expect (a load-aware answer past its time
      budget, given by count).
    """

    rack_aware: bool
    rack_reason: RackReason
    moved_partitions: int
    cross_rack_partitions: int
    withheld_partitions: int = 0
    rack_status: RackStatus = RackStatus.OFF
    solver_reason: str = ""
    cross_rack_partitions_before: int = 0
    load: LoadFigures | None = None
    notes: tuple[str, ...] = ()

    @property
    def solver_fallback(self) -> bool:
        return self.rack_status is RackStatus.FALLBACK


@dataclass(frozen=True, slots=True)
class GroupAssignment:
    """The group's assignment: every member, in member-id order, and the report.

    ``members``: a tuple, or (an assignor that worked on ids) ``AssignedMembers``, each made
    when read; ``columns``: the members' partitions as ids then (the service's encoder reads
    them instead of the objects)."""

    assignor: str
    members: Sequence[MemberAssignment]
    report: AssignmentReport
    columns: AssignedColumns | None = field(default=None, compare=False, repr=False)

    def partitions(self) -> dict[str, Sequence[TopicPartition]]:
        """Member id -> its partitions."""
        return {m.member_id: m.partitions for m in self.members}

    def member_ids(self) -> list[str]:
        """The members' ids, in order (from the column when there is one: no object made)."""
        if isinstance(self.members, AssignedMembers):
            return self.members.ids
        return [m.member_id for m in self.members]

    def revoked_lists(self) -> list[tuple[TopicPartition, ...]]:
        """Each member's revoked partitions, in order, or ``[]`` when no member revokes any."""
        if isinstance(self.members, AssignedMembers):
            return self.members.revoked_lists()
        lists = [m.revoked for m in self.members]
        return lists if any(lists) else []

    def with_load(self, figures: LoadFigures, *notes: str) -> GroupAssignment:
        """The same assignment, its report carrying a load-balanced answer's figures (and
        ``notes``)."""
        report = replace(self.report, load=figures, notes=(*self.report.notes, *notes))
        return replace(self, report=report)


def group_assignment(
    assignor: str,
    group: ConsumerGroup,
    target: Mapping[str, Collection[TopicPartition]],
    *,
    claims: Mapping[str, Collection[TopicPartition]],
    rack_reason: RackReason,
    withheld: Collection[TopicPartition] = (),
    revoked: Mapping[str, Collection[TopicPartition]] | None = None,
    rack_status: RackStatus = RackStatus.OFF,
    solver_reason: str = "",
    cross_rack: int | None = None,
) -> GroupAssignment:
    """Freeze an assignor's answer and count what it did.

    ``target`` is every member's partitions before any are withheld; ``withheld`` the
    partitions taken back from their new owners and ``revoked`` each member's owned partitions
    going elsewhere (cooperative only); ``claims`` the previous ownership the assignor read.
    Members missing from ``target`` get nothing. ``cross_rack``: the assigned partitions
    read across racks, if the assignor counted them (``roundrobin`` does, from its arrays of
    takers, cheaper than a look-up per partition here); withheld ones must not count.
    """
    kept_back = frozenset(withheld)
    revoked = revoked or {}
    topics = group.topics
    seen: dict[object, bool] = {}  # per topic tuple, for the members' claims (``of_topics``)
    claimed = any_claimed(claims.values())
    if claimed:  # none claimed (a fresh group): the claims as they are, nothing to filter
        claims = {m: claims_on(tps, topics, seen) for m, tps in claims.items()}
    space = one_space(target)
    listed = (
        _of_ids(group, space, target, claims, claimed, kept_back, revoked, cross_rack)  # type: ignore[arg-type]
        if space is not None
        else _of_objects(group, target, claims, kept_back, revoked, cross_rack)
    )
    report = AssignmentReport(
        rack_aware=rack_reason.enables,
        rack_reason=rack_reason,
        moved_partitions=listed.moved,
        cross_rack_partitions=listed.across,
        withheld_partitions=len(kept_back),
        rack_status=rack_status,
        solver_reason=solver_reason,
        cross_rack_partitions_before=cross_rack_claims(group, claims, space) if claimed else 0,
    )
    return GroupAssignment(assignor, listed.members, report, listed.columns)


class _Listed(NamedTuple):
    """The members' frozen lists (and their ids, when the assignor gave ids), and the two
    figures counted on them."""

    members: Sequence[MemberAssignment]
    columns: AssignedColumns | None
    moved: int
    across: int


def _of_objects(
    group: ConsumerGroup,
    target: Mapping[str, Collection[TopicPartition]],
    claims: Mapping[str, Collection[TopicPartition]],
    kept_back: frozenset[TopicPartition],
    revoked: Mapping[str, Collection[TopicPartition]],
    cross_rack: int | None,
) -> _Listed:
    """Each list sorted, withheld partitions dropped, counted on the objects."""
    assignments = []
    across = 0
    for member in java_sorted(group.members, _MEMBER_ID):
        mine = target.get(member.member_id, ())
        mine = sorted(tp for tp in mine if tp not in kept_back) if kept_back else sorted(mine)
        if member.rack is not None and cross_rack is None:
            across += len(mine) - local_count(mine, member.rack, group.topics)
        gone = tuple(sorted(revoked.get(member.member_id, ())))
        assignments.append(MemberAssignment(member.member_id, tuple(mine), gone))
    counted = across if cross_rack is None else cross_rack
    return _Listed(tuple(assignments), None, _moved(claims, target), counted)


def one_space(target: Mapping[str, Collection[TopicPartition]]) -> PartitionSpace | None:
    """The ``PartitionSpace`` of ``target``'s lists when every one is a ``PartitionList`` of
    it (an assignor that worked on ids), else ``None``."""
    if isinstance(target, BuiltLists):
        return target.space
    spaces = {id(v.space): v.space for v in target.values() if isinstance(v, PartitionList)}
    if len(spaces) != 1 or not all(isinstance(v, PartitionList) for v in target.values()):
        return None
    return next(iter(spaces.values()))


def _of_ids(
    group: ConsumerGroup,
    space: PartitionSpace,
    target: Mapping[str, PartitionList],
    claims: Mapping[str, Collection[TopicPartition]],
    claimed: bool,
    kept_back: frozenset[TopicPartition],
    revoked: Mapping[str, Collection[TopicPartition]],
    cross_rack: int | None,
) -> _Listed:
    """``_of_objects`` over ids: each list sorted and counted as numbers, the
    ``TopicPartition``s left unmade (``PartitionList``), the same lists and figures."""
    ordered = java_sorted(group.members, _MEMBER_ID)
    ids = list(map(_MEMBER_ID, ordered))
    if isinstance(target, BuiltLists) and not kept_back:  # each list ascending: one gather
        columns, given = target.columns(ids), None
    else:
        given = [target.get(m) for m in ids]
        columns = _sorted_columns(space, given, kept_back)[0]
    gone = (  # most members: none (a fresh group's share one empty tuple: asked once)
        {m: _sorted(tps) for m, tps in revoked.items() if tps}
        if any_claimed(revoked.values())
        else {}
    )
    members = AssignedMembers(ids, columns, gone)
    across = cross_rack if cross_rack is not None else cross_rack_ids(group, ordered, columns)
    if claimed:  # the lists as given: the answer's column unless some withheld
        full = columns if given is None or not kept_back else _given_columns(space, given)
        moved = _moved_ids(space, ordered, full, claims)
    else:
        moved = 0
    return _Listed(members, columns, moved, across)


def _sorted(partitions: Collection[TopicPartition] | None) -> tuple[TopicPartition, ...]:
    return tuple(sorted(partitions)) if partitions else ()


def _sorted_columns(
    space: PartitionSpace,
    lists: Sequence[PartitionList | None],
    kept_back: frozenset[TopicPartition],
) -> tuple[AssignedColumns, bool]:
    """The lists (``None``: nothing) sorted, withheld partitions dropped, as one column: one
    sort of (list, id) keys for the whole group, not a sort per member (issue 24); and
    whether it is the lists end to end as given (each sorted, none withheld)."""
    arrays = _given_ids(lists)
    sizes = np.fromiter(map(len, arrays), dtype=np.int64, count=len(arrays))
    every = np.concatenate([_NO_IDS, *arrays])
    given_ends = np.cumsum(sizes)
    if not kept_back and _each_ascending(every, given_ends):
        return AssignedColumns(space, every, given_ends), True
    owner = np.repeat(np.arange(len(arrays), dtype=np.int64), sizes)
    if kept_back and len(every):
        kept = ~np.isin(every, space.ids(sorted(kept_back)))
        every, owner = every[kept], owner[kept]
    span = max(space.total, 1)  # ids are below it
    keys = owner * span + every
    if len(keys) > 1 and not np.all(keys[1:] >= keys[:-1]):  # lists mostly come sorted
        keys.sort()
    ends = np.searchsorted(keys, np.arange(1, len(arrays) + 1, dtype=np.int64) * span)
    ids: Ids = keys % span
    return AssignedColumns(space, ids, ends.astype(np.int64)), False


def _each_ascending(ids: Ids, ends: Ids) -> bool:
    """Whether each list (``ids`` up to each of ``ends``) ascends."""
    if len(ids) < 2:
        return True
    rising = ids[1:] > ids[:-1]
    inner = ends[(ends > 0) & (ends < len(ids))]
    rising[inner - 1] = True  # a list's first id may be below the one before it
    return bool(rising.all())


def _given_columns(space: PartitionSpace, lists: Sequence[PartitionList | None]) -> AssignedColumns:
    return AssignedColumns.of(space, _given_ids(lists))


def _given_ids(lists: Sequence[PartitionList | None]) -> list[Ids]:
    return [_NO_IDS if ids is None else ids.ids for ids in lists]


def _moved_ids(
    space: PartitionSpace,
    ordered: list[Member],
    target: AssignedColumns,
    claims: Mapping[str, Collection[TopicPartition]],
) -> int:
    """``_moved`` over ids: claimed partitions assigned at all, less those assigned to one of
    their claimants (claims outside the space are never assigned); ``target``: every member's
    list, members ``ordered`` (the answer's column: no step per member to join them)."""
    place = {m.member_id: i for i, m in enumerate(ordered)}
    owner = np.full(space.total, -1, dtype=np.int64)
    owner[target.ids] = target.owner()
    listed = list(map(as_sequence, claims.values()))
    ids, sizes = space.claimed_column(listed)
    if not len(ids):
        return 0
    by = np.repeat([place.get(m, -2) for m in claims], sizes)
    got = owner[ids]
    return _distinct(space, ids[got >= 0]) - _distinct(space, ids[got == by])


def _distinct(space: PartitionSpace, ids: Ids) -> int:
    """How many distinct ids (marked in a table of the space: no sort, no hash)."""
    seen = np.zeros(space.total, dtype=bool)
    seen[ids] = True
    return int(np.count_nonzero(seen))


def _moved(
    claims: Mapping[str, Collection[TopicPartition]],
    target: Mapping[str, Collection[TopicPartition]],
) -> int:
    """Claimed partitions that go to a member that did not claim them: the claimed ones
    assigned at all, less those assigned to one of their claimants (none without claims).
    Set operations per member, not a step per partition: a member's partitions go to it alone,
    so a partition kept by its claimant is counted once, by that claimant."""
    if not any(claims.values()):
        return 0
    mine = {m: set(tps) for m, tps in target.items()}
    assigned: set[TopicPartition] = set().union(*mine.values())
    claimed: set[TopicPartition] = set().union(*claims.values())
    kept = sum(len(mine[m].intersection(tps)) for m, tps in claims.items() if m in mine)
    return len(claimed & assigned) - kept
