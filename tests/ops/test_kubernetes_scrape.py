"""deploy/k8s/servicemonitor.yaml and deploy/prometheus/kubernetes-scrape.yml: on Kubernetes,
both scrape the kassign Service's pods under the job alerts.yml and the dashboard select.

Without this, the usual annotation-driven job (kubernetes-pods) scrapes kassign under another
job, and every alert but KassignAbsent is silent while that one fires for ever. The
ServiceMonitor is validated against the Prometheus Operator's CRD schema (``make crd`` generates
it from the Operator's API types into tests/ops/data), strictly: a field the CRD does not list is refused, as the
API server's strict field validation refuses it. The job each produces is derived by the rule of
the tool that scrapes: the Operator's (jobLabel, else the Service's name), Prometheus's relabelling.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import time
import urllib.request
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.ops.serving import ROOT
from tests.ops.test_prometheus import prometheus_on

K8S = ROOT / "deploy" / "k8s"
SERVICEMONITOR = K8S / "servicemonitor.yaml"
SCRAPE = ROOT / "deploy" / "prometheus" / "kubernetes-scrape.yml"
ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"
DASHBOARD = ROOT / "deploy" / "grafana" / "kassign.json"


def _crd_path() -> Path:
    """The CRD ``make crd`` generated and the repository keeps, at the Operator and
    controller-gen versions the Makefile pins (its first line names them: a pin moved without
    regenerating fails here)."""
    makefile = (ROOT / "Makefile").read_text()
    pins = {
        name: re.search(rf"^{name}\s*:=\s*(\S+)$", makefile, re.MULTILINE)
        for name in ("OPERATOR_VERSION", "CONTROLLER_GEN_VERSION")
    }
    assert all(pins.values()), f"pins not found in the Makefile: {pins}"
    path = ROOT / "tests" / "ops" / "data" / "monitoring.coreos.com_servicemonitors.yaml"
    first = path.read_text().partition("\n")[0]
    operator, generator = (m.group(1) for m in pins.values() if m)
    assert f"controller-gen {generator} " in first and first.endswith(
        f"@{operator}; do not edit"
    ), f"{path.relative_to(ROOT)} is of another version ({first!r}): run `make crd`"
    return path


def _load(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(path.read_text())
    return document


def _strict(schema: Any) -> Any:
    """The schema with unknown fields refused wherever it lists an object's fields (a CRD's
    schema alone lets the API server prune them silently, or refuse them under strict field
    validation, kubectl's default)."""
    if isinstance(schema, list):
        return [_strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _strict(v) for k, v in schema.items()}
    if (
        isinstance(schema.get("properties"), dict)
        and "additionalProperties" not in schema
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


@functools.cache
def _validator() -> jsonschema.Draft4Validator:
    """The CRD's v1 schema, made strict (read once: it is 76 kB of YAML)."""
    crd: dict[str, Any] = yaml.load(_crd_path().read_text(), Loader=yaml.CSafeLoader)
    served = [v for v in crd["spec"]["versions"] if v["served"]]
    (v1,) = [v for v in served if v["name"] == "v1"]
    assert crd["spec"]["group"] == "monitoring.coreos.com"
    assert crd["spec"]["names"]["kind"] == "ServiceMonitor"
    return jsonschema.Draft4Validator(_strict(v1["schema"]["openAPIV3Schema"]))


def _errors(document: dict[str, Any]) -> list[str]:
    return [
        f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
        for e in _validator().iter_errors(document)
    ]


def _service() -> dict[str, Any]:
    return _load(K8S / "service.yaml")


def _alerts_job() -> str:
    """The one job every alert that names a job selects."""
    rules = _load(ALERTS)["groups"]
    exprs = [r["expr"] for g in rules for r in g["rules"]]
    jobs = {j for e in exprs for j in re.findall(r'\bjob="([^"]*)"', e)}
    assert len(jobs) == 1, jobs
    return jobs.pop()


def operator_job(monitor: dict[str, Any], service: dict[str, Any]) -> str:
    """The job the Operator gives a ServiceMonitor's targets: the value of the Service's label
    that jobLabel names, else the Service's name. Relabelings run after and could change it."""
    spec = monitor["spec"]
    for endpoint in spec["endpoints"]:
        for rule in endpoint.get("relabelings", []) + endpoint.get("metricRelabelings", []):
            assert rule.get("targetLabel") != "job", "a relabeling rewrites job"
    name: str = service["metadata"]["name"]
    label = spec.get("jobLabel")
    value: str = service["metadata"].get("labels", {}).get(label, "") if label else ""
    return value or name


def test_the_servicemonitor_is_valid_against_the_operators_crd() -> None:
    monitor = _load(SERVICEMONITOR)
    assert (monitor["apiVersion"], monitor["kind"]) == (
        "monitoring.coreos.com/v1",
        "ServiceMonitor",
    )
    assert _errors(monitor) == []


@pytest.mark.parametrize(
    ("path", "value", "culprit"),
    [
        (("spec", "endpoints", 0, "port"), 9464, "endpoints.0.port"),  # a name, not a number
        (("spec", "jobLabels"), "app.kubernetes.io/name", "spec"),  # no such field
        (("spec", "endpoints", 0, "scheme"), "tcp", "endpoints.0.scheme"),
    ],
)
def test_the_schema_check_refuses_a_broken_servicemonitor(
    path: tuple[str | int, ...], value: object, culprit: str
) -> None:
    monitor = _load(SERVICEMONITOR)
    node: Any = monitor
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    assert any(culprit in error for error in _errors(monitor)), _errors(monitor)


def test_the_servicemonitor_selects_the_service_and_its_metrics_port() -> None:
    monitor, service = _load(SERVICEMONITOR), _service()
    assert (
        monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    )
    assert "matchExpressions" not in monitor["spec"]["selector"]
    ports = {p["name"]: p for p in service["spec"]["ports"]}
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] == "metrics"
    assert ports[endpoint["port"]]["targetPort"] == "metrics"


def test_the_servicemonitors_job_is_the_one_alerts_and_dashboard_select() -> None:
    job = operator_job(_load(SERVICEMONITOR), _service())
    assert job == _alerts_job() == "kassign"
    variables = {v["name"]: v for v in json.loads(DASHBOARD.read_text())["templating"]["list"]}
    assert variables["job"]["current"]["value"] == job
    # And it does not hang on the Service's name, which a deployment may change.
    renamed = _service()
    renamed["metadata"]["name"] = "kassign-eu-1"
    assert operator_job(_load(SERVICEMONITOR), renamed) == job


def _discovered(service: dict[str, Any]) -> list[dict[str, Any]]:
    """What Kubernetes service discovery (role endpoints) finds for the Service, one target per
    port of one of its pods, labelled as Prometheus's kubernetes_sd labels it (file_sd form)."""
    labels = {
        "__meta_kubernetes_namespace": "kassign",
        "__meta_kubernetes_service_name": service["metadata"]["name"],
        "__meta_kubernetes_pod_name": "kassign-7d9f-x2v4q",
        "__meta_kubernetes_pod_container_name": "kassign",
    }
    for key, value in service["metadata"]["labels"].items():
        labels["__meta_kubernetes_service_label_" + re.sub(r"[^a-zA-Z0-9_]", "_", key)] = value
    return [
        {
            "targets": [f"127.0.0.1:{port['port']}"],
            "labels": {**labels, "__meta_kubernetes_endpoint_port_name": port["name"]},
        }
        for port in service["spec"]["ports"]
    ]


def _targets(base: str, expected: int, timeout: float = 30.0) -> dict[str, Any]:
    """Prometheus's targets, active and dropped, once it has sorted all ``expected`` of them."""
    deadline = time.monotonic() + timeout
    while True:
        with urllib.request.urlopen(f"{base}/api/v1/targets?state=any", timeout=10) as response:
            data: dict[str, Any] = json.load(response)["data"]
        if len(data["activeTargets"]) + len(data["droppedTargets"]) >= expected:
            return data
        assert time.monotonic() < deadline, data
        time.sleep(0.3)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("prometheus") is None, reason="Debian prometheus not installed")
def test_the_plain_scrape_config_keeps_the_metrics_port_as_job_kassign(tmp_path: Path) -> None:
    """A real Prometheus runs the job's relabelling on what discovery would find for the
    Service (Debian's Prometheus has no Kubernetes discovery: the targets come from a file)."""
    config = _load(SCRAPE)
    (job,) = config["scrape_configs"]
    assert [c["role"] for c in job.pop("kubernetes_sd_configs")] == ["endpoints"]
    service = _service()
    discovered = tmp_path / "discovered.json"
    discovered.write_text(json.dumps(_discovered(service)))
    job["file_sd_configs"] = [{"files": [str(discovered)]}]
    config.pop("rule_files")
    with prometheus_on(tmp_path, yaml.safe_dump(config)) as base:
        targets = _targets(base, expected=len(service["spec"]["ports"]))
    (active,) = targets["activeTargets"]
    assert active["discoveredLabels"]["__meta_kubernetes_endpoint_port_name"] == "metrics"
    labels = active["labels"]
    assert labels["job"] == _alerts_job() == "kassign"
    # The labels the Operator's ServiceMonitor gives its targets, so queries work either way.
    assert set(labels) == {
        "job",
        "instance",
        "namespace",
        "service",
        "pod",
        "container",
        "endpoint",
    }
    assert labels["endpoint"] == "metrics"
    assert labels["instance"] == active["discoveredLabels"]["__address__"]
