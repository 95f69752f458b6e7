"""``kassign simulate``: thousands of random groups rebalanced until they converge, on Spark.

Spark distributes group indexes only; each worker rebuilds its groups from ``(seed, index)``
(``kassign.pipeline.generate``), so the output does not depend on partitioning. Per group, configuration,
phase (the initial convergence, then one per event) and round, a row records the measures of that
rebalance and how many rebalances the phase needed (-1: not within ``--rounds``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Any

import pandas as pd
from kassign.pipeline.events import Event
from kassign.pipeline.generate import GroupSpec
from kassign.pipeline.grid import Configuration
from kassign.pipeline.rows import SIMULATE_COLUMNS, simulate_rows
from kassign.pipeline.schema import spark_schema
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

__all__ = ["GENERATED", "simulate", "simulate_frame", "summarise"]

log = logging.getLogger("kassign.pipeline")

GENERATED = Configuration(name="generated")
"""The generated group's own configuration: what simulate runs without ``--grid``."""

_SIM_TYPES: dict[str, type] = {
    "group_id": str,
    "group_index": int,
    "seed": int,
    "phase": int,
    "event": str,
    "round": int,
    "rebalances_to_converge": int,
    "converged": bool,
}


def simulate_frame(
    spark: SparkSession,
    *,
    groups: int,
    seed: int,
    spec: GroupSpec,
    grid: Sequence[Configuration],
    events: Sequence[Event],
    rounds: int,
) -> DataFrame:
    """The simulation rows of groups ``0 .. groups-1``."""
    configurations, timeline = tuple(grid), tuple(events)
    partitions = max(1, min(groups, spark.sparkContext.defaultParallelism * 8))  # small tail

    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch in batches:
            rows: list[dict[str, Any]] = []
            for index in batch["id"]:
                rows.extend(
                    simulate_rows(
                        seed=seed,
                        index=int(index),
                        spec=spec,
                        grid=configurations,
                        events=timeline,
                        rounds=rounds,
                    )
                )
            yield pd.DataFrame(rows, columns=list(SIMULATE_COLUMNS))

    schema = spark_schema(SIMULATE_COLUMNS, _SIM_TYPES)
    return spark.range(0, groups, numPartitions=partitions).mapInPandas(run, schema)


def simulate(
    spark: SparkSession,
    target: str,
    *,
    groups: int,
    seed: int,
    spec: GroupSpec,
    grid: Sequence[Configuration],
    events: Sequence[Event],
    rounds: int,
) -> dict[str, Any]:
    """Run the simulation job and write ``target``; returns the driver's summary."""
    frame = simulate_frame(
        spark, groups=groups, seed=seed, spec=spec, grid=grid, events=events, rounds=rounds
    )
    frame.write.mode("overwrite").parquet(target)
    return summarise(spark.read.parquet(target))


def summarise(output: DataFrame) -> dict[str, Any]:
    """Per configuration and phase: groups, how many converged, mean rebalances, errors."""
    phases = (
        output.where(F.col("round") == 1)
        .groupBy("config", "phase", "event")
        .agg(
            F.count("*").alias("groups"),
            F.sum(F.col("converged").cast("int")).alias("converged"),
            F.avg(F.when(F.col("converged"), F.col("rebalances_to_converge"))).alias("rebalances"),
        )
        .orderBy("config", "phase")
        .collect()
    )
    errors = output.where(F.col("error") != "").count()
    for row in phases:
        log.info(
            "%-30s phase %d %-16s groups=%d converged=%d mean rebalances=%.2f",
            row["config"],
            row["phase"],
            row["event"],
            row["groups"],
            row["converged"],
            row["rebalances"] or 0,
        )
    log.info("simulate: %d phases summarised, %d error rows", len(phases), errors)
    return {"phases": [r.asDict() for r in phases], "errors": errors}
