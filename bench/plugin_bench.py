"""The JVM plug-ins' whole ``assign()`` against the Kafka assignor each replaces, as a leader runs it.

In one JVM (``io.kassign.bench.PluginBench`` in ``clients/java``'s test sources, compiled against
Kafka's real jars; the newest Kafka the pom tests, 4.3.1, swapped in as its second test run does),
on the same ``Cluster`` and ``GroupSubscription``, warm, best of a few, the two sides interleaved
so that the machine's noise falls on both:

- consumer groups, Kafka's large-test shapes (``TOPICSxPARTITIONSxMEMBERS``: every member
  subscribed to every topic, fresh, no racks): Kafka's ``sticky``, ``cooperative-sticky`` and
  ``range`` against ``io.kassign.consumer.KassignConsumerAssignor`` asking the service for the same
  assignor, whose answer must be equal (each member's partitions); ``--scenarios fresh,leave``:
  ``leave`` is the next rebalance once the first member has left, each member owning what Kafka
  gave it (eager ``sticky``'s previous assignment in its userData, as Kafka's StickyAssignor sends it);
- Kafka Streams (``TASKSxCLIENTS``: all tasks stateful, one standby, fresh clients of two threads):
  Kafka's KIP-924 ``StickyTaskAssignor`` against ``io.kassign.streams.KassignTaskAssignor`` (the
  service's default assignor); the answers differ by design, so both are only checked with
  Kafka's ``TaskAssignmentUtils.validateTaskAssignment``.

The plug-ins call a ``kassign serve`` started here (one worker, loopback). Each line is printed
as plug-in / Kafka; a consumer line also gives the best CPU time of the calling thread on each side
(the plug-in's is the JVM's own work: its thread is parked during the call); a line whose plug-in fell back to Kafka's own assignor says so. The classpath
is ``clients/java``'s test classpath (``mvn process-test-classes dependency:build-classpath``, so
``make java`` first, for ~/.m2). Nothing here asserts a time.

Usage: ``python bench/plugin_bench.py [--sizes small,medium,large] [--streams 1000x100,10000x1000]
[--assignors sticky,cooperative-sticky,range] [--scenarios fresh,leave] [--repeats 3] [--warmup 2] [--main-classes DIR]
[--jvm=-XX:StartFlightRecording=filename=bench.jfr]``;
``--sizes`` also takes explicit shapes (``5x200x50``); ``--streams ''`` leaves Streams out;
``--main-classes`` times another build's plug-ins (a copy of its ``clients/java/target/classes``)
with this bench, for a before/after.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from serving import kassign_serve

from tests.differential.maven import ROOT

KAFKA_VERSION = "4.3.1"  # clients/java/pom.xml's kafka.newest.version
PROJECT = ROOT / "clients" / "java"
MAIN_CLASS = "io.kassign.bench.PluginBench"
# Kafka's large-test shapes (franz-go's BenchmarkJava): topics x partitions x members
SHAPES = {"small": "50x800x800", "medium": "50x1000x1000", "large": "500x2000x2000"}


def classpath(log: Path, main_classes: Path | None) -> str:
    """``clients/java``'s test classpath, with the newest Kafka's jars in place of the pom's, and
    ``main_classes`` (another build's ``target/classes``) in place of this build's if given."""
    listing = PROJECT / "target" / "bench-classpath.txt"
    with log.open("wb") as sink:
        status = subprocess.run(
            ["mvn", "-B", "-q", "-Dstyle.color=never", "-f", str(PROJECT / "pom.xml")]
            + ["process-test-classes", "dependency:build-classpath"]
            + [f"-Dmdep.outputFile={listing}", "-Dmdep.includeScope=test"],
            stdout=sink,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            timeout=900,
            check=False,
        ).returncode
    if status != 0:
        last = "\n".join(log.read_text(errors="replace").splitlines()[-60:])
        raise RuntimeError(f"mvn for {PROJECT.relative_to(ROOT)} failed; {log} ends:\n{last}")
    newest = PROJECT / "target" / f"kafka-{KAFKA_VERSION}"
    swapped = [str(jar) for jar in sorted(newest.glob("kafka-*.jar"))]
    if len(swapped) != 2:
        raise RuntimeError(f"{newest} should hold kafka-clients and kafka-streams {KAFKA_VERSION}")
    deps = [
        jar
        for jar in listing.read_text().strip().split(os.pathsep)
        if not Path(jar).name.startswith(("kafka-clients-", "kafka-streams-"))
    ]
    main = main_classes or PROJECT / "target" / "classes"
    classes = [str(PROJECT / "target" / "test-classes"), str(main)]
    return os.pathsep.join(classes + swapped + deps)


def describe(line: dict[str, Any]) -> str:
    """One printed line: the shape, both times, the ratio, and whether the answer may be trusted."""
    kafka_ms, plugin_ms = float(line["kafka_ms"]), float(line["plugin_ms"])
    if line["kind"] == "consumer":
        topics, partitions, members = (int(x) for x in str(line["shape"]).split("x"))
        shape = f"{topics * partitions:>9,} partitions x {members:>5,} members"
        verdict = "same answer" if line["equal"] else "ANSWERS DIFFER"
        name = f"{line['assignor']} {line['scenario']}"
    else:
        tasks, clients = (int(x) for x in str(line["shape"]).split("x"))
        shape = f"{tasks:>9,} tasks      x {clients:>5,} clients"
        verdict = "both valid" if line["valid"] else "INVALID"
        name = "KIP-924 sticky"
    if "plugin_cpu_ms" in line:
        verdict += (
            f"; CPU of the calling thread: plug-in {float(line['plugin_cpu_ms']):.1f} ms,"
            f" Kafka {float(line['kafka_cpu_ms']):.1f} ms"
        )
    if float(line["fallbacks"]):
        verdict += f", FELL BACK {int(float(line['fallbacks']))} times"
    return (
        f"{shape}  {name:<24} Kafka {kafka_ms:9.1f} ms  plug-in {plugin_ms:9.1f} ms"
        f"  {plugin_ms / kafka_ms:6.2f}x  {verdict}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="small,medium,large")
    parser.add_argument("--streams", default="1000x100,10000x1000")
    parser.add_argument("--assignors", default="sticky,cooperative-sticky,range")
    parser.add_argument("--scenarios", default="fresh", help="fresh,leave (a member has left)")
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
        "--main-classes",
        type=Path,
        help="the plug-ins' classes of another build (a copy of its clients/java/target/classes),"
        " to time it against Kafka with this build's bench",
    )
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so ``served`` stops its server
    shapes = [SHAPES.get(s, s) for s in args.sizes.split(",") if s]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"machine: {os.cpu_count()} cores, load average {load}; Kafka {KAFKA_VERSION};"
        f" best of {args.repeats} after {args.warmup} warm-up calls, interleaved; plug-in / Kafka",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as work:
        cp = classpath(Path(work) / "mvn.log", args.main_classes)
    with kassign_serve() as target:
        # the tests' SLF4J provider prints: INFO and WARN off on both sides (Kafka's sticky logs
        # the whole assignment at INFO); fallbacks are read from the plug-ins' metrics
        quiet = "-Dkassign.testlog.level=ERROR"
        command = ["java", f"-Xmx{args.heap}", quiet, *args.jvm, "-cp", cp, MAIN_CLASS]
        command += ["--target", target]
        command += ["--consumer", ",".join(shapes), "--streams", args.streams]
        command += ["--assignors", args.assignors, "--scenarios", args.scenarios]
        command += ["--repeats", str(args.repeats)]
        command += ["--warmup", str(args.warmup)]
        with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as bench:
            assert bench.stdout is not None
            for text in bench.stdout:
                if text.startswith("bench {"):
                    print(describe(json.loads(text.removeprefix("bench "))), flush=True)
                else:
                    print(text, end="", flush=True)
        if bench.returncode != 0:
            raise SystemExit(f"{MAIN_CLASS} exited {bench.returncode}")


if __name__ == "__main__":
    main()
