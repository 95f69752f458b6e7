"""The compact answer's members as protobuf wire bytes (issue 24: a wire that does not repeat itself).

A v1 answer lists each partition twice, as a ``TopicPartition`` carrying its topic's name and
again in Kafka's assignment bytes: 35 MB for a million partitions. With
``ConsumerAssignRequest.compact_answer`` a member's partitions are ``PartitionRuns``: per run
(one per topic) the topic's index in ``ConsumerAssignResponse.topics`` and a count, then all the
numbers, each as a packed varint (one or two bytes). The group's sorted lists go to the compiled
core as columns (per entry its topic's index and its number, per member its span), which cuts
them into runs, writes the varints and frames every member with its id
(``kassign_native.compact_members``, ``assignor/native/src/members_wire.rs``: a dozen Python
calls a member before, and the varints written with numpy for the group), so no step is taken
per partition or member in Python. Kafka's bytes come only when asked for
(``assignment_bytes``). The bytes are those ``SerializeToString`` writes for the same message
(fields in number order, empty ones left out; ``assigned`` always present), which a test checks.

    ConsumerMemberAssignment: 1 member_id, 4 assignment, 5 assigned, 6 revoked_runs
    PartitionRuns: 1 topics, 2 counts, 3 partitions (packed varints)
"""

from __future__ import annotations

from collections.abc import Sequence

import kassign_native
import numpy as np
from kassign.server.consumer.group_bytes import FlatPartitions

__all__ = ["compact_members_wire", "topic_table"]

Lists = tuple[bytes, bytes, bytes]
"""A group's lists as ``kassign_native.compact_members`` takes them: per entry its topic's
index in the answer's table and its partition, and per member ``[start, end)`` of its
entries; int64 bytes each."""


def topic_table(*flats: FlatPartitions) -> list[str]:
    """The names the runs of ``flats`` refer to, sorted: ``ConsumerAssignResponse.topics``."""
    return sorted(set().union(*(f.names for f in flats)))


def _lists(flat: FlatPartitions, table: Sequence[str]) -> Lists | None:
    """The lists of ``flat`` (sorted) over ``table``'s names, as columns for the compiled core,
    which cuts them into runs and writes their varints (``None`` when nothing is listed: a
    fresh group's revoked partitions)."""
    if not len(flat.numbers):
        return None
    index = {name: i for i, name in enumerate(table)}
    remap = np.fromiter((index[n] for n in flat.names), dtype=np.int64, count=len(flat.names))
    spans = np.column_stack((flat.starts, flat.ends)).astype(np.int64, copy=False)
    numbers = flat.numbers.astype(np.int64, copy=False)
    return remap[flat.topic_ids].tobytes(), numbers.tobytes(), spans.tobytes()


def compact_members_wire(
    member_ids: Sequence[str],
    partitions: FlatPartitions,
    revoked: FlatPartitions,
    assignments: Sequence[bytes] | None,
    table: Sequence[str],
) -> bytes:
    """``members`` of a compact ``ConsumerAssignResponse``, in the order given: member ``i``
    with list ``i`` of ``partitions`` and of ``revoked`` (sorted lists) as runs over
    ``table``, and ``assignments[i]`` when given; framed by the compiled core."""
    return kassign_native.compact_members(
        list(member_ids),
        _lists(partitions, table),
        _lists(revoked, table),
        None if assignments is None else list(assignments),
    )
