"""What ``kassign serve`` assumes about its host: cores it may use, a port nobody serves, a version.

Issue 16: ``--workers`` defaulted to the host's core count (64 workers in a 2-CPU pod on a
64-core node), and a second ``kassign serve`` on a port already served silently shared it
through ``SO_REUSEPORT``, splitting the connections with the first.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from kassign.server.runtime.cores import cgroup_cpu_limit, usable_cores
from kassign.server.runtime.workers import metrics_host_for

from tests.ops.serving import ROOT, kassign_serve, listening_addresses

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "gen")])}


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_cgroup_v2_quota_is_the_tightest_on_the_path(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "cpu.max": "max 100000\n",
            "kubepods/cpu.max": "400000 100000\n",
            "kubepods/pod1/cpu.max": "150000 100000\n",
            "kubepods/pod1/c1/cpu.max": "max 100000\n",
        },
    )
    assert cgroup_cpu_limit(root, "0::/kubepods/pod1/c1\n") == 1.5
    assert cgroup_cpu_limit(root, "0::/\n") is None
    assert usable_cores(root, "0::/kubepods/pod1/c1\n") == min(2, len(os.sched_getaffinity(0)))


def test_cgroup_v1_cpu_controller_and_no_quota(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
            "cpu,cpuacct/cpu.cfs_period_us": "100000\n",
            "cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "50000\n",
            "cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n",
            "memory/docker/abc/memory.limit_in_bytes": "1\n",
        },
    )
    membership = "4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n"
    assert cgroup_cpu_limit(root, membership) == 0.5
    assert usable_cores(root, membership) == 1  # half a CPU still gets one worker
    assert cgroup_cpu_limit(root, "3:cpu,cpuacct:/\n") is None
    assert cgroup_cpu_limit(root, "garbage\n") is None


def test_workers_default_follows_cpu_affinity() -> None:
    """Pinned to one core by taskset (a real affinity, as a cpuset gives), the default is 1."""
    out = subprocess.run(
        ["taskset", "-c", "0", sys.executable, "-m", "kassign.cli", "serve", "--help"],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "quota: 1 here" in " ".join(out.split())


@pytest.mark.slow
def test_a_served_port_is_refused_unless_told_to_join(tmp_path: Path) -> None:
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
    with kassign_serve(tmp_path / "first", workers=1) as first:
        port = first.target.rsplit(":", 1)[1]
        refused = subprocess.run(
            [sys.executable, "-m", "kassign.cli", "serve", "--host", "127.0.0.1", "--port", port],
            check=False,
            cwd=ROOT,
            env=ENV,
            capture_output=True,
            text=True,
            timeout=20,
        )
        assert refused.returncode != 0
        assert f"port {port} on 127.0.0.1 is already in use" in refused.stderr
        assert "--join" in refused.stderr
        with kassign_serve(tmp_path / "second", "--port", port, "--join", workers=1) as second:
            assert second.target == first.target


def test_version_is_the_distributions() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    out = subprocess.run(
        [sys.executable, "-m", "kassign.cli", "--version"],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == f"kassign {pyproject['project']['version']}"


def test_the_metrics_host_follows_the_grpc_host() -> None:
    assert metrics_host_for("127.0.0.1") == "127.0.0.1"
    assert metrics_host_for("[::1]") == "::1"
    assert metrics_host_for("localhost") == "localhost"
    assert metrics_host_for("[::]") == metrics_host_for("0.0.0.0") == "0.0.0.0"


@pytest.mark.slow
def test_serving_on_loopback_keeps_the_metrics_on_loopback(tmp_path: Path) -> None:
    """Issue 27: ``--host 127.0.0.1`` still exposed /metrics on every interface."""
    with kassign_serve(tmp_path, workers=1, metrics_host=None) as served:
        assert listening_addresses(served.metrics_port) == {"127.0.0.1"}
        assert "kassign_build_info" in served.metrics_text()


@pytest.mark.slow
def test_a_taken_metrics_port_stops_start_up_with_a_clear_error(tmp_path: Path) -> None:
    """Issue 27: kassign served without metrics, so every alert but 'absent' went blind."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        refused = subprocess.run(
            [sys.executable, "-m", "kassign.cli", "serve", "--host", "127.0.0.1", "--port", "0",
             "--metrics-port", str(port), "--port-file", str(tmp_path / "port")],
            check=False, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert refused.returncode != 0
    assert f"cannot bind 127.0.0.1:{port}" in refused.stderr, refused.stderr
    assert "--metrics-port" in refused.stderr
    assert "worker 0" not in refused.stderr  # refused before any worker started
