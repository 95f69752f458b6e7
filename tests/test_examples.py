"""The example requests: stored as the generator writes them, and each assigns as its KIP says."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest
from kassign.cli.main import read_request
from kassign.server.streams.servicer import assign_request
from kassign.v1 import assignment_pb2 as pb

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("examples_generate", EXAMPLES / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATOR = _generator()


def _response(name: str) -> pb.AssignResponse:
    return assign_request(read_request(str(EXAMPLES / f"{name}.json"))).response


def _tasks(tasks: object) -> set[str]:
    return {f"{t.subtopology}_{t.partition}" for t in tasks}  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(GENERATOR.EXAMPLES))
def test_stored_example_is_what_the_generator_writes_and_assigns(name: str) -> None:
    path = EXAMPLES / f"{name}.json"
    assert path.read_text(encoding="utf-8") == GENERATOR.render(GENERATOR.EXAMPLES[name]())
    response = _response(name)
    assert response.error == pb.ASSIGNMENT_ERROR_NONE
    actives = Counter(t for c in response.clients for t in _tasks(c.active_tasks))
    assert set(actives.values()) == {1} and len(actives) == response.report.tasks


def test_every_json_file_here_is_a_known_example() -> None:
    assert {p.stem for p in EXAMPLES.glob("*.json")} == set(GENERATOR.EXAMPLES)


def test_kip441_scale_out_keeps_actives_and_warms_up_the_new_instance() -> None:
    response = _response("kip441-scale-out")
    i1, i2, i3 = response.clients
    # First rebalance of KIP-441's "Scaling Out": nothing moves yet, I3 gets warm-up replicas.
    assert _tasks(i1.active_tasks) == {"0_0", "0_2"} and _tasks(i2.active_tasks) == {"0_1"}
    assert not i3.active_tasks and i3.standby_tasks
    assert response.report.warmups >= 1 and response.report.followup_scheduled
    assert i1.followup_rebalance_deadline_ms > 0


def test_kip708_nine_nodes_spread_each_task_over_three_zones_and_three_clusters() -> None:
    request = read_request(str(EXAMPLES / "kip708-nine-nodes.json"))
    tags = {
        m.subscription.info.process_id: {t.key: t.value for t in m.subscription.info.client_tags}
        for m in request.members
    }
    response = _response("kip708-nine-nodes")
    holders: dict[str, list[str]] = {}
    for client in response.clients:
        for task in _tasks(client.active_tasks) | _tasks(client.standby_tasks):
            holders.setdefault(task, []).append(client.process_id)
    assert len(holders) == 9
    for task, pids in holders.items():
        assert len(pids) == 3, task
        assert len({tags[p]["zone"] for p in pids}) == 3, task
        assert len({tags[p]["cluster"] for p in pids}) == 3, task


def test_rack_aware_example_reports_the_optimisation() -> None:
    report = _response("rack-aware-min-traffic").report
    assert report.rack_aware_strategy == "min_traffic"
    assert report.rack_optimisation not in ("", "off")
    assert report.cross_rack_cost_after <= report.cross_rack_cost_before
