"""bench/load.py on a tiny count against a real server: the ghz-shaped summary adds up."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest
from kassign.server.runtime.app import ServerConfig, create_server

from tests.ops.serving import DATA, ROOT, load_script

load = load_script("bench/load.py")


@pytest.fixture(scope="module")
def target():  # type: ignore[no-untyped-def]
    server, port = create_server(ServerConfig(host="127.0.0.1", port=0))
    server.start()
    yield f"127.0.0.1:{port}"
    server.stop(None).wait()


def check_report(report: dict, count: int) -> None:  # type: ignore[type-arg]
    assert report["count"] == count
    assert report["statusCodeDistribution"] == {"OK": count}
    assert report["errorDistribution"] == {}
    assert report["clientCpuSeconds"] > 0
    percentiles = [d["latency"] for d in report["latencyDistribution"]]
    assert [d["percentage"] for d in report["latencyDistribution"]] == [10, 25, 50, 75, 90, 95, 99]
    assert report["fastest"] <= percentiles[0] and percentiles == sorted(percentiles)
    assert percentiles[-1] <= report["slowest"]
    assert report["fastest"] <= report["average"] <= report["slowest"]
    assert report["rps"] == pytest.approx(count / (report["total"] / 1e9), rel=1e-6)


@pytest.mark.parametrize("health", [True, False])
def test_a_bounded_count_over_two_connections(target: str, health: bool) -> None:
    method, body = load.request_body(data=None if health else DATA / "group_12.json", health=health)
    spec = load.Load(
        target=target, method=method, body=body, count=13, concurrency=3, connections=2
    )
    sample, wall = load.run(spec)
    report = load.summarise(sample, wall, {})
    check_report(report, 13)


def test_a_duration_stops_the_callers(target: str) -> None:
    method, body = load.request_body(data=None, health=True)
    spec = load.Load(target=target, method=method, body=body, duration=0.3, concurrency=2)
    sample, wall = load.run(spec)
    assert 0.3 <= wall < 5
    assert sample.codes == Counter({"OK": len(sample.latencies_ns)}) and sample.latencies_ns


def test_failed_calls_are_counted_by_ghz_code_name(target: str) -> None:
    spec = load.Load(
        target=target, method=load.ASSIGN_METHOD, body=b"\x12\x03\x22\x01\x00", count=4
    )
    sample, wall = load.run(spec)
    report = load.summarise(sample, wall, {})
    assert report["statusCodeDistribution"] == {"InvalidArgument": 4}
    assert sum(report["errorDistribution"].values()) == 4


@pytest.mark.slow
def test_the_command_line_splits_the_load_over_processes(target: str) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "bench/load.py",
            "--target",
            target,
            "--data",
            str(DATA / "group_12.json"),
            "-n",
            "20",
            "-c",
            "4",
            "--connections",
            "2",
            "--processes",
            "2",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    check_report(report, 20)
    assert report["options"]["processes"] == 2
