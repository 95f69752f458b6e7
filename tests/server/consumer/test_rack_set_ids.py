"""A compact request's replica racks reach the library as numbers too (``RackSetIds``): they
agree with each partition's ``frozenset``, and the assignors' numbering of the rack sets
(``replica_rack_sets``) is the one the sets themselves give."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from kassign.assignor.consumer.columns import PartitionSpace, replica_rack_sets
from kassign.server.consumer.decode import decode_request
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb


def _request() -> cpb.ConsumerAssignRequest:
    lists = [["b", "a"], ["", "c"], ["a", "b"], [""], ["c", "a"]]  # lists 0 and 2: one set
    return cpb.ConsumerAssignRequest(
        assignor="range",
        members=[
            pb.MemberSubscription(
                member_id=f"m{i}",
                subscription=pb.ConsumerSubscription(topics=["t1", "t2", "t3"], rack_id=rack),
            )
            for i, rack in enumerate("abc")
        ],
        replica_rack_lists=[cpb.PartitionReplicas(rack_ids=r) for r in lists],
        topics=[
            cpb.ConsumerTopic(name="t1", partition_count=4, replica_rack_list=[4, 2, 0, 1]),
            cpb.ConsumerTopic(name="t2", partition_count=2),  # no replica has a rack
            cpb.ConsumerTopic(name="t3", partition_count=3, replica_rack_list=[3, 0, 4]),
        ],
    )


def test_the_numbers_agree_with_the_sets() -> None:
    topics = decode_request(_request()).group.topics
    for topic in topics.values():
        numbered = topic.rack_set_ids
        assert numbered is not None
        assert [numbered.sets[i] for i in numbered.ids.tolist()] == list(topic.partition_racks)
        assert len(set(numbered.sets)) == len(numbered.sets)


def test_the_rack_sets_are_numbered_as_from_the_sets() -> None:
    topics = decode_request(_request()).group.topics
    space = PartitionSpace.of({name: t.partitions for name, t in topics.items()})
    sets, ids = replica_rack_sets(topics, space)
    plain = {name: replace(t, rack_set_ids=None) for name, t in topics.items()}
    want_sets, want_ids = replica_rack_sets(plain, space)
    assert sets == want_sets
    assert np.array_equal(ids, want_ids)
    one_without = {**topics, "t2": plain["t2"]}  # one topic without numbers: the sets read
    assert replica_rack_sets(one_without, space)[0] == want_sets
