"""The load figures of docs/operations.md: bench/load.py against ``kassign serve --workers 1`` and 2.

For each worker count it starts a real server, then runs, interleaved and repeated, the empty-RPC
baseline (health ``Check``), the 12-task group and the 200-task group, each for ``--seconds``
after a short warm-up. It prints requests/s (median, min, max over the repeats) and the CPU time
the server processes and the generator processes spent per call (read from /proc and
``getrusage``), which a busy shared machine disturbs far less than requests/s. Then the ratios
the issue asks for: each group against the baseline, and 2 workers against 1.

    .venv/bin/python bench/ghz/figures.py --seconds 8 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CASES", "cpu_seconds", "load_case", "main"]

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "bench" / "ghz" / "data"
CASES = {"health": None, "group_12": DATA / "group_12.json", "group_200": DATA / "group_200.json"}
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class Run:
    workers: int
    case: str
    rps: float
    calls: int
    server_cpu: float  # seconds, all worker processes
    client_cpu: float  # seconds, all generator processes, while sending
    codes: dict[str, int]
    phases: dict[str, tuple[float, float]]  # phase -> (seconds, calls), from /metrics


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


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


def _start_server(workers: int, tmp: Path) -> tuple[subprocess.Popen[bytes], str, list[int], str]:
    port_file, log = tmp / f"port-{workers}", tmp / f"serve-{workers}.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "server",
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


def measure(workers: int, args: argparse.Namespace, tmp: Path) -> list[Run]:
    proc, target, pids, metrics_url = _start_server(workers, tmp)
    runs = []
    try:
        for case in CASES:
            load_case(target, case, args.warmup, args)
        for _ in range(args.repeats):
            for case in CASES:
                server0, phases0 = cpu_seconds(pids), _phases(metrics_url)
                report = load_case(target, case, args.seconds, args)
                runs.append(
                    Run(
                        workers,
                        case,
                        float(report["rps"]),
                        int(report["count"]),
                        cpu_seconds(pids) - server0,
                        float(report["clientCpuSeconds"]),
                        dict(report["statusCodeDistribution"]),
                        _delta(_phases(metrics_url), phases0),
                    )
                )
                print(
                    f"  workers={workers} {case:9} {runs[-1].rps:8.1f} req/s {runs[-1].codes}",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    return runs


def _median_rps(runs: list[Run], workers: int, case: str) -> float:
    return statistics.median(r.rps for r in runs if r.workers == workers and r.case == case)


def report(runs: list[Run], worker_counts: list[int]) -> str:
    lines = ["workers case          req/s median [min-max]  server CPU ms/call  client CPU ms/call"]
    for workers in worker_counts:
        for case in CASES:
            mine = [r for r in runs if r.workers == workers and r.case == case]
            rps = sorted(r.rps for r in mine)
            calls = sum(r.calls for r in mine)
            lines.append(
                f"{workers:7} {case:10} {statistics.median(rps):9.1f} [{rps[0]:.1f}-{rps[-1]:.1f}]"
                f"{1000 * sum(r.server_cpu for r in mine) / calls:17.2f}"
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
    for workers in worker_counts:
        base = _median_rps(runs, workers, "health")
        for case in ("group_12", "group_200"):
            share = _median_rps(runs, workers, case) / base
            lines.append(f"workers={workers}: {case} at {100 * share:.1f}% of the baseline's req/s")
    if 1 in worker_counts and 2 in worker_counts:
        for case in CASES:
            ratio = _median_rps(runs, 2, case) / _median_rps(runs, 1, case)
            lines.append(f"{case}: 2 workers / 1 worker = {ratio:.2f}x")
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
    p.add_argument("--processes", type=int, default=2, help="generator processes")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kassign-figures-") as tmp:
        runs = [r for w in args.workers for r in measure(w, args, Path(tmp))]
    print(
        f"load: {args.concurrency} in flight over {args.connections} connections from "
        f"{args.processes} generator process(es), {args.seconds:g} s x {args.repeats} per case; "
        f"load average at the end {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    print(report(runs, args.workers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
