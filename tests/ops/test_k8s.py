"""deploy/k8s/: what the schema validator (``make lint``) cannot see. The pieces agree with each
other and with kassign: its command line parses, the probes ask health services a running
kassign serves, the drain fits in the pod's grace period, and the selectors and ports match."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
import yaml
from kassign.cli.main import build_parser
from kassign.server.runtime.probe import check
from kassign.server.runtime.slots import WORKERS_SERVICE

from tests.ops.serving import ROOT, kassign_serve

K8S = ROOT / "deploy" / "k8s"
PLACED_BY_THE_TEST = {"--host", "--port", "--metrics-host", "--metrics-port"}
"""Options ``kassign_serve`` sets itself (loopback, free ports), left out of the manifest's args."""


def resources() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(K8S.glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            assert document["kind"] not in found, f"two {document['kind']}s"
            found[document["kind"]] = document
    return found


def container() -> dict[str, Any]:
    containers = resources()["Deployment"]["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    only: dict[str, Any] = containers[0]
    return only


def serve_args() -> argparse.Namespace:
    return build_parser().parse_args(container()["args"])


def ports() -> dict[str, int]:
    return {p["name"]: p["containerPort"] for p in container()["ports"]}


def test_the_resources_are_there() -> None:
    """The ServiceMonitor (the Prometheus Operator's) has tests of its own: test_kubernetes_scrape."""
    assert set(resources()) == {"Deployment", "Service", "PodDisruptionBudget", "ServiceMonitor"}


def test_the_command_line_is_kassigns_and_matches_the_ports() -> None:
    args = serve_args()
    assert args.command == "serve"
    assert (args.port, args.metrics_port) == (ports()["grpc"], ports()["metrics"])
    annotations = resources()["Deployment"]["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/port"] == str(args.metrics_port)
    assert args.max_connection_age_s > 0  # so a Service's connections move between pods


def test_the_drain_fits_in_the_termination_grace_period() -> None:
    args = serve_args()
    pod = resources()["Deployment"]["spec"]["template"]["spec"]
    assert args.grace < pod["terminationGracePeriodSeconds"]


def test_cpu_is_guaranteed_so_workers_follow_the_limit() -> None:
    """--workers is left to its default (the cgroup quota), so requests equal limits."""
    resources_ = container()["resources"]
    assert "--workers" not in container()["args"]
    assert resources_["requests"]["cpu"] == resources_["limits"]["cpu"]
    assert float(resources_["limits"]["cpu"]).is_integer()


def test_probes_use_native_grpc_on_the_serving_port() -> None:
    probes = {k: container()[k] for k in ("startupProbe", "readinessProbe", "livenessProbe")}
    for probe in probes.values():
        assert set(probe["grpc"]) <= {"port", "service"}
        assert probe["grpc"]["port"] == ports()["grpc"]
    assert probes["readinessProbe"]["grpc"].get("service", "") == ""
    assert probes["livenessProbe"]["grpc"]["service"] == WORKERS_SERVICE


def test_liveness_outwaits_a_rack_solve() -> None:
    """OR-Tools holds the GIL while it solves, up to the solver budget: a health check on that
    worker waits meanwhile. The liveness probe must not take that for a dead pod (issue 16)."""
    budget_seconds = serve_args().assignment_time_budget_ms / 1000
    assert budget_seconds > 0
    assert container()["livenessProbe"]["timeoutSeconds"] > budget_seconds


def test_service_and_budget_select_the_deployments_pods() -> None:
    found = resources()
    deployment = found["Deployment"]["spec"]
    pod_labels = deployment["template"]["metadata"]["labels"]
    selector = deployment["selector"]["matchLabels"]
    assert selector.items() <= pod_labels.items()
    assert found["Service"]["spec"]["selector"].items() <= pod_labels.items()
    assert found["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"] == selector
    assert found["PodDisruptionBudget"]["spec"]["maxUnavailable"] < deployment["replicas"]
    for port in found["Service"]["spec"]["ports"]:
        assert port["targetPort"] in ports()


@pytest.mark.slow
def test_every_probe_asks_a_health_service_kassign_serves(tmp_path: Path) -> None:
    """A probe naming a service the server does not know gets NOT_FOUND and fails forever."""
    args: list[str] = container()["args"][1:]  # after "serve"
    kept = []
    for option, value in zip(args[::2], args[1::2], strict=True):
        if option not in PLACED_BY_THE_TEST:
            kept += [option, value]
    with kassign_serve(tmp_path, *kept, workers=1) as served:
        for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
            service = container()[kind]["grpc"].get("service", "")
            assert check(served.target, service=service, timeout=10) == "SERVING", kind
