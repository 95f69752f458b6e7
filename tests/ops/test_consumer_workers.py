"""``kassign serve --workers 2``: consumer calls are answered by the workers, counted in the
parent's aggregated /metrics (the consumer room's own metrics and the gRPC metrics by service),
and logged, one line each."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from kassign.v1 import consumer_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

from tests.ops.serving import kassign_serve
from tests.server.consumer.requests import racked_group

CALLS = 6
SERVICE = "kassign.v1.ConsumerAssignmentService"


def _totals(text: str) -> dict[str, float]:
    """Each counter of interest summed over its label sets (and so over the workers)."""
    wanted = {
        "kassign_consumer_assignments_total": {},
        "grpc_server_handled_total": {"grpc_service": SERVICE, "grpc_code": "OK"},
    }
    totals = dict.fromkeys(wanted, 0.0)
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = wanted.get(sample.name)
            if labels is not None and all(sample.labels.get(k) == v for k, v in labels.items()):
                totals[sample.name] += sample.value
    return totals


@pytest.mark.slow
def test_workers_answer_count_and_log_consumer_calls(tmp_path: Path) -> None:
    with kassign_serve(tmp_path, workers=2) as served:
        for n in range(CALLS):  # a connection each, so the kernel spreads them over the workers
            with grpc.insecure_channel(
                served.target, options=[("grpc.use_local_subchannel_pool", 1)]
            ) as channel:
                stub = consumer_pb2_grpc.ConsumerAssignmentServiceStub(channel)
                response = stub.Assign(racked_group(("range", "sticky")[n % 2]), timeout=60)
                assert len(response.members) == 7
        totals = _totals(served.metrics_text())
    assert totals == {
        "kassign_consumer_assignments_total": CALLS,
        "grpc_server_handled_total": CALLS,
    }
    lines = [
        line for line in served.log.read_text().splitlines() if "assigned consumer group" in line
    ]
    assert len(lines) == CALLS and all("'orders-app'" in line for line in lines)
