"""Bad input that used to end as INTERNAL or RESOURCE_EXHAUSTED (issue 16), through a real server.

Each case is a request a careless or hostile caller can send; each must come back
INVALID_ARGUMENT naming the field (and the member), with a message and trailing metadata small
enough for any gRPC client to receive, or as a valid answer where Kafka accepts the input. And
the answer must not depend on the server's load: the same request, the same bytes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from kassign.server.limits import RequestLimits
from kassign.server.observe.calllog import CallLog, ConsumerCallLog
from kassign.server.streams.encode import canonical_bytes
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import assignment_pb2_grpc, consumer_pb2_grpc
from kassign.v1 import consumer_pb2 as cpb
from kassign_client import build
from kassign_client.build import Encoding

from tests.server.consumer.requests import racked_group, structured
from tests.server.requests import group, pid
from tests.server.running import in_process, subprocess_server

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LONG_MAX = 2**63 - 1
"""Java's ``Long.MAX_VALUE``, the largest ``int64`` the contract carries."""
BIG = 256 * 1024 * 1024
"""Channel limits far above any case here, so only the server's answer decides what comes back."""
UNLIMITED_TEXT = RequestLimits(string_bytes=2**31)
"""Strings past ``--max-string-bytes`` are refused before anything quotes them
(tests/server/test_limits.py); lifted here, so the long ids reach the checks that quote them."""


@pytest.fixture(scope="module")
def channel() -> Iterator[grpc.Channel]:
    options = [("grpc.max_send_message_length", BIG), ("grpc.max_receive_message_length", BIG)]
    with (
        in_process(CallLog(), consumer_observer=ConsumerCallLog(), limits=UNLIMITED_TEXT) as (
            _,
            target,
        ),
        grpc.insecure_channel(target, options=options) as channel,
    ):
        yield channel


def _assign(channel: grpc.Channel, request: pb.AssignRequest) -> pb.AssignResponse:
    response: pb.AssignResponse = assignment_pb2_grpc.TaskAssignmentServiceStub(channel).Assign(
        request, timeout=60
    )
    return response


def _refusal(channel: grpc.Channel, request: object) -> grpc.RpcError:
    if isinstance(request, cpb.ConsumerAssignRequest):
        call = consumer_pb2_grpc.ConsumerAssignmentServiceStub(channel).Assign
    else:
        call = assignment_pb2_grpc.TaskAssignmentServiceStub(channel).Assign
    with pytest.raises(grpc.RpcError) as caught:
        call(request, timeout=60)
    error: grpc.RpcError = caught.value
    return error


def _scale_out(**edits: int) -> pb.AssignRequest:
    """KIP-441's scale-out example: warm-ups are planned, so a follow-up rebalance is asked for."""
    request = pb.AssignRequest()
    json_format.Parse((EXAMPLES / "kip441-scale-out.json").read_text(), request)
    for name, value in edits.items():
        target = request.configs if name == "probing_rebalance_interval_ms" else request
        setattr(target, name, value)
    return request


# -- the follow-up deadline saturates at Long.MAX_VALUE -----------------------------------------


@pytest.mark.parametrize(
    ("edits", "expected"),
    [
        ({}, 1_700_000_000_000 + 600_000),
        ({"now_ms": LONG_MAX}, LONG_MAX),
        ({"now_ms": LONG_MAX - 600_000}, LONG_MAX),
        ({"now_ms": LONG_MAX - 600_001}, LONG_MAX - 1),
        ({"probing_rebalance_interval_ms": LONG_MAX}, LONG_MAX),
        ({"now_ms": LONG_MAX, "probing_rebalance_interval_ms": LONG_MAX}, LONG_MAX),
    ],
)
def test_the_followup_deadline_saturates_at_long_max(
    channel: grpc.Channel, edits: dict[str, int], expected: int
) -> None:
    response = _assign(channel, _scale_out(**edits))
    deadlines = {c.followup_rebalance_deadline_ms for c in response.clients}
    assert response.report.followup_scheduled and deadlines == {expected}


# -- user end point ports: ASCII digits, 0-65535 ------------------------------------------------

BAD_PORTS = {
    "superscript two": "\u00b2",
    "circled one": "\u2460",
    "arabic-indic three": "\u0663",
    "fullwidth eight": "\uff18",
    "5,000 digits": "9" * 5000,
    "65536": "65536",
    "signed": "+80",
    "spaced": " 80",
}


@pytest.mark.parametrize("encoding", ["structured", "info_bytes", "raw"])
@pytest.mark.parametrize("name", sorted(BAD_PORTS))
def test_a_port_that_is_not_ascii_digits_up_to_65535_is_invalid_argument(
    channel: grpc.Channel, name: str, encoding: Encoding
) -> None:
    request = group(encoding=encoding)
    odd = build.client(pid(9), threads=1, end_point=f"host-9:{BAD_PORTS[name]}", encoding=encoding)
    request.members.extend(odd)
    error = _refusal(channel, request)
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT, error.details()
    metadata = dict(error.trailing_metadata())
    assert metadata["kassign-field"].endswith("user_end_point")
    assert metadata["kassign-member"] == odd[0].member_id


@pytest.mark.parametrize("port", ["0", "65535", "0080"])
def test_ports_kafka_parses_are_accepted(channel: grpc.Channel, port: str) -> None:
    request = group()
    request.members.extend(build.client(pid(9), threads=1, end_point=f"host-9:{port}"))
    response = _assign(channel, request)
    assert f"host-9:{port}" in {c.user_end_point for c in response.clients}


# -- very long ids: refusals quote bounded excerpts ----------------------------------------------

DETAILS_LIMIT = 2048
"""Bytes of status message a refusal may take: well inside gRPC's 8 KiB metadata default."""
METADATA_LIMIT = 1024
LOG_LINE_LIMIT = 2048


def _long_process_id() -> tuple[pb.AssignRequest, str, str | None]:
    request = group()
    request.members[0].subscription.info.process_id = "x" * 100_000
    return request, "process_id", request.members[0].member_id


def _long_member_id() -> tuple[pb.AssignRequest, str, str | None]:
    request = group()
    request.members[0].member_id = "m" * 20_000
    request.members[0].subscription.info.process_id = "not-a-uuid"
    return request, "process_id", request.members[0].member_id


def _long_assignor() -> tuple[pb.AssignRequest, str, str | None]:
    request = group()
    request.configs.assignor = "a" * 1_000_000
    return request, "configs.assignor", None


def _long_port() -> tuple[pb.AssignRequest, str, str | None]:
    request = group()
    request.members[0].subscription.info.user_end_point = "host:" + "9" * 5000
    return request, "user_end_point", request.members[0].member_id


def _long_consumer_member() -> tuple[cpb.ConsumerAssignRequest, str, str | None]:
    request = racked_group("range")
    structured(request, "m2").topics.append("orders")  # subscribed twice
    request.members[2].member_id = "\u00fc" * 10_000  # 20 KB of UTF-8
    return request, "subscription.topics", request.members[2].member_id


def _long_consumer_assignor() -> tuple[cpb.ConsumerAssignRequest, str, str | None]:
    request = racked_group("range")
    request.assignor = "\U0001f600" * 250_000  # 1 MB of four-byte characters
    return request, "assignor", None


LONG = {
    "100 KB process id": _long_process_id,
    "20 KB member id": _long_member_id,
    "1 MB assignor name": _long_assignor,
    "5,000-digit port": _long_port,
    "consumer: 20 KB member id": _long_consumer_member,
    "consumer: 1 MB assignor name": _long_consumer_assignor,
}


@pytest.mark.parametrize("name", sorted(LONG))
def test_long_ids_are_quoted_as_bounded_excerpts(
    channel: grpc.Channel, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    request, field, member = LONG[name]()
    with caplog.at_level(logging.INFO):
        error = _refusal(channel, request)
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT, error.details()
    details = error.details()
    assert len(details.encode()) <= DETAILS_LIMIT and " bytes)" in details
    metadata = dict(error.trailing_metadata())
    assert field in metadata["kassign-field"] and metadata["kassign-field"] in details
    assert all(len(value) <= METADATA_LIMIT for value in metadata.values())
    if member is not None:
        # The excerpt keeps the id's head and tail, so ids that differ at either end stay apart.
        quoted = metadata["kassign-member"].encode().decode("unicode_escape")
        head, _, tail = quoted.partition("…")
        assert member.startswith(head) and member.endswith(tail.partition("…")[2]) and head
    lines = [r.getMessage() for r in caplog.records]
    assert lines and all(len(line.encode()) <= LOG_LINE_LIMIT for line in lines)


@pytest.mark.parametrize("room", ["streams", "consumer"])
def test_the_call_log_quotes_a_long_group_id_as_an_excerpt(
    channel: grpc.Channel, room: str, caplog: pytest.LogCaptureFixture
) -> None:
    group_id = "g" * 1_000_000
    with caplog.at_level(logging.INFO, logger="kassign.calls"):
        if room == "streams":
            request = group()
            request.group_id = group_id
            _assign(channel, request)
        else:
            consumer_request = racked_group("range")
            consumer_request.group_id = group_id
            consumer_pb2_grpc.ConsumerAssignmentServiceStub(channel).Assign(
                consumer_request, timeout=60
            )
    (line,) = [r.getMessage() for r in caplog.records if r.name == "kassign.calls"]
    assert line.startswith("assigned") and "(1000000 bytes)" in line
    assert len(line.encode()) <= LOG_LINE_LIMIT


# -- malformed protobuf: INVALID_ARGUMENT and one log line ----------------------------------------

METHODS = {
    "streams": "/kassign.v1.TaskAssignmentService/Assign",
    "consumer": "/kassign.v1.ConsumerAssignmentService/Assign",
}
MALFORMED = {
    "invalid wire type": b"\xff\xff\xff",
    "truncated length": b"\x12\x05ab",
    "bad UTF-8 in group_id": b"\x0a\x02\xc3\x28",
}


def _send_bytes(channel: grpc.Channel, method: str, body: bytes) -> grpc.RpcError:
    call = channel.unary_unary(method)  # no serializers: the bytes go as they are
    with pytest.raises(grpc.RpcError) as caught:
        call(body, timeout=30)
    error: grpc.RpcError = caught.value
    return error


@pytest.mark.parametrize("room", sorted(METHODS))
@pytest.mark.parametrize("body", sorted(MALFORMED))
def test_malformed_protobuf_is_invalid_argument_with_one_log_line(
    channel: grpc.Channel, room: str, body: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        error = _send_bytes(channel, METHODS[room], MALFORMED[body])
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT, error.details()
    assert dict(error.trailing_metadata())["kassign-field"] == "request"
    assert "not a valid kassign.v1." in error.details()
    (record,) = caplog.records
    assert record.levelno == logging.WARNING and record.exc_info is None
    assert "request" in record.getMessage()


def test_health_and_reflection_are_unaffected(channel: grpc.Channel) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", "kassign.v1.TaskAssignmentService", "kassign.v1.ConsumerAssignmentService"):
        answer = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
    reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
    (reply,) = reflection.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10
    )
    names = {s.name for s in reply.list_services_response.service}
    assert {method.split("/")[1] for method in METHODS.values()} <= names
    # A well-formed request still goes through the same registration.
    assert _assign(channel, group()).report.tasks == 12


def test_kassign_serve_logs_one_line_per_refusal_and_no_traceback(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    with (
        subprocess_server(tmp_path, "--journal", str(tmp_path / "journal"), log=log) as (_, target),
        grpc.insecure_channel(target) as channel,
    ):
        codes = [
            _send_bytes(channel, m, MALFORMED["invalid wire type"]).code() for m in METHODS.values()
        ]
        codes.append(_refusal(channel, _long_member_id()[0]).code())
    assert codes == [grpc.StatusCode.INVALID_ARGUMENT] * 3
    text = log.read_text()
    assert "Traceback" not in text and " ERROR " not in text, text[:LOG_LINE_LIMIT]
    refusals = [line for line in text.splitlines() if "refused" in line]
    assert len(refusals) == 3, text[:LOG_LINE_LIMIT]
    assert all(len(line.encode()) <= LOG_LINE_LIMIT for line in text.splitlines())


# -- determinism: the answer is a function of the request alone ------------------------------------


def test_a_loaded_server_gives_the_same_bytes(
    channel: grpc.Channel, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The rack solver's budget (the server's default, 5 s) against a clock that jumps ten
    # seconds at every read: under any load, the same assignment, report and reasons.
    request = pb.AssignRequest()
    json_format.Parse((EXAMPLES / "rack-aware-min-traffic.json").read_text(), request)
    calm = _assign(channel, request)
    ticks = iter(range(0, 10**9, 10))
    monkeypatch.setattr(time, "perf_counter", lambda: float(next(ticks)))
    loaded = _assign(channel, request)
    assert calm.report.rack_status == pb.RACK_OPTIMISATION_OPTIMAL
    assert canonical_bytes(loaded) == canonical_bytes(calm)
