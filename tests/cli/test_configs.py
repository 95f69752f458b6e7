"""Kafka's config names on the command line (issue 27: ``"num.standby.replicas": 1`` in a request
gave a bare protobuf error)."""

from __future__ import annotations

import pytest
from google.protobuf import json_format
from kassign.cli import main as cli
from kassign.cli.configs import KAFKA_NAMES
from kassign.v1 import assignment_pb2 as pb

from tests.server.running import ROOT

EXAMPLE = ROOT / "examples" / "small-three-clients.json"


def _configs(*pairs: str) -> pb.AssignmentConfigs:
    return cli.with_configs(cli.read_request(str(EXAMPLE)), pairs).configs


def test_kafkas_names_and_the_contracts_set_the_same_fields() -> None:
    kafka = _configs(
        "num.standby.replicas=2",
        "acceptable.recovery.lag=500",
        "max.warmup.replicas=3",
        "probing.rebalance.interval.ms=60000",
        "rack.aware.assignment.tags=zone,cluster",
        "rack.aware.assignment.strategy=min_traffic",
        "rack.aware.assignment.traffic_cost=10",
        "rack.aware.assignment.non_overlap_cost=1",
        "kassign.standby.rack.spread=true",
    )
    ours = _configs(
        "num_standby_replicas=2",
        "acceptable_recovery_lag=500",
        "max-warmup-replicas=3",
        "probing_rebalance_interval_ms=60000",
        "rack_aware_assignment_tags=zone,cluster",
        "rack_aware_strategy=RACK_AWARE_STRATEGY_MIN_TRAFFIC",
        "traffic_cost=10",
        "non_overlap_cost=1",
        "standby_rack_spread=true",
    )
    assert kafka == ours
    assert kafka.num_standby_replicas == 2 and list(kafka.rack_aware_assignment_tags) == [
        "zone",
        "cluster",
    ]
    assert kafka.rack_aware_strategy == pb.RACK_AWARE_STRATEGY_MIN_TRAFFIC
    assert kafka.HasField("standby_rack_spread") and kafka.standby_rack_spread
    assert {f.name for f, _ in kafka.ListFields()} >= set(KAFKA_NAMES.values())


def test_a_later_pair_wins_and_a_list_replaces_the_requests() -> None:
    request = cli.read_request(str(EXAMPLE))
    request.configs.rack_aware_assignment_tags.append("rack")
    configs = cli.with_configs(
        request,
        ["num.standby.replicas=1", "num.standby.replicas=0", "rack.aware.assignment.tags=zone"],
    ).configs
    assert configs.HasField("num_standby_replicas") and configs.num_standby_replicas == 0
    assert list(configs.rack_aware_assignment_tags) == ["zone"]


@pytest.mark.parametrize(
    ("pair", "said"),
    [
        ("num.standby.replica=1", "--config num.standby.replica: no such config"),
        ("num.standby.replicas", "expected KEY=VALUE"),
        ("num.standby.replicas=two", "numStandbyReplicas"),
        (
            "kassign.standby.rack.spread=yes",
            "kassign.standby.rack.spread=yes: expected true or false",
        ),
    ],
)
def test_a_bad_pair_is_refused_naming_it(pair: str, said: str) -> None:
    with pytest.raises(json_format.ParseError, match=said):
        _configs(pair)


def test_a_kafka_name_in_a_json_request_gets_the_contracts_name(
    capsys: pytest.CaptureFixture[str], tmp_path: object
) -> None:
    path = ROOT / "examples" / "small-three-clients.json"
    text = path.read_text().replace('"configs": {', '"configs": {"num.standby.replicas": 1, ', 1)
    assert "num.standby.replicas" in text
    with pytest.raises(json_format.ParseError) as err:
        cli.parse_json(text, pb.AssignRequest())
    assert "'num.standby.replicas' is Kafka's name: a request's configs call it" in str(err.value)
    assert "'numStandbyReplicas'" in str(err.value) and "--config num.standby.replicas" in str(
        err.value
    )


def test_assign_and_explain_take_config(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["assign", str(EXAMPLE), "--config", "num.standby.replicas=1"])
    out = capsys.readouterr().out
    assert code == 0
    answer = json_format.Parse(out, pb.AssignResponse())
    assert sum(len(c.standby_tasks) for c in answer.clients) > 0
    code = cli.main(["explain", str(EXAMPLE), "--config", "num.standby.replicas=1"])
    assert code == 0 and "standby" in capsys.readouterr().out
    code = cli.main(
        ["assign", "--kind", "consumer", str(ROOT / "examples" / "consumer" / "rack-aware-range.json"),
         "--config", "num.standby.replicas=1"]
    )  # fmt: skip
    assert (
        code == 2 and "--config sets a Kafka Streams request's configs" in capsys.readouterr().err
    )
