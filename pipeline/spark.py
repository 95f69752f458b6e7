"""The SparkSession every job runs in: ``local[*]`` unless ``--master`` names a cluster.

Why one builder: the jobs, tests and benchmark must agree on the Python the workers run
(``PYSPARK_PYTHON``, defaulting to this interpreter so workers import the same kassign), on quiet
logs, and on Arrow batches small enough that each Python worker gets many of them.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from pathlib import Path

from pyspark.sql import SparkSession

__all__ = ["ARROW_BATCH_ROWS", "LOG4J2_PROPERTIES", "session"]

ARROW_BATCH_ROWS = 16
"""Rows per Arrow batch into ``mapInPandas``: a row is a whole assignment, so batches stay small."""

LOG4J2_PROPERTIES = Path(__file__).with_name("log4j2.properties")
"""The driver's logging: warnings and errors only, from the JVM's first line (the file says why)."""


def session(master: str | None = None, *, app_name: str = "kassign") -> SparkSession:
    """A SparkSession on ``master`` (default ``local[*]``), logging warnings only.

    Spark's console progress bar is off: jobs report through ``kassign.pipeline.progress``, which
    also writes plain lines when stderr is not a terminal.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # PySpark warns on every pandas check that pandas 3 is "not yet fully supported"; the
    # pipeline's use (mapInPandas over plain columns) is covered by its tests.
    warnings.filterwarnings(
        "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
    )
    builder = (
        SparkSession.builder.master(master or "local[*]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(ARROW_BATCH_ROWS))
        .config("spark.python.worker.reuse", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.debug.maxToStringFields", "200")
        .config(
            "spark.driver.extraJavaOptions",
            f"-Dlog4j2.configurationFile={LOG4J2_PROPERTIES.as_uri()}",
        )
    )
    if (master or "local").startswith("local"):
        # Spark otherwise warns at start-up that the host name resolves to loopback; a local
        # session binds loopback on purpose (below).
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = builder.config("spark.driver.host", "127.0.0.1").config(
            "spark.driver.bindAddress", "127.0.0.1"
        )
    # py4j logs each closed connection at INFO, one per thread that talked to the JVM.
    logging.getLogger("py4j").setLevel(logging.WARNING)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark
