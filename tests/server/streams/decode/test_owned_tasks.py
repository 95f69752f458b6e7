"""decode/owned_tasks.py: a group's owned partitions as the tasks they feed, every claim at
once, against Kafka's rule read one partition at a time (the source partition's task, or none)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.claims import OwnedPartitions
from kassign.assignor.streams.model import TaskId
from kassign.server.streams.decode.owned_tasks import owned_tasks, stray_names
from kassign.server.streams.decode.topology import Topology, decode_topology, task_columns

from tests.server.streams.decode.builders import request, task

_TOPICS = ["in-0", "in-1", "in-2", "other"]


def _topology(tasks: set[tuple[int, int]]) -> Topology:
    sent = request(tasks=[task(s, p) for s, p in sorted(tasks)])
    return decode_topology(task_columns(sent.SerializeToString()))


_claims = st.lists(
    st.dictionaries(
        st.sampled_from(_TOPICS),
        st.lists(
            st.integers(0, 2**31 - 1) | st.integers(0, 6), min_size=1, max_size=4, unique=True
        ),
        max_size=3,
    ),
    max_size=5,
)


@settings(max_examples=150, deadline=None)
@given(st.sets(st.tuples(st.integers(0, 2), st.integers(0, 6)), max_size=12), _claims)
def test_every_claims_tasks_are_its_source_partitions_tasks(
    tasks: set[tuple[int, int]], raw: list[dict[str, list[int]]]
) -> None:
    topology = _topology(tasks)
    claims = [OwnedPartitions(sorted(c.items())) for c in raw]
    expected = []
    for claim in raw:
        found = [
            topology.source_topics.get(t, {}).get(p)
            for t, numbers in claim.items()
            for p in numbers
        ]
        expected.append((frozenset(f for f in found if f is not None), found.count(None)))
    assert owned_tasks(claims, topology) == expected


def test_partitions_no_task_reads_are_named_in_claim_order() -> None:
    topology = _topology({(0, 0), (0, 1)})
    claim = OwnedPartitions([("in-0", [0, 5, 1, 7]), ("x", [2])])
    assert owned_tasks([OwnedPartitions(), claim], topology)[1][1] == 3
    assert stray_names(claim, topology.source_topics, 2) == ["in-0-5", "in-0-7"]


def test_a_claim_past_one_searched_chunk_is_read_whole() -> None:
    topology = _topology({(0, 3), (1, 5), (2, 6)})
    claim = OwnedPartitions([("in-0", range(70_000)), ("in-1", [5]), ("in-2", range(200_000))])
    tasks, strays = owned_tasks([claim], topology)[0]
    assert tasks == {TaskId(0, 3), TaskId(1, 5), TaskId(2, 6)}
    assert strays == 270_000 - 2
