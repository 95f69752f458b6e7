"""Spark schemas of the job outputs, derived from the row columns so they cannot drift apart."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kassign.pipeline.measures import Measures

__all__ = ["CONFIG_TYPES", "MEASURE_TYPES", "spark_schema"]

_DDL = {int: "bigint", float: "double", bool: "boolean", str: "string"}

MEASURE_TYPES: dict[str, type] = {
    name: type(getattr(Measures(), name)) for name in Measures.__dataclass_fields__
}
CONFIG_TYPES: dict[str, type] = {
    "config": str,
    "config_assignor": str,
    "config_rack_strategy": str,
    "config_traffic_cost": int,
    "config_non_overlap_cost": int,
    "config_standbys": int,
}


def spark_schema(columns: Sequence[str], types: Mapping[str, type]) -> str:
    """A DDL schema string for ``columns``; measure and configuration columns are known already."""
    known = {**CONFIG_TYPES, **MEASURE_TYPES, **types}
    return ", ".join(f"{c} {_DDL[known[c]]}" for c in columns)
