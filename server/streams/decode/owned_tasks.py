"""The tasks a group's owned partitions feed, every member's at once (issue 24).

Kafka maps each owned partition to the task it is a source of (``taskForPartition``); a
partition no task reads is ignored, with a note. Looked up a topic run at a time, a member
owning five partitions took about 14 us, a quarter of a 10,000-task, 2,000-member decode
with history; here every claim's partitions are one int64 column (topic number and
partition), found in the topology's sorted source partitions by one binary search each, and
only each member's tasks become a ``frozenset``. The first few partitions no task reads are
named by walking that member's claim (rare: a note's words).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain, islice, repeat
from typing import Any

import numpy as np
from kassign.assignor.claims import OwnedPartitions, claim_columns
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.model import TaskId
from kassign.server.streams.decode.topology import Topology, at_rows

__all__ = ["OwnedTasks", "owned_tasks", "stray_names"]

OwnedTasks = tuple[frozenset[TaskId], int]
"""A member's owned tasks and how many of its owned partitions feed none."""

_NONE: OwnedTasks = (frozenset(), 0)
_CHUNK = 1 << 16
"""Owned partitions searched at a time: a member may claim millions (issue 16)."""


def _sources(
    topology: Topology,
) -> tuple[dict[str, int], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The source topics' numbers, and every source partition as ``topic << 32 | partition``
    sorted, with its task's row."""
    numbers = {topic: i for i, (topic, _, _) in enumerate(topology.source_rows)}
    keys = [
        (np.int64(i) << 32) | np.asarray(by_number, dtype=np.int64)
        for i, (_, by_number, _) in enumerate(topology.source_rows)
    ]
    rows = [np.frombuffer(r, dtype=np.int64) for _, _, r in topology.source_rows]
    flat = np.concatenate([np.zeros(0, np.int64), *keys])
    order = np.argsort(flat, kind="stable")
    return numbers, flat[order], np.concatenate([np.zeros(0, np.int64), *rows])[order]


def owned_tasks(claims: Sequence[OwnedPartitions], topology: Topology) -> list[OwnedTasks]:
    """Each claim's tasks and its partitions no task reads, in claim order."""
    held = [i for i, c in enumerate(claims) if len(c.numbers)]
    out = [_NONE] * len(claims)
    if not held:
        return out
    owning = [claims[i] for i in held]
    topic_numbers, keys, rows = _sources(topology)
    counts, numbers = claim_columns(owning)
    topics = chain.from_iterable([c.topics for c in owning])
    entry_topic = np.array(list(map(topic_numbers.get, topics, repeat(-1))), dtype=np.int64)
    sizes = np.array([len(c.numbers) for c in owning], dtype=np.int64)
    # a topic the topology lacks (-1) gives a negative key: found nowhere
    wanted = np.repeat(entry_topic << 32, counts)
    wanted |= numbers
    del numbers  # the column's copies one at a time: 8 bytes a partition at most
    found = np.zeros(len(wanted), dtype=np.bool_)
    taken: list[int] = []
    for at in range(0, len(wanted) if len(keys) else 0, _CHUNK):  # a searched chunk's temporaries
        checkpoint()
        part = wanted[at : at + _CHUNK]
        where = np.searchsorted(keys, part)
        hit = keys.take(where, mode="clip") == part
        found[at : at + _CHUNK] = hit
        taken += rows.take(where[hit]).tolist()
    del wanted
    starts = np.cumsum(sizes) - sizes
    kept = np.add.reduceat(found, starts, dtype=np.int64)
    tasks = at_rows(topology.tasks.ids, taken)
    strays = (sizes - kept).tolist()
    start = 0
    for k, end in enumerate(np.cumsum(kept).tolist()):
        out[held[k]] = (frozenset(tasks[start:end]), strays[k])
        start = end
    return out


def stray_names(
    owned: OwnedPartitions, sources: Mapping[str, Mapping[int, TaskId]], listed: int
) -> list[str]:
    """The first ``listed`` owned partitions no task reads, in claim order, as a note
    names them; ``sources``: ``Topology.source_topics``."""
    named = list[str]()
    for topic, numbers in owned.runs:
        by_number = sources.get(topic, {})
        missing = (p for p in numbers if p not in by_number)
        named += [f"{topic}-{p}" for p in islice(missing, max(listed - len(named), 0))]
    return named
