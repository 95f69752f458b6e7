"""The example requests: stored as the generator writes them, and each assigns as its KIP says."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest
from kassign.cli.main import read_consumer_request, read_request
from kassign.server.consumer.servicer import assign_consumer_request
from kassign.server.streams.servicer import assign_request
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CONSUMER = EXAMPLES / "consumer"


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
    assert {p.stem for p in CONSUMER.glob("*.json")} == set(GENERATOR.CONSUMER_EXAMPLES)


def _consumer(name: str) -> tuple[cpb.ConsumerAssignRequest, cpb.ConsumerAssignResponse]:
    request = read_consumer_request(str(CONSUMER / f"{name}.json"))
    return request, assign_consumer_request(request).response


def _pairs(tps: object) -> list[tuple[str, int]]:
    return [(tp.topic, tp.partition) for tp in tps]  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(GENERATOR.CONSUMER_EXAMPLES))
def test_stored_consumer_example_is_what_the_generator_writes_and_assigns(name: str) -> None:
    path = CONSUMER / f"{name}.json"
    assert path.read_text(encoding="utf-8") == GENERATOR.render(GENERATOR.CONSUMER_EXAMPLES[name]())
    request, response = _consumer(name)
    assigned = [tp for m in response.members for tp in _pairs(m.partitions)]
    assert len(assigned) == len(set(assigned))
    assert len(assigned) + response.report.withheld_partitions == response.report.partitions
    assert [m.member_id for m in response.members] == sorted(m.member_id for m in request.members)


def test_rack_aware_range_keeps_co_partitioning_and_reads_in_zone() -> None:
    request, response = _consumer("rack-aware-range")
    racks = {t.name: [set(p.rack_ids) for p in t.partitions] for t in request.topics}
    zone = {m.member_id: m.subscription.rack_id for m in request.members}
    for m in response.members:
        by_topic: dict[str, list[int]] = {}
        for topic, p in _pairs(m.partitions):
            by_topic.setdefault(topic, []).append(p)
            assert zone[m.member_id] in racks[topic][p]
        assert by_topic["orders"] == by_topic["payments"]  # partition p of both, together
    report = response.report
    assert report.kafka_rack_aware and report.cross_rack_partitions_after == 0
    assert report.min_partitions_per_member == report.max_partitions_per_member == 4


def test_cooperative_scale_out_revokes_first_then_hands_over() -> None:
    """First rebalance: owners revoke what the newcomers will get, nobody gets it yet; after the
    owners rejoin owning what they kept (generation 6), the second hands it over, revoking nothing."""
    request, first = _consumer("cooperative-sticky-scale-out")
    revoked = {tp for m in first.members for tp in _pairs(m.revoked)}
    assert revoked and len(revoked) == first.report.withheld_partitions
    assert not revoked & {tp for m in first.members for tp in _pairs(m.partitions)}
    kept = {m.member_id: m.partitions for m in first.members}
    again = cpb.ConsumerAssignRequest()
    again.CopyFrom(request)
    for m in again.members:
        del m.subscription.owned_partitions[:]
        m.subscription.owned_partitions.extend(kept[m.member_id])
        m.subscription.generation_id = 6
    second = assign_consumer_request(again).response
    assert second.report.revoked_partitions == 0 and second.report.withheld_partitions == 0
    newcomers = {
        tp
        for m in second.members
        if m.member_id in ("consumer-3", "consumer-4")
        for tp in _pairs(m.partitions)
    }
    assert newcomers == revoked
    assert second.report.max_partitions_per_member - second.report.min_partitions_per_member <= 1


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
