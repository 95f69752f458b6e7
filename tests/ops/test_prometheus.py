"""The metrics as an operator sees them: a real Prometheus scrapes ``kassign serve --workers 2``.

Debian's ``prometheus`` runs on 127.0.0.1 with a generated config (1 s scrape interval) and a
temporary storage directory; the test reads the numbers back through its HTTP query API. Two
workers answer the calls, so the totals also check prometheus_client's multiprocess aggregation.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format
from grpc_health.v1 import health_pb2, health_pb2_grpc
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import assignment_pb2_grpc

from tests.ops.serving import DATA, free_port, kassign_serve

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("prometheus") is None, reason="Debian prometheus not installed"
    ),
]


@contextmanager
def prometheus(tmp_path: Path, scrape_port: int) -> Iterator[str]:
    """A Prometheus scraping ``127.0.0.1:scrape_port`` every second; yields its base URL."""
    with prometheus_on(
        tmp_path,
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: kassign\n    scrape_interval: 1s\n"
        f"    static_configs:\n      - targets: ['127.0.0.1:{scrape_port}']\n",
    ) as base:
        yield base


@contextmanager
def prometheus_on(tmp_path: Path, config_text: str) -> Iterator[str]:
    """A Prometheus running ``config_text`` (written to tmp_path); yields its base URL."""
    config = tmp_path / "prometheus.yml"
    config.write_text(config_text)
    for _attempt in range(3):  # a port picked free can be taken before Prometheus binds it
        port = free_port()
        log = (tmp_path / "prometheus.log").open("wb")
        proc = subprocess.Popen(
            [
                "prometheus",
                f"--config.file={config}",
                f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--log.level=warn",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{port}"
        if _wait_ready(base, proc):
            break
        proc.kill()
        proc.wait(timeout=30)
    else:
        pytest.fail(f"prometheus did not start:\n{(tmp_path / 'prometheus.log').read_text()}")
    try:
        yield base
    finally:
        proc.kill()
        proc.wait(timeout=30)
        log.close()


def _wait_ready(base: str, proc: subprocess.Popen[bytes]) -> bool:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(f"{base}/-/ready", timeout=2) as response:
                if response.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.2)
    return False


def query(base: str, promql: str) -> float | None:
    """The single value of an instant query, or None while Prometheus has no sample yet."""
    url = f"{base}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
    with urllib.request.urlopen(url, timeout=10) as response:
        body = json.load(response)
    assert body["status"] == "success", body
    result = body["data"]["result"]
    return float(result[0]["value"][1]) if result else None


def poll(base: str, expected: dict[str, float], timeout: float = 30.0) -> dict[str, float | None]:
    """Query until every PromQL expression has its expected value (or the time is up)."""
    deadline = time.monotonic() + timeout
    while True:
        seen = {q: query(base, q) for q in expected}
        if seen == expected or time.monotonic() > deadline:
            return seen
        time.sleep(0.5)


def make_calls(target: str) -> None:
    request = json_format.Parse((DATA / "group_12.json").read_text(), pb.AssignRequest())
    bad = pb.AssignRequest(group_id="bad")
    bad.members.add(member_id="m-1", raw_subscription=b"\x00")
    for _ in range(2):  # separate connections, so both workers are likely to answer some
        with grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)]) as ch:
            health = health_pb2_grpc.HealthStub(ch)
            for _ in range(3):
                health.Check(health_pb2.HealthCheckRequest(), timeout=10)
            stub = assignment_pb2_grpc.TaskAssignmentServiceStub(ch)
            stub.Assign(request, timeout=60)
            with pytest.raises(grpc.RpcError) as failed:
                stub.Assign(bad, timeout=60)
            assert failed.value.code() is grpc.StatusCode.INVALID_ARGUMENT


def test_prometheus_reads_grpc_and_assignment_metrics_summed_over_workers(tmp_path: Path) -> None:
    with (
        kassign_serve(tmp_path, workers=2) as served,
        prometheus(tmp_path, served.metrics_port) as base,
    ):
        make_calls(served.target)
        assign = 'grpc_service="kassign.v1.TaskAssignmentService",grpc_method="Assign"'
        expected = {
            'up{job="kassign"}': 1.0,
            f"sum(grpc_server_started_total{{{assign}}})": 4.0,
            f'sum(grpc_server_handled_total{{{assign},grpc_code="OK"}})': 2.0,
            f'sum(grpc_server_handled_total{{{assign},grpc_code="INVALID_ARGUMENT"}})': 2.0,
            'sum(grpc_server_handled_total{grpc_service="grpc.health.v1.Health",grpc_code="OK"})': 6.0,
            f"sum(grpc_server_handling_seconds_count{{{assign}}})": 4.0,
            f"sum(grpc_server_msg_received_total{{{assign}}})": 4.0,
            f"sum(grpc_server_msg_sent_total{{{assign}}})": 2.0,
            "sum(kassign_invalid_requests_total)": 2.0,
            'sum(kassign_assignment_seconds_count{assignor="high_availability",phase="assign"})': 2.0,
            "sum(kassign_group_tasks_sum)": 24.0,
            "sum(kassign_group_clients_count)": 2.0,
        }
        assert poll(base, expected) == expected
