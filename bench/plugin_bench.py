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
as plug-in / Kafka, with the best CPU time of the calling thread on each side
(the plug-in's is the JVM's own work: its thread is parked during the call); a line whose plug-in fell back to Kafka's own assignor says so. The classpath
is ``clients/java``'s test classpath (``mvn process-test-classes dependency:build-classpath``, so
``make java`` first, for ~/.m2). Nothing here asserts a time.

Usage: ``python bench/plugin_bench.py [--sizes small,medium,large] [--streams 1000x100,10000x1000]
[--assignors sticky,cooperative-sticky,range] [--scenarios fresh,leave] [--repeats 3] [--warmup 2] [--main-classes DIR]
[--jvm=-XX:StartFlightRecording=filename=bench.jfr] [--server-log FILE]``;
``--sizes`` also takes explicit shapes (``5x200x50``); ``--streams ''`` leaves Streams out;
``--main-classes`` times another build's plug-ins (a copy of its ``clients/java/target/classes``)
with this bench, for a before/after; ``--server-log`` keeps the server's call log (its time of
each call, to set against the plug-in's wall).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from jvm_bench import (
    LARGE_TEST_SHAPES,
    ROOT,
    add_jvm_options,
    machine_line,
    run_bench_class,
    test_jars,
)

KAFKA_VERSION = "4.3.1"  # clients/java/pom.xml's kafka.newest.version
PROJECT = ROOT / "clients" / "java"
MAIN_CLASS = "io.kassign.bench.PluginBench"


def classpath(log: Path, main_classes: Path | None) -> str:
    """``clients/java``'s test classpath, with the newest Kafka's jars in place of the pom's, and
    ``main_classes`` (another build's ``target/classes``) in place of this build's if given."""
    jars = test_jars(PROJECT, "process-test-classes", log)
    newest = PROJECT / "target" / f"kafka-{KAFKA_VERSION}"
    swapped = [str(jar) for jar in sorted(newest.glob("kafka-*.jar"))]
    if len(swapped) != 2:
        raise RuntimeError(f"{newest} should hold kafka-clients and kafka-streams {KAFKA_VERSION}")
    deps = [
        jar for jar in jars if not Path(jar).name.startswith(("kafka-clients-", "kafka-streams-"))
    ]
    main = main_classes or PROJECT / "target" / "classes"
    return os.pathsep.join([str(PROJECT / "target" / "test-classes"), str(main), *swapped, *deps])


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
    add_jvm_options(parser, "clients/java")
    args = parser.parse_args(argv)
    shapes = [LARGE_TEST_SHAPES.get(s, s) for s in args.sizes.split(",") if s]
    print(
        machine_line(
            f"Kafka {KAFKA_VERSION}; best of {args.repeats} after {args.warmup} warm-up calls,"
            " interleaved; plug-in / Kafka"
        ),
        flush=True,
    )
    with tempfile.TemporaryDirectory() as work:
        cp = classpath(Path(work) / "mvn.log", args.main_classes)
    options = ["--consumer", ",".join(shapes), "--streams", args.streams]
    options += ["--assignors", args.assignors, "--scenarios", args.scenarios]
    run_bench_class(MAIN_CLASS, cp, args, options, describe)


if __name__ == "__main__":
    main()
