"""The JVM client (clients/java) against a real kassign server on loopback.

The LeaderSimulator, run from the shaded jar Maven builds (clients/java/target/kassign-client.jar),
must print the assignment the Python CLI computes for the same request. The client's retry
policy, the KIP-924 plug-in and its fallback are JUnit tests that Surefire runs in `make java`.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.running import subprocess_server
from tests.server.runtime.test_tls import _ca, _leaf

ROOT = Path(__file__).resolve().parents[2]
JAVA_DIR = ROOT / "clients" / "java"
SIMULATOR = JAVA_DIR / "bin" / "leader-simulator"
EXAMPLES = sorted((ROOT / "examples").glob("*.json"))
KIP708 = ROOT / "examples" / "kip708-nine-nodes.json"
TIMING_FIELDS = ("assignSeconds", "totalSeconds")


@pytest.fixture(scope="module")
def java_build() -> Path:
    """The shaded jar ``make java`` built; packaged here (tests skipped) if it is missing."""
    jar = JAVA_DIR / "target" / "kassign-client.jar"
    if not jar.exists():
        built = subprocess.run(
            ["mvn", "-B", "-q", "-f", str(JAVA_DIR / "pom.xml"), "-DskipTests", "package"],
            check=False,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert built.returncode == 0, built.stdout + built.stderr
    return jar


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A ``python -m kassign.cli serve`` child process on 127.0.0.1; yields ``host:port``."""
    with subprocess_server(tmp_path_factory.mktemp("java-server")) as (_, address):
        yield address


def _python_env() -> dict[str, str]:
    paths = [str(ROOT), str(ROOT / "gen"), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def simulate(
    *args: str, stdin: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SIMULATOR), *args],
        input=stdin,
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def python_cli_assign(request: Path) -> dict[str, Any]:
    """What ``kassign assign FILE --no-timings`` prints, parsed."""
    done = subprocess.run(
        [sys.executable, "-m", "kassign.cli", "assign", str(request), "--no-timings"],
        cwd=ROOT,
        env=_python_env(),
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def without_timings(response: dict[str, Any]) -> dict[str, Any]:
    report = {k: v for k, v in response.get("report", {}).items() if k not in TIMING_FIELDS}
    return {**response, "report": report}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_simulator_json_matches_python_cli(java_build: Path, target: str, example: Path) -> None:
    done = simulate("--target", target, "--json", str(example))
    assert done.returncode == 0, done.stderr
    from_java = without_timings(json.loads(done.stdout))
    from_python = python_cli_assign(example)
    assert from_java == from_python
    assert from_java["clients"], "the example assigns something"


def test_kip708_example_is_answered_for_all_nine_clients(java_build: Path, target: str) -> None:
    done = simulate("--target", target, "--json", str(KIP708))
    assert done.returncode == 0, done.stderr
    response = json.loads(done.stdout)
    request = json.loads(KIP708.read_text())
    processes = {m["subscription"]["info"]["processId"] for m in request["members"]}
    assert [c["processId"] for c in response["clients"]] == sorted(processes)
    assert len(processes) == 9
    standbys = sum(len(c.get("standbyTasks", [])) for c in response["clients"])
    stateful = sum(1 for t in request["tasks"] if t.get("stateful"))
    assert standbys == stateful * int(request["configs"]["numStandbyReplicas"])


def _task_text(task: dict[str, Any]) -> str:
    return f"{task.get('subtopology', 0)}_{task.get('partition', 0)}"


def test_simulator_table_from_stdin(java_build: Path, target: str) -> None:
    request = KIP708.read_text()
    table = simulate("--target", target, "-", stdin=request)
    assert table.returncode == 0, table.stderr
    as_json = json.loads(simulate("--target", target, "--json", "-", stdin=request).stdout)
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["PROCESS", "ACTIVE", "STANDBY", "FOLLOW-UP"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:-1]}
    for client in as_json["clients"]:
        active, standby, _followup = rows[client["processId"]]
        assert active == (",".join(map(_task_text, client.get("activeTasks", []))) or "-")
        assert standby == (",".join(map(_task_text, client.get("standbyTasks", []))) or "-")
    assert lines[-1].startswith("error: NONE")


def test_simulator_exit_status_on_bad_input_and_dead_server(
    java_build: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"groupId": 7, "noSuchField": true}')
    invalid = simulate("--target", "127.0.0.1:1", str(bad))
    assert invalid.returncode == 2
    assert "not an AssignRequest" in invalid.stderr
    usage = simulate("--target")
    assert usage.returncode == 2
    assert "usage:" in usage.stderr
    dead = simulate(
        "--target",
        f"127.0.0.1:{free_port()}",
        "--attempts",
        "2",
        "--deadline-ms",
        "3000",
        str(KIP708),
    )
    assert dead.returncode == 1
    assert "UNAVAILABLE" in dead.stderr


def test_simulator_exits_2_for_a_request_the_service_refuses(
    java_build: Path, target: str, tmp_path: Path
) -> None:
    """As ``kassign call`` does (issue 17: the simulator exited 1 here)."""
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    refused = simulate("--target", target, str(empty))
    assert refused.returncode == 2, refused.stderr
    assert "INVALID_ARGUMENT" in refused.stderr and "members" in refused.stderr
    python = subprocess.run(
        [sys.executable, "-m", "kassign.cli", "call", "--target", target, str(empty)],
        cwd=ROOT,
        env=_python_env(),
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert python.returncode == refused.returncode


@pytest.mark.slow
def test_simulator_retries_until_the_server_comes_up(java_build: Path, tmp_path: Path) -> None:
    port = free_port()
    waiting = subprocess.Popen(
        [
            str(SIMULATOR),
            "--target",
            f"127.0.0.1:{port}",
            "--json",
            "--attempts",
            "100",
            "--deadline-ms",
            "60000",
            str(KIP708),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(1.0)
        assert waiting.poll() is None, "gave up while nothing listened"
        with subprocess_server(tmp_path, "--port", str(port)):
            out, err = waiting.communicate(timeout=90)
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.communicate()
    assert waiting.returncode == 0, err
    assert without_timings(json.loads(out)) == python_cli_assign(KIP708)


def test_shaded_jar_is_self_contained(java_build: Path) -> None:
    """Every class is ours or relocated under io.kassign.shaded; no Kafka, no SLF4J inside."""
    with zipfile.ZipFile(java_build) as jar:
        classes = [n for n in jar.namelist() if n.endswith(".class")]
        services = [n for n in jar.namelist() if n.startswith("META-INF/services/io.")]
    foreign = [
        n
        for n in classes
        if not n.startswith("io/kassign/") and not n.startswith("META-INF/versions/")
    ]
    assert foreign == []
    for prefix in ("io/grpc/", "com/google/", "io/netty/", "org/apache/kafka/", "org/slf4j/"):
        assert not any(n.startswith(prefix) for n in classes), prefix
    assert any(n.startswith("io/kassign/shaded/io/grpc/netty/shaded/") for n in classes)
    assert "META-INF/services/io.kassign.shaded.io.grpc.ManagedChannelProvider" in services
    assert "io/kassign/streams/KassignTaskAssignor.class" in classes


def test_simulator_over_mutual_tls(java_build: Path, tmp_path: Path) -> None:
    """The shaded jar speaks TLS and presents a client certificate to ``serve --tls-client-ca``."""
    _ca("test-ca", tmp_path)
    _leaf("server", "test-ca", "subjectAltName=DNS:localhost,IP:127.0.0.1", tmp_path)
    _leaf("leader", "test-ca", "extendedKeyUsage=clientAuth", tmp_path)
    tls = ("--tls-cert", str(tmp_path / "server.pem"), "--tls-key", str(tmp_path / "server.key"))
    client_ca = ("--tls-client-ca", str(tmp_path / "test-ca.pem"))
    with subprocess_server(tmp_path, *tls, *client_ca) as (_, address):
        ca = ("--ca-file", str(tmp_path / "test-ca.pem"))
        leader = ("--client-cert", str(tmp_path / "leader.pem"))
        key = ("--client-key", str(tmp_path / "leader.key"))
        done = simulate("--target", address, *ca, *leader, *key, "--json", str(KIP708))
        assert done.returncode == 0, done.stderr
        assert without_timings(json.loads(done.stdout)) == python_cli_assign(KIP708)
        refused = simulate("--target", address, *ca, "--attempts", "1", str(KIP708))
        assert refused.returncode == 1
        half = simulate("--target", address, *ca, *leader, str(KIP708))
        assert half.returncode == 2
        assert "--client-cert and --client-key go together" in half.stderr
