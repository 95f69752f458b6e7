"""The what-if grid: assignor x rack strategy x costs x standbys, each request run under each.

Why: an operator asks "what would min_traffic with standbys=1 change?" before changing a setting;
replay answers by re-running each recorded request under every configuration of the grid.

GRID.json lists the values of each axis; the grid is their product, in the order written::

    {"assignors": ["high_availability", "sticky"],
     "rack_aware_strategies": ["none", "min_traffic", "balance_subtopology"],
     "costs": [[10, 1], [1, 10], null],
     "standbys": [0, 1]}

An axis left out (or ``null`` inside ``costs``) keeps each request's own value. ``"configurations"``
may instead list configurations explicitly, each with an optional ``"name"``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kassign.assignor.streams.model import AssignmentConfigs, RackAwareStrategy

__all__ = [
    "OWN_CONFIGURATION",
    "Configuration",
    "apply",
    "grid_from_json",
    "load_grid",
    "parse_strategy",
]

_STRATEGIES = {s.value: s for s in RackAwareStrategy}
_SHORT = {"high_availability": "ha"}


def parse_strategy(text: str) -> RackAwareStrategy:
    """A rack strategy from its Kafka config value: none, min_traffic or balance_subtopology."""
    key = text.strip().lower().removeprefix("rack_aware_strategy_")
    if key not in _STRATEGIES:
        raise ValueError(
            f"unknown rack strategy {text!r} (known: {', '.join(sorted(_STRATEGIES))})"
        )
    return _STRATEGIES[key]


@dataclass(frozen=True, slots=True, kw_only=True)
class Configuration:
    """Overrides applied to a request's configs; ``None`` keeps the request's own value."""

    name: str
    assignor: str | None = None
    rack_strategy: RackAwareStrategy | None = None
    traffic_cost: int | None = None
    non_overlap_cost: int | None = None
    standbys: int | None = None

    def columns(self) -> dict[str, Any]:
        """The configuration as output columns (-1 / "" where the request's value is kept)."""
        return {
            "config": self.name,
            "config_assignor": self.assignor or "",
            "config_rack_strategy": self.rack_strategy.value if self.rack_strategy else "",
            "config_traffic_cost": -1 if self.traffic_cost is None else self.traffic_cost,
            "config_non_overlap_cost": -1
            if self.non_overlap_cost is None
            else self.non_overlap_cost,
            "config_standbys": -1 if self.standbys is None else self.standbys,
        }


OWN_CONFIGURATION = Configuration(name="request")
"""Each request's own configuration: what replay runs without ``--grid``."""


def apply(configuration: Configuration, configs: AssignmentConfigs) -> AssignmentConfigs:
    """``configs`` with the configuration's overrides; the costs travel together."""
    changes: dict[str, Any] = {}
    if configuration.assignor is not None:
        changes["assignor"] = configuration.assignor
    if configuration.rack_strategy is not None:
        changes["rack_aware_strategy"] = configuration.rack_strategy
    if configuration.traffic_cost is not None or configuration.non_overlap_cost is not None:
        changes["traffic_cost"] = configuration.traffic_cost
        changes["non_overlap_cost"] = configuration.non_overlap_cost
    if configuration.standbys is not None:
        changes["num_standby_replicas"] = configuration.standbys
    return replace(configs, **changes)


def _name(
    assignor: str | None,
    strategy: RackAwareStrategy | None,
    costs: Sequence[int] | None,
    standbys: int | None,
) -> str:
    """A short name from the axes the grid sets, e.g. "ha/min_traffic/10:1/sb1"."""
    parts = [
        _SHORT.get(assignor, assignor) if assignor else "",
        strategy.value if strategy else "",
        f"{costs[0]}:{costs[1]}" if costs else "",
        f"sb{standbys}" if standbys is not None else "",
    ]
    return "/".join(p for p in parts if p) or "request"


def _costs(value: Any) -> tuple[int, int] | None:
    if value is None:
        return None
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise ValueError(f"costs entry must be [traffic, non_overlap] or null, not {value!r}")
    return int(value[0]), int(value[1])


def _explicit(entry: Mapping[str, Any], index: int) -> Configuration:
    strategy = entry.get("rack_strategy")
    return Configuration(
        name=str(entry.get("name") or f"config-{index}"),
        assignor=entry.get("assignor"),
        rack_strategy=parse_strategy(strategy) if strategy else None,
        traffic_cost=_optional_int(entry.get("traffic_cost")),
        non_overlap_cost=_optional_int(entry.get("non_overlap_cost")),
        standbys=_optional_int(entry.get("standbys")),
    )


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


def grid_from_json(document: Mapping[str, Any]) -> tuple[Configuration, ...]:
    """The configurations a GRID.json document describes, in its order; names must be unique."""
    if "configurations" in document:
        grid = tuple(_explicit(e, i) for i, e in enumerate(document["configurations"]))
    else:
        assignors = document.get("assignors") or [None]
        strategies: list[RackAwareStrategy | None] = [
            parse_strategy(s) for s in document.get("rack_aware_strategies") or []
        ] or [None]
        costs = [_costs(c) for c in document.get("costs") or [None]]
        standbys = document.get("standbys") or [None]
        grid = tuple(
            Configuration(
                name=_name(a, s, c, n),
                assignor=a,
                rack_strategy=s,
                traffic_cost=c[0] if c else None,
                non_overlap_cost=c[1] if c else None,
                standbys=n,
            )
            for a, s, c, n in itertools.product(assignors, strategies, costs, standbys)
        )
    names = [c.name for c in grid]
    if not grid or len(set(names)) != len(names):
        raise ValueError(f"a grid needs at least one configuration and unique names: {names}")
    return grid


def load_grid(path: str | Path | None) -> tuple[Configuration, ...]:
    """The grid in GRID.json, or the request's own configuration when no file is given."""
    if path is None:
        return (OWN_CONFIGURATION,)
    return grid_from_json(json.loads(Path(path).read_text()))
