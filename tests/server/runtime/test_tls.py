"""TLS and mutual TLS with certificates made by openssl for each test run.

A test CA signs a server certificate for localhost / 127.0.0.1 and a client certificate; a
second CA signs a client certificate the server must refuse.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from kassign.cli.main import main as kassign
from kassign.server.runtime.app import ServerConfig, create_server
from kassign.server.runtime.probe import check
from kassign.server.runtime.tls import (
    ClientTls,
    ServerTls,
    TlsError,
    channel_credentials,
    server_credentials,
)
from kassign.v1 import assignment_pb2 as pb
from kassign_client import KassignCallError, KassignClient

from tests.server.consumer.requests import racked_group
from tests.server.requests import group

ROOT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True, slots=True)
class Pki:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    stranger_cert: Path  # signed by another CA
    stranger_key: Path


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _ca(name: str, cwd: Path) -> None:
    _openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2", "-subj", f"/CN={name}",
        cwd=cwd,
    )  # fmt: skip


def _leaf(name: str, ca: str, extensions: str, cwd: Path) -> None:
    (cwd / f"{name}.ext").write_text(extensions + "\n")
    _openssl(
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=cwd,
    )  # fmt: skip
    _openssl(
        "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
        "-CAcreateserial", "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext",
        cwd=cwd,
    )  # fmt: skip


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    d = tmp_path_factory.mktemp("pki")
    _ca("test-ca", d)
    _ca("other-ca", d)
    _leaf("server", "test-ca", "subjectAltName=DNS:localhost,IP:127.0.0.1", d)
    _leaf("leader", "test-ca", "extendedKeyUsage=clientAuth", d)
    _leaf("stranger", "other-ca", "extendedKeyUsage=clientAuth", d)
    return Pki(
        d / "test-ca.pem", d / "server.pem", d / "server.key", d / "leader.pem", d / "leader.key",
        d / "stranger.pem", d / "stranger.key",
    )  # fmt: skip


def _serve(tls: ServerTls) -> Iterator[str]:
    server, port = create_server(ServerConfig(host="127.0.0.1", port=0, tls=tls))
    server.start()
    yield f"127.0.0.1:{port}"
    server.stop(None).wait()


@pytest.fixture
def served(pki: Pki) -> Iterator[str]:
    yield from _serve(ServerTls(pki.server_cert, pki.server_key))


@pytest.fixture
def served_mutual(pki: Pki) -> Iterator[str]:
    yield from _serve(ServerTls(pki.server_cert, pki.server_key, client_ca=pki.ca))


def _assign(target: str, credentials: grpc.ChannelCredentials | None) -> pb.AssignResponse:
    with KassignClient(target, credentials=credentials) as client:
        return client.assign(group(), timeout=10)


def test_a_tls_server_answers_a_client_that_trusts_its_ca(served: str, pki: Pki) -> None:
    response = _assign(served, channel_credentials(ClientTls(ca=pki.ca)))
    assert {t.partition for c in response.clients for t in c.active_tasks}
    assert check(served, credentials=channel_credentials(ClientTls(ca=pki.ca))) == "SERVING"


def test_plaintext_and_untrusting_callers_are_refused(served: str, pki: Pki) -> None:
    with pytest.raises(KassignCallError) as plaintext:
        _assign(served, None)
    assert plaintext.value.code == grpc.StatusCode.UNAVAILABLE
    system_roots = channel_credentials(ClientTls())  # the test CA is in no system store
    with pytest.raises(KassignCallError) as untrusted:
        _assign(served, system_roots)
    assert untrusted.value.code == grpc.StatusCode.UNAVAILABLE


def test_mutual_tls_wants_a_certificate_from_the_client_ca(served_mutual: str, pki: Pki) -> None:
    leader = ClientTls(ca=pki.ca, cert=pki.client_cert, key=pki.client_key)
    assert _assign(served_mutual, channel_credentials(leader)).clients
    for refused in (
        ClientTls(ca=pki.ca),
        ClientTls(ca=pki.ca, cert=pki.stranger_cert, key=pki.stranger_key),
    ):
        with pytest.raises(KassignCallError) as error:
            _assign(served_mutual, channel_credentials(refused))
        assert error.value.code == grpc.StatusCode.UNAVAILABLE


def test_consumer_calls_take_the_same_mutual_tls(served_mutual: str, pki: Pki) -> None:
    leader = ClientTls(ca=pki.ca, cert=pki.client_cert, key=pki.client_key)
    with KassignClient(served_mutual, credentials=channel_credentials(leader)) as client:
        assert len(client.consumer_assign(racked_group("range"), timeout=10).members) == 7
    with (
        KassignClient(
            served_mutual, credentials=channel_credentials(ClientTls(ca=pki.ca))
        ) as client,
        pytest.raises(KassignCallError) as error,
    ):
        client.consumer_assign(racked_group("range"), timeout=10)
    assert error.value.code == grpc.StatusCode.UNAVAILABLE


def test_bad_files_are_named_before_anything_serves(pki: Pki, tmp_path: Path) -> None:
    missing = tmp_path / "nope.pem"
    with pytest.raises(TlsError, match=r"cannot read the certificate .*nope\.pem"):
        server_credentials(ServerTls(missing, pki.server_key))
    text = tmp_path / "text.pem"
    text.write_text("not a certificate\n")
    with pytest.raises(TlsError, match=r"private key .*text\.pem is not PEM"):
        server_credentials(ServerTls(pki.server_cert, text))
    with pytest.raises(TlsError, match=r"the key .*leader\.key does not fit the certificate"):
        server_credentials(ServerTls(pki.server_cert, pki.client_key))
    with pytest.raises(TlsError, match="needs its key"):
        channel_credentials(ClientTls(ca=pki.ca, cert=pki.client_cert))


def test_serve_refuses_half_or_wrong_tls_options_with_exit_2(
    pki: Pki, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["serve", "--port", "0", "--workers", "1", "--metrics-port", "-1"]
    cases = {
        ("--tls-cert", str(pki.server_cert)): "--tls-cert and --tls-key go together",
        ("--tls-client-ca", str(pki.ca)): "--tls-client-ca needs --tls-cert and --tls-key",
        ("--tls-cert", str(pki.server_cert), "--tls-key", str(pki.client_key)): "does not fit",
    }
    for extra, message in cases.items():
        assert kassign([*base, *extra]) == 2
        assert message in capsys.readouterr().err


def test_the_cli_calls_and_probes_over_tls(served: str, pki: Pki) -> None:
    example = ROOT / "examples" / "small-three-clients.json"
    tls = ["--ca-file", str(pki.ca)]
    call = [sys.executable, "-m", "kassign.cli", "call", "--target", served, str(example)]
    ok = subprocess.run([*call, *tls], capture_output=True, text=True, timeout=60, check=False)
    assert ok.returncode == 0, ok.stderr
    assert '"clients"' in ok.stdout
    plain = subprocess.run(call, capture_output=True, text=True, timeout=60, check=False)
    assert plain.returncode == 1 and "closed the connection" in plain.stderr
    assert "if it serves TLS, pass --tls or --ca-file" in plain.stderr, plain.stderr
    health = [sys.executable, "-m", "kassign.cli", "health", "--target", served]
    plain = subprocess.run(health, capture_output=True, text=True, timeout=60, check=False)
    assert plain.returncode != 0 and "pass --tls or --ca-file" in plain.stderr, plain.stderr
    health = [sys.executable, "-m", "kassign.cli", "health", "--target", served, *tls]
    probe = subprocess.run(health, capture_output=True, text=True, timeout=60, check=False)
    assert probe.returncode == 0 and "SERVING" in probe.stdout


def test_kassign_serve_workers_serve_tls(pki: Pki, tmp_path: Path) -> None:
    from tests.ops.serving import kassign_serve

    args = ("--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key))
    with kassign_serve(tmp_path, *args, workers=2) as served:
        trusted = channel_credentials(ClientTls(ca=pki.ca))
        for _ in range(4):  # new channels: connections land on both workers
            assert check(served.target, credentials=trusted) == "SERVING"
        with pytest.raises(grpc.RpcError):
            check(served.target)
