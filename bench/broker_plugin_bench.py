"""The broker plug-ins' whole ``assign()`` against the Kafka assignor each replaces, as a coordinator runs it.

In one JVM (``io.kassign.broker.BrokerPluginBench`` in ``clients/java/broker``'s test sources,
compiled against Kafka 4.4.0's group coordinator), on the same ``GroupSpec`` and describer, Kafka's
own classes (a KRaft metadata image replayed from metadata records), warm, best of a few, the two
sides interleaved so that the machine's noise falls on both:

- KIP-848 consumer groups, Kafka's large-test shapes (``TOPICSxPARTITIONSxMEMBERS``: every member
  subscribed to every topic, no member racks, replicas in three racks), fresh and with a member
  leaving: Kafka's ``UniformAssignor`` against ``KassignConsumerGroupAssignor`` (its default,
  ``rack-optimal``: a different assignor, so both are checked valid and balanced), and Kafka's
  server-side ``RangeAssignor`` against the plug-in asking for ``range`` (equal where they agree,
  else valid and balanced topic by topic);
- KIP-1071 streams groups (``TASKSxCLIENTS``: ten stateful subtopologies, one standby, fresh
  members): Kafka's streams-group ``StickyTaskAssignor`` against ``KassignStreamsTaskAssignor``,
  both checked valid.

The plug-ins call a ``kassign serve`` started here (one worker, loopback). Each line prints both
wall times (what the coordinator waits; the issue's ratio, plug-in / Kafka) and the JVM's CPU
times (the plug-in's own conversions; the service's CPU is not in it), and says whether the
answers are equal, valid, balanced, and whether the plug-in fell back. Then the JVM's own work
alone, as thread CPU time, robust to the service's load: building the request, and checking and
converting one real answer. The classpath is
``clients/java/broker``'s test classpath (``make java`` first). Nothing here asserts a time.

Usage: ``python bench/broker_plugin_bench.py [--sizes small,medium,large] [--cases fresh,leave]
[--assignors uniform,range] [--streams 1000x100,10000x1000] [--repeats 3] [--warmup 2]
[--main-classes DIR] [--jvm=-XX:StartFlightRecording=filename=broker.jfr]``; ``--sizes`` also
takes explicit shapes (``5x200x50``); ``--main-classes`` times another build's plug-ins (a copy of
its ``clients/java/broker/target/classes``) for a before/after.
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

MODULE = ROOT / "clients" / "java" / "broker"
BENCH_CLASS = "io.kassign.broker.BrokerPluginBench"


def test_classpath(log: Path, main_classes: Path | None) -> str:
    """The broker module's compiled tests, its classes (or ``main_classes``) and its test deps."""
    jars = test_jars(MODULE, "test-compile", log)
    own = [MODULE / "target" / "test-classes", main_classes or MODULE / "target" / "classes"]
    return os.pathsep.join([*(str(p) for p in own), *jars])


def line_text(line: dict[str, Any]) -> str:
    """One printed line: shape and case, wall and JVM CPU of each side, the ratio, the checks."""
    kafka, plugin = float(line["kafka_ms"]), float(line["plugin_ms"])
    dims = [int(x) for x in str(line["shape"]).split("x")]
    if line["kind"] == "consumer":
        what = f"{dims[0] * dims[1]:>9,} partitions x {dims[2]:>5,} members {line['case']:<5}"
        checks = ["same answer" if line["equal"] else "differ"]
        checks += [
            "valid" if line["valid"] else "INVALID",
            "balanced" if line["balanced"] else "UNBALANCED",
        ]
    else:
        what = f"{dims[0]:>9,} tasks      x {dims[1]:>5,} clients {line['case']:<5}"
        checks = ["valid" if line["valid"] else "INVALID"]
    fell = int(float(line["fallbacks"]))
    checks.append(f"FELL BACK {fell} times" if fell else "no fallback")
    return (
        f"{what} {line['assignor']:<7} Kafka {kafka:8.1f} ms (cpu {float(line['kafka_cpu_ms']):8.1f})"
        f"  plug-in {plugin:8.1f} ms (jvm cpu {float(line['plugin_cpu_ms']):8.1f})"
        f"  {plugin / kafka:6.2f}x  {', '.join(checks)}; the JVM's own work (thread CPU):"
        f" request {float(line['request_cpu_ms']):.1f} ms, answer {float(line['answer_cpu_ms']):.1f} ms"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="small,medium,large")
    parser.add_argument("--cases", default="fresh,leave")
    parser.add_argument("--assignors", default="uniform,range")
    parser.add_argument("--streams", default="1000x100,10000x1000")
    add_jvm_options(parser, "clients/java/broker")
    args = parser.parse_args(argv)
    consumer = ",".join(LARGE_TEST_SHAPES.get(s, s) for s in args.sizes.split(",") if s)
    print(
        machine_line(
            f"Kafka 4.4.0 group coordinator; best of {args.repeats} after {args.warmup} warm-ups,"
            " interleaved; plug-in / Kafka (wall)"
        ),
        flush=True,
    )
    with tempfile.TemporaryDirectory() as work:
        cp = test_classpath(Path(work) / "mvn.log", args.main_classes)
    options = ["--consumer", consumer, "--cases", args.cases]
    options += ["--assignors", args.assignors, "--streams", args.streams]
    run_bench_class(BENCH_CLASS, cp, args, options, line_text)


if __name__ == "__main__":
    main()
