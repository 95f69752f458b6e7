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

One naming scheme (issue 27): a grid file names a config as ``--config`` does, by Kafka's name or
the contract's (``kassign.server.streams.config_names``), for any of the request's configs::

    {"num.standby.replicas": [0, 1], "rack.aware.assignment.strategy": ["none", "min_traffic"]}
    {"configurations": [{"name": "lagged", "acceptable.recovery.lag": 0, "assignor": "sticky"}]}

The older axis keys above (``assignors``, ``rack_aware_strategies``, ``standbys``) and explicit
keys (``rack_strategy``, ``standbys``) still read as before; an unknown key is refused.
``with_overrides`` applies ``kassign replay|simulate --config KEY=VALUE`` to every configuration.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kassign.assignor.streams.model import AssignmentConfigs, RackAwareStrategy
from kassign.server.streams.config_names import config_field, known_names

__all__ = [
    "OWN_CONFIGURATION",
    "Configuration",
    "apply",
    "grid_from_json",
    "load_grid",
    "parse_strategy",
    "with_overrides",
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
    others: tuple[tuple[str, Any], ...] = ()
    """Any other ``AssignmentConfigs`` field set, by name, sorted (no output column of its own)."""

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
    return replace(configs, **dict(configuration.others), **changes)


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


_OLD_KEYS = {"rack_strategy": "rack_aware_strategy", "standbys": "num_standby_replicas"}
"""The explicit entries' older keys, read as the field they set."""
_OLD_AXES = {
    "assignors": "assignor",
    "rack_aware_strategies": "rack_aware_strategy",
    "standbys": "num_standby_replicas",
}
"""The older axis keys, read as the field each varies (``costs`` pairs the two costs)."""
_TYPED = {
    "assignor": "assignor",
    "rack_aware_strategy": "rack_strategy",
    "traffic_cost": "traffic_cost",
    "non_overlap_cost": "non_overlap_cost",
    "num_standby_replicas": "standbys",
}
"""Fields with an output column of their own: ``Configuration`` attribute by field."""


def _field(key: str, old: Mapping[str, str]) -> str:
    """The ``AssignmentConfigs`` field a grid file's key names; an unknown key is refused."""
    field = old.get(key) or config_field(key)
    if field is None:
        raise ValueError(f"grid: no such config {key!r} (known: {known_names()})")
    return field


def _value(field: str, value: Any) -> Any:
    """A grid file's or ``--config``'s value for ``field``, as the model holds it."""
    if value is None:
        return None
    if field == "rack_aware_strategy":
        return parse_strategy(str(value))
    if field == "assignor":
        return str(value)
    if field == "rack_aware_assignment_tags":
        items = value.split(",") if isinstance(value, str) else value
        return tuple(str(v).strip() for v in items)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(f"grid: {field} takes a whole number, not {value!r}") from None


def _configuration(name: str, settings: Mapping[str, Any]) -> Configuration:
    """A configuration from field -> model value (``None``: the request's own)."""
    typed = {_TYPED[f]: v for f, v in settings.items() if f in _TYPED}
    others = tuple(sorted((f, v) for f, v in settings.items() if f not in _TYPED and v is not None))
    return Configuration(name=name, others=others, **typed)


def _explicit(entry: Mapping[str, Any], index: int) -> Configuration:
    settings = {
        field: _value(field, value)
        for field, value in ((_field(k, _OLD_KEYS), v) for k, v in entry.items() if k != "name")
    }
    return _configuration(str(entry.get("name") or f"config-{index}"), settings)


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


_AXIS_ORDER = ("assignor", "rack_aware_strategy", "traffic_cost", "num_standby_replicas")
"""The order the older axes always took, whatever the file's order: assignor first."""


def _product(document: Mapping[str, Any]) -> tuple[Configuration, ...]:
    """The product of a grid file's axes, in written order (``costs`` pairs count as one axis)."""
    axes: list[tuple[int, list[dict[str, Any]]]] = []
    for key, values in document.items():
        if key == "costs":
            pairs = [_costs(c) for c in values or [None]]
            costs = [{"traffic_cost": c and c[0], "non_overlap_cost": c and c[1]} for c in pairs]
            axes.append((_AXIS_ORDER.index("traffic_cost"), costs))
            continue
        field = _field(key, _OLD_AXES)
        if not isinstance(values, list):
            raise TypeError(f"grid: the axis {key!r} takes a list of values, not {values!r}")
        rank = _AXIS_ORDER.index(field) if field in _AXIS_ORDER else len(_AXIS_ORDER)
        axes.append((rank, [{field: _value(field, v)} for v in values or [None]]))
    axes.sort(key=lambda axis: axis[0])  # stable: other fields in written order
    configurations = []
    for combination in itertools.product(*(values for _, values in axes)):
        settings = {k: v for setting in combination for k, v in setting.items()}
        configurations.append(_configuration(_product_name(settings), settings))
    return tuple(configurations)


def _product_name(settings: Mapping[str, Any]) -> str:
    """``_name`` of the typed axes, then ``field=value`` for each other one."""
    traffic, non_overlap = settings.get("traffic_cost"), settings.get("non_overlap_cost")
    name = _name(
        settings.get("assignor"),
        settings.get("rack_aware_strategy"),
        (traffic, non_overlap) if traffic is not None and non_overlap is not None else None,
        settings.get("num_standby_replicas"),
    )
    others = [f"{f}={_shown(v)}" for f, v in settings.items() if f not in _TYPED and v is not None]
    if not others:
        return name
    return "/".join([*([name] if name != "request" else []), *others])


def _shown(value: Any) -> str:
    return ",".join(value) if isinstance(value, tuple) else str(value)


def with_overrides(
    grid: Sequence[Configuration], pairs: Mapping[str, Any]
) -> tuple[Configuration, ...]:
    """``--config``'s field -> value pairs applied to each configuration where it keeps the
    request's own value; the configuration's name says so (``+field=value``)."""
    if not pairs:
        return tuple(grid)
    extra = _explicit(pairs, 0)
    settings = {_field(key, _OLD_KEYS): value for key, value in pairs.items()}
    suffix = "".join(
        f"+{field}={_shown(_value(field, settings[field]))}" for field in sorted(settings)
    )
    changed = []
    for c in grid:
        typed = {
            a: getattr(c, a) if getattr(c, a) is not None else getattr(extra, a)
            for a in _TYPED.values()
        }
        others = dict(extra.others) | dict(c.others)
        changed.append(
            Configuration(name=c.name + suffix, others=tuple(sorted(others.items())), **typed)
        )
    return tuple(changed)


def grid_from_json(document: Mapping[str, Any]) -> tuple[Configuration, ...]:
    """The configurations a GRID.json document describes, in its order; names must be unique."""
    if "configurations" in document:
        grid = tuple(_explicit(e, i) for i, e in enumerate(document["configurations"]))
    else:
        grid = _product(document)
    names = [c.name for c in grid]
    if not grid or len(set(names)) != len(names):
        raise ValueError(f"a grid needs at least one configuration and unique names: {names}")
    return grid


def load_grid(path: str | Path | None) -> tuple[Configuration, ...]:
    """The grid in GRID.json, or the request's own configuration when no file is given."""
    if path is None:
        return (OWN_CONFIGURATION,)
    return grid_from_json(json.loads(Path(path).read_text()))
