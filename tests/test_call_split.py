"""bench/call_split.py --journal: a journal's consumer requests read back as the bytes sent."""

from __future__ import annotations

from pathlib import Path

from kassign.server.observe.journal import CONSUMER_SUBDIR, Journal
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

from tests.ops.serving import load_script


def _request(group: str, owned: list[int]) -> cpb.ConsumerAssignRequest:
    return cpb.ConsumerAssignRequest(
        group_id=group,
        assignor="cooperative-sticky",
        compact_answer=True,
        topic_lists=[cpb.TopicList(topics=["t0", "t1"])],
        topics=[cpb.ConsumerTopic(name="t0", partition_count=4)],
        members=[
            pb.MemberSubscription(
                member_id="consumer-0",
                subscription=pb.ConsumerSubscription(
                    topic_list=0,
                    owned_by_topic=[pb.TopicPartitions(topic="t0", partitions=owned)],
                    generation_id=1,
                ),
            )
        ],
    )


def test_journaled_requests_come_back_as_sent_without_the_servers_stamp(tmp_path: Path) -> None:
    sent = [_request("a", [0, 2]), _request("b", [1])]
    journal = Journal(tmp_path / CONSUMER_SUBDIR)
    for request in sent:
        journal.record(request)  # stamped, as `kassign serve --journal` records a call
    journal.close()
    (path,) = journal.files()
    got = list(load_script("bench/call_split.py").journaled(path))
    assert got == [(r.group_id, r.SerializeToString()) for r in sent]
