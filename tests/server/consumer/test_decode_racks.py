"""The racks of each partition as the request's topics give them, however they are laid out:
rack lists of one size or of many (names of any length, long enough for a two-byte record
length), empty lists, brokers without a rack, and unknown fields anywhere in a topic."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.server.consumer.decode import decode_request
from kassign.v1 import consumer_pb2 as cpb
from kassign_client import consumer

RACK_NAMES = st.sampled_from(["", "r", "rack-a", "rack-b", "x" * 130, "\u00e9t\u00e9"])
ONE_SIZE = st.lists(st.sampled_from(["rack-a", "rack-b", "rack-c"]), min_size=3, max_size=3)
"""Rack lists whose records all have one size (the common case, cut from the topic's bytes)."""
UNKNOWN_FIELD = b"\x78\x05"  # field 15, varint 5: no field of ConsumerTopic


def expected(topic: cpb.ConsumerTopic) -> tuple[frozenset[str], ...]:
    return tuple(frozenset(r for r in p.rack_ids if r) for p in topic.partitions)


@settings(max_examples=80, deadline=None)
@given(
    topics=st.lists(
        st.tuples(
            st.lists(st.lists(RACK_NAMES, max_size=4), max_size=8) | st.lists(ONE_SIZE, max_size=8),
            st.sampled_from(["none", "after name", "between partitions", "at the end"]),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_partition_racks_are_the_replicas_racks(
    topics: list[tuple[list[list[str]], str]],
) -> None:
    request = consumer.request([consumer.member("m", ["t0"])], [], assignor="range")
    for i, (racks, unknown) in enumerate(topics):
        name = cpb.ConsumerTopic(name=f"t{i}").SerializeToString()
        records = [
            cpb.ConsumerTopic(partitions=[cpb.PartitionReplicas(rack_ids=r)]).SerializeToString()
            for r in racks
        ]
        if unknown == "after name":
            name += UNKNOWN_FIELD
        elif unknown == "between partitions":
            records.insert(len(records) // 2, UNKNOWN_FIELD)
        elif unknown == "at the end":
            records.append(UNKNOWN_FIELD)
        request.topics.add().MergeFromString(name + b"".join(records))
    decoded = decode_request(request)
    for sent in request.topics:
        assert decoded.group.topics[sent.name].partition_racks == expected(sent)
