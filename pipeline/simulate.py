"""``kassign simulate``: thousands of random groups rebalanced until they converge, on Spark.

Spark distributes group indexes only; each worker rebuilds its groups from ``(seed, index)``
(``kassign.pipeline.generate``), so the output does not depend on partitioning. Per group, configuration,
phase (the initial convergence, then one per event) and round, a row records the measures of that
rebalance and how many rebalances the phase needed (-1: not within ``--rounds``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pandas as pd
from kassign.pipeline.events import Event
from kassign.pipeline.generate import GroupSpec
from kassign.pipeline.grid import Configuration
from kassign.pipeline.load_rounds import LOAD_COLUMNS
from kassign.pipeline.load_rows import load_rows
from kassign.pipeline.loads import LoadModel
from kassign.pipeline.rows import SIMULATE_COLUMNS, simulate_rows
from kassign.pipeline.schema import spark_schema
from kassign.pipeline.streams_load_rows import streams_load_rows
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

__all__ = [
    "GENERATED",
    "LOAD_KINDS",
    "load_frame",
    "simulate",
    "simulate_frame",
    "summarise",
    "summarise_loads",
]

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
_LOAD_TYPES: dict[str, type] = {
    **{c: str for c in ("group_id", "kind", "config", "assignor", "error")},
    **{c: int for c in ("group_index", "seed", "round", "members", "partitions", "moved")},
    "rebalances": int,
    **{
        c: float
        for c in (
            "max_load",
            "mean_load",
            "max_over_mean",
            "bound",
            "peak_over_bound",
            "assign_cpu_seconds",
        )
    },
}


def _group_frame(
    spark: SparkSession,
    groups: int,
    rows_of: Callable[[int], list[dict[str, Any]]],
    columns: Sequence[str],
    types: dict[str, type],
) -> DataFrame:
    """The rows ``rows_of`` gives for each group index ``0 .. groups-1``, spread over Spark."""
    partitions = max(1, min(groups, spark.sparkContext.defaultParallelism * 8))  # small tail

    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch in batches:
            rows: list[dict[str, Any]] = []
            for index in batch["id"]:
                rows.extend(rows_of(int(index)))
            yield pd.DataFrame(rows, columns=list(columns))

    schema = spark_schema(columns, types)
    return spark.range(0, groups, numPartitions=partitions).mapInPandas(run, schema)


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

    def rows_of(index: int) -> list[dict[str, Any]]:
        return simulate_rows(
            seed=seed, index=index, spec=spec, grid=configurations, events=timeline, rounds=rounds
        )

    return _group_frame(spark, groups, rows_of, SIMULATE_COLUMNS, _SIM_TYPES)


LOAD_KINDS = ("consumer", "streams")
"""``simulate --loads --kind``: consumer groups (the default) or Kafka Streams groups."""


def load_frame(
    spark: SparkSession,
    *,
    groups: int,
    seed: int,
    spec: GroupSpec,
    model: LoadModel,
    rounds: int,
    kind: str = "consumer",
) -> DataFrame:
    """The load simulation's rows (``simulate --loads``) of groups ``0 .. groups-1``."""
    rows_of_kind = streams_load_rows if kind == "streams" else load_rows

    def rows_of(index: int) -> list[dict[str, Any]]:
        return rows_of_kind(seed=seed, index=index, spec=spec, model=model, rounds=rounds)

    return _group_frame(spark, groups, rows_of, LOAD_COLUMNS, _LOAD_TYPES)


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
    loads: LoadModel | None = None,
    kind: str = "consumer",
) -> dict[str, Any]:
    """Run the simulation job and write ``target``; returns the driver's summary. With
    ``loads``, groups of ``kind`` (``LOAD_KINDS``) under those loads instead, count against
    load balancing (``grid`` and ``events`` unused)."""
    if loads is not None:
        frame = load_frame(
            spark, groups=groups, seed=seed, spec=spec, model=loads, rounds=rounds, kind=kind
        )
    else:
        frame = simulate_frame(
            spark, groups=groups, seed=seed, spec=spec, grid=grid, events=events, rounds=rounds
        )
    frame.write.mode("overwrite").parquet(target)
    output = spark.read.parquet(target)
    return summarise(output) if loads is None else summarise_loads(output)


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


def summarise_loads(output: DataFrame) -> dict[str, Any]:
    """Per balance: rows, mean max/mean, mean peak over the bound, moves in all, errors."""
    ok = output.where(F.col("error") == "")
    configs = (
        ok.groupBy("config")
        .agg(
            F.count("*").alias("rows"),
            F.avg("max_over_mean").alias("max_over_mean"),
            F.avg("peak_over_bound").alias("peak_over_bound"),
            F.sum("moved").alias("moved"),
        )
        .orderBy("config")
        .collect()
    )
    errors = output.where(F.col("error") != "").count()
    for row in configs:
        log.info(
            "%-6s rows=%d max/mean=%.3f peak/bound=%.4f moved=%d",
            row["config"],
            row["rows"],
            row["max_over_mean"] or 0,
            row["peak_over_bound"] or 0,
            row["moved"] or 0,
        )
    log.info("simulate: %d balances summarised, %d error rows", len(configs), errors)
    return {"balances": [r.asDict() for r in configs], "errors": errors}
