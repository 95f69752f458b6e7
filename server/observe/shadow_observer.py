"""Shadow mode's log line and metrics (issue 26): one of each per shadow call, both rooms.

A shadow call's report carries ``shadow`` (``ShadowComparison``); ``ShadowObserver`` (Streams)
and ``ConsumerShadowObserver`` read it there and do nothing for any other call. The log line,
on logger ``kassign.shadow`` at INFO, says what kassign would have changed:

    shadow group 'orders-app' (kafka: HighAvailabilityTaskAssignor, kassign: high_availability):
    cross-rack 12->0, moved 4->1, standbys moved 3->3, max/min per member 6/4->5/5,
    standbys sharing rack or tag 2->0; 2 clients differ

Metrics (``ShadowMetrics``, one instance shared by both observers), labelled ``room``
(``streams`` | ``consumer``) and ``answer`` (``kafka`` | ``kassign``): bounded label sets, each
child made at 0 on start so ``rate()`` sees the first call. Counters and histograms only, so
prometheus_client's multiprocess files sum them over the workers like the rest.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from kassign.server.consumer.servicer import ConsumerOutcome, NullConsumerObserver
from kassign.server.observe.metric_parts import COST_BUCKETS, add
from kassign.server.status import excerpt
from kassign.server.streams.decode.request import DecodedRequest
from kassign.server.streams.response_wire import WireResponse
from kassign.server.streams.servicer import NullObserver
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import common_pb2
from kassign.v1 import consumer_pb2 as cpb
from prometheus_client import CollectorRegistry, Counter, Histogram

if TYPE_CHECKING:
    from kassign.assignor.streams.result import TaskAssignment

__all__ = ["ROOMS", "ConsumerShadowObserver", "ShadowMetrics", "ShadowObserver", "shadow_line"]

log = logging.getLogger("kassign.shadow")

ROOMS = ("streams", "consumer")
ANSWERS = ("kafka", "kassign")


def shadow_line(
    room: str, group_id: str, assignor: str, comparison: common_pb2.ShadowComparison
) -> str:
    """The log line's text for one shadow call (no timestamp, no level)."""
    kafka, ours = comparison.kafka, comparison.kassign
    parts = [
        f"cross-rack {kafka.cross_rack_partitions}->{ours.cross_rack_partitions}",
        f"moved {kafka.moved}->{ours.moved}",
    ]
    if room == "streams":
        parts.append(f"standbys moved {kafka.standbys_moved}->{ours.standbys_moved}")
    parts.append(
        f"max/min per member {kafka.max_per_member}/{kafka.min_per_member}"
        f"->{ours.max_per_member}/{ours.min_per_member}"
    )
    if kafka.HasField("max_load") and ours.HasField("max_load"):
        parts.append(f"max load {kafka.max_load:.4g}->{ours.max_load:.4g}")
    if room == "streams":
        parts.append(
            "standbys sharing rack or tag "
            f"{kafka.standbys_sharing_rack_or_tag}->{ours.standbys_sharing_rack_or_tag}"
        )
    who = "clients" if room == "streams" else "members"
    differ = f"{comparison.differing_members} {who} differ" if not comparison.same else "same"
    head = (
        f"shadow group {excerpt(group_id)!r} (kafka: {excerpt(comparison.kafka_assignor)}, "
        f"kassign: {excerpt(assignor)})"
    )
    return f"{head}: {', '.join(parts)}; {differ}"


class ShadowMetrics:
    """``kassign_shadow_*``: each figure of both answers, summed or bucketed, per room."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.calls = Counter(
            "kassign_shadow_calls_total", "Shadow calls answered.", ("room",), registry=registry
        )
        self.same = Counter(
            "kassign_shadow_same_total",
            "Shadow calls where kassign's answer equals Kafka's.",
            ("room",),
            registry=registry,
        )
        self.differing = Counter(
            "kassign_shadow_differing_members_total",
            "Members (Streams: clients) whose kassign answer differs from Kafka's.",
            ("room",),
            registry=registry,
        )
        self.totals = {
            name: Counter(
                f"kassign_shadow_{name}_total", text, ("room", "answer"), registry=registry
            )
            for name, text in (
                ("cross_rack_partitions", "Partitions read across racks, per answer."),
                ("moved", "Partitions (Streams: active tasks) moved from their owner."),
                ("standbys_moved", "Standbys on a client without state for them."),
                ("standbys_sharing_rack_or_tag", "Standbys sharing their active's rack or tags."),
            )
        }
        self.spreads = {
            name: Histogram(
                f"kassign_shadow_{name}",
                text,
                ("room", "answer"),
                buckets=COST_BUCKETS,
                registry=registry,
            )
            for name, text in (
                ("max_per_member", "The most partitions (Streams: tasks) of a member."),
                ("min_per_member", "The fewest partitions (Streams: tasks) of a member."),
                ("max_load", "The most loaded member's load per unit of capacity (loads known)."),
            )
        }
        for room in ROOMS:
            self.calls.labels(room)
            self.same.labels(room)
            self.differing.labels(room)
            for answer in ANSWERS:
                for metric in (*self.totals.values(), *self.spreads.values()):
                    metric.labels(room, answer)

    def observe(self, room: str, comparison: common_pb2.ShadowComparison) -> None:
        self.calls.labels(room).inc()
        if comparison.same:
            self.same.labels(room).inc()
        add(self.differing.labels(room), comparison.differing_members)
        for answer, figures in (("kafka", comparison.kafka), ("kassign", comparison.kassign)):
            for name, counter in self.totals.items():
                add(counter.labels(room, answer), getattr(figures, name))
            for name in ("max_per_member", "min_per_member"):
                self.spreads[name].labels(room, answer).observe(getattr(figures, name))
            if figures.HasField("max_load"):
                self.spreads["max_load"].labels(room, answer).observe(figures.max_load)


class ShadowObserver(NullObserver):
    """The Streams room's: a shadow call's line and metrics."""

    def __init__(self, metrics: ShadowMetrics) -> None:
        self._metrics = metrics

    def on_success(
        self,
        request: pb.AssignRequest,
        decoded: DecodedRequest,
        assignment: TaskAssignment,
        response: WireResponse,
    ) -> None:
        report = response.report
        if report.HasField("shadow"):
            self._metrics.observe("streams", report.shadow)
            log.info("%s", shadow_line("streams", decoded.group_id, report.assignor, report.shadow))


class ConsumerShadowObserver(NullConsumerObserver):
    """The consumer room's: a shadow call's line and metrics."""

    def __init__(self, metrics: ShadowMetrics) -> None:
        self._metrics = metrics

    def on_success(self, request: cpb.ConsumerAssignRequest, outcome: ConsumerOutcome) -> None:
        report = outcome.wire.report
        if report.HasField("shadow"):
            self._metrics.observe("consumer", report.shadow)
            line = shadow_line("consumer", request.group_id, report.assignor, report.shadow)
            log.info("%s", line)
