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

import pytest
from kassign.server.loads.prometheus import PrometheusLoads, parse_source, vector_loads

from tests.ops.serving import free_port
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


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("prometheus") is None, reason="Debian prometheus not installed")
def test_rates_from_a_real_prometheus(tmp_path: Path) -> None:
    with served(Exporter) as exporter_port:
        config = (
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: kafka\n"
            f"    static_configs:\n      - targets: ['127.0.0.1:{exporter_port}']\n"
        )
        with prometheus_on(tmp_path, config) as base:
            # irate: the last two samples exactly (rate would extrapolate a window not yet full)
            query = "sum by (topic, partition) (irate(kafka_topic_partition_current_offset[5s]))"
            source = PrometheusLoads(base, query, timeout_s=2.0, ttl_s=0.0, retry_s=0.0)
            deadline = time.monotonic() + 20
            reading = source.fetch()
            while len(reading.loads) < len(RATES) and time.monotonic() < deadline:
                time.sleep(0.5)  # a rate needs two scrapes
                reading = source.fetch()
            assert reading.error == ""
            assert set(reading.loads) == set(RATES)
            for key, rate in RATES.items():
                assert reading.loads[key] == pytest.approx(rate, rel=0.25)

            bad = PrometheusLoads(base, "sum by (topic (", timeout_s=2.0).fetch()
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
