"""A kafka-python (3.x) partition assignor that asks kassign, with kafka-python's own as fallback.

    from kafka import KafkaConsumer
    from kassign_client.kafka_python import KassignAssignor

    consumer = KafkaConsumer(
        "orders", group_id="billing", client_rack="eu-west-1a",
        partition_assignment_strategy=[
            KassignAssignor("kassign.internal:50051", group_id="billing", rack="eu-west-1a")
        ],
    )

The protocol name is ``kassign``, the Java plug-in's (``io.kassign.consumer.KassignConsumerAssignor``),
so Java and Python members form one group whichever is leader.

Racks: kafka-python's ``client_rack`` is sent to brokers in fetches only (follower fetching); its
coordinator leaves the subscription's rack to the assignor's ``metadata()``. This assignor sends a
ConsumerProtocolSubscription v3 with ``RackId`` (KIP-881's own field, what a Java consumer with
``client.rack`` sends), so pass the same rack as ``rack=``. Owned partitions and the generation
(v1, v2) are sent too, from the last assignment.

Protocol: kafka-python takes the highest protocol all configured assignors support. This one
supports exactly the one it is built with (``cooperative=True``, the default: KIP-429), so a
consumer mixing it with an assignor that cannot follow refuses to start rather than rebalance
with a protocol the leader did not plan for.

Fallback: on any failure (kassign unreachable, deadline, error status, an answer that fails the
checks of ``consumer_group.assignments``) the group is assigned by kafka-python's own
``CooperativeStickyAssignor`` (cooperative) or ``RangePartitionAssignor`` (eager), one WARN line
``kassign fallback: CAUSE; ...`` is logged, and ``stats`` counts it. The next rebalance asks again.

Imports kafka-python (top-level ``kafka``); from the kassign repository's root, whose ``kafka/``
folder is ``kassign.kafka``, import it from another working directory.
"""

from __future__ import annotations

import logging
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor, RebalanceProtocol
from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)
from kafka.structs import TopicPartition as KafkaTopicPartition

from kassign_client import consumer, consumer_group
from kassign_client.client import KassignCallError, KassignClient, RetryPolicy

__all__ = ["EAGER_ONLY", "NAME", "AssignorStats", "KassignAssignor"]

NAME = "kassign"
"""The group protocol name, shared with the Java plug-in."""

EAGER_ONLY = frozenset({"range", "roundrobin", "sticky"})
"""Kafka's assignors that hand partitions over directly: only for eager groups."""

log = logging.getLogger(__name__)


@dataclass(slots=True)
class AssignorStats:
    """Counts since the assignor was made: calls to kassign, answers used, fallbacks by cause."""

    calls: int = 0
    assignments: int = 0
    fallbacks: Counter[str] = field(default_factory=Counter)


class KassignAssignor(AbstractPartitionAssignor):  # type: ignore[misc]
    """Assigns through kassign's ConsumerAssignmentService; see the module docstring."""

    name = NAME
    version = 3

    def __init__(
        self,
        target: str,
        *,
        group_id: str = "",
        rack: str = "",
        assignor: str = "rack-optimal",
        cooperative: bool = True,
        timeout: float = 10.0,
        time_budget_ms: int | None = None,
        co_partitioned: Sequence[Sequence[str]] = (),
        credentials: grpc.ChannelCredentials | None = None,
        max_attempts: int = 3,
    ) -> None:
        if cooperative and assignor in EAGER_ONLY:
            raise ValueError(
                f"Kafka's {assignor} assignor supports only eager rebalancing: cooperative=False"
            )
        self.target = target
        self.group_id = group_id
        self.rack = rack
        self.assignor = assignor
        self.cooperative = cooperative
        self.timeout = timeout
        # half the deadline, as the Java plug-ins do: the answer must still be encoded and sent
        self.time_budget_ms = (
            time_budget_ms if time_budget_ms is not None else int(timeout * 1000) // 2
        )
        self.co_partitioned = tuple(tuple(s) for s in co_partitioned)
        self.stats = AssignorStats()
        self._client = KassignClient(
            target, credentials=credentials, retry=RetryPolicy(max_attempts=max_attempts)
        )
        self._owned: tuple[consumer_group.TopicPartition, ...] = ()
        self._generation = -1

    def supported_protocols(self) -> list[RebalanceProtocol]:
        return [RebalanceProtocol.COOPERATIVE if self.cooperative else RebalanceProtocol.EAGER]

    def metadata(self, topics: Iterable[str]) -> ConsumerProtocolSubscription:
        """A v3 subscription: topics, rack, and (cooperative) what this member owns."""
        by_topic: dict[str, list[int]] = defaultdict(list)
        for topic, partition in self._owned if self.cooperative else ():
            by_topic[topic].append(partition)
        return ConsumerProtocolSubscription(
            version=self.version,
            topics=sorted(topics),
            user_data=None,
            owned_partitions=[
                ConsumerProtocolSubscription.TopicPartition(
                    topic=t, partitions=sorted(ps), version=self.version
                )
                for t, ps in sorted(by_topic.items())
            ],
            generation_id=self._generation,
            rack_id=self.rack or None,
        )

    def on_assignment(self, assignment: ConsumerProtocolAssignment, generation: int) -> None:
        self._owned = tuple(sorted((tp.topic, tp.partition) for tp in assignment.partitions()))
        self._generation = generation

    def assign(self, cluster: Any, members: Sequence[Any]) -> dict[str, ConsumerProtocolAssignment]:
        """kassign's answer, or kafka-python's own assignor's after one WARN line."""
        started = time.monotonic()
        try:
            subscriptions = [subscription(m) for m in members]
            racks = replica_racks(cluster, {t for s in subscriptions for t in s.topics})
            request = consumer_group.request(
                self.group_id,
                self.assignor,
                subscriptions,
                racks,
                cooperative=self.cooperative,
                time_budget_ms=self.time_budget_ms,
                co_partitioned=self.co_partitioned,
            )
            self.stats.calls += 1
            response = self._client.consumer_assign(request, timeout=self.timeout)
            answers = consumer_group.assignments(
                response,
                subscriptions,
                {t: len(r) for t, r in racks.items()},
                cooperative=self.cooperative,
                compact=request.compact_answer,
            )
            result = {who: _decoded(a) for who, a in answers.items()}
        except Exception as exc:  # noqa: BLE001 - a rebalance never fails because of kassign
            return self._fallback(cluster, members, exc)
        self.stats.assignments += 1
        report = response.report
        log.info(
            "kassign assigned group %s: %d partitions to %d members in %d ms (%s, %s; moved %d, "
            "revoked %d, cross-rack %d (was %d))",
            self.group_id,
            report.partitions,
            len(members),
            (time.monotonic() - started) * 1000,
            report.assignor,
            "COOPERATIVE" if self.cooperative else "EAGER",
            report.moved_partitions,
            report.revoked_partitions,
            report.cross_rack_partitions_after,
            report.cross_rack_partitions_before,
        )
        return result

    def _fallback(
        self, cluster: Any, members: Sequence[Any], exc: Exception
    ) -> dict[str, ConsumerProtocolAssignment]:
        cause, text = _cause(exc)
        self.stats.fallbacks[cause] += 1
        local = CooperativeStickyAssignor() if self.cooperative else RangePartitionAssignor()
        log.warning(
            "kassign fallback: %s; assigned locally with kafka-python's %s (group %s, target %s)",
            text,
            type(local).__name__,
            self.group_id,
            self.target,
        )
        log.debug("kassign fallback cause", exc_info=exc)
        result: dict[str, ConsumerProtocolAssignment] = local.assign(cluster, members)
        return result

    def close(self) -> None:
        self._client.close()


def subscription(member: Any) -> consumer_group.Subscription:
    """A JoinGroup member as kafka-python decoded it (``member.metadata`` a subscription)."""
    meta = member.metadata
    generation = getattr(meta, "generation_id", -1)
    user_data = meta.user_data
    return consumer_group.Subscription(
        member_id=member.member_id,
        group_instance_id=member.group_instance_id or "",
        topics=tuple(meta.topics),
        rack_id=getattr(meta, "rack_id", None) or "",
        owned_partitions=tuple(
            (tp.topic, p)
            for tp in getattr(meta, "owned_partitions", None) or ()
            for p in tp.partitions
        ),
        generation_id=generation if generation is not None and generation >= 0 else None,
        user_data=bytes(user_data) if isinstance(user_data, bytes | bytearray) else None,
    )


def replica_racks(cluster: Any, topics: Iterable[str]) -> dict[str, list[list[str]]]:
    """Per known topic, per partition, its replicas' racks: the leader's first, then the other
    replicas by broker id; "" for a broker without a rack. Only brokers the metadata lists are
    seen (kafka-python exposes replicas through ``is_replica_node``)."""
    brokers = sorted(b.node_id for b in cluster.brokers())

    def rack(node: int) -> str:
        broker = cluster.broker_metadata(node)
        return (broker.rack or "") if broker is not None else ""

    racks: dict[str, list[list[str]]] = {}
    for topic in sorted(set(topics)):
        partitions = cluster.partitions_for_topic(topic)
        if partitions is None:
            continue
        count = max(partitions) + 1 if partitions else 0
        racks[topic] = []
        for p in range(count):
            tp = KafkaTopicPartition(topic, p)
            leader = cluster.leader_for_partition(tp)
            replicas = [b for b in brokers if cluster.is_replica_node(tp, b) is not None]
            first = [leader] if leader is not None and leader >= 0 else []
            racks[topic].append([rack(n) for n in first + [b for b in replicas if b not in first]])
    return racks


def _decoded(answer: consumer.MemberAnswer) -> ConsumerProtocolAssignment:
    """The service's ConsumerProtocolAssignment bytes as kafka-python's object; rebuilt from the
    partition list when the bytes are absent (a compact answer's, unless asked for)."""
    if answer.assignment:
        decoded: ConsumerProtocolAssignment = ConsumerProtocolAssignment.decode(answer.assignment)
        listed = sorted(answer.partitions)
        if sorted((tp.topic, tp.partition) for tp in decoded.partitions()) != listed:
            raise consumer_group.InvalidAnswer(
                f"member {answer.member_id}'s assignment bytes disagree with its partitions"
            )
        return decoded
    by_topic: dict[str, list[int]] = defaultdict(list)
    for topic, partition in answer.partitions:
        by_topic[topic].append(partition)
    return ConsumerProtocolAssignment(
        version=0,
        assigned_partitions=[
            ConsumerProtocolAssignment.TopicPartition(topic=t, partitions=sorted(ps), version=0)
            for t, ps in sorted(by_topic.items())
        ],
        user_data=None,
    )


_CAUSES: Mapping[grpc.StatusCode, str] = {
    grpc.StatusCode.UNAVAILABLE: "unavailable",
    grpc.StatusCode.DEADLINE_EXCEEDED: "deadline-exceeded",
}


def _cause(exc: Exception) -> tuple[str, str]:
    """(metric cause, the WARN line's text), as the Java plug-in names them."""
    if isinstance(exc, KassignCallError):
        return _CAUSES.get(exc.code, "error-status"), f"{exc.code.name}: {exc.details}"
    if isinstance(exc, consumer_group.InvalidAnswer):
        return "invalid-answer", f"invalid answer: {exc}"
    return "exception", repr(exc)
