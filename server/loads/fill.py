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

import numpy as np
from kassign.assignor.load.bound import FloatArray, IntArray
from kassign.server.loads.prometheus import PartitionLoads

__all__ = ["Filled", "TaskSources", "TopicIndex", "count_note", "task_loads", "topic_loads"]

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


@dataclass(frozen=True, slots=True)
class TopicIndex:
    """A reading by topic: each topic's partition numbers (sorted) and their loads, so a group's
    partitions are looked up a topic at a time (1,000,000 partitions one by one took 2.7 s).
    Built once per reading (``LoadSource`` keeps the last one's)."""

    topics: Mapping[str, tuple[IntArray, FloatArray]]

    @staticmethod
    def of(reading: PartitionLoads) -> TopicIndex:
        by_topic: dict[str, list[tuple[int, float]]] = {}
        for (topic, partition), load in reading.items():
            by_topic.setdefault(topic, []).append((partition, load))
        topics = {}
        for topic, entries in by_topic.items():
            entries.sort()
            numbers = np.fromiter((n for n, _ in entries), dtype=np.int64, count=len(entries))
            loads = np.fromiter((v for _, v in entries), dtype=np.float64, count=len(entries))
            topics[topic] = (numbers, loads)
        return TopicIndex(topics)

    def partitions(self, topic: str, count: int) -> FloatArray:
        """Partitions ``0..count-1`` of ``topic``'s loads, ``NaN`` where the reading has none."""
        out = np.full(count, np.nan)
        found = self.topics.get(topic)
        if found is None or not count:
            return out
        numbers, loads = found
        wanted = np.arange(count)
        at = np.searchsorted(numbers, wanted).clip(max=len(numbers) - 1)
        hit = numbers[at] == wanted
        out[hit] = loads[at[hit]]
        return out


def topic_loads(
    source: str, topics: Mapping[str, int], reading: TopicIndex
) -> Filled[dict[str, list[float]]]:
    """``{topic: [load of each partition]}`` for ``topics`` (name -> partition count) from
    ``reading``."""
    rows = {t: reading.partitions(t, n) for t, n in topics.items()}
    total = sum(topics.values())
    known = [row[~np.isnan(row)] for row in rows.values()]
    count = sum(len(k) for k in known)
    load = sum(float(k.sum()) for k in known)
    missing = total - count
    why = _why_counts(total, count, load)
    if why:
        return Filled(None, missing, note=count_note(source, why))
    stand_in = load / count
    loads = {t: np.where(np.isnan(row), stand_in, row).tolist() for t, row in rows.items()}
    return Filled(loads, missing, stand_in, _missing_note(source, missing, total, stand_in))


def task_loads(
    source: str, tasks: TaskSources[_K], reading: PartitionLoads
) -> Filled[dict[_K, float]]:
    """``{task: load}``, each task's load the sum of its source partitions' (a partition
    listed twice counts once), missing partitions given the mean of the known ones. For the
    Streams room (issue 25): its decoded tasks get these loads where a request with balance
    LOAD sent none (docs/load-aware.md)."""
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
    total = sum(known)
    why = _why_counts(len(wanted), len(known), total)
    return (total / len(known) if not why else 0.0), len(wanted) - len(known), why


def _why_counts(wanted: int, known: int, total: float) -> str:
    """Why counts must stand in for loads (empty: they need not)."""
    if not known:
        return f"none of the group's {wanted} partitions in its answer"
    if total == 0:
        return "every partition of the group it knows has load 0"
    return ""


def _missing_note(source: str, missing: int, total: int, stand_in: float) -> str:
    if not missing:
        return ""
    return (
        f"load source {source}: {missing} of {total} partitions missing from its answer, each"
        f" given the mean of the others ({stand_in:.6g})"
    )
