"""Metrics of the serving processes, exposed by the parent of ``kassign serve --workers N``.

The workers write their call metrics to prometheus_client's multiprocess files, which the parent
sums (``MultiProcessCollector``); that mode has no ``process_*`` metrics, and the worker pool's
state lives in the parent alone. ``PoolCollector`` adds both at scrape time, read from the
supervisor (nothing is stored, so nothing goes stale):

- ``process_cpu_seconds_total``, ``process_resident_memory_bytes``, ``process_virtual_memory_bytes``,
  ``process_start_time_seconds``, ``process_open_fds``, ``process_max_fds``: prometheus_client's
  ``ProcessCollector`` for the parent and for each live worker, labelled ``process="parent"`` or
  ``process="worker-<slot>"`` (``sum`` over them is the service's);
- ``kassign_build_info{version, python_version}`` 1;
- ``kassign_workers_configured``, ``kassign_workers_live``, ``kassign_workers_lost`` (slots given up
  for good), ``kassign_worker_restarts_total`` (workers forked to replace one that exited),
  ``kassign_workers_hung_total`` (workers killed for answering no probe of their own, then
  replaced: ``kassign.server.runtime.heartbeat``).
"""

from __future__ import annotations

import os
import platform
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Protocol

from prometheus_client import ProcessCollector
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

__all__ = ["PARENT", "PoolCollector", "WorkerPool"]

PARENT = "parent"
"""``process`` label of the parent's own process metrics."""


class WorkerPool(Protocol):
    """What the collector reads (``kassign.server.runtime.supervisor.Supervisor`` has it)."""

    configured: int
    restarts: int
    hung: int
    lost: list[int]

    def live(self) -> Mapping[int, int]:
        """Live workers' pids by slot index."""
        ...


def _constant(pid: int) -> Callable[[], int]:
    return lambda: pid


def _process_families(processes: Sequence[tuple[str, int]]) -> Iterator[Metric]:
    """Each ``ProcessCollector`` family once, with one sample per process labelled by name."""
    merged: dict[str, Metric] = {}
    for name, pid in processes:
        for family in ProcessCollector(pid=_constant(pid), registry=None).collect():
            if family.name not in merged:
                kind = CounterMetricFamily if family.type == "counter" else GaugeMetricFamily
                merged[family.name] = kind(family.name, family.documentation, labels=["process"])
            merged[family.name].add_metric([name], family.samples[0].value)  # type: ignore[attr-defined]
    yield from merged.values()


class PoolCollector(Collector):
    """The parent's collector: process metrics, build info and the worker pool, at scrape time."""

    def __init__(self, pool: WorkerPool, *, version: str) -> None:
        self._pool = pool
        self._version = version

    def collect(self) -> Iterator[Metric]:
        pool = self._pool
        live = pool.live()
        processes = [(PARENT, os.getpid())]
        processes += [(f"worker-{index}", pid) for index, pid in sorted(live.items())]
        yield from _process_families(processes)
        info = GaugeMetricFamily(
            "kassign_build_info",
            "kassign's version, and Python's, as labels; the value is 1.",
            labels=["version", "python_version"],
        )
        info.add_metric([self._version, platform.python_version()], 1)
        yield info
        yield GaugeMetricFamily(
            "kassign_workers_configured", "Worker processes asked for (--workers).", pool.configured
        )
        yield GaugeMetricFamily("kassign_workers_live", "Worker processes running.", len(live))
        yield GaugeMetricFamily(
            "kassign_workers_lost",
            "Worker slots given up for good (their workers kept failing at start).",
            len(pool.lost),
        )
        yield CounterMetricFamily(
            "kassign_worker_restarts",
            "Workers forked to replace one that exited while serving.",
            pool.restarts,
        )
        yield CounterMetricFamily(
            "kassign_workers_hung",
            "Workers killed (then replaced) for answering no probe of their own within"
            " --worker-timeout.",
            pool.hung,
        )
