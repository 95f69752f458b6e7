"""``kassign next``: the next rebalance's request carries the answer's ownership (issue 27).

The property that matters: the next answer's moves are counted against the first answer, so
``explain --diff REQUEST NEXT`` lists only replicas that really change; a hand-edited copy of
REQUEST counts them against the ownership from before the first answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from uuid import UUID

import pytest
from google.protobuf import json_format
from kassign.cli import main as cli
from kassign.cli.next_round import NextError, next_request
from kassign.cli.table import task_name
from kassign.server.streams.servicer import assign_request
from kassign.v1 import assignment_pb2 as pb

from tests.cli.explain_scenario import NOW_MS, pid, scale_out

NEW = str(UUID(int=99))


def _assign(request: pb.AssignRequest) -> pb.AssignResponse:
    asked = pb.AssignRequest()
    asked.CopyFrom(request)
    asked.explain = True
    return assign_request(asked).response


def _actives(answer: pb.AssignResponse) -> dict[str, str]:
    return {task_name(t): c.process_id for c in answer.clients for t in c.active_tasks}


def _sums(request: pb.AssignRequest, process_id: str) -> dict[str, int]:
    infos = [
        m.subscription.info for m in request.members if m.subscription.info.process_id == process_id
    ]
    assert infos and all(i == infos[0] for i in infos)  # every thread reports the client's state
    return {task_name(s.task): s.offset_sum for s in infos[0].task_offset_sums}


def test_each_client_reports_the_answer_as_run_and_caught_up() -> None:
    request = scale_out()
    answer = _assign(request)
    nxt = next_request(request, answer)
    stateful = {task_name(t.id) for t in request.tasks if t.stateful}
    for client in answer.clients:
        sums = _sums(nxt, client.process_id)
        assert all(sums[task_name(t)] == -2 for t in client.active_tasks)
        assert all(sums[task_name(t)] == 1_000_000 for t in client.standby_tasks)
        assert set(sums) <= stateful | {task_name(t) for t in client.active_tasks}
    owned = {m.member_id: list(m.active_partitions) for m in answer.members}
    assert {m.member_id: list(m.subscription.owned_partitions) for m in nxt.members} == owned
    deadlines = [c.followup_rebalance_deadline_ms for c in answer.clients]
    assert nxt.now_ms == min(d for d in deadlines if d) > NOW_MS


def test_the_next_answer_counts_only_the_moves_that_happen() -> None:
    request = scale_out()
    first = _assign(request)

    def real(answer: pb.AssignResponse) -> int:
        """Actives on another client than in the first answer."""
        return sum(1 for name, owner in _actives(answer).items() if _actives(first)[name] != owner)

    nxt = next_request(request, first)
    second = _assign(nxt)
    assert second.report.active_tasks_moved == real(second) > 0  # the warm-ups take over
    by_hand = pb.AssignRequest()  # the old way: REQUEST with its time moved on, nothing else
    by_hand.CopyFrom(request)
    by_hand.now_ms = nxt.now_ms
    invented = _assign(by_hand)
    assert real(invented) == 0 < invented.report.active_tasks_moved  # moves that never happen


def test_remove_drops_a_client_and_add_brings_a_fresh_one_shaped_like_the_first() -> None:
    request = scale_out()
    nxt = next_request(request, _assign(request), remove=[str(pid(2))], add=[NEW])
    pids = {m.subscription.info.process_id for m in nxt.members}
    assert str(pid(2)) not in pids and NEW in pids
    template = [m for m in request.members if m.subscription.info.process_id == str(pid(1))]
    fresh = [m for m in nxt.members if m.subscription.info.process_id == NEW]
    assert [m.member_id for m in fresh] == [m.member_id.replace(str(pid(1)), NEW) for m in template]
    for member in fresh:
        sub = member.subscription
        assert not sub.owned_partitions and not sub.info.task_offset_sums
        assert sub.rack_id == template[0].subscription.rack_id
        assert list(sub.info.client_tags) == list(template[0].subscription.info.client_tags)
    assert _assign(nxt).error == pb.ASSIGNMENT_ERROR_NONE


@pytest.mark.parametrize(
    ("remove", "add", "message"),
    [
        (["00000000-0000-0000-0000-000000000042"], [], "--remove .*42: no such client"),
        ([], [str(pid(3))], "--add .*03: that client is already there"),
        ([], ["not-a-uuid"], "--add 'not-a-uuid': not a process id"),
    ],
)
def test_clients_that_cannot_be_removed_or_added_are_named(
    remove: list[str], add: list[str], message: str
) -> None:
    request = scale_out()
    with pytest.raises(NextError, match=message):
        next_request(request, _assign(request), remove=remove, add=add)


def test_an_answer_to_another_request_is_refused() -> None:
    request, other = scale_out(), scale_out(leaving=(1,))
    with pytest.raises(NextError, match="ANSWER has no client .*01: is it this REQUEST's answer"):
        next_request(request, _assign(other))


def test_assign_next_explain_diff_from_the_command_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    request = tmp_path / "request.json"
    request.write_text(json_format.MessageToJson(scale_out()))
    assert cli.main(["assign", str(request)]) == 0
    answer = tmp_path / "answer.json"
    answer.write_text(capsys.readouterr().out)
    nxt = tmp_path / "next.json"
    assert (
        cli.main(["next", str(request), str(answer), "--remove", str(pid(4)), "-o", str(nxt)]) == 0
    )
    assert json.loads(nxt.read_text())["groupId"] == "orders-app"
    assert cli.main(["explain", str(request), "--diff", str(nxt)]) == 0
    assert f"  left    {pid(4)} (rack rack-b2)" in capsys.readouterr().out


def test_kafka_bytes_and_v6_task_lists_come_out_as_the_same_state() -> None:
    """Members sent as Kafka's bytes come out structured; v1-6 clients get task lists."""
    from kassign_client.kafka_bytes import consumer_subscription_bytes

    request = scale_out()
    answer = _assign(request)
    structured = next_request(request, answer)
    raw, old = pb.AssignRequest(), pb.AssignRequest()
    raw.CopyFrom(request)
    old.CopyFrom(request)
    for member in raw.members:
        data = consumer_subscription_bytes(member.subscription)
        member.raw_subscription = data  # the oneof: the structured subscription goes
    for member in old.members:
        info = member.subscription.info
        sums = {task_name(s.task): s for s in info.task_offset_sums}
        info.version = info.latest_supported_version = 6
        info.prev_tasks.extend(s.task for s in sums.values() if s.offset_sum == -2)
        info.standby_tasks.extend(s.task for s in sums.values() if s.offset_sum != -2)
        del info.task_offset_sums[:]
    assert next_request(raw, answer).members == structured.members
    for client in answer.clients:
        info = next(
            m.subscription.info
            for m in next_request(old, answer).members
            if m.subscription.info.process_id == client.process_id
        )
        assert not info.task_offset_sums
        assert sorted(map(task_name, info.prev_tasks)) == sorted(
            map(task_name, client.active_tasks)
        )
        assert set(map(task_name, client.standby_tasks)) <= set(map(task_name, info.standby_tasks))
