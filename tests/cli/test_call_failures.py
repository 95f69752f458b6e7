"""One clear line for each way a call goes wrong before kassign answers (issue 27).

Tried as a new user would: ``--target 127.0.0.1`` silently dialled port 443; an unknown host
ended with a TLS hint; ``--tls`` against a plaintext port printed gRPC's own log line first; a
request over the message limit read like a dead service; a consumer request sent without
``--kind consumer`` said only 'no field named "assignor"'; ``rack_optimal`` got no suggestion.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format
from kassign.assignor.errors import unknown_name
from kassign.cli import main as cli
from kassign.server.runtime.failures import describe
from kassign.v1 import assignment_pb2 as pb

from tests.server.running import ROOT, in_process

EXAMPLE = ROOT / "examples" / "small-three-clients.json"
CONSUMER_EXAMPLE = ROOT / "examples" / "consumer" / "rack-aware-range.json"
UNAVAILABLE = grpc.StatusCode.UNAVAILABLE


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    try:
        code = cli.main(list(argv))
    except SystemExit as exit_:  # argparse's refusals
        code = int(exit_.code or 0)
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ("call", "--target", "127.0.0.1", str(EXAMPLE)),
        ("health", "--target", "localhost"),
        ("explain", str(EXAMPLE), "--target", "[::1]"),
    ],
)
def test_a_target_without_a_port_is_refused_with_the_form_to_use(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    code, err = _run(capsys, *argv)
    assert code == 2
    assert "names no port (gRPC would dial 443)" in err and ":50051" in err


@pytest.mark.parametrize(
    ("details", "secure", "said"),
    [
        (  # as grpcio 1.85 words them
            (
                "errors resolving nosuchhost.invalid:50051: [field:hostname lookup error:address"
                " lookup failed for nosuchhost.invalid:50051: Domain name not found]"
            ),
            False,
            "cannot resolve 'h' (--target h:1)",
        ),
        (
            (
                "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:1: Failed"
                " to connect to remote host: Connection refused"
            ),
            False,
            "nothing accepts connections at h:1: is kassign serve running there?",
        ),
        (
            (
                "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:1: Tls"
                " handshake failed (TSI_PROTOCOL_FAILURE): SSL_ERROR_SSL: WRONG_VERSION_NUMBER"
            ),
            True,
            "the TLS handshake with h:1 failed: if it serves plaintext, call it without --tls",
        ),
        ("Socket closed", False, "h:1 closed the connection: if it serves TLS, pass --tls"),
    ],
)
def test_connection_failures_are_one_line_that_says_what_to_do(
    details: str, secure: bool, said: str
) -> None:
    line = describe(UNAVAILABLE, details, target="h:1", secure=secure)
    assert said in line and "\n" not in line
    assert ("TLS" in line) == (said.count("TLS") > 0)  # no TLS guess where nothing answered


def test_a_request_over_either_message_limit_names_the_limit_and_the_flag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    request = json_format.Parse(EXAMPLE.read_text(), pb.AssignRequest())
    request.group_id = "g" * (3 << 20)  # 3 MiB: over a 2 MiB client, and a 1 MiB server
    big = tmp_path / "big.json"
    big.write_text(json_format.MessageToJson(request))
    with in_process(max_message_bytes=1 << 20) as (_, target):
        code, err = _run(capsys, "call", "--target", target, "--max-message-mb", "2", str(big))
        assert code == 1
        assert "the request is 3.0 MiB, over this client's 2 MiB limit" in err
        assert "--max-message-mb" in err
        code, err = _run(capsys, "call", "--target", target, "--max-message-mb", "8", str(big))
        assert code == 1
        assert f"{target} refused a 3.0 MiB message, over its 1 MiB limit" in err
        assert "start kassign serve with a larger --max-message-mb" in err


def test_a_request_of_the_other_kind_says_which_flag(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _run(capsys, "assign", str(CONSUMER_EXAMPLE))
    assert (
        code == 2 and "'assignor' is a ConsumerAssignRequest's field: pass --kind consumer" in err
    )
    code, err = _run(capsys, "assign", "--kind", "consumer", str(EXAMPLE))
    assert code == 2 and "is a Kafka Streams AssignRequest's field: drop --kind consumer" in err


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("rack_optimal", "rack-optimal"),
        ("Cooperative_Sticky", "cooperative-sticky"),
        ("stiky", "sticky"),
        ("fastest", None),
    ],
)
def test_an_unknown_assignor_name_gets_the_one_meant(name: str, meant: str | None) -> None:
    known = ("cooperative-sticky", "rack-optimal", "range", "roundrobin", "sticky")
    said = unknown_name("assignor", name, known)
    assert said.startswith(f"unknown assignor {name!r}") and "(known: cooperative-sticky" in said
    assert ("did you mean" in said) == (meant is not None)
    if meant is not None:
        assert f"did you mean {meant!r}?" in said


def test_a_failed_tls_handshake_prints_no_grpc_log_line() -> None:
    """gRPC's C core logs the failed handshake itself (an INFO line) unless told not to."""
    with in_process() as (_, target):
        out = subprocess.run(
            [sys.executable, "-m", "kassign.cli", "call", "--target", target, "--tls", str(EXAMPLE)],
            capture_output=True, text=True, timeout=60, check=False, cwd=ROOT,
        )  # fmt: skip
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith("kassign: call failed: the TLS handshake with")
