"""What both differential tests share: one side's answer as an ``Outcome``, and their differences.

kassign runs through the servicer's own entry point; Kafka through ``kafka_oracle``. Kept here so
the high-availability and sticky comparisons read every answer the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from google.protobuf import json_format
from kassign.server.streams.servicer import assign_request
from kassign.v1 import assignment_pb2 as pb

from tests.differential import kafka_oracle
from tests.e2e.harness import ROOT

__all__ = [
    "GHZ_DATA",
    "Outcome",
    "differences",
    "ghz_request",
    "kafka_outcome",
    "kassign_outcome",
]

GHZ_DATA = ROOT / "bench" / "ghz" / "data"


@dataclass(frozen=True, slots=True)
class Outcome:
    """One side's answer in the shape both can give: task ids per process id, follow-up."""

    active: dict[str, frozenset[str]]
    standby: dict[str, frozenset[str]]
    followup: bool


def _ids(tasks: Iterable[pb.TaskId]) -> frozenset[str]:
    return frozenset(f"{t.subtopology}_{t.partition}" for t in tasks)


def kassign_outcome(request: pb.AssignRequest) -> Outcome:
    """kassign through the servicer's own entry point; the follow-up is any client's deadline."""
    response = assign_request(request).response
    if response.error != pb.ASSIGNMENT_ERROR_NONE:
        raise AssertionError(f"kassign rejected its own assignment: {response.error}")
    return Outcome(
        active={c.process_id: _ids(c.active_tasks) for c in response.clients},
        standby={c.process_id: _ids(c.standby_tasks) for c in response.clients},
        followup=any(c.followup_rebalance_deadline_ms for c in response.clients),
    )


def ghz_request(name: str) -> pb.AssignRequest:
    """A ghz load-test body (``bench/ghz/data``, protobuf JSON) as the request it stands for."""
    return json_format.Parse((GHZ_DATA / f"{name}.json").read_text(), pb.AssignRequest())


def kafka_outcome(answer: kafka_oracle.KafkaAssignment) -> Outcome:
    return Outcome(answer.active, answer.standby, followup=answer.probing)


def differences(kassign: Outcome, kafka: Outcome) -> list[str]:
    """What differs, one line per client and aspect (empty when they agree)."""
    out = []
    for pid in sorted(kassign.active.keys() | kafka.active.keys()):
        for what, ours, theirs in (
            ("active", kassign.active, kafka.active),
            ("standby", kassign.standby, kafka.standby),
        ):
            mine, kafkas = ours.get(pid, frozenset()), theirs.get(pid, frozenset())
            if mine != kafkas:
                out.append(
                    f"  {pid} {what}: kassign only {sorted(mine - kafkas)}, "
                    f"Kafka only {sorted(kafkas - mine)}"
                )
    if kassign.followup != kafka.followup:
        out.append(f"  follow-up: kassign {kassign.followup}, Kafka {kafka.followup}")
    return out
