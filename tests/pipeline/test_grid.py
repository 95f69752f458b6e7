"""The what-if grid: products of axes, explicit lists, and how overrides reach the configs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kassign.assignor.streams.model import AssignmentConfigs, RackAwareStrategy
from kassign.pipeline.grid import (
    OWN_CONFIGURATION,
    Configuration,
    apply,
    grid_from_json,
    load_grid,
    with_overrides,
)


def test_the_grid_is_the_product_of_its_axes_in_written_order() -> None:
    grid = grid_from_json(
        {
            "assignors": ["high_availability", "sticky"],
            "rack_aware_strategies": ["none", "min_traffic"],
            "costs": [[10, 1]],
            "standbys": [0, 1],
        }
    )
    assert len(grid) == 8
    assert [c.name for c in grid[:3]] == [
        "ha/none/10:1/sb0",
        "ha/none/10:1/sb1",
        "ha/min_traffic/10:1/sb0",
    ]
    assert grid[-1] == Configuration(
        name="sticky/min_traffic/10:1/sb1",
        assignor="sticky",
        rack_strategy=RackAwareStrategy.MIN_TRAFFIC,
        traffic_cost=10,
        non_overlap_cost=1,
        standbys=1,
    )


def test_missing_axes_keep_the_requests_values() -> None:
    configs = AssignmentConfigs(
        assignor="sticky", num_standby_replicas=2, traffic_cost=3, non_overlap_cost=4
    )
    (only,) = grid_from_json({"rack_aware_strategies": ["balance_subtopology"]})
    changed = apply(only, configs)
    assert changed.rack_aware_strategy is RackAwareStrategy.BALANCE_SUBTOPOLOGY
    assert (changed.assignor, changed.num_standby_replicas, changed.traffic_cost) == (
        "sticky",
        2,
        3,
    )
    assert apply(OWN_CONFIGURATION, configs) == configs


def test_null_costs_mean_the_requests_costs() -> None:
    configs = AssignmentConfigs(traffic_cost=7, non_overlap_cost=8)
    with_costs, without = grid_from_json({"costs": [[1, 10], None]})
    assert (
        apply(with_costs, configs).traffic_cost,
        apply(with_costs, configs).non_overlap_cost,
    ) == (1, 10)
    assert apply(without, configs) == configs


def test_explicit_configurations_and_files(tmp_path: Path) -> None:
    path = tmp_path / "grid.json"
    path.write_text(
        json.dumps(
            {
                "configurations": [
                    {"name": "today"},
                    {"name": "rack", "rack_strategy": "min_traffic", "standbys": 1},
                ]
            }
        )
    )
    today, rack = load_grid(path)
    assert today == Configuration(name="today")
    assert rack.rack_strategy is RackAwareStrategy.MIN_TRAFFIC and rack.standbys == 1
    assert load_grid(None) == (OWN_CONFIGURATION,)


@pytest.mark.parametrize(
    "document",
    [
        {"rack_aware_strategies": ["fastest"]},
        {"costs": [[1, 2, 3]]},
        {"configurations": [{"name": "a"}, {"name": "a"}]},
        {"configurations": []},
    ],
)
def test_bad_grids_are_refused(document: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        grid_from_json(document)


def test_columns_mark_kept_values() -> None:
    columns = OWN_CONFIGURATION.columns()
    assert columns == {
        "config": "request",
        "config_assignor": "",
        "config_rack_strategy": "",
        "config_traffic_cost": -1,
        "config_non_overlap_cost": -1,
        "config_standbys": -1,
    }


def test_a_grid_file_names_configs_as_config_does() -> None:
    """Issue 27: one naming scheme, Kafka's names or the contract's, as ``--config`` takes."""
    kafka = grid_from_json(
        {
            "num.standby.replicas": [0, 1],
            "rack.aware.assignment.strategy": ["none", "min_traffic"],
            "acceptable.recovery.lag": [0],
        }
    )
    ours = grid_from_json(
        {
            "rack_aware_strategy": ["none", "min_traffic"],
            "num_standby_replicas": [0, 1],
            "acceptable_recovery_lag": [0],
        }
    )
    assert kafka == ours and len(kafka) == 4
    assert kafka[1].name == "none/sb1/acceptable_recovery_lag=0"
    changed = apply(kafka[3], AssignmentConfigs())
    assert (changed.num_standby_replicas, changed.acceptable_recovery_lag) == (1, 0)
    assert changed.rack_aware_strategy is RackAwareStrategy.MIN_TRAFFIC
    (explicit,) = grid_from_json(
        {"configurations": [{"name": "x", "num.standby.replicas": 2, "max.warmup.replicas": 5}]}
    )
    assert explicit == Configuration(name="x", standbys=2, others=(("max_warmup_replicas", 5),))


def test_an_unknown_key_in_a_grid_file_is_refused() -> None:
    with pytest.raises(ValueError, match="no such config 'num.standbys'.*num.standby.replicas"):
        grid_from_json({"configurations": [{"num.standbys": 1}]})
    with pytest.raises(ValueError, match="no such config 'standby'"):
        grid_from_json({"standby": [1]})


def test_config_overrides_reach_every_configuration_the_grid_leaves_alone() -> None:
    grid = grid_from_json({"standbys": [0, 1]})
    changed = with_overrides(
        grid, {"num_standby_replicas": "2", "rack_aware_assignment_tags": ["zone", "cluster"]}
    )
    assert [c.standbys for c in changed] == [0, 1]  # the grid's axis wins
    assert changed[0].name == "sb0+num_standby_replicas=2+rack_aware_assignment_tags=zone,cluster"
    tags = apply(changed[0], AssignmentConfigs()).rack_aware_assignment_tags
    assert tags == ("zone", "cluster")
    (own,) = with_overrides((OWN_CONFIGURATION,), {"num_standby_replicas": "2"})
    assert apply(own, AssignmentConfigs()).num_standby_replicas == 2
