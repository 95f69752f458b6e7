"""Real kassign processes for the operations tests: ``kassign serve --workers N`` as a subprocess.

The ports come back from the server itself (``--port-file`` and the metrics log line), so no test
guesses a free port for kassign.
"""

from __future__ import annotations

import importlib.util
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from kassign.v1.assignment_pb2 import RACK_AWARE_STRATEGY_MIN_TRAFFIC, AssignRequest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "bench" / "ghz" / "data"
METRICS_LINE = re.compile(r"metrics on http://[^:]+:(\d+)/metrics")


@dataclass(frozen=True, slots=True)
class Served:
    proc: subprocess.Popen[bytes]
    target: str
    metrics_port: int
    log: Path

    def metrics_text(self) -> str:
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            return str(response.read().decode())


def _wait_for(predicate, timeout: float, proc: subprocess.Popen[bytes], log: Path) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"kassign serve did not start:\n{log.read_text()}")
        time.sleep(0.05)


@contextmanager
def kassign_serve(
    tmp_path: Path, *args: str, workers: int = 2, metrics_host: str | None = "127.0.0.1"
) -> Iterator[Served]:
    """``kassign serve`` on 127.0.0.1 with ``workers`` processes; SIGKILLed if still up at exit.
    ``metrics_host`` None leaves ``--metrics-host`` to its default."""
    port_file = tmp_path / "port"
    log = tmp_path / "serve.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "gen")])}
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kassign.cli",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--port-file",
                str(port_file),
                "--workers",
                str(workers),
                "--metrics-port",
                "0",
                *(() if metrics_host is None else ("--metrics-host", metrics_host)),
                *args,
            ],
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_for(
            lambda: port_file.exists() and METRICS_LINE.search(log.read_text()), 90, proc, log
        )

        def served_lines() -> int:
            return log.read_text().count("kassign serving on")

        _wait_for(lambda: served_lines() >= workers, 90, proc, log)
        metrics_port = int(METRICS_LINE.search(log.read_text()).group(1))  # type: ignore[union-attr]
        yield Served(proc, f"127.0.0.1:{port_file.read_text().strip()}", metrics_port, log)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


def heavy_request(*, tasks: int, clients: int, standbys: int) -> AssignRequest:
    """A valid group whose standby placement dominates: ``tasks`` tasks (half stateful) over
    ``clients`` one-thread clients, ``standbys`` replicas each (issue 16's reproducer had 10,000
    tasks and 100 replicas: about 33 s of CPU). bench/ghz/make_data.py's shape, seeded."""
    make_data = load_script("bench/ghz/make_data.py")
    shape = make_data.Group("heavy", 10, tasks // 10, clients, 1, seed=16)
    request: AssignRequest = make_data.build_request(shape)
    request.configs.num_standby_replicas = standbys
    return request


def rack_heavy_request(*, tasks: int, clients: int, standbys: int = 0) -> AssignRequest:
    """A valid group whose KIP-925 ``min_traffic`` solves dominate: every client in a rack of
    its own and every partition's replicas in two of them, so each active-task graph has about
    ``tasks / 2 x clients`` arcs (6,000 x 300: two solves of about 1.4 s each on one core; the
    3 racks of ``heavy_request`` give graphs that solve in milliseconds). ``standbys`` add
    standby placement after the active solves (their own solve is priced far past any budget
    and falls back). Seeded."""
    request = heavy_request(tasks=tasks, clients=clients, standbys=standbys)
    racks = [f"rack-{i}" for i in range(clients)]
    rng = random.Random(24)
    rack_of: dict[str, str] = {}
    for member in request.members:
        process = member.subscription.info.process_id
        member.subscription.rack_id = rack_of.setdefault(process, racks[len(rack_of)])
    for task in request.tasks:
        for tp in task.topic_partitions:
            del tp.rack_ids[:]
            tp.rack_ids.extend(sorted(rng.sample(racks, 2)))
    request.configs.rack_aware_strategy = RACK_AWARE_STRATEGY_MIN_TRAFFIC
    request.configs.assignment_time_budget_ms = 120_000  # the solves must run, not be skipped
    return request


def listening_sockets(port: int) -> set[str]:
    """The ``socket:[inode]`` names of TCP sockets listening on ``port`` (from /proc/net), as
    a process's /proc/PID/fd links name them."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # LISTEN
                inodes.add(f"socket:[{fields[9]}]")
    return inodes


def listening_addresses(port: int) -> set[str]:
    """The IPv4 addresses TCP sockets listen on at ``port`` (``0.0.0.0``: every one)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, _, at = local.partition(":")
        if state == "0A" and int(at, 16) == port:
            found.add(socket.inet_ntoa(int(address, 16).to_bytes(4, "little")))
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, or a pid no longer there, is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def free_port() -> int:
    """A port free right now on 127.0.0.1 (for Prometheus, which cannot report its own)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def load_script(relative: str) -> ModuleType:
    """A bench/ script as a module (bench/ is a folder of scripts, not a package)."""
    path = ROOT / relative
    name = "bench_" + path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module
