"""franz-go's sticky balancer against kassign's ``sticky``, on franz-go's own inputs, same run.

franz-go (``github.com/twmb/franz-go``, FRANZ_VERSION, fetched from the Go module proxy) keeps its
sticky balancer in an internal package, ``pkg/kgo/internal/sticky``, whose ``BenchmarkJava``
reproduces Kafka's large tests: ``small`` 50 topics x 800 partitions and 800 members, ``medium``
50 x 1,000 with 1,000, ``large`` 500 x 2,000 with 2,000; each also ``_imbalance`` (one more member
subscribed to the first topic only: the general builder's case); ``no_rack`` and ``rack``
(member i in rack i % 3, partition j's one replica in rack j % 3). An internal package cannot be
imported from another module, so this copies franz-go's module to a scratch directory and runs
that benchmark there, as any user could. kassign's library call (``assign("sticky", group)``)
runs on the same groups in this process: the mean of ``--repeats`` calls after a first one, as
Go's ``ns/op`` is a mean of warm iterations.

Prints one line per shape: franz-go ms, kassign ms and kassign / franz-go (issue 24 asks for at
most 2). Needs Go (``make ghz`` finds it the same way). Nothing here asserts a time.

Usage: ``python bench/franz_bench.py [--shapes small,medium,large] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kassign.assignor.consumer import ConsumerGroup, Member, Topic, assign, consumer_group

FRANZ_MODULE = "github.com/twmb/franz-go"
FRANZ_VERSION = "v1.22.3"
STICKY = "pkg/kgo/internal/sticky"
SHAPES = {"small": (50, 800, 800), "medium": (50, 1_000, 1_000), "large": (500, 2_000, 2_000)}
RACKS = ("rackA", "rackB", "rackC")  # franz-go's test racks
BENCH_LINE = re.compile(r"^BenchmarkJava/(\w+)/(no_rack|rack)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op")


def go_binary() -> str:
    found = shutil.which("go") or (
        "/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None
    )
    if found is None:
        raise SystemExit(
            "franz_bench: no Go toolchain (neither 'go' on PATH nor /usr/local/go/bin/go)"
        )
    return found


@contextmanager
def franz_copy(go: str) -> Iterator[Path]:
    """A writable copy of franz-go's module at FRANZ_VERSION (the module cache's is read-only)."""
    downloaded = subprocess.run(
        [go, "mod", "download", "-json", f"{FRANZ_MODULE}@{FRANZ_VERSION}"],
        check=True,
        capture_output=True,
        text=True,
    )
    source = Path(json.loads(downloaded.stdout)["Dir"])
    with tempfile.TemporaryDirectory(prefix="franz-go-") as scratch:
        copy = Path(scratch) / "franz-go"
        shutil.copytree(source, copy)
        for path in copy.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        yield copy


def franz_ms(go: str, shapes: list[str], repeats: int) -> dict[tuple[str, str], float]:
    """``{(benchmark, rack mode): ms per Balance call}`` from franz-go's own BenchmarkJava."""
    names = "|".join(f"{s}(_imbalance)?" for s in shapes)
    with franz_copy(go) as copy:
        out = subprocess.run(
            [go, "test", f"./{STICKY}", "-run", "^$", "-bench", f"^BenchmarkJava$/^({names})$",
             "-benchtime", f"{repeats}x", "-count", "1"],
            cwd=copy, check=True, capture_output=True, text=True,
            env={**os.environ, "GOFLAGS": "-mod=mod"},
        )  # fmt: skip
    figures = {}
    for line in out.stdout.splitlines():
        if m := BENCH_LINE.match(line):
            figures[(m.group(1), m.group(2))] = float(m.group(3)) / 1e6
    return figures


def franz_group(shape: str, *, imbalance: bool, racks: bool) -> ConsumerGroup:
    """franz-go's ``makeJavaPlan`` input as a kassign group: topics t0.., members c0.. in that
    order, every member on every topic; with ``imbalance`` one more on t0 alone."""
    topics, partitions, consumers = SHAPES[shape]
    names = tuple(f"t{i}" for i in range(topics))
    replica_racks = tuple(
        frozenset({RACKS[j % 3]}) if racks else frozenset() for j in range(partitions)
    )
    members = [
        Member(member_id=f"c{i}", topics=names, rack_id=RACKS[i % 3] if racks else None)
        for i in range(consumers)
    ]
    if imbalance:
        members.append(
            Member(member_id=f"c{consumers}", topics=names[:1], rack_id=RACKS[0] if racks else None)
        )
    return consumer_group(members, [Topic(name, replica_racks) for name in names])


def kassign_ms(group: ConsumerGroup, repeats: int) -> float:
    assign("sticky", group)  # the first call, as Go's benchmark discards its first iteration
    started = time.perf_counter()
    for _ in range(repeats):
        assign("sticky", group)
    return (time.perf_counter() - started) * 1000 / repeats


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--shapes", default="small,medium,large")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    shapes = [s for s in args.shapes.split(",") if s]
    unknown = set(shapes) - set(SHAPES)
    if unknown:
        parser.error(f"unknown shapes {sorted(unknown)}; known: {', '.join(SHAPES)}")
    go = go_binary()
    franz = franz_ms(go, shapes, args.repeats)
    print(f"franz-go {FRANZ_VERSION} BenchmarkJava against kassign sticky (library), ms per call")
    for shape in shapes:
        for imbalance in (False, True):
            bench = shape + ("_imbalance" if imbalance else "")
            for mode in ("no_rack", "rack"):
                theirs = franz.get((bench, mode))
                ours = kassign_ms(
                    franz_group(shape, imbalance=imbalance, racks=mode == "rack"), args.repeats
                )
                ratio = f"{ours / theirs:6.2f}x" if theirs else "   n/a"
                shown = f"{theirs:9.1f}" if theirs else "      n/a"
                print(
                    f"{bench:17} {mode:7} | franz-go {shown} | kassign {ours:9.1f} | {ratio}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
