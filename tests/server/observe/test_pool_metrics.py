"""kassign.server.observe.pool_metrics: the parent's process, build and worker-pool metrics,
read from a real child process's /proc entry."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest
from kassign.server.observe.pool_metrics import PoolCollector
from kassign.server.version import version
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

PROCESS_FAMILIES = {
    "process_cpu_seconds",
    "process_resident_memory_bytes",
    "process_virtual_memory_bytes",
    "process_start_time_seconds",
    "process_open_fds",
    "process_max_fds",
}


@dataclass
class Pool:
    configured: int
    restarts: int = 0
    hung: int = 0
    lost: list[int] = field(default_factory=list)
    workers: dict[int, int] = field(default_factory=dict)

    def live(self) -> dict[int, int]:
        return dict(self.workers)


@contextmanager
def child() -> Iterator[int]:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait(timeout=10)


def scrape(pool: Pool) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """The exposition text, parsed back: family name -> {sorted labels: value}. Going through
    the text checks the families are valid together (one HELP/TYPE each)."""
    registry = CollectorRegistry()
    registry.register(PoolCollector(pool, version=version()))
    text = generate_latest(registry).decode()
    families = list(text_string_to_metric_families(text))
    assert len({f.name for f in families}) == len(families)
    return {
        f.name: {
            tuple(sorted(s.labels.items())): s.value
            for s in f.samples
            if not s.name.endswith("_created")
        }
        for f in families
    }


def test_process_metrics_of_the_parent_and_each_live_worker() -> None:
    with child() as pid:
        time.sleep(0.2)  # let the child's interpreter start, so its memory differs from ours
        metrics = scrape(Pool(configured=2, workers={1: pid}))
    assert PROCESS_FAMILIES <= set(metrics)
    for name in PROCESS_FAMILIES:
        assert set(metrics[name]) == {(("process", "parent"),), (("process", "worker-1"),)}
    rss = metrics["process_resident_memory_bytes"]
    assert all(v > 1 << 20 for v in rss.values())
    assert rss[(("process", "parent"),)] != rss[(("process", "worker-1"),)]
    started = metrics["process_start_time_seconds"]
    assert started[(("process", "worker-1"),)] >= started[(("process", "parent"),)]
    assert abs(started[(("process", "worker-1"),)] - time.time()) < 60


def test_a_worker_that_is_gone_has_no_process_series() -> None:
    with child() as pid:
        pass
    metrics = scrape(Pool(configured=1, workers={0: pid}))
    assert set(metrics["process_open_fds"]) == {(("process", "parent"),)}


@pytest.mark.parametrize(
    ("pool", "expected"),
    [
        (Pool(configured=3, workers={0: 1, 1: 2, 2: 3}), (3, 3, 0, 0, 0)),
        (Pool(configured=3, restarts=4, hung=2, lost=[1], workers={0: 1, 2: 3}), (3, 2, 1, 4, 2)),
    ],
)
def test_pool_gauges_and_restarts(pool: Pool, expected: tuple[int, ...]) -> None:
    pool.workers = {index: os.getpid() for index in pool.workers}  # a live pid for /proc
    metrics = scrape(pool)
    got = tuple(
        metrics[name][()]
        for name in (
            "kassign_workers_configured",
            "kassign_workers_live",
            "kassign_workers_lost",
            "kassign_worker_restarts",
            "kassign_workers_hung",
        )
    )
    assert got == expected


def test_build_info_names_the_installed_version() -> None:
    info = scrape(Pool(configured=1))["kassign_build_info"]
    assert info == {(("python_version", platform.python_version()), ("version", version())): 1.0}
    assert version() != "unknown"
