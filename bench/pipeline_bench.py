"""Replay throughput on local[1] against local[2]: rows per second and the speed-up.

The issue asks for 10,000 groups of 200 tasks x 20 clients under 3 configurations; ``--groups``
makes a shorter run possible (the figures are rates, so they compare across sizes). Requests are
generated once (seeded), written as a Parquet folder of serialized protobufs, and replayed under
each master; the time is the job's (read, assign, write), not the JVM's start-up.

    .venv/bin/python bench/pipeline_bench.py --groups 10000
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kassign.pipeline.generate import GroupSpec, random_group
from kassign.pipeline.grid import grid_from_json
from kassign.pipeline.group import to_request
from kassign.pipeline.progress import Progress, spark_progress

GRID = {
    "configurations": [
        {"name": "ha/none", "assignor": "high_availability", "rack_strategy": "none"},
        {"name": "ha/min_traffic", "assignor": "high_availability", "rack_strategy": "min_traffic"},
        {
            "name": "sticky/balance_subtopology",
            "assignor": "sticky",
            "rack_strategy": "balance_subtopology",
        },
    ]
}


def _spec(tasks: int, clients: int) -> GroupSpec:
    subtopologies = 4
    return GroupSpec(
        clients=(clients, clients),
        threads=(2, 2),
        subtopologies=(subtopologies, subtopologies),
        partitions=(tasks // subtopologies, tasks // subtopologies),
        racks=(3, 3),
        replication=(2, 2),
        standbys=(1, 1),
    )


def write_requests(path: Path, *, groups: int, tasks: int, clients: int, seed: int) -> None:
    """The benchmark's input: ``groups`` generated requests in Parquet row groups of 500."""
    spec = _spec(tasks, clients)
    writer = None
    progress = Progress("input", unit="groups")
    for start in range(0, groups, 500):
        payloads = [
            to_request(random_group(spec, seed=seed, index=i)).SerializeToString()
            for i in range(start, min(groups, start + 500))
        ]
        table = pa.table({"request": pa.array(payloads, type=pa.binary())})
        writer = writer or pq.ParquetWriter(path / "part-0.parquet", table.schema)
        writer.write_table(table)
        progress.update(start + len(payloads), groups)
    progress.close()
    if writer is not None:
        writer.close()


def run(master: str, source: Path, target: Path) -> tuple[float, int, int]:
    """Seconds, rows and error rows of one replay on ``master``."""
    from kassign.pipeline.replay import read_requests, replay_frame
    from kassign.pipeline.spark import session
    from pyspark.sql import functions as F

    spark = session(master, app_name=f"kassign-bench-{master}")
    try:
        started = time.perf_counter()
        frame = replay_frame(spark, read_requests(spark, str(source)), grid_from_json(GRID))
        with spark_progress(spark, master):
            frame.write.mode("overwrite").parquet(str(target))
        seconds = time.perf_counter() - started
        output = spark.read.parquet(str(target))
        rows, errors = output.count(), output.where(F.col("error") != "").count()
    finally:
        spark.stop()
    return seconds, rows, errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=10_000)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--masters", default="local[1],local[2]")
    parser.add_argument("--repeat", type=int, default=1, help="runs per master, best counts")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    work = Path(tempfile.mkdtemp(prefix="kassign-bench-"))
    try:
        (work / "in").mkdir()
        started = time.perf_counter()
        write_requests(
            work / "in", groups=args.groups, tasks=args.tasks, clients=args.clients, seed=args.seed
        )
        print(
            f"input: {args.groups} groups of {args.tasks} tasks x {args.clients} clients, "
            f"3 configurations, generated in {time.perf_counter() - started:.1f}s"
        )
        rates: dict[str, float] = {}
        masters = args.masters.split(",")
        for attempt in range(args.repeat):  # alternate masters so drifting load hits both alike
            for master in masters:
                safe = "".join(ch if ch.isalnum() else "-" for ch in master)  # Hadoop globs "[1]"
                seconds, rows, errors = run(master, work / "in", work / f"out-{safe}")
                rates[master] = max(rates.get(master, 0.0), rows / seconds)
                load = os.getloadavg()[0]  # other work on the machine skews the speed-up
                print(
                    f"{master:>10} #{attempt + 1}: {rows} rows ({errors} errors) in {seconds:.1f}s"
                    f" = {rows / seconds:.1f} rows/s"
                    f" (1-min load average after: {load:.1f} on {os.cpu_count()} cores)"
                )
        for master in masters:
            print(f"{master:>10}: best {rates[master]:.1f} rows/s")
        if len(masters) >= 2:
            print(
                f"speed-up {masters[-1]} / {masters[0]}: "
                f"{rates[masters[-1]] / rates[masters[0]]:.2f}x (best of {args.repeat})"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
