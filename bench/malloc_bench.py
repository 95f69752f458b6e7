"""glibc malloc's thresholds, with and without, on the calls issue 24 times (A/B, interleaved).

glibc hands blocks of 128 KiB and more out by ``mmap`` (the threshold grows with what is
freed, to 32 MiB at most) and gives back the heap's free top past the trim threshold, so a
call's numpy columns and the compiled core's buffers can land on fresh pages the kernel must
zero, every call. ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` (and
``MALLOC_ARENA_MAX_``) in a child's environment set the same as ``mallopt`` would.

Each round runs every setting in a fresh child process, the order alternating between rounds,
on the same inputs: CPU ms (best of ``--repeats`` calls, the collector tuned as ``kassign
serve`` tunes it) and the minor page faults of the best call's run.

    .venv/bin/python bench/malloc_bench.py --workloads min_traffic,none_100k --rounds 4
    .venv/bin/python bench/malloc_bench.py --workloads consumer --rounds 2

Workloads: ``min_traffic`` (10,000 x 1,000 ``min_traffic``, ``rack_aware_bench.py``'s),
``none_100k`` (100,000 x 5,000 HA ``none``), ``streams_call`` (``malloc_served.py``'s
100,000 x 5,000 Streams request through the servicer's ``assign_request``, bytes to bytes),
``consumer`` (``consumer_check.py``'s library and call lines at 50x800x800). Served figures
(the 12-task call, memory) are ``malloc_served.py``'s.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

__all__ = ["SETTINGS", "main"]

MIB = 1 << 20
TRIM_FIRST = "KASSIGN_BENCH_TRIM_FIRST"
SETTINGS: dict[str, dict[str, str]] = {
    "default": {},
    "mmap64": {"MALLOC_MMAP_THRESHOLD_": str(64 * MIB), "MALLOC_TRIM_THRESHOLD_": str(512 * MIB)},
    "mmap256": {
        "MALLOC_MMAP_THRESHOLD_": str(256 * MIB),
        "MALLOC_TRIM_THRESHOLD_": str(1024 * MIB),
    },
    "mmap64-trimmed": {
        "MALLOC_MMAP_THRESHOLD_": str(64 * MIB),
        "MALLOC_TRIM_THRESHOLD_": str(512 * MIB),
        TRIM_FIRST: "1",
    },
    "mmap64-arena2": {
        "MALLOC_MMAP_THRESHOLD_": str(64 * MIB),
        "MALLOC_TRIM_THRESHOLD_": str(512 * MIB),
        "MALLOC_ARENA_MAX": "2",
    },
}
"""The settings compared (environment variables glibc reads at start; ``TRIM_FIRST``: the heap
trimmed before each call, as ``kassign serve`` trims an idle worker's, so a call after an idle
spell is timed)."""


def _faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _best(run: Callable[[], object], repeats: int) -> tuple[float, int]:
    """Best CPU ms of ``run()`` and the minor faults of that run."""
    best, faults = float("inf"), 0
    trim_first = os.environ.get(TRIM_FIRST) == "1"
    for _ in range(repeats):
        if trim_first:
            from kassign.server.runtime import malloc

            malloc.trim()
        before_faults, started = _faults(), time.process_time()
        run()
        spent = time.process_time() - started
        if spent < best:
            best, faults = spent, _faults() - before_faults
    return best * 1000, faults


def _streams(size: str, strategy: str, repeats: int) -> dict[str, tuple[float, int]]:
    from kassign.assignor.streams import api
    from kassign.assignor.streams.model import RackAwareStrategy
    from rack_aware_bench import make_state

    n_tasks, n_clients = (int(x) for x in size.split("x"))
    state = make_state(n_tasks, n_clients, RackAwareStrategy(strategy))
    return {f"{size} {strategy}": _best(lambda: api.assign(state), repeats)}


def _consumer(repeats: int) -> dict[str, tuple[float, int]]:
    from consumer_check import ASSIGNORS, LAYOUTS, scenarios
    from consumer_groups import request_for
    from kassign.assignor.consumer import assign, consumer_group
    from kassign.server.consumer.servicer import assign_consumer_request
    from kassign.v1 import consumer_pb2 as cpb

    out: dict[str, tuple[float, int]] = {}
    for layout in LAYOUTS:
        cluster, groups = scenarios("50x800x800", layout)
        for scenario, members_for in groups:
            for name in ASSIGNORS:
                if scenario == "leave" and name == "range":
                    continue
                members = members_for(name)
                group = consumer_group(members, cluster.topics())
                data = request_for(cluster, members, name).SerializeToString()
                shape = f"{layout} {scenario} {name}"
                out[f"{shape} library"] = _best(lambda: assign(name, group), repeats)  # noqa: B023
                out[f"{shape} call"] = _best(
                    lambda: assign_consumer_request(
                        cpb.ConsumerAssignRequest.FromString(data),  # noqa: B023
                        data=data,  # noqa: B023
                    ).wire.SerializeToString(),
                    repeats,
                )
    return out


def _streams_call(repeats: int) -> dict[str, tuple[float, int]]:
    from kassign.server.streams.servicer import assign_request
    from memory_bench import streams_group

    data = streams_group(100_000, 5_000).SerializeToString()
    run = lambda: assign_request(data).wire.SerializeToString()
    return {"100000x5000 call": _best(run, repeats)}


WORKLOADS: dict[str, Callable[[int], dict[str, tuple[float, int]]]] = {
    "min_traffic": lambda repeats: _streams("10000x1000", "min_traffic", repeats),
    "none_100k": lambda repeats: _streams("100000x5000", "none", repeats),
    "consumer": _consumer,
    "streams_call": _streams_call,
}


def _child(workload: str, repeats: int) -> None:
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)  # kassign serve's (server/runtime/app.py)
    print(json.dumps(WORKLOADS[workload](repeats)))


def _run_child(workload: str, setting: str, repeats: int) -> dict[str, list[float]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != TRIM_FIRST}
    env.update(SETTINGS[setting])
    out = subprocess.run(
        [sys.executable, __file__, "--child", workload, "--repeats", str(repeats)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, list[float]] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workloads", default="min_traffic,none_100k")
    parser.add_argument("--settings", default="default,mmap64,mmap256")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child, args.repeats)
        return 0
    settings = args.settings.split(",")
    for workload in args.workloads.split(","):
        best: dict[str, dict[str, list[float]]] = {}
        for round_ in range(args.rounds):
            order = settings if round_ % 2 == 0 else settings[::-1]
            for setting in order:
                figures = _run_child(workload, setting, args.repeats)
                load = os.getloadavg()[0]
                for line, (ms, faults) in figures.items():
                    best.setdefault(line, {}).setdefault(setting, []).append(ms)
                    print(
                        f"round {round_} {setting:<14} {line:<36} {ms:8.1f} ms cpu"
                        f" {faults:8d} faults  load {load:.1f}",
                        flush=True,
                    )
        print(f"{workload}: each line's best per round (CPU ms), then best of all rounds")
        for line, per in best.items():
            cells = "  ".join(
                f"{s}: {' '.join(f'{v:.1f}' for v in per[s])} (best {min(per[s]):.1f})"
                for s in settings
            )
            print(f"  {line:<36} {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
