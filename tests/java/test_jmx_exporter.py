"""deploy/jmx-exporter/kassign-plugins.yml in a real JVM: the Prometheus JMX exporter's agent
(the jar ``make java`` copies to clients/java/target/jmx-exporter/) exports the plug-ins' MBeans
as the metrics the alerts and the dashboard query.

The JVM runs ``io.kassign.consumer.FallbackMain`` (clients/java's test sources): the consumer
and the Kafka Streams plug-ins, pointed at ports nobody listens on, fall back once each; the test
scrapes the agent.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.harness import JVM_FLAGS
from tests.ops.test_dashboard import metric_names

ROOT = Path(__file__).resolve().parents[2]
TARGET = ROOT / "clients" / "java" / "target"
AGENT = TARGET / "jmx-exporter" / "jmx_prometheus_javaagent.jar"
CLASSPATH = TARGET / "test-classpath.txt"
CONFIG = ROOT / "deploy" / "jmx-exporter" / "kassign-plugins.yml"
GROUP = "jmx-fallback"
pytestmark = pytest.mark.slow  # one JVM for the module: about 5 s
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _classpath() -> str:
    for needed in (AGENT, CLASSPATH, TARGET / "test-classes"):
        assert needed.exists(), f"{needed.relative_to(ROOT)} is missing: run `make java`"
    return ":".join(
        [str(TARGET / "test-classes"), str(TARGET / "classes"), CLASSPATH.read_text().strip()]
    )


def _scrape(url: str) -> Samples:
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


@pytest.fixture(scope="module")
def scraped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Samples]:
    """What the agent exports once the plug-ins in its JVM have fallen back."""
    port = _free_port()
    log = tmp_path_factory.mktemp("jmx-exporter") / "jvm.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                "java",
                *JVM_FLAGS,
                f"-javaagent:{AGENT}=127.0.0.1:{port}:{CONFIG}",
                "-cp",
                _classpath(),
                "io.kassign.consumer.FallbackMain",
                GROUP,
            ],
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while "fell back" not in log.read_text():  # the plug-ins' log lines, then this
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield _scrape(f"http://127.0.0.1:{port}/metrics")
    finally:
        proc.kill()
        proc.wait(timeout=30)


def _value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, frozenset(labels.items()))]


@pytest.mark.parametrize("assignor", ["consumer-assignor", "task-assignor"])
def test_the_fallback_is_counted_by_cause(scraped: Samples, assignor: str) -> None:
    mine = {"assignor": assignor, "group": GROUP}
    assert _value(scraped, "kassign_plugin_calls_total", **mine) == 1
    assert _value(scraped, "kassign_plugin_fallbacks_total", **mine) == 1
    assert _value(scraped, "kassign_plugin_assignments_total", **mine) == 0
    assert _value(scraped, "kassign_plugin_rejected_assignments_total", **mine) == 0
    assert _value(scraped, "kassign_plugin_shadow_failed_total", **mine) == 0  # assign mode
    by_cause = "kassign_plugin_fallbacks_by_cause_total"
    assert _value(scraped, by_cause, cause="unavailable", **mine) == 1
    latency = _value(scraped, "kassign_plugin_call_latency_max_seconds", **mine)
    assert 0 < latency < 60  # seconds, not milliseconds


def test_only_the_plugins_metrics_are_mapped(scraped: Samples) -> None:
    """Kafka's own MBeans in the same JVM stay out: the rules name kassign's, nothing else."""
    exported = {name for name, _ in scraped}
    assert {n for n in exported if n.startswith("kassign_")} == {
        "kassign_plugin_calls_total",
        "kassign_plugin_assignments_total",
        "kassign_plugin_fallbacks_total",
        "kassign_plugin_fallbacks_by_cause_total",
        "kassign_plugin_rejected_assignments_total",
        "kassign_plugin_shadow_ok_total",
        "kassign_plugin_shadow_failed_total",
        "kassign_plugin_shadow_dropped_total",
        "kassign_plugin_call_latency_avg_seconds",
        "kassign_plugin_call_latency_max_seconds",
    }
    assert not {n for n in exported if n.startswith("kafka")}


def test_every_plugin_metric_the_alerts_and_dashboard_query_is_exported(scraped: Samples) -> None:
    rules = yaml.safe_load((ROOT / "deploy" / "prometheus" / "alerts.yml").read_text())
    exprs = [r["expr"] for g in rules["groups"] for r in g["rules"]]
    panels = json.loads((ROOT / "deploy" / "grafana" / "kassign.json").read_text())["panels"]
    exprs += [t["expr"] for p in panels for t in p.get("targets", [])]
    queried = {n for e in exprs for n in metric_names(e) if n.startswith("kassign_plugin_")}
    assert len(queried) >= 4
    assert queried - {name for name, _ in scraped} == set()
