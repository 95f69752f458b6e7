"""The load figures of docs/operations.md: bench/load.py and ghz against ``kassign serve``.

For each worker count (``--workers 1 2``) it starts a real server, then runs, interleaved and
repeated, the empty-RPC baseline (health ``Check``), the 12-task group and the 200-task group,
each for ``--seconds`` after a short warm-up, from each generator: ``bench/load.py`` (Python,
``--processes`` processes) and ghz (Go, ``.venv/bin/ghz`` from ``make ghz``, ``-z`` for the same
seconds with the same concurrency and connections). It prints requests/s (median, min, max over
the repeats), the median 50th and 99th latency percentiles, and the CPU time the server
processes and the generator spent per call (read from /proc and ``getrusage``), which a busy
shared machine disturbs far less than requests/s. Then the ratios, per generator and always
against that generator's baseline measured in the same run: each group's requests/s and
latency against the baseline's, and 2 workers against 1.

    .venv/bin/python bench/ghz/figures.py --seconds 8 --repeats 3
    .venv/bin/python bench/ghz/figures.py --generators load   # without ghz
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CASES", "GENERATORS", "cpu_seconds", "cpu_ticks", "ghz_case", "load_case", "main"]

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "bench" / "ghz" / "data"
CASES = {"health": None, "group_12": DATA / "group_12.json", "group_200": DATA / "group_200.json"}
TICKS = os.sysconf("SC_CLK_TCK")
GHZ = ROOT / ".venv" / "bin" / "ghz"
GENERATORS = ("load", "ghz")


@dataclass(frozen=True, slots=True)
class Run:
    workers: int
    case: str
    generator: str  # "load" (bench/load.py) or "ghz"
    rps: float
    calls: int
    server_cpu: float  # seconds, all worker processes
    client_cpu: float  # seconds, all generator processes, while sending
    codes: dict[str, int]
    phases: dict[str, tuple[float, float]]  # phase -> (seconds, calls), from /metrics
    latency_ms: dict[int, float]  # percentile -> latency


def _latencies(report: dict[str, Any]) -> dict[int, float]:
    """``latencyDistribution`` (ghz's and load.py's alike) as percentile -> ms."""
    return {int(d["percentage"]): d["latency"] / 1e6 for d in report["latencyDistribution"]}


def cpu_ticks(pid: int) -> tuple[int, int]:
    """User and system CPU of ``pid`` so far, in clock ticks (``/proc``'s utime, stime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


def cpu_seconds(pids: list[int]) -> float:
    return sum(sum(cpu_ticks(pid)) for pid in pids) / TICKS


def _phases(metrics_url: str) -> dict[str, tuple[float, float]]:
    """Seconds and count of ``kassign_assignment_seconds`` per phase, summed over workers."""
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(metrics_url, timeout=10) as response:
        text = response.read().decode()
    totals: dict[str, list[float]] = {}
    for family in text_string_to_metric_families(text):
        if family.name != "kassign_assignment_seconds":
            continue
        for sample in family.samples:
            entry = totals.setdefault(sample.labels["phase"], [0.0, 0.0])
            if sample.name.endswith("_sum"):
                entry[0] += sample.value
            elif sample.name.endswith("_count"):
                entry[1] += sample.value
    return {phase: (v[0], v[1]) for phase, v in sorted(totals.items())}


def _delta(
    after: dict[str, tuple[float, float]], before: dict[str, tuple[float, float]]
) -> dict[str, tuple[float, float]]:
    zero = (0.0, 0.0)
    return {
        k: (v[0] - before.get(k, zero)[0], v[1] - before.get(k, zero)[1]) for k, v in after.items()
    }


def _start_server(
    workers: int, tmp: Path, options: Sequence[str] = ()
) -> tuple[subprocess.Popen[bytes], str, list[int], str]:
    """``kassign serve --workers N`` on loopback with ``options`` added; its pids and metrics."""
    port_file, log = tmp / f"port-{workers}", tmp / f"serve-{workers}.log"
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
                "--metrics-host",
                "127.0.0.1",
                *options,
            ],
            cwd=ROOT,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 120
    while (
        log.read_text().count("kassign serving on") < workers
        or not port_file.exists()
        or "metrics on" not in log.read_text()
    ):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"server did not start:\n{log.read_text()}")
        time.sleep(0.1)
    text = log.read_text()
    pids = [int(p) for p in re.findall(r"kassign serving on \S+ \(pid (\d+)\)", text)]
    metrics = re.search(r"metrics on (http://\S+/metrics)", text)
    if metrics is None:
        raise SystemExit(f"no metrics endpoint:\n{text}")
    return proc, f"127.0.0.1:{port_file.read_text().strip()}", pids, metrics.group(1)


def load_case(target: str, case: str, seconds: float, args: argparse.Namespace) -> dict[str, Any]:
    what = ["--health"] if CASES[case] is None else ["--data", str(CASES[case])]
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "load.py"),
            "--target",
            target,
            *what,
            "--duration",
            str(seconds),
            "--concurrency",
            str(args.concurrency),
            "--connections",
            str(args.connections),
            "--processes",
            str(args.processes),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=seconds + 300,
    )
    if not result.stdout:
        raise SystemExit(f"load.py failed: {result.stderr}")
    report: dict[str, Any] = json.loads(result.stdout)  # load.py's JSON summary
    return report


def ghz_case(target: str, case: str, seconds: float, args: argparse.Namespace) -> dict[str, Any]:
    """ghz's ``-O json`` report for one case, plus ``clientCpuSeconds`` (ghz's own CPU time).

    ghz runs for ``seconds`` (``-z``, the calls in flight at the end finish and count, as in
    load.py) with the same calls in flight and connections as load.py; its CPU time (``getrusage`` of the waited child) includes its start and reflection lookup.
    """
    data = CASES[case]
    what = (
        ["--call", "grpc.health.v1.Health.Check", "-d", "{}"]
        if data is None
        else ["--call", "kassign.v1.TaskAssignmentService.Assign", "-D", str(data)]
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(
        [
            str(GHZ),
            "--insecure",
            *what,
            "-z",
            f"{seconds:g}s",
            "--duration-stop",
            "wait",  # calls in flight at the end finish and count, as in load.py
            "--concurrency",
            str(args.concurrency),
            "--connections",
            str(args.connections),
            "--timeout",
            "120s",
            "-O",
            "json",
            target,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=seconds + 300,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0 or not result.stdout:
        raise SystemExit(f"ghz failed ({result.returncode}): {result.stderr}")
    report: dict[str, Any] = json.loads(result.stdout)
    report["clientCpuSeconds"] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return report


def _run(generator: str, target: str, case: str, seconds: float, args: argparse.Namespace) -> Any:
    return (ghz_case if generator == "ghz" else load_case)(target, case, seconds, args)


def measure(workers: int, args: argparse.Namespace, tmp: Path) -> list[Run]:
    proc, target, pids, metrics_url = _start_server(workers, tmp)
    runs = []
    try:
        for case in CASES:
            for generator in args.generators:
                _run(generator, target, case, args.warmup, args)
        for _ in range(args.repeats):
            for case in CASES:
                for generator in args.generators:
                    server0, phases0 = cpu_seconds(pids), _phases(metrics_url)
                    report = _run(generator, target, case, args.seconds, args)
                    runs.append(
                        Run(
                            workers,
                            case,
                            generator,
                            float(report["rps"]),
                            int(report["count"]),
                            cpu_seconds(pids) - server0,
                            float(report["clientCpuSeconds"]),
                            dict(report["statusCodeDistribution"]),
                            _delta(_phases(metrics_url), phases0),
                            _latencies(report),
                        )
                    )
                    print(
                        f"  workers={workers} {case:9} {generator:4} {runs[-1].rps:8.1f} req/s"
                        f" {runs[-1].codes}",
                        file=sys.stderr,
                        flush=True,
                    )
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    return runs


def _mine(runs: list[Run], workers: int, case: str, generator: str) -> list[Run]:
    return [r for r in runs if (r.workers, r.case, r.generator) == (workers, case, generator)]


def _median_rps(runs: list[Run], workers: int, case: str, generator: str = "load") -> float:
    return statistics.median(r.rps for r in _mine(runs, workers, case, generator))


def _median_latency(runs: list[Run], workers: int, case: str, generator: str, pct: int) -> float:
    return statistics.median(r.latency_ms[pct] for r in _mine(runs, workers, case, generator))


def report(runs: list[Run], worker_counts: list[int]) -> str:
    generators = [g for g in GENERATORS if any(r.generator == g for r in runs)]
    header = "workers case       generator  req/s median [min-max]  p50 ms  p99 ms"
    lines = [header + "  server CPU ms/call  client CPU ms/call"]
    for workers in worker_counts:
        for case in CASES:
            for generator in generators:
                mine = _mine(runs, workers, case, generator)
                rps = sorted(r.rps for r in mine)
                calls = sum(r.calls for r in mine)
                p50, p99 = (_median_latency(runs, workers, case, generator, p) for p in (50, 99))
                lines.append(
                    f"{workers:7} {case:10} {generator:9}"
                    f" {statistics.median(rps):9.1f} [{rps[0]:.1f}-{rps[-1]:.1f}]"
                    f"{p50:8.2f}{p99:8.2f}"
                    f"{1000 * sum(r.server_cpu for r in mine) / calls:20.2f}"
                    f"{1000 * sum(r.client_cpu for r in mine) / calls:20.2f}"
                )
    lines.append("")
    lines.append("mean ms per call by phase (kassign_assignment_seconds, all workers' runs):")
    for case in ("group_12", "group_200"):
        mine = [r for r in runs if r.case == case]
        phases = sorted({p for r in mine for p in r.phases})
        parts = []
        for phase in phases:
            seconds = sum(r.phases.get(phase, (0.0, 0.0))[0] for r in mine)
            count = sum(r.phases.get(phase, (0.0, 0.0))[1] for r in mine)
            parts.append(f"{phase} {1000 * seconds / count:.2f}" if count else f"{phase} -")
        lines.append(f"  {case}: " + ", ".join(parts))
    lines.append("")
    lines.append("against the same generator's baseline (health Check) in this run:")
    for workers in worker_counts:
        for case in ("group_12", "group_200"):
            parts = []
            for generator in generators:
                share = _median_rps(runs, workers, case, generator) / _median_rps(
                    runs, workers, "health", generator
                )
                p50, p99 = (
                    _median_latency(runs, workers, case, generator, p)
                    / _median_latency(runs, workers, "health", generator, p)
                    for p in (50, 99)
                )
                parts.append(
                    f"{generator} {100 * share:.1f}% of the req/s, p50 x{p50:.1f}, p99 x{p99:.1f}"
                )
            lines.append(f"workers={workers}: {case}: " + "; ".join(parts))
    if 1 in worker_counts and 2 in worker_counts:
        for case in CASES:
            parts = [
                f"{g} {_median_rps(runs, 2, case, g) / _median_rps(runs, 1, case, g):.2f}x"
                for g in generators
            ]
            lines.append(f"{case}: 2 workers / 1 worker = " + ", ".join(parts))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--seconds", type=float, default=8.0, help="per measured run")
    p.add_argument("--warmup", type=float, default=1.0, help="per case, not measured")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument(
        "--connections", type=int, default=16, help="many: SO_REUSEPORT spreads connections"
    )
    p.add_argument("--processes", type=int, default=2, help="load.py's generator processes")
    p.add_argument(
        "--generators", nargs="+", choices=GENERATORS, default=list(GENERATORS), help="who loads"
    )
    args = p.parse_args(argv)
    if "ghz" in args.generators and not GHZ.exists():
        raise SystemExit(f"figures.py: no {GHZ}: run `make ghz`, or give --generators load")
    with tempfile.TemporaryDirectory(prefix="kassign-figures-") as tmp:
        runs = [r for w in args.workers for r in measure(w, args, Path(tmp))]
    print(
        f"load: {args.concurrency} in flight over {args.connections} connections from "
        f"{' and '.join(args.generators)} (load.py in {args.processes} process(es)), "
        f"{args.seconds:g} s x {args.repeats} per case and generator; "
        f"load average at the end {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    print(report(runs, args.workers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
