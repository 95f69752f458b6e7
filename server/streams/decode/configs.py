"""``AssignmentConfigs`` from the request: unset means Kafka's default, bad values are refused.

The bounds are Kafka's own ``StreamsConfig`` validators where it has one (recovery lag >= 0,
warm-ups >= 1, probing interval >= 60 s, at most five tag keys), plus limits of ours where Kafka
has none but a huge value could only be a mistake (standby replicas, time budget, costs).
"""

from __future__ import annotations

from kassign.assignor.errors import InvalidRequest, unknown_name
from kassign.assignor.streams.api import registered_names
from kassign.assignor.streams.model import (
    MAX_RACK_COST,
    AssignmentConfigs,
    Balance,
    RackAwareStrategy,
)
from kassign.v1 import assignment_pb2 as pb

__all__ = [
    "MAX_RACK_AWARE_TAGS",
    "MAX_STANDBY_REPLICAS",
    "MAX_TIME_BUDGET_MS",
    "MIN_PROBING_REBALANCE_INTERVAL_MS",
    "decode_configs",
]

MIN_PROBING_REBALANCE_INTERVAL_MS = 60_000
"""Kafka's ``probing.rebalance.interval.ms`` validator: at least one minute."""
MAX_RACK_AWARE_TAGS = 5
"""Kafka's ``rack.aware.assignment.tags`` validator: at most five keys."""
MAX_STANDBY_REPLICAS = 100
"""Ours: Kafka has no bound, but a standby per client beyond this many is never placeable."""
MAX_TIME_BUDGET_MS = 600_000
"""Ours: a budget longer than the default probing interval would outlive the rebalance."""

_STRATEGIES = {
    pb.RACK_AWARE_STRATEGY_UNSPECIFIED: RackAwareStrategy.NONE,
    pb.RACK_AWARE_STRATEGY_NONE: RackAwareStrategy.NONE,
    pb.RACK_AWARE_STRATEGY_MIN_TRAFFIC: RackAwareStrategy.MIN_TRAFFIC,
    pb.RACK_AWARE_STRATEGY_BALANCE_SUBTOPOLOGY: RackAwareStrategy.BALANCE_SUBTOPOLOGY,
}


def _bad(name: str, message: str) -> InvalidRequest:
    return InvalidRequest(message, field=f"configs.{name}")


def _at_least(value: int, minimum: int, name: str) -> int:
    if value < minimum:
        raise _bad(name, f"must be at least {minimum}, got {value}")
    return value


def _between(value: int, low: int, high: int, name: str) -> int:
    if not low <= value <= high:
        raise _bad(name, f"must be between {low} and {high}, got {value}")
    return value


def _assignor(configs: pb.AssignmentConfigs) -> str:
    name = configs.assignor if configs.HasField("assignor") else "high_availability"
    known = registered_names()
    if name not in known:
        raise _bad("assignor", unknown_name("assignor", name, known))
    return name


def _tags(configs: pb.AssignmentConfigs) -> tuple[str, ...]:
    tags = tuple(configs.rack_aware_assignment_tags)
    if len(tags) > MAX_RACK_AWARE_TAGS:
        raise _bad(
            "rack_aware_assignment_tags", f"at most {MAX_RACK_AWARE_TAGS} keys, got {len(tags)}"
        )
    if any(not t for t in tags):
        raise _bad("rack_aware_assignment_tags", "a tag key is empty")
    if len(set(tags)) != len(tags):
        raise _bad("rack_aware_assignment_tags", f"duplicate tag key in {list(tags)}")
    return tags


def _strategy(configs: pb.AssignmentConfigs) -> RackAwareStrategy:
    strategy = _STRATEGIES.get(configs.rack_aware_strategy)
    if strategy is None:
        raise _bad("rack_aware_strategy", f"unknown strategy value {configs.rack_aware_strategy}")
    return strategy


_BALANCES = {
    pb.BALANCE_UNSPECIFIED: Balance.COUNT,
    pb.BALANCE_COUNT: Balance.COUNT,
    pb.BALANCE_LOAD: Balance.LOAD,
}


def _balance(configs: pb.AssignmentConfigs) -> Balance:
    balance = _BALANCES.get(configs.balance)
    if balance is None:
        raise _bad("balance", f"unknown balance value {configs.balance}")
    return balance


def _optional_cost(configs: pb.AssignmentConfigs, name: str) -> int | None:
    if not configs.HasField(name):
        return None
    # The flow solver's bound: checked here so the answer never depends on the strategy.
    return _between(int(getattr(configs, name)), 0, MAX_RACK_COST, name)


def _budget(
    configs: pb.AssignmentConfigs, default_budget_ms: int | None, cap_ms: int | None
) -> int | None:
    if not configs.HasField("assignment_time_budget_ms"):
        budget = default_budget_ms
    else:
        budget = _between(
            configs.assignment_time_budget_ms, 1, MAX_TIME_BUDGET_MS, "assignment_time_budget_ms"
        )
    if cap_ms is None:
        return budget
    return cap_ms if budget is None else min(budget, cap_ms)


def decode_configs(
    configs: pb.AssignmentConfigs,
    *,
    default_budget_ms: int | None,
    budget_cap_ms: int | None = None,
) -> AssignmentConfigs:
    """Kafka's defaults for every unset field; ``InvalidRequest`` naming the field otherwise."""
    defaults = AssignmentConfigs()
    lag = configs.acceptable_recovery_lag if configs.HasField("acceptable_recovery_lag") else None
    warmups = configs.max_warmup_replicas if configs.HasField("max_warmup_replicas") else None
    standbys = configs.num_standby_replicas if configs.HasField("num_standby_replicas") else None
    probing = (
        configs.probing_rebalance_interval_ms
        if configs.HasField("probing_rebalance_interval_ms")
        else None
    )
    return AssignmentConfigs(
        assignor=_assignor(configs),
        acceptable_recovery_lag=defaults.acceptable_recovery_lag
        if lag is None
        else _at_least(lag, 0, "acceptable_recovery_lag"),
        max_warmup_replicas=defaults.max_warmup_replicas
        if warmups is None
        else _at_least(warmups, 1, "max_warmup_replicas"),
        num_standby_replicas=defaults.num_standby_replicas
        if standbys is None
        else _between(standbys, 0, MAX_STANDBY_REPLICAS, "num_standby_replicas"),
        probing_rebalance_interval_ms=defaults.probing_rebalance_interval_ms
        if probing is None
        else _at_least(probing, MIN_PROBING_REBALANCE_INTERVAL_MS, "probing_rebalance_interval_ms"),
        rack_aware_assignment_tags=_tags(configs),
        rack_aware_strategy=_strategy(configs),
        traffic_cost=_optional_cost(configs, "traffic_cost"),
        non_overlap_cost=_optional_cost(configs, "non_overlap_cost"),
        assignment_time_budget_ms=_budget(configs, default_budget_ms, budget_cap_ms),
        standby_rack_spread=configs.standby_rack_spread,
        balance=_balance(configs),
    )
