"""The Python client as a package of its own: ``make client-dist``'s wheel, installed in a fresh
virtual environment with nothing of the server, calls a real ``kassign serve``.

The fresh environment gets grpcio and protobuf from the wheels ``make client-deps`` downloaded
(requirements.lock's versions, so the client is tested against what the server is), reading no
package index. About 10 s.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest
from kassign.server.timings import canonical_bytes
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb
from kassign_client import KassignClient

from tests.ops.serving import kassign_serve

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CLIENT_DEPS = ROOT / "build" / "client-deps"
"""grpcio and protobuf wheels at requirements.lock's versions (``make client-deps``)."""
DIST = ROOT / "build" / "client-dist"

# Run by the fresh environment's interpreter, in isolated mode (-I: no PYTHONPATH, no current
# folder), from outside the repository: it sees only what the wheel installed.
CALLER = """
import importlib, json, sys
from kassign_client import KassignClient, build, consumer

found = {}
for name in ("kassign.server", "kassign.assignor", "kassign.cli", "ortools", "kassign.v1",
             "kassign.kafka.subscription_info"):
    try:
        importlib.import_module(name)
        found[name] = True
    except ModuleNotFoundError:
        found[name] = False
streams = build.request(
    [build.client(f"00000000-0000-0000-0000-00000000000{n}", threads=2, encoding="raw",
                  topics=["orders"]) for n in (1, 2, 3)],
    [build.task(0, p, source=["orders"], changelog=["app-store-changelog"]) for p in range(6)],
    configs=build.configs(num_standby_replicas=1),
    group_id="dist-test",
)
group = consumer.request(
    [consumer.member(f"c-{n}", ["orders"], rack=f"r{n % 2}", encoding="raw") for n in range(3)],
    [consumer.topic("orders", [["r0", "r1"], ["r1"], ["r0"], ["r1"]])],
    assignor="range",
)
with KassignClient(sys.argv[1]) as client:
    answer = client.assign(streams, timeout=30)
    consumer_answer = client.consumer_assign(group, timeout=30)
print(json.dumps({
    "found": found,
    "file": __import__("kassign_client").__file__,
    "streams": [streams.SerializeToString().hex(), answer.SerializeToString(deterministic=True).hex()],
    "consumer": [group.SerializeToString().hex(),
                 consumer_answer.SerializeToString(deterministic=True).hex()],
}))
"""


def _pins() -> list[str]:
    """requirements.lock's grpcio and protobuf lines."""
    lines = (ROOT / "requirements.lock").read_text().splitlines()
    return [line for line in lines if re.match(r"(grpcio|protobuf)==", line)]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, check=False, capture_output=True, text=True, timeout=600, cwd=cwd)


@pytest.fixture(scope="module")
def wheel() -> Path:
    done = _run("make", "client-dist", cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    (found,) = DIST.glob("kassign_client-*.whl")
    return found


def test_the_wheel_holds_the_client_and_the_contract_but_no_server(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    tops = {n.split("/")[0] for n in names if not n.startswith("kassign_client-")}
    assert tops == {"kassign", "kassign_client"}
    parts = {n.split("/")[1] for n in names if n.startswith("kassign/")}
    assert parts == {"v1", "kafka"}  # no server, assignor, cli or pipeline
    assert "kassign/__init__.py" not in names  # a namespace: no clash with the server's kassign
    for needed in (
        "kassign/v1/assignment_pb2_grpc.py",
        "kassign/v1/consumer_pb2.pyi",
        "kassign_client/py.typed",
        "kassign/kafka/subscription_info.py",
    ):
        assert needed in names
    metadata = (
        zipfile.ZipFile(wheel)
        .read(next(n for n in names if n.endswith(".dist-info/METADATA")))
        .decode()
    )
    requires = re.findall(r"^Requires-Dist: ([^;\n]+)$", metadata, re.MULTILINE)
    assert sorted(requires) == ["grpcio>=1.81.1", "protobuf<7,>=6.33.5"]


def test_the_dependency_floors_are_those_the_generated_code_checks() -> None:
    project = tomllib.loads((ROOT / "clients/python/pyproject.toml").read_text())["project"]
    generated = ROOT / "gen" / "kassign" / "v1"
    grpc_version = re.search(
        r"GRPC_GENERATED_VERSION = '([\d.]+)'", (generated / "assignment_pb2_grpc.py").read_text()
    )
    runtime = re.search(
        r"ValidateProtobufRuntimeVersion\(\s*\S+,\s*(\d+),\s*(\d+),\s*(\d+),",
        (generated / "common_pb2.py").read_text(),
    )
    assert grpc_version and runtime
    major, minor, patch = runtime.groups()
    assert project["dependencies"] == [
        f"grpcio>={grpc_version.group(1)}",
        f"protobuf>={major}.{minor}.{patch},<{int(major) + 1}",
    ]


def test_installed_alone_the_client_calls_a_real_server(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)  # this environment's pip installs into it
    python = env_dir / "bin" / "python"
    (tmp_path / "pins.txt").write_text("\n".join(_pins()) + "\n")
    install = _run(
        str(Path(sys.executable).with_name("pip")),
        "--python",
        str(python),
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-index",
        "--find-links",
        str(CLIENT_DEPS),
        "--constraint",
        str(tmp_path / "pins.txt"),
        str(wheel),
        cwd=tmp_path,
    )
    assert install.returncode == 0, install.stderr
    (tmp_path / "caller.py").write_text(CALLER)
    with kassign_serve(tmp_path, workers=1) as served:
        done = _run(str(python), "-I", str(tmp_path / "caller.py"), served.target, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        seen = json.loads(done.stdout)
        # the same requests from this (the server's) environment get the same bytes back
        with KassignClient(served.target) as client:
            request = pb.AssignRequest.FromString(bytes.fromhex(seen["streams"][0]))
            expected = client.assign(request, timeout=30)
            group = cpb.ConsumerAssignRequest.FromString(bytes.fromhex(seen["consumer"][0]))
            expected_consumer = client.consumer_assign(group, timeout=30)
    assert seen["file"].startswith(str(env_dir))
    assert seen["found"] == {
        "kassign.server": False,
        "kassign.assignor": False,
        "kassign.cli": False,
        "ortools": False,
        "kassign.v1": True,
        "kassign.kafka.subscription_info": True,
    }
    assert len(request.members) == 6 and len(expected.clients) == 3
    answer = pb.AssignResponse.FromString(bytes.fromhex(seen["streams"][1]))
    assert canonical_bytes(answer) == canonical_bytes(expected)  # equal but for the timings
    assert len(expected_consumer.members) == 3
    consumer_answer = cpb.ConsumerAssignResponse.FromString(bytes.fromhex(seen["consumer"][1]))
    assert canonical_bytes(consumer_answer) == canonical_bytes(expected_consumer)
