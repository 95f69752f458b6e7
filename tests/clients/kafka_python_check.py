"""Run by test_kafka_python_assignor.py from another directory (the repository root's ``kafka/``
folder would shadow kafka-python): kassign_client.kafka_python on kafka-python's own types.

Prints one JSON document: the replica racks read from a real ``ClusterMetadata``, the
subscription ``metadata()`` encodes (decoded again by kassign's own decoder), and what
``assign`` returns with kassign unreachable next to kafka-python's CooperativeStickyAssignor.
"""

from __future__ import annotations

import json
import logging
import sys
from types import SimpleNamespace

from kafka.cluster import ClusterMetadata
from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)
from kafka.protocol.metadata import MetadataResponse
from kassign.kafka.consumer_protocol import decode_consumer_subscription
from kassign_client.kafka_python import KassignAssignor, replica_racks

V = 8
B = MetadataResponse.MetadataResponseBroker
T = MetadataResponse.MetadataResponseTopic
P = T.MetadataResponsePartition


def cluster() -> ClusterMetadata:
    """Brokers 1 (rack a), 2 (b), 3 (no rack); t-0 led by 2, t-1 by 3, replicas [1, 2, 3]."""
    brokers = [B(node_id=1, host="h", port=1, rack="a", version=V),
               B(node_id=2, host="h", port=2, rack="b", version=V),
               B(node_id=3, host="h", port=3, rack=None, version=V)]  # fmt: skip
    partitions = [
        P(error_code=0, partition_index=p, leader_id=(2, 3)[p], leader_epoch=0,
          replica_nodes=[1, 2, 3], isr_nodes=[1, 2, 3], offline_replicas=[], version=V)
        for p in range(2)
    ]  # fmt: skip
    topic = T(error_code=0, name="t", is_internal=False, partitions=partitions, version=V)
    metadata = ClusterMetadata()
    metadata.update_metadata(
        MetadataResponse(version=V, throttle_time_ms=0, brokers=brokers, cluster_id="c",
                         controller_id=1, topics=[topic])
    )  # fmt: skip
    return metadata


def main(unreachable: str) -> None:
    logging.basicConfig(
        level=logging.INFO, stream=sys.stdout, format="LOG %(levelname)s %(message)s"
    )
    assignor = KassignAssignor(unreachable, group_id="g", rack="a", timeout=2.0, max_attempts=2)
    assignor.on_assignment(
        ConsumerProtocolAssignment(
            version=0,
            assigned_partitions=[
                ConsumerProtocolAssignment.TopicPartition(topic="t", partitions=[1, 0], version=0)
            ],
            user_data=None,
        ),
        7,
    )
    sub = decode_consumer_subscription(assignor.metadata({"t"}).encode())
    members = [
        SimpleNamespace(member_id=m, group_instance_id=None,
                        metadata=ConsumerProtocolSubscription.decode(assignor.metadata({"t"}).encode()))
        for m in ("m1", "m2")
    ]  # fmt: skip
    got = assignor.assign(cluster(), members)
    expected = CooperativeStickyAssignor().assign(cluster(), members)
    print(
        "RESULT "
        + json.dumps(
            {
                "racks": replica_racks(cluster(), ["t", "missing"]),
                "subscription": {
                    "version": sub.version,
                    "rack": sub.rack_id,
                    "generation": sub.generation_id,
                    "owned": [[o.topic, list(o.partitions)] for o in sub.owned_partitions],
                },
                "protocols": [int(p) for p in assignor.supported_protocols()],
                "fallback": {m: [str(tp) for tp in a.partitions()] for m, a in got.items()},
                "cooperative_sticky": {
                    m: [str(tp) for tp in a.partitions()] for m, a in expected.items()
                },
                "fallbacks": dict(assignor.stats.fallbacks),
                "calls": assignor.stats.calls,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])
