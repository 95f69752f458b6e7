"""A reading's partition loads as a request's item loads: a consumer group's loads per topic, a
Streams task's as the sum over its source partitions. Pure: the reading comes in, loads and the
note an operator reads come out.

A partition the reading lacks (a new partition, a series the exporter has not sent yet) is
given the mean of the group's partitions the reading has: an average guess, where 1 (a count)
against rates in the hundreds would make it free to place and pile such partitions on one
member. The note says how many and what they were given. When the reading has none of the
group's partitions, or every one it has is 0 (no traffic to weigh), loads give way to counts
(every item 1) and the note says why.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from kassign.server.loads.prometheus import PartitionLoads

__all__ = ["Filled", "TaskSources", "count_note", "task_loads", "topic_loads"]

_K = TypeVar("_K", bound=Hashable)
_L = TypeVar("_L")

TaskSources = Mapping[_K, Sequence[tuple[str, int]]]
"""A Streams task's source partitions as (topic, partition), by task id."""


@dataclass(frozen=True, slots=True)
class Filled(Generic[_L]):
    """Loads for a request's items, or ``None`` when counts stand in; ``missing`` partitions
    were given ``stand_in`` (the mean of the known ones); ``note`` says so, or why counts stood in."""

    loads: _L | None
    missing: int = 0
    stand_in: float = 0.0
    note: str = ""


def count_note(source: str, why: str) -> str:
    """The note of a call balanced by count for want of loads (``source``: the flag's value)."""
    return f"load source {source}: {why}; balanced by count"


def topic_loads(
    source: str, topics: Mapping[str, int], reading: PartitionLoads
) -> Filled[dict[str, list[float]]]:
    """``{topic: [load of each partition]}`` for ``topics`` (name -> partition count) from
    ``reading``."""
    wanted = [(t, p) for t, n in topics.items() for p in range(n)]
    stand_in, missing, why = _stand_in(wanted, reading)
    if why:
        return Filled(None, missing, note=count_note(source, why))
    loads = {t: [reading.get((t, p), stand_in) for p in range(n)] for t, n in topics.items()}
    return Filled(loads, missing, stand_in, _missing_note(source, missing, len(wanted), stand_in))


def task_loads(
    source: str, tasks: TaskSources[_K], reading: PartitionLoads
) -> Filled[dict[_K, float]]:
    """``{task: load}``, each task's load the sum of its source partitions' (a partition
    listed twice counts once), missing partitions given the mean of the known ones. For the Streams room (issue 25): the decoder fills
    ``TaskInfo.load`` with these where a request with balance LOAD sent none."""
    sources = {task: sorted(set(partitions)) for task, partitions in tasks.items()}
    wanted = sorted({tp for partitions in sources.values() for tp in partitions})
    stand_in, missing, why = _stand_in(wanted, reading)
    if why:
        return Filled(None, missing, note=count_note(source, why))
    loads = {task: sum(reading.get(tp, stand_in) for tp in tps) for task, tps in sources.items()}
    return Filled(loads, missing, stand_in, _missing_note(source, missing, len(wanted), stand_in))


def _stand_in(wanted: Sequence[tuple[str, int]], reading: PartitionLoads) -> tuple[float, int, str]:
    """The mean of the wanted partitions the reading has, how many it lacks, and why counts
    must stand in instead (empty: they need not)."""
    known = [reading[tp] for tp in wanted if tp in reading]
    total = len(wanted)
    missing = total - len(known)
    if not known:
        return 0.0, missing, f"none of the group's {total} partitions in its answer"
    mean = sum(known) / len(known)
    if mean == 0:
        return 0.0, missing, "every partition of the group it knows has load 0"
    return mean, missing, ""


def _missing_note(source: str, missing: int, total: int, stand_in: float) -> str:
    if not missing:
        return ""
    return (
        f"load source {source}: {missing} of {total} partitions missing from its answer, each"
        f" given the mean of the others ({stand_in:.6g})"
    )
