"""decode/configs.py: Kafka's defaults, and configured values kept."""

from __future__ import annotations

from kassign.assignor.streams.model import RackAwareStrategy
from kassign.server.streams.decode import decode_request
from kassign.v1 import assignment_pb2 as pb

from tests.server.streams.decode.builders import (
    member,
    request,
)


def test_defaults_are_kafkas() -> None:
    configs = decode_request(request(member("a")), now_ms=0).state.configs
    assert configs.assignor == "high_availability"
    assert (configs.acceptable_recovery_lag, configs.max_warmup_replicas) == (10_000, 2)
    assert (configs.num_standby_replicas, configs.probing_rebalance_interval_ms) == (0, 600_000)
    assert configs.rack_aware_strategy is RackAwareStrategy.NONE
    assert configs.traffic_cost is None and configs.assignment_time_budget_ms is None
    assert configs.standby_rack_spread is False  # Kafka's behaviour: racks are no standby tag


def test_set_configs_are_kept() -> None:
    req = request(
        member("a"),
        assignor="sticky",
        acceptable_recovery_lag=0,
        max_warmup_replicas=1,
        num_standby_replicas=2,
        probing_rebalance_interval_ms=60_000,
        rack_aware_assignment_tags=["zone"],
        rack_aware_strategy=pb.RACK_AWARE_STRATEGY_MIN_TRAFFIC,
        traffic_cost=0,
        non_overlap_cost=3,
        assignment_time_budget_ms=250,
        standby_rack_spread=True,
    )
    c = decode_request(req, now_ms=0, default_budget_ms=999).state.configs
    assert (
        c.assignor,
        c.acceptable_recovery_lag,
        c.max_warmup_replicas,
        c.num_standby_replicas,
    ) == ("sticky", 0, 1, 2)
    assert c.rack_aware_assignment_tags == ("zone",)
    assert c.rack_aware_strategy is RackAwareStrategy.MIN_TRAFFIC
    assert (c.traffic_cost, c.non_overlap_cost, c.assignment_time_budget_ms) == (0, 3, 250)
    assert c.standby_rack_spread is True
