"""``kassign replay``: recorded AssignRequests through a what-if grid, on Spark.

INPUT is a JSON Lines file (protobuf JSON mapping, one request a line), a folder of them (what
``kassign serve --journal DIR`` writes), or a Parquet folder with a ``request`` column of
serialized protobuf bytes. OUTPUT is a Parquet folder with one row per (request, configuration).
The work per request is ``kassign.pipeline.rows.replay_rows``; this module only moves bytes.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from kassign.pipeline.grid import Configuration
from kassign.pipeline.rows import REPLAY_COLUMNS, replay_rows
from kassign.pipeline.schema import spark_schema
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

__all__ = ["read_requests", "replay", "replay_frame", "request_files", "summarise"]

log = logging.getLogger("kassign.pipeline")

_REPLAY_TYPES: dict[str, type] = {"request_index": int, "group_id": str, "notes": str}


def _is_parquet(path: Path) -> bool:
    return path.suffix == ".parquet" or (path.is_dir() and any(path.glob("*.parquet")))


def request_files(path: str) -> list[str]:
    """The JSON Lines files of ``path``, sorted; ``[path]`` for a file or a Parquet folder.

    Why a list and not a ``DIR/*.jsonl`` glob: Spark looks a single path up as a file before it
    expands globs, and logs the lookup's failure with a full Java stack trace.
    """
    source = Path(path)
    if not source.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    if not source.is_dir() or _is_parquet(source):
        return [path]
    files = sorted(str(f) for f in source.glob("*.jsonl") if f.is_file())
    if not files:
        raise FileNotFoundError(f"{path}: no *.jsonl files in this folder")
    return files


def read_requests(spark: SparkSession, path: str) -> DataFrame:
    """Requests as rows ``(request_index, payload, format)``, payload the raw bytes."""
    source = Path(path)
    if _is_parquet(source):
        frame = spark.read.parquet(str(source)).select(
            F.col("request").alias("payload"), F.lit("proto").alias("format")
        )
    else:
        lines = spark.read.text(request_files(path)).where(F.length(F.trim("value")) > 0)
        frame = lines.select(
            F.col("value").cast("binary").alias("payload"), F.lit("json").alias("format")
        )
    return frame.withColumn("request_index", F.monotonically_increasing_id())


def _spread(spark: SparkSession, frame: DataFrame) -> DataFrame:
    """Enough partitions for every core: a small JSON file is otherwise a single task."""
    wanted = spark.sparkContext.defaultParallelism * 4
    return frame.repartition(wanted) if frame.rdd.getNumPartitions() < wanted else frame


def replay_frame(
    spark: SparkSession, requests: DataFrame, grid: Sequence[Configuration]
) -> DataFrame:
    """The replay rows of ``requests`` (as ``read_requests`` gives them) under ``grid``."""
    configurations = tuple(grid)

    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch in batches:
            rows: list[dict[str, Any]] = []
            for index, payload, fmt in zip(
                batch["request_index"], batch["payload"], batch["format"], strict=True
            ):
                rows.extend(replay_rows(int(index), payload, fmt, configurations))
            yield pd.DataFrame(rows, columns=list(REPLAY_COLUMNS))

    schema = spark_schema(REPLAY_COLUMNS, _REPLAY_TYPES)
    return _spread(spark, requests).mapInPandas(run, schema)


def replay(
    spark: SparkSession, source: str, target: str, grid: Sequence[Configuration]
) -> dict[str, Any]:
    """Run the replay job and write ``target``; returns the driver's summary."""
    frame = replay_frame(spark, read_requests(spark, source), grid)
    frame.write.mode("overwrite").parquet(target)
    return summarise(spark.read.parquet(target))


def summarise(output: DataFrame) -> dict[str, Any]:
    """Rows, errors and per-configuration means, read back from the written output."""
    per_config = (
        output.groupBy("config")
        .agg(
            F.count("*").alias("rows"),
            F.sum(F.when(F.col("error") != "", 1).otherwise(0)).alias("errors"),
            F.avg("cross_rack_partitions").alias("cross_rack"),
            F.avg("active_moved").alias("moved"),
            F.avg("assign_seconds").alias("seconds"),
        )
        .orderBy("config")
        .collect()
    )
    summary = {
        "rows": sum(r["rows"] for r in per_config),
        "errors": sum(r["errors"] for r in per_config),
        "configs": {r["config"]: r.asDict() for r in per_config},
    }
    for row in per_config:
        log.info(
            "%-40s rows=%d errors=%d cross-rack=%.1f moved=%.1f assign=%.1fms",
            row["config"],
            row["rows"],
            row["errors"],
            row["cross_rack"] or 0,
            row["moved"] or 0,
            1000 * (row["seconds"] or 0),
        )
    log.info("replay: %d rows, %d errors", summary["rows"], summary["errors"])
    return summary
