"""The consumer room is watched like the Streams room: Prometheus metrics (its own names, the
gRPC metrics by service), the call log, and the journal (its own folder), through real servers."""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format
from kassign.server.observe.calllog import ConsumerCallLog, ConsumerObservers, describe_consumer
from kassign.server.observe.consumer_metrics import ConsumerMetrics
from kassign.server.observe.journal import CONSUMER_SUBDIR
from kassign.server.observe.prometheus import AssignmentMetrics, GrpcMetrics, MetricsInterceptor
from kassign.server.runtime.app import CONSUMER_SERVICE_NAME, ServerConfig, create_server
from kassign.v1 import assignment_pb2_grpc, consumer_pb2_grpc
from kassign.v1 import consumer_pb2 as cpb
from prometheus_client import CollectorRegistry

from tests.server.consumer.requests import null_pointer_group, racked_group
from tests.server.consumer.test_servicer import Recorder
from tests.server.requests import group
from tests.server.running import in_process, subprocess_server

CALL = {"grpc_service": CONSUMER_SERVICE_NAME, "grpc_method": "Assign", "grpc_type": "unary"}


@contextmanager
def served(
    registry: CollectorRegistry,
) -> Iterator[consumer_pb2_grpc.ConsumerAssignmentServiceStub]:
    server, port = create_server(
        ServerConfig(host="127.0.0.1", port=0),
        observer=AssignmentMetrics(registry),
        consumer_observer=ConsumerMetrics(registry),
        interceptors=(MetricsInterceptor(GrpcMetrics(registry)),),
    )
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield consumer_pb2_grpc.ConsumerAssignmentServiceStub(channel)
    finally:
        server.stop(None).wait()


def value(registry: CollectorRegistry, name: str, **labels: str) -> float:
    return registry.get_sample_value(name, labels) or 0.0


def test_metrics_count_answers_refusals_and_failed_preconditions() -> None:
    registry = CollectorRegistry()
    bad = racked_group("range")
    bad.members[2].raw_subscription = b"\x00"
    with served(registry) as stub:
        answers = [
            stub.Assign(racked_group(a), timeout=30) for a in ("range", "cooperative-sticky")
        ]
        for request in (bad, null_pointer_group()):
            with pytest.raises(grpc.RpcError):
                stub.Assign(request, timeout=30)
    for code, count in (("OK", 2), ("INVALID_ARGUMENT", 1), ("FAILED_PRECONDITION", 1)):
        assert value(registry, "grpc_server_handled_total", **CALL, grpc_code=code) == count
    assert (
        value(
            registry,
            "kassign_consumer_assignments_total",
            assignor="range",
            kafka_rack_aware="true",
        )
        == 1
    )
    cooperative = answers[1].report
    assert (
        value(registry, "kassign_consumer_partitions_revoked_total", assignor="cooperative-sticky")
        == cooperative.revoked_partitions
        > 0
    )
    assert (
        value(registry, "kassign_consumer_partitions_moved_total", assignor="range")
        == answers[0].report.moved_partitions
    )
    before = value(
        registry, "kassign_consumer_cross_rack_partitions_sum", assignor="range", stage="before"
    )
    assert before == answers[0].report.cross_rack_partitions_before > 0
    assert value(registry, "kassign_consumer_group_members_count") == 2
    for phase in ("decode", "assign", "encode"):
        assert (
            value(
                registry, "kassign_consumer_assignment_seconds_count", assignor="range", phase=phase
            )
            == 1
        )
    # failures are labelled unknown; the bad request never finished decoding, the NPE one did
    assert (
        value(
            registry,
            "kassign_consumer_assignment_seconds_count",
            assignor="unknown",
            phase="decode",
        )
        == 1
    )
    assert (
        value(registry, "kassign_consumer_invalid_requests_total", reason="raw_subscription") == 1
    )
    assert (
        value(registry, "kassign_consumer_failed_preconditions_total", reason="KAFKA_NULL_POINTER")
        == 1
    )
    # the Streams room's metrics are untouched by consumer calls
    assert value(registry, "kassign_invalid_requests_total", reason="raw_subscription") == 0
    assert value(registry, "kassign_group_clients_count") == 0


def test_each_answer_is_one_log_line_and_refusals_are_warnings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    recorder = Recorder()
    observers = ConsumerObservers((recorder, ConsumerCallLog()))
    with (
        in_process(consumer_observer=observers) as (_, target),
        grpc.insecure_channel(target) as channel,
        caplog.at_level(logging.INFO, logger="kassign.calls"),
    ):
        stub = consumer_pb2_grpc.ConsumerAssignmentServiceStub(channel)
        response = stub.Assign(racked_group("cooperative-sticky"), timeout=30)
        with pytest.raises(grpc.RpcError):
            stub.Assign(null_pointer_group(), timeout=30)
    lines = [r for r in caplog.records if r.name == "kassign.calls"]
    assert [r.levelno for r in lines] == [logging.INFO, logging.WARNING]
    text = lines[0].getMessage()
    assert text == describe_consumer("orders-app", response)
    r = response.report
    assert text.startswith("assigned consumer group 'orders-app' (cooperative-sticky): 7 members")
    assert f"revoked {r.revoked_partitions}, withheld {r.withheld_partitions}" in text
    assert re.search(r"; \d+\.\d ms$", text)
    assert "FAILED_PRECONDITION" in lines[1].getMessage()
    assert recorder.events[-1] == ("error", grpc.StatusCode.FAILED_PRECONDITION)


@pytest.mark.slow
def test_kassign_serve_journals_consumer_calls_in_their_own_folder(tmp_path: Path) -> None:
    """``kassign serve --journal DIR`` (a worker process, with its real observers): Streams
    requests in DIR, where ``kassign replay`` reads, consumer requests in DIR/consumer."""
    journal = tmp_path / "journal"
    journal.mkdir()
    stale = journal / "requests-1-000001.jsonl"  # an earlier run's worker's, two hours old
    stale.write_text("{}\n")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    request = racked_group("sticky")
    on_server_clock = group(now_ms=0)
    with (
        subprocess_server(
            tmp_path, "--journal", str(journal), "--journal-retention-hours", "1"
        ) as (_, target),
        grpc.insecure_channel(target) as channel,
    ):
        consumer_pb2_grpc.ConsumerAssignmentServiceStub(channel).Assign(request, timeout=30)
        sent_ms = time.time_ns() // 1_000_000
        assignment_pb2_grpc.TaskAssignmentServiceStub(channel).Assign(on_server_clock, timeout=30)
        answered_ms = time.time_ns() // 1_000_000
    consumer_files = list((journal / CONSUMER_SUBDIR).glob("*.jsonl"))
    streams_files = list(journal.glob("*.jsonl"))
    assert len(consumer_files) == 1 and len(streams_files) == 1 and not stale.exists()
    (line,) = consumer_files[0].read_text().splitlines()
    recorded_consumer = json_format.Parse(line, cpb.ConsumerAssignRequest())
    assert recorded_consumer.journal.group_key == "orders-app"  # stamped (issue 26)
    recorded_consumer.ClearField("journal")
    assert recorded_consumer == request
    recorded = json.loads(streams_files[0].read_text().splitlines()[0])
    assert "assignor" not in recorded
    assert sent_ms <= int(recorded["nowMs"]) <= answered_ms  # the call's time, on the server
