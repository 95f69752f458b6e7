"""Regression guard for the consumer assignors: library and whole-call CPU over a reference.

``consumer_bench.py`` times kassign against Kafka's own assignors in a JVM; this one guards
kassign's own figures in a few minutes, with no JVM, for ``make bench-check`` (``check.py``):
on Kafka's smallest large-test shape (50 topics x 800 partitions with 800 members; ``--sizes``
adds others, such as 50x1000x1000), no racks and three, each of ``sticky``,
``cooperative-sticky``, ``range`` and kassign's ``rack-optimal`` on a fresh group, after one member leaves (all but ``range``)
and with one extra member subscribed to one topic, the library call's CPU time and the service's whole call in this process (request bytes
in, response bytes out), each divided by a fixed reference workload measured in the same run.
A line more than 1.5x its record fails (issue 24: no line may get slower unnoticed).

    .venv/bin/python bench/consumer_check.py [--check | --record] [--sizes 50x800x800]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from check import Line, add_modes, best_cpu, machine, per_reference, run_check
from consumer_groups import (
    Cluster,
    extra_member,
    leave,
    make_cluster,
    make_members,
    request_for,
)
from kassign.assignor.consumer import Member, assign, consumer_group
from kassign.server.consumer.servicer import assign_consumer_request
from kassign.v1 import consumer_pb2 as cpb

BENCH = "consumer"
SIZES = "50x800x800"
ASSIGNORS = ("sticky", "cooperative-sticky", "range", "rack-optimal")
LAYOUTS = ("none", "racks")


Members = Callable[[str], list[Member]]
"""An assignor's name -> the group's members (``leave`` depends on the assignor's answer)."""


def scenarios(size: str, layout: str) -> tuple[Cluster, list[tuple[str, Members]]]:
    """The cluster of ``size`` (topics x partitions x members) and its three groups."""
    topics, per_topic, consumers = (int(x) for x in size.split("x"))
    racks = layout == "racks"
    cluster = make_cluster(topics * per_topic, racks=racks, seed=consumers, topics=topics)
    members = make_members(cluster, consumers, racks=racks, equal=True, seed=consumers)

    def fresh(_: str) -> list[Member]:
        return members

    def gone(name: str) -> list[Member]:
        return leave(members, assign(name, consumer_group(members, cluster.topics())), name)

    def extra(_: str) -> list[Member]:
        return extra_member(cluster, members, racks=racks, seed=consumers)

    return cluster, [("fresh", fresh), ("leave", gone), ("extra", extra)]


def measure(sizes: str, repeats: int = 3) -> list[Line]:
    """The guarded lines of every size and layout, each over the run's reference workload."""

    def raw() -> list[Line]:
        lines: list[Line] = []
        for size in sizes.split(","):
            for layout in LAYOUTS:
                cluster, groups = scenarios(size, layout)
                for scenario, members_for in groups:
                    for name in ASSIGNORS:
                        if scenario == "leave" and name == "range":
                            continue  # range reads no ownership: the same as fresh
                        shape = f"{size} {layout} {scenario} {name}"
                        lines += _lines(shape, cluster, name, members_for(name), repeats)
        return lines

    return per_reference(raw)


def _lines(
    shape: str, cluster: Cluster, name: str, members: list[Member], repeats: int
) -> list[Line]:
    """CPU seconds of the library and of the call (the caller divides by the reference)."""
    group = consumer_group(members, cluster.topics())
    data = request_for(cluster, members, name).SerializeToString()
    library = best_cpu(lambda: assign(name, group), repeats)
    call = best_cpu(
        lambda: assign_consumer_request(
            cpb.ConsumerAssignRequest.FromString(data), data=data
        ).wire.SerializeToString(),
        repeats,
    )
    print(f"  {shape:<48} library {library * 1000:7.1f} call {call * 1000:7.1f} ms cpu", flush=True)
    return [Line(f"{shape} library", library), Line(f"{shape} call", call)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default=SIZES)
    add_modes(parser)
    args = parser.parse_args(argv)
    print(machine("CPU times, best of 3"))
    if not (args.check or args.record):
        for line in measure(args.sizes):
            print(f"{line.name:<56} {line.ratio:8.2f}x reference")
        return 0
    return run_check(BENCH, lambda: measure(args.sizes), record=args.record)


if __name__ == "__main__":
    sys.exit(main())
