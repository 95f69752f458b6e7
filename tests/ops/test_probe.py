"""``kassign health``: the Docker HEALTHCHECK's probe, against a real server and a closed port."""

from __future__ import annotations

import subprocess
import sys

from kassign.server.runtime.app import ServerConfig, create_server
from kassign.server.runtime.probe import check

from tests.ops.serving import ROOT, free_port


def run_probe(target: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kassign.cli", "health", "--target", target, "--timeout", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_probe_exits_zero_while_serving_and_one_when_not() -> None:
    from grpc_health.v1 import health

    servicer = health.HealthServicer()
    server, port = create_server(ServerConfig(host="127.0.0.1", port=0), health_servicer=servicer)
    server.start()
    try:
        target = f"127.0.0.1:{port}"
        assert check(target) == "SERVING"
        serving = run_probe(target)
        assert serving.returncode == 0, serving.stderr
        servicer.enter_graceful_shutdown()
        assert check(target) == "NOT_SERVING"
        assert run_probe(target).returncode == 1
    finally:
        server.stop(None).wait()


def test_probe_exits_one_when_nothing_listens() -> None:
    result = run_probe(f"127.0.0.1:{free_port()}")
    assert result.returncode == 1
    said = result.stderr
    assert "nothing accepts connections at" in said or "DEADLINE_EXCEEDED" in said, said
