"""deploy/grafana and deploy/prometheus: the dashboard is laid out and valid PromQL, every alert has
a unit test that fires it, and every metric either queries is one a live ``kassign serve`` exports.

The live check starts ``kassign serve --workers 2`` and sends each kind of call once (Streams
with and without rack optimisation, consumer, refused requests of both, a FAILED_PRECONDITION),
since labelled series appear only once something is counted; the pre-initialised ones (gRPC
codes, fallbacks, the worker pool) are there before any call.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml
from google.protobuf import json_format
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import assignment_pb2_grpc, consumer_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

from tests.ops.serving import ROOT, kassign_serve
from tests.server.consumer.requests import null_pointer_group, racked_group
from tests.server.requests import group

DASHBOARD = ROOT / "deploy" / "grafana" / "kassign.json"
ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"
ALERT_TESTS = ROOT / "deploy" / "prometheus" / "alerts.test.yml"
GRAFANA_VARIABLES = {
    "$__rate_interval": "1m",
    "$job": "kassign",
    "$instance": ".+",
    "$plugin_job": ".+",
}
FROM_PROMETHEUS = {"up"}
"""Series Prometheus makes itself, not scraped from kassign."""
PLUGIN_PREFIX = "kassign_plugin_"
"""Series of the JVM plug-ins, exported by the JMX exporter's agent in the Kafka clients' and
brokers' JVMs under their own jobs (tests/java/test_jmx_exporter.py checks them)."""
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset"}
KEYWORDS |= {"and", "or", "unless", "inf", "nan"}


def _panels() -> list[dict[str, Any]]:
    panels: list[dict[str, Any]] = json.loads(DASHBOARD.read_text())["panels"]
    return panels


def dashboard_expressions() -> list[str]:
    """Every query of the dashboard, Grafana's variables replaced by values Prometheus takes."""
    found = []
    for panel in _panels():
        for target in panel.get("targets", []):
            expr = target["expr"]
            for variable, value in GRAFANA_VARIABLES.items():
                expr = expr.replace(variable, value)
            found.append(expr)
    return found


def alert_expressions() -> dict[str, str]:
    rules = yaml.safe_load(ALERTS.read_text())
    return {r["alert"]: r["expr"] for g in rules["groups"] for r in g["rules"]}


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects: identifiers that are not functions,
    keywords, label names (inside ``{}`` or a ``by (...)`` list), strings or durations."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    text = re.sub(r"\{[^}]*\}", "", text)
    text = re.sub(r"\[[^\]]*\]", "", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", text)
    names = set()
    for match in re.finditer(r"[a-zA-Z_:][a-zA-Z0-9_:]*", text):
        rest = text[match.end() :].lstrip()
        if rest.startswith("(") or match.group() in KEYWORDS:
            continue
        if match.start() > 0 and (
            text[match.start() - 1].isdigit() or text[match.start() - 1] == "."
        ):
            continue  # a number's exponent or suffix
        names.add(match.group())
    return names


def test_metric_names_reads_selectors_not_labels_functions_or_strings() -> None:
    expr = (
        'histogram_quantile(0.99, sum by (grpc_service, le) (rate(a_bucket{job=~"x|y", '
        'le!="1"}[5m]))) / on (job) group_left (instance) max without (le) (b:rule_total offset 1m)'
        " > 2 and c unless 1e3"
    )
    assert metric_names(expr) == {"a_bucket", "b:rule_total", "c"}


def test_the_dashboard_is_laid_out_on_its_variables() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] == "kassign"
    variables = {v["name"] for v in dashboard["templating"]["list"]}
    assert variables == {"datasource", "job", "instance", "plugin_job"}
    panels = _panels()
    assert len({p["id"] for p in panels}) == len(panels)
    cells: set[tuple[int, int]] = set()
    for panel in panels:
        box = panel["gridPos"]
        assert box["x"] + box["w"] <= 24, panel["title"]
        mine = {
            (x, y)
            for x in range(box["x"], box["x"] + box["w"])
            for y in range(box["y"], box["y"] + box["h"])
        }
        assert not mine & cells, f"{panel['title']} overlaps another panel"
        cells |= mine
        if panel["type"] == "row":
            continue
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        assert panel["description"], panel["title"]
        targets = panel["targets"]
        assert targets, panel["title"]
        assert len({t["refId"] for t in targets}) == len(targets)
        for target in targets:
            if PLUGIN_PREFIX in target["expr"]:
                # The plug-ins run in the clients' JVMs, scraped under jobs of their own.
                assert 'job=~"$plugin_job"' in target["expr"], target["expr"]
                continue
            assert 'job=~"$job"' in target["expr"], target["expr"]
            assert 'instance=~"$instance"' in target["expr"], target["expr"]


def test_dashboard_expressions_are_valid_promql(tmp_path: Path) -> None:
    """promtool parses them as the expressions of recording rules."""
    rules = [
        {"record": f"dashboard:query_{n}", "expr": e} for n, e in enumerate(dashboard_expressions())
    ]
    path = tmp_path / "dashboard-rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    result = subprocess.run(
        ["promtool", "check", "rules", str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(rules)} rules found" in result.stdout


def test_every_alert_has_a_unit_test_that_fires_it() -> None:
    tests = yaml.safe_load(ALERT_TESTS.read_text())["tests"]
    fired = {
        case["alertname"]
        for test in tests
        for case in test["alert_rule_test"]
        if case.get("exp_alerts")
    }
    quiet = {
        case["alertname"]
        for test in tests
        for case in test["alert_rule_test"]
        if not case.get("exp_alerts")
    }
    assert fired == set(alert_expressions())
    assert quiet == set(alert_expressions())  # and each is also shown not firing


def _exported(text: str) -> set[str]:
    return {s.name for f in text_string_to_metric_families(text) for s in f.samples}


def _call_every_kind(target: str) -> None:
    rack = json_format.Parse(
        (ROOT / "examples" / "rack-aware-min-traffic.json").read_text(), pb.AssignRequest()
    )
    bad = pb.AssignRequest(group_id="bad")
    bad.members.add(member_id="m-1", raw_subscription=b"\x00")
    bad_consumer = racked_group("range")
    bad_consumer.members[0].raw_subscription = b"\x00"
    with grpc.insecure_channel(target) as channel:
        streams = assignment_pb2_grpc.TaskAssignmentServiceStub(channel)
        consumer = consumer_pb2_grpc.ConsumerAssignmentServiceStub(channel)
        streams.Assign(group(), timeout=60)
        streams.Assign(rack, timeout=60)
        consumer.Assign(racked_group("rack-optimal"), timeout=60)
        for call, request in (
            (streams.Assign, bad),
            (consumer.Assign, bad_consumer),
            (consumer.Assign, null_pointer_group()),
        ):
            with pytest.raises(grpc.RpcError):
                call(request, timeout=60)


@pytest.mark.slow
def test_every_metric_the_dashboard_and_alerts_query_is_exported(tmp_path: Path) -> None:
    queried = set().union(*map(metric_names, dashboard_expressions()))
    alerting = set().union(*map(metric_names, alert_expressions().values()))
    queried, alerting = (
        {n for n in s if not n.startswith(PLUGIN_PREFIX)} for s in (queried, alerting)
    )
    assert len(queried) >= 30
    with kassign_serve(tmp_path, workers=2) as served:
        at_start = _exported(served.metrics_text())
        # The series the alerts divide by or count errors in exist before any call.
        for name in ("grpc_server_handled_total", "kassign_consumer_solver_fallbacks_total"):
            assert name in at_start
        _call_every_kind(served.target)
        exported = _exported(served.metrics_text())
    assert queried - FROM_PROMETHEUS - exported == set()
    assert alerting - FROM_PROMETHEUS - exported == set()
