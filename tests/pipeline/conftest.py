"""One SparkSession on local[2] for the whole pipeline test session (a JVM start costs seconds)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from kassign.pipeline.spark import session

    spark = session("local[2]", app_name="kassign-tests")
    spark.conf.set("spark.sql.shuffle.partitions", "4")
    yield spark
    spark.stop()
