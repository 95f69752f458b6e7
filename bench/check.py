"""Regression guard for the benches: each line a ratio measured in one run, compared to its record.

A bench line is a time divided by a baseline measured in the same run (a fixed reference
workload, or the solve alone on the same state), so the machine's speed and load cancel and the
ratio can be kept in the repository. ``bench/baselines/<bench>.json`` holds the recorded ratios;
``compare`` fails a line more than ``TOLERANCE`` times worse than its record (issue 24: the
rack-aware path got 3-4x slower and nothing caught it). A bench offers ``--check`` (compare,
exit 1 on a failure) and ``--record`` (rewrite the records) through ``run_check``, which takes
each line's best of two measurements, so a neighbour's burst on a shared machine does not fail
the check; ``make bench-check`` runs every bench listed there. ``per_reference`` divides a
bench's CPU times by ``reference_workload``'s, measured around them (the consumer and load
benches share it).

Pure but for ``load_records``, ``write_records`` and ``run_check``, which read and write the
file, and the timing functions (``best_cpu``, ``per_reference``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "BASELINES",
    "TOLERANCE",
    "Line",
    "Verdict",
    "add_modes",
    "best_cpu",
    "best_of",
    "compare",
    "load_records",
    "machine",
    "per_reference",
    "reference_workload",
    "render",
    "run_check",
    "write_records",
]

BASELINES = Path(__file__).resolve().parent / "baselines"
TOLERANCE = 1.5
"""How much worse than its record a line may read before the check fails: wide enough for the
noise left in a same-run ratio on a shared 2-core machine, narrow enough for a 2x regression."""


@dataclass(frozen=True, slots=True)
class Line:
    """One bench line: ``ratio`` = its time over its baseline's, both from the same run; higher
    is worse. ``baseline`` names what it is divided by (for the reader of the records)."""

    name: str
    ratio: float
    baseline: str = ""


@dataclass(frozen=True, slots=True)
class Verdict:
    """A line against its record: ``worse`` = measured / recorded (``None``: no record)."""

    name: str
    measured: float
    recorded: float | None
    worse: float | None
    ok: bool


def compare(
    lines: Sequence[Line], records: Mapping[str, float], tolerance: float = TOLERANCE
) -> tuple[Verdict, ...]:
    """Each measured line against its record. A line with no record fails (record it first:
    an unguarded line is what let issue 24's regression through); a record with no line this
    run (a size the check skips) is not judged."""
    verdicts = []
    for line in lines:
        recorded = records.get(line.name)
        if recorded is None:
            verdicts.append(Verdict(line.name, line.ratio, None, None, False))
            continue
        worse = line.ratio / recorded if recorded > 0 else float("inf")
        verdicts.append(Verdict(line.name, line.ratio, recorded, worse, worse <= tolerance))
    return tuple(verdicts)


def render(verdicts: Sequence[Verdict], tolerance: float = TOLERANCE) -> str:
    """The verdicts as a table, failures marked."""
    width = max((len(v.name) for v in verdicts), default=10)
    rows = [f"{'line':<{width}}  {'measured':>9}  {'recorded':>9}  {'worse':>6}"]
    for v in verdicts:
        recorded = "-" if v.recorded is None else f"{v.recorded:9.3f}"
        worse = "-" if v.worse is None else f"{v.worse:5.2f}x"
        mark = "" if v.ok else ("  NO RECORD" if v.recorded is None else f"  FAIL (> {tolerance}x)")
        rows.append(f"{v.name:<{width}}  {v.measured:9.3f}  {recorded:>9}  {worse:>6}{mark}")
    return "\n".join(rows)


def load_records(bench: str, folder: Path = BASELINES) -> dict[str, float]:
    """The recorded ratios of ``bench`` (empty if never recorded)."""
    path = folder / f"{bench}.json"
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    return {name: float(entry["ratio"]) for name, entry in data["lines"].items()}


def write_records(bench: str, lines: Sequence[Line], folder: Path = BASELINES) -> Path:
    """Rewrite ``bench``'s records with ``lines`` (and where they were measured)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{bench}.json"
    data = {
        "bench": bench,
        "tolerance": TOLERANCE,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "lines": {
            line.name: {"ratio": round(line.ratio, 4), "baseline": line.baseline} for line in lines
        },
    }
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def add_modes(parser: argparse.ArgumentParser) -> None:
    """The ``--check`` and ``--record`` options of a guarded bench (``run_check``'s ``record``)."""
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="compare with bench/baselines")
    mode.add_argument("--record", action="store_true", help="rewrite bench/baselines")


def machine(times: str) -> str:
    """A bench's first line: the cores and the load average its figures were measured under."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"machine: {os.cpu_count()} cores, load average {load}; {times}"


def best_cpu(run: Callable[[], object], repeats: int) -> float:
    """Best CPU seconds of ``run()`` over ``repeats`` runs: the least a neighbour added."""
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return best


def reference_workload() -> None:
    """A fixed piece of Python work of the kind the assignors do (tuples built, hashed,
    sorted, grouped), so a slower or busier machine slows both sides of every ratio."""
    pairs = [(f"topic-{i % 50:03d}", i) for i in range(60_000)]
    index = {p: i for i, p in enumerate(pairs)}
    ordered = sorted(pairs, key=lambda p: (p[1] % 97, p[0]))
    groups = [frozenset(ordered[k::40]) for k in range(40)]
    assert sum(index[p] for p in ordered) > 0 and sum(map(len, groups)) == len(pairs)


def per_reference(measure_cpu: Callable[[], Sequence[Line]]) -> list[Line]:
    """``measure_cpu``'s lines (CPU seconds) over ``reference_workload``'s best CPU, taken
    before and after them (the lower); the collector tuned as ``kassign serve`` tunes it
    (server/runtime/app.py), so the objects a bench builds are timed as a server's."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    ref = best_cpu(reference_workload, 5)
    raw = measure_cpu()
    ref = min(ref, best_cpu(reference_workload, 5))
    print(f"reference workload {ref * 1000:.1f} ms cpu")
    return [Line(line.name, line.ratio / ref, "reference workload") for line in raw]


def best_of(runs: Sequence[Sequence[Line]]) -> list[Line]:
    """Each line's lowest ratio over several measurements (in the first run's order): a real
    regression is slow every time, a busy neighbour only sometimes."""
    best: dict[str, Line] = {}
    for lines in runs:
        for line in lines:
            if line.name not in best or line.ratio < best[line.name].ratio:
                best[line.name] = line
    return list(best.values())


def run_check(
    bench: str,
    measure: Callable[[], Sequence[Line]],
    *,
    record: bool,
    passes: int = 2,
    folder: Path = BASELINES,
) -> int:
    """``record``: write the best of ``passes`` measurements; else compare, measuring again
    (up to ``passes`` in all) only while some line fails. The process exit status."""
    runs = [measure()]
    if record:
        runs += [measure() for _ in range(passes - 1)]
        lines = best_of(runs)
        print(f"recorded {len(lines)} lines in {write_records(bench, lines, folder)}")
        return 0
    records = load_records(bench, folder)
    verdicts = compare(best_of(runs), records)
    while len(runs) < passes and not all(v.ok for v in verdicts if v.recorded is not None):
        print(f"{bench}: a line failed; measuring again (pass {len(runs) + 1} of {passes})")
        runs.append(measure())
        verdicts = compare(best_of(runs), records)
    print(render(verdicts))
    failed = [v.name for v in verdicts if not v.ok]
    if failed:
        print(f"{bench}: {len(failed)} line(s) failed the check: {', '.join(failed)}")
        return 1
    print(f"{bench}: every line within {TOLERANCE}x of its record")
    return 0
