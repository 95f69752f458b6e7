"""``kassign shadow-report --spark``: shadow mode's per-group summary over many journals, on Spark.

Why a Spark job: a fleet's journals (every server, every day) outgrow one machine's read. The
work per line is ``shadow_rows.shadow_row`` and the figures are ``shadow_sums.summarise``'s, the
local command's own; Spark only reads the files and adds each group's rows up, so its numbers are
the local command's (a test compares them). Spark gives no line numbers: a malformed line is
named by its file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any
from urllib.parse import unquote, urlparse

import pandas as pd
from kassign.pipeline.shadow_rows import (
    COUNTED,
    ShadowLineError,
    ShadowRow,
    journal_files,
    shadow_row,
)
from kassign.pipeline.shadow_sums import GroupSummary, Totals, summarise
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
)

__all__ = ["shadow_summaries"]

_SCHEMA = StructType(
    [
        StructField("group", StringType()),
        StructField("kind", StringType()),
        StructField("time_ms", LongType()),
        StructField("assignor", StringType()),
        StructField("compared", LongType()),
        StructField("changed", LongType()),
        StructField("differing", LongType()),
        *(StructField(f"{side}_{n}", LongType()) for side in ("kafka", "kassign") for n in COUNTED),
        StructField("loaded", BooleanType()),
        StructField("kafka_load", DoubleType()),
        StructField("kassign_load", DoubleType()),
        StructField("error", StringType()),
    ]
)


def _columns(row: ShadowRow) -> dict[str, Any]:
    loaded = row.compared and row.kafka.max_load is not None and row.kassign.max_load is not None
    out: dict[str, Any] = {
        "group": row.group,
        "kind": row.kind,
        "time_ms": row.time_ms,
        "assignor": row.kafka_assignor,
        "compared": int(row.compared),
        "changed": int(row.compared and not row.same),
        "differing": row.differing_members if row.compared else 0,
        "loaded": loaded,
        "kafka_load": row.kafka.max_load if loaded else 0.0,
        "kassign_load": row.kassign.max_load if loaded else 0.0,
        "error": "",
    }
    for side, figures in (("kafka", row.kafka), ("kassign", row.kassign)):
        for name in COUNTED:
            out[f"{side}_{name}"] = getattr(figures, name) if row.compared else 0
    return out


def _rows(
    keep: Callable[[ShadowRow], bool],
) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        names = [f.name for f in _SCHEMA.fields]
        for batch in batches:
            out: list[dict[str, Any]] = []
            for text, kind, file in zip(batch["value"], batch["kind"], batch["file"], strict=True):
                try:
                    row = shadow_row(text, kind, _local(file))
                except ShadowLineError as exc:
                    out.append({**dict.fromkeys(names), "error": str(exc)})
                    continue
                if row is not None and keep(row):
                    out.append(_columns(row))
            yield pd.DataFrame(out, columns=names)

    return run


def _local(uri: str) -> str:
    """A file's path as the local command names it, from the ``file:`` URI Spark gives."""
    return unquote(urlparse(uri).path) if uri.startswith("file:") else uri


def _lines(spark: SparkSession, specs: Sequence[str]) -> DataFrame:
    files = [(kind, str(path)) for spec in specs for kind, path in journal_files(spec)]
    frames = [
        spark.read.text([f for k, f in files if k == kind])
        .where(F.length(F.trim("value")) > 0)
        .select("value", F.lit(kind).alias("kind"), F.input_file_name().alias("file"))
        for kind in sorted({k for k, _ in files})
    ]
    frame = frames[0]
    for other in frames[1:]:
        frame = frame.unionByName(other)
    return frame


def shadow_summaries(
    spark: SparkSession, specs: Sequence[str], keep: Callable[[ShadowRow], bool]
) -> list[GroupSummary]:
    """Each group's summary over the journals ``specs`` name (folders or files), the rows
    ``keep`` keeps; raises ``ShadowLineError`` naming the files of malformed lines."""
    rows = _lines(spark, specs).mapInPandas(_rows(keep), _SCHEMA)
    sums = [F.sum(c).alias(c) for c in ("compared", "changed", "differing")]
    sums += [F.sum(f"{s}_{n}").alias(f"{s}_{n}") for s in ("kafka", "kassign") for n in COUNTED]
    loads = [F.sum(F.col("loaded").cast("long")).alias("loads")]
    loads += [F.sum(c).alias(c) for c in ("kafka_load", "kassign_load")]
    found = (  # one pass: a malformed line's row has no group, its error collected instead
        rows.groupBy("group", "kind")
        .agg(
            F.count("*").alias("rebalances"),
            F.min(F.when(F.col("time_ms") > 0, F.col("time_ms"))).alias("first_ms"),
            F.max("time_ms").alias("last_ms"),
            F.collect_set(F.when(F.col("assignor") != "", F.col("assignor"))).alias("assignors"),
            F.slice(F.collect_set(F.when(F.col("error") != "", F.col("error"))), 1, 5).alias(
                "errors"
            ),
            *sums,
            *loads,
        )
        .collect()  # a row per group: sorted here, which spares Spark a range-partitioning job
    )
    errors = [e for r in found for e in r["errors"]]
    if errors:
        raise ShadowLineError("; ".join(sorted(errors)))
    found.sort(key=lambda r: (r["group"], r["kind"]))
    return [summarise(_totals(r.asDict())) for r in found]


def _totals(r: dict[str, Any]) -> Totals:
    return Totals(
        group=r["group"],
        kind=r["kind"],
        rebalances=r["rebalances"],
        compared=r["compared"],
        changed=r["changed"],
        differing_members=r["differing"],
        first_ms=r["first_ms"] or 0,
        last_ms=r["last_ms"] or 0,
        assignors=tuple(sorted(r["assignors"])),
        kafka=tuple(r[f"kafka_{n}"] for n in COUNTED),
        kassign=tuple(r[f"kassign_{n}"] for n in COUNTED),
        loads=r["loads"],
        kafka_load=r["kafka_load"],
        kassign_load=r["kassign_load"],
    )
