"""The server's load source (``kassign serve --load-source``): what its flags say, and the source
each worker process builds from them (its own reader and cache: workers are forked before any
exists), which turns a reading into a request's loads and tells an observer how it went.

Outcomes, one per reading a call asks for (``kassign_load_source_reads_total{outcome}``):
``ok`` a fresh answer with every partition the call wanted, ``cached`` the same from the cache,
``missing`` an answer lacking some of them (given a stand-in, ``fill``), ``failed`` no answer
(down, slow, an error; counts stand in). A call never fails for its source.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Protocol, TypeVar

from kassign.server.loads import fill
from kassign.server.loads.prometheus import (
    DEFAULT_QUERY,
    LoadReading,
    PartitionLoads,
    PrometheusLoads,
    parse_source,
)

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "DEFAULT_TTL_S",
    "KIND",
    "OUTCOMES",
    "LoadSource",
    "LoadSourceConfig",
    "LoadSourceObserver",
    "Reader",
]

KIND = "prometheus"
"""``LoadFigures.source`` of loads read from the server's source."""
OUTCOMES = ("ok", "cached", "missing", "failed")
DEFAULT_TIMEOUT_S = 0.5
DEFAULT_TTL_S = 30.0

_K = TypeVar("_K", bound=Hashable)
_L = TypeVar("_L")


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadSourceConfig:
    """``--load-source``, ``--load-query``, ``--load-timeout-s``, ``--load-ttl-s``; checked
    when made (``ValueError`` naming the flag), so a bad one stops start-up."""

    source: str
    query: str = DEFAULT_QUERY
    timeout_s: float = DEFAULT_TIMEOUT_S
    ttl_s: float = DEFAULT_TTL_S

    def __post_init__(self) -> None:
        parse_source(self.source)
        if not self.query.strip():
            raise ValueError("--load-query is empty")
        if not (math.isfinite(self.timeout_s) and self.timeout_s > 0):
            raise ValueError(f"--load-timeout-s {self.timeout_s}: must be positive")
        if not (math.isfinite(self.ttl_s) and self.ttl_s >= 0):
            raise ValueError(f"--load-ttl-s {self.ttl_s}: must be 0 or more")


class LoadSourceObserver(Protocol):
    """Hears each reading's outcome (one of ``OUTCOMES``) and the partitions it lacked."""

    def on_read(self, outcome: str, missing: int) -> None: ...


class Reader(Protocol):
    """What ``LoadSource`` reads (``PrometheusLoads``)."""

    def fetch(self, timeout_s: float | None = None) -> LoadReading: ...


class _Unobserved:
    def on_read(self, outcome: str, missing: int) -> None:
        pass


class LoadSource:
    """One process's source: a ``PrometheusLoads`` (thread-safe, cached for the TTL) and its
    observer. ``reader`` replaces the one ``config`` would make (tests)."""

    def __init__(
        self,
        config: LoadSourceConfig,
        observer: LoadSourceObserver | None = None,
        *,
        reader: Reader | None = None,
    ) -> None:
        self.name = config.source
        self._last_index: tuple[PartitionLoads, fill.TopicIndex] | None = None
        self._observer = observer or _Unobserved()
        self._reader: Reader = reader or PrometheusLoads(
            parse_source(config.source),
            config.query,
            timeout_s=config.timeout_s,
            ttl_s=config.ttl_s,
        )

    def topic_loads(
        self, topics: Mapping[str, int], timeout_s: float | None
    ) -> fill.Filled[dict[str, list[float]]]:
        """A consumer group's loads per topic (``fill.topic_loads``), read within ``timeout_s``
        (the call's time left) and the source's own timeout."""
        return self._read(
            timeout_s, lambda loads: fill.topic_loads(self.name, topics, self._index(loads))
        )

    def task_loads(
        self, tasks: fill.TaskSources[_K], timeout_s: float | None
    ) -> fill.Filled[dict[_K, float]]:
        """A Streams topology's task loads (``fill.task_loads``), read as ``topic_loads``."""
        return self._read(timeout_s, lambda loads: fill.task_loads(self.name, tasks, loads))

    def _index(self, loads: PartitionLoads) -> fill.TopicIndex:
        """The reading by topic, built once per reading (a race builds it twice: harmless)."""
        last = self._last_index
        if last is not None and last[0] is loads:
            return last[1]
        index = fill.TopicIndex.of(loads)
        self._last_index = (loads, index)
        return index

    def _read(
        self, timeout_s: float | None, fill_in: Callable[[PartitionLoads], fill.Filled[_L]]
    ) -> fill.Filled[_L]:
        reading: LoadReading = self._reader.fetch(timeout_s)
        if reading.error:
            self._observer.on_read("failed", 0)
            return fill.Filled(None, note=fill.count_note(self.name, reading.error))
        filled = fill_in(reading.loads)
        outcome = "missing" if filled.missing else "cached" if reading.cached else "ok"
        self._observer.on_read(outcome, filled.missing)
        return filled
