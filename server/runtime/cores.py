"""How many cores this process may use: the default for ``kassign serve --workers``.

``os.cpu_count()`` is the host's count: a pod limited to 2 CPUs on a 64-core node would start 64
workers, each solving on a slice of two cores. What bounds the process is its CPU affinity
(``taskset``, a cpuset) and its cgroup's CPU quota (a Kubernetes limit), so the default is the
smaller of the two, rounded up, at least one.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path

__all__ = ["cgroup_cpu_limit", "usable_cores"]

CGROUP_ROOT = Path("/sys/fs/cgroup")


def usable_cores(root: Path = CGROUP_ROOT, membership: str | None = None) -> int:
    """The affinity's core count, capped by the cgroup CPU quota (rounded up), at least 1."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    limit = cgroup_cpu_limit(root, membership)
    if limit is not None:
        cores = min(cores, math.ceil(limit))
    return max(1, cores)


def cgroup_cpu_limit(root: Path = CGROUP_ROOT, membership: str | None = None) -> float | None:
    """CPUs the process's cgroup and its ancestors allow (the tightest), ``None`` for no quota.

    ``membership`` is ``/proc/self/cgroup``'s text. cgroup v2 writes ``cpu.max`` as
    ``"<quota> <period>"`` or ``"max <period>"``; v1 writes ``cpu.cfs_quota_us`` (-1: none) and
    ``cpu.cfs_period_us`` under the ``cpu`` controller's hierarchy.
    """
    if membership is None:
        try:
            membership = Path("/proc/self/cgroup").read_text()
        except OSError:
            return None
    limits: list[float] = []
    for line in membership.splitlines():
        number, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if number == "0" and not controllers:
            limits += _walk(root / "unified" if (root / "unified").is_dir() else root, path, _v2)
        elif "cpu" in controllers.split(","):
            limits += _walk(root / controllers, path, _v1)
    return min(limits, default=None)


def _walk(base: Path, path: str, read: Callable[[Path], float | None]) -> list[float]:
    """The limits read in the cgroup at ``path`` under ``base`` and in each of its ancestors."""
    found: list[float] = []
    parts = [p for p in path.split("/") if p]
    for depth in range(len(parts), -1, -1):
        limit = read(base.joinpath(*parts[:depth]))
        if limit is not None:
            found.append(limit)
    return found


def _v2(directory: Path) -> float | None:
    try:
        quota, period = (directory / "cpu.max").read_text().split()[:2]
    except (OSError, ValueError):
        return None
    return None if quota == "max" else _ratio(quota, period)


def _v1(directory: Path) -> float | None:
    try:
        quota = (directory / "cpu.cfs_quota_us").read_text().strip()
        period = (directory / "cpu.cfs_period_us").read_text().strip()
    except OSError:
        return None
    return _ratio(quota, period)


def _ratio(quota: str, period: str) -> float | None:
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    return q / p if q > 0 and p > 0 else None
