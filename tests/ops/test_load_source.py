"""Partition loads from a real Prometheus (Debian's) scraping an exporter served here, and the
ways it can fail: down, slow, a bad query. The call that asked never fails; it learns why."""

from __future__ import annotations

import http.server
import json
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest
from kassign.cli.main import main
from kassign.server.loads.prometheus import PrometheusLoads, parse_source, vector_loads
from kassign.v1 import common_pb2, consumer_pb2_grpc
from kassign.v1 import consumer_pb2 as cpb
from kassign_client import consumer
from prometheus_client.parser import text_string_to_metric_families

from tests.ops.serving import free_port, kassign_serve
from tests.ops.test_prometheus import prometheus_on

RATES = {("orders", 0): 100, ("orders", 1): 10, ("payments", 0): 40}


@contextmanager
def served(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[int]:
    """``handler`` on 127.0.0.1 in a thread; yields its port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


class Exporter(http.server.BaseHTTPRequestHandler):
    """kafka-exporter's offset gauge, each partition's offset growing at its rate per second."""

    started = time.monotonic()

    def do_GET(self) -> None:
        elapsed = time.monotonic() - self.started
        body = "".join(
            f'kafka_topic_partition_current_offset{{topic="{t}",partition="{p}"}} '
            f"{int(rate * elapsed)}\n"
            for (t, p), rate in RATES.items()
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class Slow(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        time.sleep(2)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


IRATE = "sum by (topic, partition) (irate(kafka_topic_partition_current_offset[5s]))"
"""The last two samples exactly (rate would extrapolate a window not yet full)."""

WITH_PROMETHEUS = pytest.mark.skipif(
    shutil.which("prometheus") is None, reason="Debian prometheus not installed"
)


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One Debian Prometheus for the module, scraping ``Exporter`` every second, its rates
    readable (two scrapes in); yields its base URL."""
    with served(Exporter) as exporter_port:
        config = (
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: kafka\n"
            f"    static_configs:\n      - targets: ['127.0.0.1:{exporter_port}']\n"
        )
        with prometheus_on(tmp_path_factory.mktemp("prometheus"), config) as base:
            source = PrometheusLoads(base, IRATE, timeout_s=2.0, ttl_s=0.0, retry_s=0.0)
            deadline = time.monotonic() + 20
            while len(source.fetch().loads) < len(RATES) and time.monotonic() < deadline:
                time.sleep(0.5)  # a rate needs two scrapes
            yield base


@pytest.mark.slow
@WITH_PROMETHEUS
def test_rates_from_a_real_prometheus(prometheus: str) -> None:
    reading = PrometheusLoads(prometheus, IRATE, timeout_s=2.0).fetch()
    assert reading.error == ""
    assert set(reading.loads) == set(RATES)
    for key, rate in RATES.items():
        assert reading.loads[key] == pytest.approx(rate, rel=0.25)

    bad = PrometheusLoads(prometheus, "sum by (topic (", timeout_s=2.0).fetch()
    assert bad.loads == {}
    assert "HTTP 400" in bad.error and "parse error" in bad.error


def test_a_down_prometheus_costs_one_attempt_per_retry_interval() -> None:
    now = [100.0]
    source = PrometheusLoads(f"http://127.0.0.1:{free_port()}", retry_s=5.0, clock=lambda: now[0])
    first = source.fetch()
    assert first.loads == {} and "unreachable" in first.error
    assert source.fetch().cached  # within the retry interval: no second attempt
    now[0] += 6
    assert not source.fetch().cached


def test_a_slow_prometheus_is_cut_at_the_timeout() -> None:
    with served(Slow) as port:
        source = PrometheusLoads(f"http://127.0.0.1:{port}", timeout_s=0.3)
        started = time.monotonic()
        reading = source.fetch()
        assert time.monotonic() - started < 1.5
        assert reading.loads == {} and "timed out" in reading.error


class Drip(http.server.BaseHTTPRequestHandler):
    """An answer that comes a byte every 0.1 s: each read is quick, the whole one takes 3 s."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "30")
        self.end_headers()
        for _ in range(30):
            self.wfile.write(b" ")
            self.wfile.flush()
            time.sleep(0.1)

    def log_message(self, *args: object) -> None:
        pass


def test_a_dripping_answer_is_cut_at_the_timeout() -> None:
    with served(Drip) as port:
        started = time.monotonic()
        reading = PrometheusLoads(f"http://127.0.0.1:{port}", timeout_s=0.4).fetch()
        assert time.monotonic() - started < 1.5
        assert reading.loads == {} and reading.error == "timed out after 0.4 s"


def test_a_callers_time_left_cuts_the_timeout_and_its_failure_is_not_kept() -> None:
    with served(Slow) as port:
        source = PrometheusLoads(f"http://127.0.0.1:{port}", timeout_s=5.0, retry_s=60.0)
        started = time.monotonic()
        first = source.fetch(timeout_s=0.3)
        assert time.monotonic() - started < 1.5
        assert first.error == "timed out after 0.3 s"
        second = source.fetch(timeout_s=0.2)  # asked again, not served the other's failure
        assert not second.cached and second.error == "timed out after 0.2 s"


def test_a_call_waits_behind_another_query_only_its_own_time() -> None:
    with served(Slow) as port:
        source = PrometheusLoads(f"http://127.0.0.1:{port}", timeout_s=1.2)
        first = threading.Thread(target=source.fetch)
        first.start()
        time.sleep(0.1)  # the first holds the query
        started = time.monotonic()
        behind = source.fetch(timeout_s=0.2)
        assert time.monotonic() - started < 0.8  # not the 1.1 s the first has left
        assert behind.error == "timed out after 0.2 s behind another query"
        first.join()


class Counting(http.server.BaseHTTPRequestHandler):
    """An instant-query API answering one series, counting the queries it got."""

    queries = 0

    def do_GET(self) -> None:
        type(self).queries += 1
        body = json.dumps(
            {
                "status": "success",
                "data": {
                    "resultType": "vector",
                    "result": [{"metric": {"topic": "t", "partition": "0"}, "value": [0, "1"]}],
                },
            }
        ).encode()
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_fresh_reading_is_reused_for_its_ttl() -> None:
    now = [0.0]
    with served(Counting) as port:
        source = PrometheusLoads(f"http://127.0.0.1:{port}", ttl_s=30.0, clock=lambda: now[0])
        assert source.fetch().loads == {("t", 0): 1.0}
        now[0] = 29.0
        assert source.fetch().cached and Counting.queries == 1
        now[0] = 31.0
        assert not source.fetch().cached and Counting.queries == 2


def test_series_without_a_usable_value_are_left_out() -> None:
    answer = {
        "status": "success",
        "data": {
            "resultType": "vector",
            "result": [
                {"metric": {"topic": "a", "partition": "0"}, "value": [0, "2.5"]},
                {"metric": {"topic": "a", "partition": "0"}, "value": [0, "1.5"]},
                {"metric": {"topic": "a", "partition": "1"}, "value": [0, "NaN"]},
                {"metric": {"topic": "a", "partition": "2"}, "value": [0, "-1"]},
            ],
        },
    }
    assert vector_loads(answer) == {("a", 0): 4.0}
    with pytest.raises(ValueError, match="matrix"):
        vector_loads({"status": "success", "data": {"resultType": "matrix", "result": []}})


@pytest.mark.parametrize("source", ["http://h:9090", "prometheus://h", "prometheus://h:9090/x"])
def test_the_source_flag_names_its_form(source: str) -> None:
    with pytest.raises(ValueError, match="prometheus://HOST:PORT"):
        parse_source(source)
    assert parse_source("prometheus://prom.example:9090") == "http://prom.example:9090"


def _balanced_by_load(topics: dict[str, int]) -> cpb.ConsumerAssignRequest:
    """Two consumers of ``topics`` (name -> partitions) asking for balance LOAD, no loads."""
    names = sorted(topics)
    members = [consumer.member(m, names) for m in ("c1", "c2")]
    request = consumer.request(
        members, [consumer.topic(t, n) for t, n in topics.items()], assignor="sticky"
    )
    request.options.balance = common_pb2.BALANCE_LOAD
    return request


def _report(target: str, request: cpb.ConsumerAssignRequest) -> cpb.ConsumerAssignmentReport:
    with grpc.insecure_channel(target) as channel:
        stub = consumer_pb2_grpc.ConsumerAssignmentServiceStub(channel)
        return stub.Assign(request, timeout=30).report


def _reads(text: str) -> dict[str, float]:
    """``kassign_load_source_reads_total`` by outcome, and the partitions missing."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "kassign_load_source_reads_total":
                found[sample.labels["outcome"]] = sample.value
            elif sample.name == "kassign_load_source_partitions_missing_total":
                found["partitions_missing"] = sample.value
    return found


@pytest.mark.slow
@WITH_PROMETHEUS
def test_serve_balances_by_the_loads_prometheus_reads(prometheus: str, tmp_path: Path) -> None:
    source = f"prometheus://{prometheus.removeprefix('http://')}"
    flags = ("--load-source", source, "--load-query", IRATE, "--load-ttl-s", "0")
    with kassign_serve(tmp_path, *flags, workers=1) as served:
        known = _report(served.target, _balanced_by_load({"orders": 2, "payments": 1}))
        # a third orders partition Prometheus has no series of: the mean of the three known
        partial = _report(served.target, _balanced_by_load({"orders": 3, "payments": 1}))
        reads = _reads(served.metrics_text())
    assert known.load.source == "prometheus" and not known.notes
    # 100 + 10 + 40 messages a second over two consumers; the 100 alone is the peak
    assert known.load.mean == pytest.approx(75, rel=0.25)
    assert known.load.peak == pytest.approx(100, rel=0.25)
    assert partial.load.source == "prometheus"
    assert partial.load.mean == pytest.approx(100, rel=0.25)
    [note] = partial.notes
    assert note.startswith(f"load source {source}: 1 of 4 partitions missing from its answer")
    assert reads == {"ok": 1, "cached": 0, "missing": 1, "failed": 0, "partitions_missing": 1}


@pytest.mark.slow
def test_serve_balances_by_count_when_prometheus_is_down(tmp_path: Path) -> None:
    source = f"prometheus://127.0.0.1:{free_port()}"
    with kassign_serve(tmp_path, "--load-source", source, workers=1) as served:
        report = _report(served.target, _balanced_by_load({"orders": 4}))
        reads = _reads(served.metrics_text())
    assert report.load.source == ""
    assert (report.load.bound, report.load.peak) == (2.0, 2.0)  # four partitions by count
    [note] = report.notes
    assert note.startswith(f"load source {source}: Prometheus at http://127.0.0.1:")
    assert "unreachable" in note and note.endswith("; balanced by count")
    assert reads["failed"] == 1 and reads["ok"] == 0


def test_a_bad_load_source_stops_serve_at_start(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["serve", "--load-source", "http://prom:9090"])
    assert stopped.value.code == 2
    assert "--load-source 'http://prom:9090': expected prometheus://HOST:PORT" in (
        capsys.readouterr().err
    )
