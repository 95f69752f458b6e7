"""A task table's partitions as columns, for passes that read every partition at once.

Why a module: ``task_table.py`` stores them; the rack-aware costs read them as numpy arrays
(``rack/cost_tables.py``), and the flags' meaning is shared by both and by ``rack/costs.py``.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

__all__ = ["CHANGELOG", "SOURCE", "PartitionColumns"]

SOURCE, CHANGELOG = 1, 2
"""A partition row's flags: read as a source, written as a changelog (both for a reused topic)."""


@dataclass(frozen=True, slots=True)
class PartitionColumns:
    """Every task's partitions as columns, the table's own arrays (no copy): task ``i``'s rows
    are ``starts[i]`` to ``starts[i + 1]``; per row its topic (index into ``topic_names``),
    number, flags (``SOURCE | CHANGELOG``) and replica racks (index into ``rack_sets``).

    Why: a per-task pass that needs only flags and racks (the rack-aware costs) reads these
    as arrays instead of building a ``TaskInfo`` per task.
    """

    starts: array[int]
    topics: array[int]
    numbers: array[int]
    flags: bytes
    racks: array[int]
    topic_names: tuple[str, ...]
    rack_sets: tuple[frozenset[str], ...]
