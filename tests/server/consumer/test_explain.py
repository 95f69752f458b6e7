"""ConsumerAssignResponse.explanation: only when asked, the rest of the answer unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import json_format
from kassign.server.consumer.encode import canonical_bytes
from kassign.server.consumer.servicer import assign_consumer_request
from kassign.v1 import common_pb2
from kassign.v1 import consumer_pb2 as cpb

EXAMPLES = sorted((Path(__file__).resolve().parents[3] / "examples" / "consumer").glob("*.json"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_explaining_adds_the_explanation_and_changes_nothing_else(path: Path) -> None:
    request = json_format.Parse(path.read_text(encoding="utf-8"), cpb.ConsumerAssignRequest())
    plain = assign_consumer_request(request).response
    assert not plain.HasField("explanation")
    request.explain = True
    told = cpb.ConsumerAssignResponse()
    told.CopyFrom(assign_consumer_request(request).response)
    stories = told.explanation.partitions
    assert len(stories) == told.report.partitions
    assert all(s.rule != common_pb2.PLACEMENT_RULE_UNSPECIFIED and s.reason for s in stories)
    given = {(m.member_id, tp.topic, tp.partition) for m in told.members for tp in m.partitions}
    told_to = {
        (s.member_id, s.partition.topic, s.partition.partition) for s in stories if s.member_id
    }
    assert told_to == given
    told.ClearField("explanation")
    assert canonical_bytes(told) == canonical_bytes(plain)
