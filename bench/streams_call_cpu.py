"""The Streams call in-process: CPU of ``assign_request`` on a request's bytes, by phase.

Three requests: the 12-task group (``bench/ghz/data/group_12.json``), ``malloc_served.py``'s
10,000 x 1,000 ``min_traffic`` group and ``memory_bench.py``'s 100,000 x 5,000 group; and,
asked for by ``--only 10k-history``, the 10,000 x 1,000 group's next round (``kassign next``
on its first answer: every member owning the actives it was given, each client reporting
offset sums for its actives and standbys, about 20 tasks). Each is
run ``--calls`` times after one warm-up, the garbage collector's thresholds set as ``kassign
serve`` sets them; it prints the best CPU ms of the whole call and the wall ms of each phase
of that best call (wall, as the servicer's clock reads them: on a busy machine they add up to
more than the CPU), and, where the call solves, the best call over its own solves (the CPU of
every OR-Tools run inside that same call, ``solve_clock``: issue 24's "at most 3x its own
solves", here from the request's bytes to the answer's) with that ratio's range over every
call. To compare two checkouts, run it with each one's
``.venv/bin/python`` in turn (issue 24: interleave them, and take each side's best).

``--check`` / ``--record`` (``make bench-check``, ``check.py``; records in
``bench/baselines/streams_call.json``) guard the whole call, decode and encode included, which
the other Streams guards (``rack_aware_bench.py``, ``load_check.py``) do not time: the 10,000 x
1,000 call and its next round each over its own solves (the best call's ratio; the solves are
in the same call, so the machine cancels), the 12-task and 100,000 x 5,000 calls over
``check.reference_workload``.

    .venv/bin/python bench/streams_call_cpu.py --calls 5 [--only 10k]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

from check import Line, add_modes, per_reference, run_check
from google.protobuf import json_format
from kassign.cli.next_round import next_request
from kassign.server.runtime.app import GC_THRESHOLDS
from kassign.server.streams.servicer import NullObserver, assign_request
from kassign.v1 import assignment_pb2 as pb
from malloc_served import min_traffic_request
from memory_bench import streams_group
from solve_clock import solve_clock

_GROUP_12 = Path(__file__).resolve().parent / "ghz" / "data" / "group_12.json"


def _group_12() -> bytes:
    request = json_format.ParseDict(json.loads(_GROUP_12.read_text()), pb.AssignRequest())
    return request.SerializeToString()


def _history_10k() -> bytes:
    """The 10,000 x 1,000 group's next round: its first answer fed back as history."""
    data = min_traffic_request()
    answer = assign_request(data).wire.message()
    return next_request(pb.AssignRequest.FromString(data), answer).SerializeToString()


REQUESTS: dict[str, Callable[[], bytes]] = {
    "12": _group_12,
    "10k": min_traffic_request,
    "100k": lambda: streams_group(100_000, 5_000).SerializeToString(),
    "10k-history": _history_10k,
}
DEFAULT = ("12", "10k", "100k")
"""What runs without ``--only``."""
BENCH = "streams_call"
"""The guard's records: ``bench/baselines/streams_call.json``."""


class _Phases(NullObserver):
    """Each phase's seconds (the rest of what an observer hears is not read)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def on_phase(self, phase: str, seconds: float) -> None:
        self.seconds[phase] = self.seconds.get(phase, 0.0) + seconds


class Measured(NamedTuple):
    """The best call's CPU ms, its phases (wall ms), its own solves (CPU ms, runs), and each
    call's CPU over its own solves (empty when the calls solve nothing)."""

    cpu: float
    phases: dict[str, float]
    own_solves: float
    solves: int
    ratios: tuple[float, ...]


def measure(data: bytes, calls: int) -> Measured:
    """The best of ``calls`` calls after one warm-up, every solve inside them timed."""
    assign_request(data)
    best = Measured(float("inf"), {}, 0.0, 0, ())
    ratios = []
    with solve_clock() as clock:
        for _ in range(calls):
            observer = _Phases()
            clock.reset()
            start = time.process_time()
            assign_request(data, observer=observer)
            cpu = (time.process_time() - start) * 1000
            if clock.runs:
                ratios.append(cpu / max(clock.cpu * 1000, 1e-9))
            if cpu < best.cpu:
                phases = {k: v * 1000 for k, v in observer.seconds.items()}
                best = Measured(cpu, phases, clock.cpu * 1000, clock.runs, ())
    return best._replace(ratios=tuple(ratios))


def shown(measured: Measured) -> str:
    """The bench's line after the request's name."""
    phases = " ".join(f"{k} {v:.1f}" for k, v in sorted(measured.phases.items()))
    line = f"best cpu {measured.cpu:.2f} ms ({phases})"
    if measured.solves and measured.ratios:
        line += (
            f"; {measured.cpu / max(measured.own_solves, 1e-9):.1f}x its own"
            f" {measured.solves} solves ({measured.own_solves:.1f} ms cpu; every call"
            f" {min(measured.ratios):.1f}-{max(measured.ratios):.1f}x)"
        )
    return line


def _calls(name: str, calls: int) -> int:
    """The 12-task call is short: it is run twenty times as often."""
    return calls * 20 if name == "12" else calls


def guarded(calls: int) -> list[Line]:
    """The guard's lines (module docstring): two over their own solves, two over the
    reference workload."""
    own = [
        Line(f"{name} over its own solves", min(measure(REQUESTS[name](), calls).ratios), "solves")
        for name in ("10k", "10k-history")
    ]

    def cpu() -> list[Line]:
        return [
            Line(f"{name} call", measure(REQUESTS[name](), _calls(name, calls)).cpu / 1000)
            for name in ("12", "100k")
        ]

    return [*own, *per_reference(cpu)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--only", choices=sorted(REQUESTS), action="append")
    add_modes(parser)
    args = parser.parse_args(argv)
    gc.set_threshold(*GC_THRESHOLDS)
    if args.check or args.record:
        return run_check(BENCH, lambda: guarded(args.calls), record=args.record)
    for name in args.only or DEFAULT:
        data = REQUESTS[name]()
        print(f"{name}: {shown(measure(data, _calls(name, args.calls)))}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
