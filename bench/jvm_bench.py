"""What the JVM plug-in benches share: their common options, the Maven test classpath, the run.

``plugin_bench.py`` (the leader-side plug-ins) and ``broker_plugin_bench.py`` (the broker-side
ones) each run one bench class of a Maven module's test sources in a JVM that calls a ``kassign
serve`` started here, and print the JSON lines it writes (``bench {...}``) in their own words.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from serving import kassign_serve

from tests.differential.maven import ROOT

__all__ = [
    "LARGE_TEST_SHAPES",
    "ROOT",
    "add_jvm_options",
    "machine_line",
    "run_bench_class",
    "test_jars",
]

# Kafka's large-test shapes (franz-go's BenchmarkJava): topics x partitions x members
LARGE_TEST_SHAPES = {"small": "50x800x800", "medium": "50x1000x1000", "large": "500x2000x2000"}


def add_jvm_options(parser: argparse.ArgumentParser, module: str) -> None:
    """The options every JVM bench takes: repeats, warm-ups, heap, JVM flags, another build."""
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--heap", default="8g", help="the JVM's -Xmx")
    parser.add_argument(
        "--jvm",
        action="append",
        default=[],
        help="another JVM option, e.g. --jvm=-XX:StartFlightRecording=filename=bench.jfr (repeatable)",
    )
    parser.add_argument(
        "--server-log",
        type=Path,
        help="append the kassign server's output there: its call log gives the server's time of each call",
    )
    parser.add_argument(
        "--server-journal",
        type=Path,
        help="the kassign server's journal directory (serve --journal): the plug-ins' requests as"
        " sent, for bench/call_split.py --journal (it slows the server's calls: not for timing)",
    )
    parser.add_argument(
        "--main-classes",
        type=Path,
        help=f"the plug-ins' classes of another build (a copy of its {module}/target/classes),"
        " to time it against Kafka with this build's bench",
    )


def test_jars(module: Path, goal: str, log: Path) -> list[str]:
    """``module``'s test-scope dependency jars, after ``mvn goal`` compiled its tests."""
    listing = module / "target" / "bench-classpath.txt"
    command = ["mvn", "-B", "-q", "-Dstyle.color=never", "-f", str(module / "pom.xml")]
    command += [goal, "dependency:build-classpath"]
    command += [f"-Dmdep.outputFile={listing}", "-Dmdep.includeScope=test"]
    with log.open("wb") as sink:
        status = subprocess.run(
            command, stdout=sink, stderr=subprocess.STDOUT, cwd=ROOT, timeout=900, check=False
        ).returncode
    if status != 0:
        last = "\n".join(log.read_text(errors="replace").splitlines()[-60:])
        raise RuntimeError(f"mvn {goal} in {module.relative_to(ROOT)} failed; {log} ends:\n{last}")
    return listing.read_text().strip().split(os.pathsep)


def machine_line(what: str) -> str:
    """The first printed line: cores, load average (the figures' context), and ``what``."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"machine: {os.cpu_count()} cores, load average {load}; {what}"


def run_bench_class(
    main_class: str,
    classpath: str,
    args: argparse.Namespace,
    options: list[str],
    describe: Callable[[dict[str, Any]], str],
) -> None:
    """Run ``main_class`` against a served kassign; print each ``bench`` line as ``describe``
    words it and everything else as it comes."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so kassign_serve stops its server
    with kassign_serve(args.server_log, args.server_journal) as target:
        # the tests' SLF4J provider prints: INFO and WARN off on both sides (Kafka's sticky logs
        # the whole assignment at INFO); fallbacks are read from the plug-ins' metrics
        command = ["java", f"-Xmx{args.heap}", "-Dkassign.testlog.level=ERROR", *args.jvm]
        command += ["-cp", classpath, main_class, "--target", target, *options]
        command += ["--repeats", str(args.repeats), "--warmup", str(args.warmup)]
        with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as jvm:
            assert jvm.stdout is not None
            for text in jvm.stdout:
                if text.startswith("bench {"):
                    print(describe(json.loads(text.removeprefix("bench "))), flush=True)
                else:
                    print(text, end="", flush=True)
        if jvm.returncode != 0:
            raise SystemExit(f"{main_class} exited {jvm.returncode}")
