"""Shadow calls to a real ``kassign serve --journal`` (issue 26): one log line on
``kassign.shadow`` and the ``kassign_shadow_*`` metrics per call, and journal lines stamped and
carrying both answers and the comparison, which ``kassign explain`` and replay's rows accept.
One server, one worker, a Streams and a consumer shadow call and one plain call."""

from __future__ import annotations

import re
import time
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format
from kassign.cli import main as cli
from kassign.pipeline.grid import OWN_CONFIGURATION
from kassign.pipeline.rows import replay_rows
from kassign.server.observe.journal import CONSUMER_SUBDIR
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import assignment_pb2_grpc, consumer_pb2_grpc
from kassign.v1 import consumer_pb2 as cpb

from tests.ops.serving import kassign_serve
from tests.server.consumer.requests import racked_group
from tests.server.test_shadow import _consumer_shadow, _streams_shadow

pytestmark = pytest.mark.slow


def _lines(folder: Path, message: type[pb.AssignRequest | cpb.ConsumerAssignRequest]) -> list:  # type: ignore[type-arg]
    return [
        json_format.Parse(line, message())
        for path in sorted(folder.glob("requests-*.jsonl"))
        for line in path.read_text().splitlines()
    ]


def _metric(text: str, name: str, **labels: str) -> float:
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    found = re.search(rf"^{name}\{{{re.escape(wanted)}\}} (\S+)$", text, re.MULTILINE)
    assert found, f"{name}{{{wanted}}} not in /metrics"
    return float(found.group(1))


def test_shadow_calls_log_count_and_journal_both_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = tmp_path / "journal"
    streams, consumer = _streams_shadow(), _consumer_shadow(racked_group("range"))
    first, second = streams.shadow.kafka[0], streams.shadow.kafka[1]  # Kafka's differs
    first.process_id, second.process_id = second.process_id, first.process_id
    with kassign_serve(tmp_path, "--journal", str(journal), workers=1) as served:
        with grpc.insecure_channel(served.target) as channel:
            plain_stub = assignment_pb2_grpc.TaskAssignmentServiceStub(channel)
            sent_ms = time.time_ns() // 1_000_000
            answer = plain_stub.Assign(streams, timeout=30)
            plain_stub.Assign(pb.AssignRequest.FromString(_plain(streams)), timeout=30)
            stub = consumer_pb2_grpc.ConsumerAssignmentServiceStub(channel)
            consumer_answer = stub.Assign(consumer, timeout=30)
            answered_ms = time.time_ns() // 1_000_000
        metrics = served.metrics_text()
        log = served.log.read_text()
    assert answer.report.shadow.differing_members == 2
    assert consumer_answer.report.shadow.same
    assert _metric(metrics, "kassign_shadow_calls_total", room="streams") == 1.0
    assert _metric(metrics, "kassign_shadow_calls_total", room="consumer") == 1.0
    assert _metric(metrics, "kassign_shadow_same_total", room="consumer") == 1.0
    assert _metric(metrics, "kassign_shadow_differing_members_total", room="streams") == 2.0
    moved = answer.report.shadow.kafka.moved
    assert moved > 0
    assert _metric(metrics, "kassign_shadow_moved_total", answer="kafka", room="streams") == moved
    assert _metric(metrics, "kassign_shadow_moved_total", answer="kassign", room="streams") == 0.0
    shadow_lines = [line for line in log.splitlines() if "shadow group" in line]
    assert len(shadow_lines) == 2  # the plain call logs none
    assert (
        f"shadow group 'g' (kafka: HighAvailabilityTaskAssignor, kassign: high_availability): cross-rack 0->0, moved {moved}->0"
        in shadow_lines[0]
    )
    assert shadow_lines[0].endswith("; 2 clients differ")
    assert "shadow group 'orders-app' (kafka: range, kassign: range)" in shadow_lines[1]
    assert shadow_lines[1].endswith("; same")

    recorded, plain = _lines(journal, pb.AssignRequest)
    assert [r.HasField("shadow") for r in (recorded, plain)] == [True, False]
    stamps = [recorded.journal, plain.journal]
    assert all(sent_ms <= s.received_unix_ms <= answered_ms for s in stamps)
    assert stamps[0].server_id == stamps[1].server_id != ""
    assert stamps[0].sequence < stamps[1].sequence and stamps[0].group_key == "g"
    assert recorded.shadow.comparison == answer.report.shadow
    assert {c.process_id for c in recorded.shadow.kassign} == {c.process_id for c in answer.clients}
    assert list(recorded.shadow.kafka) == list(streams.shadow.kafka)
    (consumer_line,) = _lines(journal / CONSUMER_SUBDIR, cpb.ConsumerAssignRequest)
    assert consumer_line.shadow.comparison == consumer_answer.report.shadow
    assert consumer_line.journal.server_id == stamps[0].server_id  # one process, one id
    mine = {m.member_id: list(m.partitions) for m in consumer_line.shadow.kassign}
    assert mine == {m.member_id: list(m.partitions) for m in consumer_answer.members}

    path = next(journal.glob("requests-*.jsonl"))
    shadow_line = path.read_bytes().splitlines()[0]
    (row,) = replay_rows(0, shadow_line, "json", (OWN_CONFIGURATION,))
    assert row["error"] == "" and row["clients"] == len(answer.clients)
    capsys.readouterr()
    assert cli.main(["explain", f"{path}#1", "--client", answer.clients[0].process_id]) == 0
    assert answer.clients[0].process_id[:8] in capsys.readouterr().out


def _plain(request: pb.AssignRequest) -> bytes:
    copy = pb.AssignRequest()
    copy.CopyFrom(request)
    copy.ClearField("shadow")
    return copy.SerializeToString()
