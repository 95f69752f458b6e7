"""A kafka-python consumer with kassign's assignor, run by tests/e2e/test_consumer_e2e.py.

    python consumer_py.py CONFIG.json

Started in another working directory, without the repository on ``sys.path``: from the
repository root ``import kafka`` would find the ``kafka/`` folder (``kassign.kafka``), not
kafka-python. The twin of ``ConsumerE2e consumer`` (app/src/main/java/io/kassign/e2e/): the same
``E2E ...`` lines, the same records file, the same commits (after each batch, and of a partition
in ``on_partitions_revoked`` before it is given up), so Java and Python members share one group
and one check. Stops on SIGTERM.
"""

from __future__ import annotations

import json
import logging
import signal
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kafka.consumer.group import KafkaConsumer
from kafka.consumer.subscription_state import AsyncConsumerRebalanceListener
from kafka.structs import OffsetAndMetadata, TopicPartition
from kassign_client.kafka_python import KassignAssignor


def say(line: str) -> None:
    print(f"E2E {line} at {int(time.time() * 1000)}", flush=True)


def ids(partitions: Iterable[TopicPartition]) -> str:
    return ",".join(sorted(f"{tp.topic}-{tp.partition}" for tp in partitions))


class Listener(AsyncConsumerRebalanceListener):  # type: ignore[misc]
    """Commits what was processed of each revoked partition, then logs the change.

    kafka-python 3 runs listeners on its IO thread, where the blocking ``commit`` refuses to run;
    an async listener awaits the coordinator's own commit coroutine instead (kafka-python has no
    public awaitable commit), which is what its blocking ``commit`` runs too.
    """

    def __init__(self, consumer: KafkaConsumer, processed: dict[TopicPartition, int]) -> None:
        self.consumer = consumer
        self.processed = processed
        self.closing = False

    def member(self) -> str:
        meta = self.consumer.group_metadata()
        return f"member={meta.member_id} gen={meta.generation_id}"

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        offsets = {
            tp: OffsetAndMetadata(self.processed[tp], "", -1)
            for tp in revoked
            if tp in self.processed
        }
        try:
            await self.consumer._coordinator._commit_offsets_sync_async(offsets)
        except Exception as exc:  # noqa: BLE001 - reported; the test's exactly-once check decides
            say(f"commit-failed on revoke {self.member()} {exc!r}")
        kind = "revoked-on-close" if self.closing else "revoked"
        say(f"{kind} {self.member()} partitions={ids(revoked)}")
        if not self.closing:
            say(f"owned {self.member()} partitions={ids(self.consumer.assignment())}")

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        say(f"owned {self.member()} partitions={ids(self.consumer.assignment())}")


def main(config: dict[str, Any]) -> None:
    logging.basicConfig(
        stream=sys.stdout,
        level=logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("kassign_client").setLevel(logging.INFO)
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    assignor = KassignAssignor(
        config["target"], group_id=config["group"], rack=config["rack"], assignor="rack-optimal"
    )
    consumer = KafkaConsumer(
        bootstrap_servers=config["bootstrap"],
        group_id=config["group"],
        client_id=config["client_id"],
        client_rack=config["rack"],
        partition_assignment_strategy=[assignor],
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
        metadata_max_age_ms=5000,
    )
    processed: dict[TopicPartition, int] = {}
    listener = Listener(consumer, processed)
    consumer.subscribe(config["topics"], listener=listener)
    with Path(config["records"]).open("a", encoding="utf-8") as out:
        while not stop["now"]:
            batch = consumer.poll(timeout_ms=200)
            if not batch:
                continue
            for tp, records in batch.items():
                for r in records:
                    out.write(f"{r.topic} {r.partition} {r.offset} {r.value.decode()}\n")
                    processed[tp] = r.offset + 1
            out.flush()
            owned = consumer.assignment()
            try:
                consumer.commit(
                    {tp: OffsetAndMetadata(n, "", -1) for tp, n in processed.items() if tp in owned}
                )
            except Exception as exc:  # noqa: BLE001 - a rebalance under way: committed on revoke
                say(f"commit-deferred {exc!r}")
    listener.closing = True
    consumer.close()  # on_partitions_revoked commits every owned partition first
    fallbacks = sum(assignor.stats.fallbacks.values())
    say(f"closed assignments={assignor.stats.assignments} fallbacks={fallbacks}")


if __name__ == "__main__":
    main(json.loads(Path(sys.argv[1]).read_text()))
