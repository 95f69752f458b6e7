"""Kafka's ``PartitionMovements``: which partitions moved between which members, per topic.

The general sticky builder records every move it makes while balancing. Before moving a
partition from ``old`` to ``new``, it asks whether some partition of the same topic already
moved the other way (``new`` -> the partition's original owner); if so it moves that one back
instead, so that no two members end up swapping partitions of one topic. "That one" is the
first of a Java ``HashSet``, so the sets are ``HashTable``s that replay Java's hash order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kassign.assignor.consumer.java_order import HashTable, string_hash, topic_partition_hash
from kassign.assignor.consumer.model import TopicPartition

__all__ = ["Movements"]

Pair = tuple[str, str]  # (source member, destination member)


@dataclass(slots=True)
class Movements:
    """Scratch state: per moved partition its (original owner, current owner)."""

    by_partition: dict[TopicPartition, Pair] = field(default_factory=dict)
    by_topic: dict[str, dict[Pair, HashTable[TopicPartition]]] = field(default_factory=dict)
    _topic_hashes: dict[str, int] = field(default_factory=dict)

    def _hash(self, tp: TopicPartition) -> int:
        h = self._topic_hashes.get(tp.topic)
        if h is None:
            h = self._topic_hashes[tp.topic] = string_hash(tp.topic)
        return topic_partition_hash(h, tp.partition)

    def _remove(self, tp: TopicPartition) -> Pair:
        pair = self.by_partition.pop(tp)
        pairs = self.by_topic[tp.topic]
        pairs[pair].remove(tp)
        if not len(pairs[pair]):
            del pairs[pair]
        if not pairs:
            del self.by_topic[tp.topic]
        return pair

    def _add(self, tp: TopicPartition, pair: Pair) -> None:
        self.by_partition[tp] = pair
        pairs = self.by_topic.setdefault(tp.topic, {})
        if pair not in pairs:
            pairs[pair] = HashTable(self._hash)
        pairs[pair].put(tp)

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        """Record ``tp`` moving ``old`` -> ``new``; a move back home erases the record."""
        if tp in self.by_partition:
            source, _ = self._remove(tp)
            if source != new:
                self._add(tp, (source, new))
        else:
            self._add(tp, (old, new))

    def partition_to_move(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        """The partition to move instead of ``tp`` (``old`` -> ``new``): ``tp`` itself unless a
        partition of its topic already moved from ``new`` to ``tp``'s original owner."""
        pairs = self.by_topic.get(tp.topic)
        if pairs is None:
            return tp
        if tp in self.by_partition:
            old = self.by_partition[tp][0]
        reverse = pairs.get((new, old))
        return tp if reverse is None else reverse.first()
