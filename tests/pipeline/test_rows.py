"""The jobs' per-row logic without Spark: replay rows, simulation rounds, catching up."""

from __future__ import annotations

import pytest
from google.protobuf import json_format
from kassign.assignor.streams.model import LATEST_OFFSET
from kassign.pipeline.events import Event, EventKind
from kassign.pipeline.generate import GroupSpec, random_group
from kassign.pipeline.grid import OWN_CONFIGURATION, grid_from_json
from kassign.pipeline.group import to_request, to_state
from kassign.pipeline.measures import assign_and_measure
from kassign.pipeline.rows import (
    REPLAY_COLUMNS,
    SIMULATE_COLUMNS,
    after_rebalance,
    replay_rows,
    simulate_rows,
)

SPEC = GroupSpec(clients=(4, 6), racks=(3, 3), replication=(1, 2), standbys=(1, 1))
GRID = grid_from_json(
    {"assignors": ["high_availability", "sticky"], "rack_aware_strategies": ["none", "min_traffic"]}
)


def test_a_request_gives_one_row_per_configuration() -> None:
    group = random_group(SPEC, seed=1, index=1)
    payload = json_format.MessageToJson(to_request(group), indent=None).encode()
    rows = replay_rows(7, payload, "json", GRID)
    assert [r["config"] for r in rows] == [c.name for c in GRID]
    assert all(tuple(r) == REPLAY_COLUMNS for r in rows)
    assert all(
        r["error"] == "" and r["request_index"] == 7 and r["group_id"] == group.group_id
        for r in rows
    )
    assert {r["tasks"] for r in rows} == {len(group.tasks)}
    by_name = {r["config"]: r for r in rows}
    assert by_name["ha/none"]["rack_optimisation"] == "off"
    assert by_name["ha/min_traffic"]["cost_after"] <= by_name["ha/min_traffic"]["cost_before"]


def test_proto_and_json_payloads_give_the_same_measures() -> None:
    request = to_request(random_group(SPEC, seed=1, index=2))
    as_json = replay_rows(
        0, json_format.MessageToJson(request).encode(), "json", (OWN_CONFIGURATION,)
    )
    as_proto = replay_rows(0, request.SerializeToString(), "proto", (OWN_CONFIGURATION,))
    strip = [{k: v for k, v in r.items() if k != "assign_seconds"} for r in (*as_json, *as_proto)]
    assert strip[0] == strip[1]


@pytest.mark.parametrize(
    "payload, fmt",
    [(b"{nope", "json"), (b"\xff\xff", "proto"), (None, "json"), (b'{"groupId": "g"}', "json")],
)
def test_a_bad_request_is_an_error_row_per_configuration(payload: bytes | None, fmt: str) -> None:
    rows = replay_rows(3, payload, fmt, GRID)
    assert len(rows) == len(GRID)
    assert all(r["error"] and r["tasks"] == 0 for r in rows)


def test_after_a_rebalance_actives_run_and_standbys_have_caught_up() -> None:
    group = random_group(SPEC, seed=4, index=0)
    assignment, measures = assign_and_measure(to_state(group))
    assert assignment is not None and measures.error == ""
    later = after_rebalance(group, assignment)
    ends = {t.id: t.changelog_end_offset_sum for t in group.tasks}
    placed = assignment.by_process()
    for client in later.clients:
        target = placed[client.process_id]
        assert all(client.offset_sums[t] == LATEST_OFFSET for t in target.active)
        assert all(client.offset_sums[t] == ends[t] for t in target.standby)
        running = {t for t, s in client.offset_sums.items() if s == LATEST_OFFSET}
        assert running == set(target.active)
    assert later.now_ms == group.now_ms + group.configs.probing_rebalance_interval_ms


def test_simulation_rounds_end_when_no_follow_up_is_asked() -> None:
    events = (Event(kind=EventKind.RACK_FAIL, rack=1), Event(kind=EventKind.JOIN, count=2))
    rows = simulate_rows(
        seed=3, index=5, spec=SPEC, grid=(OWN_CONFIGURATION,), events=events, rounds=10
    )
    assert all(tuple(r) == SIMULATE_COLUMNS for r in rows)
    for phase in (0, 1, 2):
        phase_rows = [r for r in rows if r["phase"] == phase]
        assert [r["round"] for r in phase_rows] == list(range(1, len(phase_rows) + 1))
        assert all(r["followup"] for r in phase_rows[:-1])
        if phase_rows[-1]["converged"]:
            assert not phase_rows[-1]["followup"]
            assert {r["rebalances_to_converge"] for r in phase_rows} == {len(phase_rows)}
    assert [r["event"] for r in rows if r["round"] == 1] == ["initial", "rack_fail:1", "join:2"]


def test_a_round_limit_marks_the_phase_unconverged() -> None:
    many_warmups = GroupSpec(
        clients=(6, 6), owned_fraction=1.0, standby_state_fraction=0.0, standbys=(1, 1)
    )
    group_rows = simulate_rows(
        seed=1,
        index=0,
        spec=many_warmups,
        grid=(OWN_CONFIGURATION,),
        events=(Event(kind=EventKind.JOIN, count=3),),
        rounds=1,
    )
    join = [r for r in group_rows if r["phase"] == 1]
    assert len(join) == 1 and join[0]["followup"]
    assert join[0]["rebalances_to_converge"] == -1 and not join[0]["converged"]
