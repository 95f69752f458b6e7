"""franz-go's sticky balancer against kassign's ``sticky``, on franz-go's own inputs, same run.

franz-go (``github.com/twmb/franz-go``, FRANZ_VERSION, fetched from the Go module proxy) keeps its
sticky balancer in an internal package, ``pkg/kgo/internal/sticky``, whose ``BenchmarkJava``
reproduces Kafka's large tests: ``small`` 50 topics x 800 partitions and 800 members, ``medium``
50 x 1,000 with 1,000, ``large`` 500 x 2,000 with 2,000; each also ``imbalance`` (one more member
subscribed to the first topic only: the general builder's case); ``no_rack`` and ``rack``
(member i in rack i % 3, partition j's one replica in rack j % 3). An internal package cannot be
imported from another module, so this copies franz-go's module to a scratch directory and adds
a test file beside the package (``KASSIGN_TEST``), as any user could: it balances
``BenchmarkJava``'s own plans, as ``BenchmarkJava`` does, and Kafka's third large-test scenario,
which franz-go's benchmarks lack, a member leaving (``leave``: a plan balanced fresh, then the
next balance without its first member, the others' userData carrying what they were given, as
franz-go's ``makeLargeBalanceWithExisting`` builds its ``existing`` inputs); kassign's
``leave`` group is ``consumer_groups.leave`` of its own fresh answer, the same step.

kassign's library call (``assign("sticky", group)``) runs on the same groups in this process:
CPU time (``time.process_time``), the best of ``--repeats`` calls after a first one. franz-go's
figures are per call over ``--repeats`` iterations, the lowest of ``--count`` runs: Go's
``ns/op`` (wall) and the process's CPU time over the timed loop (``getrusage``: its collector's
threads included). On a shared machine wall time counts the waits, so the ratio printed,
kassign / franz-go (issue 24 asks for at most 2), is CPU to CPU. Needs Go (``make ghz`` finds
it the same way). ``--kassign-only`` skips Go (to compare two trees' kassign figures, one after
the other). Nothing here asserts a time.

Usage: ``python bench/franz_bench.py [--shapes small,medium,large]
[--scenarios fresh,imbalance,leave] [--modes no_rack,rack] [--repeats 5] [--count 1]``.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from consumer_groups import leave
from kassign.assignor.consumer import ConsumerGroup, Member, Topic, assign, consumer_group

FRANZ_MODULE = "github.com/twmb/franz-go"
FRANZ_VERSION = "v1.22.3"
STICKY = "pkg/kgo/internal/sticky"
SHAPES = {"small": (50, 800, 800), "medium": (50, 1_000, 1_000), "large": (500, 2_000, 2_000)}
SCENARIOS = ("fresh", "imbalance", "leave")
MODES = ("no_rack", "rack")
RACKS = ("rackA", "rackB", "rackC")  # franz-go's test racks
BENCH_LINE = re.compile(
    r"^BenchmarkKassignJava/(\w+)/(no_rack|rack)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op"
    r"\s+([\d.]+) cpu-ns/op"
)
SUFFIX = {"fresh": "", "imbalance": "_imbalance", "leave": "_leave"}

# The benchmark run, written beside franz-go's tests in the scratch copy (package ``sticky``, so it
# reads BenchmarkJava's inputs and helpers: javaSmall.., udEncode): BenchmarkJava's lines, and
# the same plans' next balance without their first member (``_leave``), each reporting the
# process's CPU time per call (getrusage over the timed loop: the balance and its collector) as
# well as Go's wall ``ns/op``.
KASSIGN_TEST = """package sticky

import (
	"syscall"
	"testing"
	"time"
)

// javaLeave is in's next rebalance without its first member: the others carry, in their
// userData (generation 1), what a fresh balance of in gave them.
func javaLeave(in generatedInput, racks map[string][]string) []GroupMember {
	plan := BalanceWithRacks(in.members, in.topics, racks)
	members := make([]GroupMember, 0, len(in.members)-1)
	for _, m := range in.members[1:] {
		m.UserData = udEncode(1, 1, plan[m.ID])
		m.Generation = 1
		members = append(members, m)
	}
	return members
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkKassignJava(b *testing.B) {
	for _, bench := range []struct {
		name  string
		input generatedInput
		leave bool
	}{
		{"large", javaLarge, false}, {"large_imbalance", javaLargeImbalance, false},
		{"large_leave", javaLarge, true},
		{"medium", javaMedium, false}, {"medium_imbalance", javaMediumImbalance, false},
		{"medium_leave", javaMedium, true},
		{"small", javaSmall, false}, {"small_imbalance", javaSmallImbalance, false},
		{"small_leave", javaSmall, true},
	} {
		for _, mode := range []string{"no_rack", "rack"} {
			b.Run(bench.name+"/"+mode, func(b *testing.B) {
				var racks map[string][]string
				if mode == "rack" {
					racks = bench.input.partitionRacks
				}
				members := bench.input.members
				if bench.leave {
					members = javaLeave(bench.input, racks)
				}
				calls := 0
				started := cpuTime()
				for b.Loop() {
					BalanceWithRacks(members, bench.input.topics, racks)
					calls++
				}
				b.ReportMetric(float64(cpuTime()-started)/float64(calls), "cpu-ns/op")
			})
		}
	}
}
"""


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
    """A writable copy of franz-go's module at FRANZ_VERSION (the module cache's is read-only),
    with the benchmark run (``KASSIGN_TEST``) beside the package's tests."""
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
        (copy / STICKY / "kassign_java_test.go").write_text(KASSIGN_TEST)
        yield copy


def bench_names(shapes: list[str], scenarios: list[str]) -> list[str]:
    return [shape + SUFFIX[s] for shape in shapes for s in scenarios]


def franz_ms(
    go: str, names: list[str], modes: list[str], repeats: int, count: int
) -> dict[tuple[str, str], tuple[float, float]]:
    """``{(benchmark, rack mode): (wall ms, CPU ms) per Balance call}``, each the lowest of
    ``count`` runs."""
    pattern = f"^BenchmarkKassignJava$/^({'|'.join(names)})$/^({'|'.join(modes)})$"
    with franz_copy(go) as copy:
        out = subprocess.run(
            [go, "test", f"./{STICKY}", "-run", "^$", "-bench", pattern,
             "-benchtime", f"{repeats}x", "-count", str(count)],
            cwd=copy, check=True, capture_output=True, text=True,
            env={**os.environ, "GOFLAGS": "-mod=mod"},
        )  # fmt: skip
    figures: dict[tuple[str, str], tuple[float, float]] = {}
    for line in out.stdout.splitlines():
        if m := BENCH_LINE.match(line):
            key = (m.group(1), m.group(2))
            wall, cpu = float(m.group(3)) / 1e6, float(m.group(4)) / 1e6
            before = figures.get(key, (wall, cpu))
            figures[key] = (min(wall, before[0]), min(cpu, before[1]))
    return figures


def franz_members(shape: str, *, imbalance: bool, racks: bool) -> tuple[list[Member], list[Topic]]:
    """franz-go's ``makeJavaPlan`` input as kassign's: topics t0.., members c0.. in that
    order, every member on every topic; with ``imbalance`` one more on t0 alone; each topic's
    replica racks its own tuple (partition j's rack j % 3)."""
    topics, partitions, consumers = SHAPES[shape]
    names = tuple(f"t{i}" for i in range(topics))
    rack_sets = [frozenset({r}) if racks else frozenset() for r in RACKS]
    members = [
        Member(member_id=f"c{i}", topics=names, rack_id=RACKS[i % 3] if racks else None)
        for i in range(consumers)
    ]
    if imbalance:
        members.append(
            Member(member_id=f"c{consumers}", topics=names[:1], rack_id=RACKS[0] if racks else None)
        )
    # a tuple per topic, as Go's makeJavaPlan makes a slice per topic (of three shared values)
    layout = [tuple(rack_sets[j % 3] for j in range(partitions)) for _ in names]
    return members, [Topic(name, racks_of) for name, racks_of in zip(names, layout, strict=True)]


def franz_group(shape: str, scenario: str, mode: str) -> ConsumerGroup:
    """The group of one line: fresh, imbalanced, or the fresh answer's next rebalance without
    the first member (``leave``)."""
    racks = mode == "rack"
    members, topics = franz_members(shape, imbalance=scenario == "imbalance", racks=racks)
    if scenario == "leave":
        members = leave(members, assign("sticky", consumer_group(members, topics)), "sticky")
    return consumer_group(members, topics)


def kassign_ms(group: ConsumerGroup, repeats: int) -> float:
    """CPU ms of the best of ``repeats`` calls, after a first one (as Go discards its first)."""
    assign("sticky", group)
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        assign("sticky", group)
        best = min(best, time.process_time() - started)
    return best * 1000


def _listed(parser: argparse.ArgumentParser, value: str, known: tuple[str, ...]) -> list[str]:
    chosen = [s for s in value.split(",") if s]
    unknown = set(chosen) - set(known)
    if unknown:
        parser.error(f"unknown {sorted(unknown)}; known: {', '.join(known)}")
    return chosen


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--shapes", default="small,medium,large")
    parser.add_argument("--scenarios", default="fresh,imbalance,leave")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--count", type=int, default=1, help="franz-go's runs (the lowest kept)")
    parser.add_argument("--kassign-only", action="store_true", help="skip Go")
    args = parser.parse_args(argv)
    shapes = _listed(parser, args.shapes, tuple(SHAPES))
    scenarios = _listed(parser, args.scenarios, SCENARIOS)
    modes = _listed(parser, args.modes, MODES)
    franz: dict[tuple[str, str], tuple[float, float]] = {}
    if not args.kassign_only:
        franz = franz_ms(
            go_binary(), bench_names(shapes, scenarios), modes, args.repeats, args.count
        )
    print(
        f"franz-go {FRANZ_VERSION} (ns/op wall; CPU) against kassign sticky (library, CPU), "
        "ms a call; the ratio is CPU to CPU",
        flush=True,
    )
    for shape in shapes:
        for scenario in scenarios:
            bench = shape + SUFFIX[scenario]
            for mode in modes:
                wall, cpu = franz.get((bench, mode), (0.0, 0.0))
                ours = kassign_ms(franz_group(shape, scenario, mode), args.repeats)
                ratio = f"{ours / cpu:6.2f}x" if cpu else "   n/a"
                shown = f"{wall:8.1f} {cpu:8.1f}" if cpu else "     n/a      n/a"
                print(
                    f"{bench:17} {mode:7} | franz-go {shown} | kassign {ours:8.1f} | {ratio}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
