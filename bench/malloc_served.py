"""``kassign serve``'s worker under glibc malloc settings: large calls' time and memory.

For each setting (``SERVED``: ``--malloc-tuning`` or not) and round (the order
alternating), one ``kassign serve --workers 1`` serves, on loopback: a 1,000,000-partition
consumer call (``memory_bench.py``'s ``consumer_wide``: 500 topics, 2,000 members, range,
compact) and a 100,000-task x 5,000-client Streams call (high availability, no standbys), each
``--calls`` times. It prints the best wall ms and the worker's CPU ms of each call, the worker's peak (``VmHWM``) and
RSS after each kind, its RSS once idle for ``--idle`` seconds (the solver helper's RSS
beside it), and the last call's time once more after that idle spell. ``--min-traffic``: a
10,000 x 1,000 ``min_traffic`` call instead (``rack_aware_bench.py``'s group as a request), whose
solves run in the worker's solver helper.

    .venv/bin/python bench/malloc_served.py --settings off,on --rounds 2
    .venv/bin/python bench/malloc_served.py --min-traffic --rounds 4 --calls 10
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import grpc
from memory_bench import consumer_wide, streams_group
from serving import serving_on_loopback

RACKS = ("rack-a", "rack-b", "rack-c")
_UNLIMITED = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]


def min_traffic_request(tasks: int = 10_000, clients: int = 1_000) -> bytes:
    """``rack_aware_bench.make_state``'s group as a request: 10 sub-topologies, each task a
    source and a changelog partition on two of three racks, clients of two threads with a rack
    and a ``zone`` tag, one standby, ``min_traffic``."""
    from kassign_client import build

    rng = random.Random(7)
    per = -(-tasks // 10)
    infos = [
        build.task(
            t // per,
            t % per,
            source=[f"in-{t // per}"],
            changelog=[f"log-{t // per}"],
            racks={
                f"in-{t // per}": rng.sample(RACKS, 2),
                f"log-{t // per}": rng.sample(RACKS, 2),
            },
        )
        for t in range(tasks)
    ]
    members = [
        build.client(
            uuid.UUID(int=rng.getrandbits(128)),
            threads=2,
            rack=RACKS[c % 3],
            tags={"zone": RACKS[c % 3]},
            topics=sorted({f"in-{s}" for s in range(10)}),
        )
        for c in range(clients)
    ]
    configs = build.configs(
        num_standby_replicas=1,
        rack_aware_strategy="min_traffic",
        rack_aware_assignment_tags=["zone"],
    )
    return build.request(members, infos, configs=configs, now_ms=1).SerializeToString()


def _status(pid: int) -> dict[str, int]:
    """The process's VmHWM and VmRSS in MB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key = line.split(":")[0]
        if key in ("VmHWM", "VmRSS"):
            out[key] = int(line.split()[1]) // 1024
    return out


def _cpu(pid: int) -> float:
    """The process's CPU seconds so far (user and system, the kernel's 10 ms ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _faults(pid: int) -> int:
    """The process's minor page faults so far."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[7])


def _children_rss(pid: int) -> int:
    total = 0
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        total += _status(int(child)).get("VmRSS", 0)
    return total


SERVED = {"off": (), "on": ("--malloc-tuning",)}
"""The worker's settings compared: glibc's defaults, and ``kassign serve``'s tuning
(``server/runtime/malloc.py``: the thresholds raised, the heap trimmed once idle)."""


def _served(setting: str, requests: dict[str, tuple[str, bytes]], calls: int, idle: float) -> str:
    kassign = str(Path(sys.executable).parent / "kassign")
    command = [kassign, "serve", "--host", "127.0.0.1", "--port", "0", "--workers", "1"]
    cells = []
    with tempfile.TemporaryDirectory() as work:
        log = Path(work) / "serve.log"
        options = ["--metrics-port", "-1", *SERVED[setting]]
        with serving_on_loopback(command + options, "kassign serve", log) as target:
            found = re.search(r"serving on \S+ \(pid (\d+)\)", log.read_text())
            if found is None:
                raise SystemExit(f"no worker pid in:\n{log.read_text()}")
            pid = int(found.group(1))
            cells.append(f"start RSS {_status(pid)['VmRSS']}")
            with grpc.insecure_channel(target, options=_UNLIMITED) as channel:
                for name, (method, data) in requests.items():
                    call: Callable[..., bytes] = channel.unary_unary(method)
                    best, best_cpu = float("inf"), float("inf")
                    for _ in range(calls):
                        started, started_cpu = time.perf_counter(), _cpu(pid)
                        call(data, timeout=600)
                        best = min(best, time.perf_counter() - started)
                        best_cpu = min(best_cpu, _cpu(pid) - started_cpu)
                    mem = _status(pid)
                    cells.append(
                        f"{name} best {best * 1000:.0f} ms wall {best_cpu * 1000:.0f} ms worker cpu,"
                        f" peak {mem['VmHWM']} RSS {mem['VmRSS']}"
                    )
                time.sleep(idle)
                cells.append(f"idle RSS {_status(pid)['VmRSS']} (helper {_children_rss(pid)}) MB")
                # the last kind's first call after an idle spell (the heap trimmed when tuned)
                method, data = list(requests.values())[-1]
                again: Callable[..., bytes] = channel.unary_unary(method)
                started, started_cpu, faults = time.perf_counter(), _cpu(pid), _faults(pid)
                again(data, timeout=600)
                wall, cpu = time.perf_counter() - started, _cpu(pid) - started_cpu
                cells.append(
                    f"after idle {wall * 1000:.0f} ms wall {cpu * 1000:.0f} ms worker cpu"
                    f" {_faults(pid) - faults} faults"
                )
    return "; ".join(cells)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--settings", default="off,on")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--idle", type=float, default=3.0)
    parser.add_argument(
        "--min-traffic", action="store_true", help="only a 10,000 x 1,000 min_traffic call"
    )
    args = parser.parse_args(argv)
    streams = "/kassign.v1.TaskAssignmentService/Assign"
    requests = (
        {"min_traffic 10,000 x 1,000": (streams, min_traffic_request())}
        if args.min_traffic
        else {
            "consumer 1M": (
                "/kassign.v1.ConsumerAssignmentService/Assign",
                consumer_wide(1_000_000).SerializeToString(),
            ),
            "streams 100,000 x 5,000": (streams, streams_group(100_000, 5_000).SerializeToString()),
        }
    )
    settings = args.settings.split(",")
    for round_ in range(args.rounds):
        for setting in settings if round_ % 2 == 0 else settings[::-1]:
            line = _served(setting, requests, args.calls, args.idle)
            print(f"round {round_} {setting:<14} {line}  load {os.getloadavg()[0]:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
