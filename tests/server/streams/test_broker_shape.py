"""Requests shaped like the broker plug-in's (``io.kassign.broker.KassignStreamsTaskAssignor``).

A KIP-1071 coordinator knows no topic partitions, no subscriptions and no userData, so the plug-in
sends tasks without partitions, members without topics, and per member a version-11
SubscriptionInfo whose offset sums say what it holds: -2 for its actives, the reported offset sum
or -3 for standbys. The service must take that shape through the usual decode, assign and encode
and answer per member with every task active once and no process holding a task twice, which is
what the plug-in checks before the coordinator applies it.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kassign.server.streams.servicer import assign_request
from kassign.v1 import assignment_pb2 as pb
from kassign_client import build

Group = tuple[list[tuple[int, int, bool]], list[pb.MemberSubscription], int]


@st.composite
def broker_groups(draw: st.DrawFn) -> Group:
    """Subtopologies with their partition counts and statefulness, processes of 1-3 members."""
    subtopologies = draw(
        st.lists(st.tuples(st.integers(1, 5), st.booleans()), min_size=1, max_size=3)
    )
    tasks = [(s, p, stateful) for s, (n, stateful) in enumerate(subtopologies) for p in range(n)]
    processes = draw(st.integers(1, 5))
    members: list[pb.MemberSubscription] = []
    owners: dict[tuple[int, int], str] = {}
    for n in range(processes):
        pid = f"00000000-0000-0000-0000-{n + 1:012d}"
        zone = draw(st.sampled_from(["a", "b"]))
        for t in range(draw(st.integers(1, 3))):
            mid = f"m{n}-{t}"
            sums: dict[str, int] = {}
            for s, p, stateful in tasks:
                held = draw(
                    st.sampled_from(
                        ["none", "active", "standby"] if stateful else ["none", "active"]
                    )
                )
                if held == "active" and (s, p) not in owners:
                    owners[(s, p)] = mid
                    sums[f"{s}_{p}"] = -2
                elif held == "standby" and not any(k == f"{s}_{p}" for k in sums):
                    sums[f"{s}_{p}"] = draw(st.sampled_from([-3, 0, 500, 1000]))
            members.append(build.member(mid, pid, offset_sums=sums, tags={"zone": zone}, rack=zone))
    standbys = draw(st.integers(0, 2))
    return tasks, members, standbys


def _request(group: Group) -> pb.AssignRequest:
    tasks, members, standbys = group
    return pb.AssignRequest(
        group_id="streams@broker-1",
        tasks=[
            build.task(s, p, stateful=st_, end_offset_sum=1000 if st_ else 0) for s, p, st_ in tasks
        ],
        members=members,
        configs=pb.AssignmentConfigs(
            num_standby_replicas=standbys,
            rack_aware_assignment_tags=["zone"],
            rack_aware_strategy=pb.RACK_AWARE_STRATEGY_NONE,
        ),
        now_ms=1,
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(broker_groups())
def test_the_broker_shape_is_assigned_per_member_as_the_plug_in_checks(group: Group) -> None:
    tasks, members, _ = group
    request = _request(group)
    response = assign_request(request).response
    assert response.error == pb.ASSIGNMENT_ERROR_NONE
    assert sorted(m.member_id for m in response.members) == sorted(m.member_id for m in members)
    process_of = {m.member_id: m.subscription.info.process_id for m in members}
    stateful = {(s, p) for s, p, st_ in tasks if st_}
    actives = Counter(
        (t.subtopology, t.partition) for m in response.members for t in m.active_tasks
    )
    assert actives == Counter((s, p) for s, p, _ in tasks)
    held: Counter[tuple[str, int, int]] = Counter()
    for m in response.members:
        for t in [*m.active_tasks, *m.standby_tasks]:
            held[(process_of[m.member_id], t.subtopology, t.partition)] += 1
        assert all((t.subtopology, t.partition) in stateful for t in m.standby_tasks)
        assert not m.active_partitions and not m.standby_partitions  # the tasks named none
    assert max(held.values()) == 1, "a process holds a task twice"
    assert assign_request(request).response.members == response.members  # same group, same answer
