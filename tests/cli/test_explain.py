"""``kassign explain``: stories of a task and a client, journal entries, the diff, errors.

Expected facts come from the answer and the request themselves (``assign_request``, the
scenario's previous assignment), never from a copy of the output.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from google.protobuf import json_format
from kassign.cli import main as cli
from kassign.cli.explain_model import GroupView, Kind
from kassign.cli.explain_streams import group_view
from kassign.cli.explain_text import duration_text, followup_text, task_story
from kassign.cli.journal_entry import EntryError, read_entry
from kassign.cli.table import task_name
from kassign.server.observe.journal import request_line
from kassign.server.streams.servicer import assign_request
from kassign.v1 import assignment_pb2 as pb

from tests.cli.explain_scenario import NOW_MS, pid, scale_out
from tests.server.running import ROOT, in_process


def _write(path: Path, request: pb.AssignRequest) -> Path:
    path.write_text(json_format.MessageToJson(request))
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["explain", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _answer(request: pb.AssignRequest) -> pb.AssignResponse:
    asked = pb.AssignRequest()
    asked.CopyFrom(request)
    asked.explain = True
    return assign_request(asked).response


def _scenario(tmp_path: Path) -> tuple[pb.AssignRequest, pb.AssignResponse, Path]:
    """The scale-out request, its explained answer, and the request as a file."""
    request = scale_out()
    return request, _answer(request), _write(tmp_path / "r.json", request)


def _owner(response: pb.AssignResponse, name: str) -> str:
    return next(
        c.process_id for c in response.clients if name in {task_name(t) for t in c.active_tasks}
    )


def test_task_story_names_previous_owner_lags_and_where_each_replica_went(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _, response, path = _scenario(tmp_path)
    moved = [
        task_name(t)
        for c in response.clients
        for t in c.active_tasks
        if c.process_id in (str(pid(5)), str(pid(6)))
    ]
    assert moved, "the scenario must move actives to the new clients"
    code, out, _ = _run(capsys, str(path), "--task", moved[0])
    assert code == 0
    before, now = out.split("\nbefore:\n")[1].split("\nnow:\n")
    sub, p = map(int, moved[0].split("_"))
    previous_owner = pid(1 + (p + sub) % 4)  # the scenario's previous assignment
    assert f"active on {previous_owner}" in before
    assert f"active   on {_owner(response, moved[0])}" in now
    assert "[moved" in now.splitlines()[0]
    told = next(t for t in response.explanation.tasks if task_name(t.task) == moved[0])
    for placement in told.placements:  # each replica's reason, in the answer's words
        assert f"why: {placement.reason}" in now


def test_task_story_lists_every_client_that_reported_state_with_its_lag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    request = scale_out()
    path = _write(tmp_path / "r.json", request)
    code, out, _ = _run(capsys, str(path), "--task", "0_1")
    assert code == 0
    # 0_1: previous active pid(2) (lag -2), standby state on pid(3) at 1,000,000 - 400 (scenario)
    assert f"{pid(2)}: running it (caught up)" in out
    assert f"{pid(3)}: 400 behind (caught up)" in out
    assert "any other client: no state (1,000,000 behind)" in out


def test_client_story_shows_what_it_had_got_and_lost(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    request, response, path = _scenario(tmp_path)
    old = str(pid(1))
    code, out, _ = _run(capsys, str(path), "--client", old)
    assert code == 0
    mine = next(c for c in response.clients if c.process_id == old)
    now = out.split("\nnow:\n")[1]
    for t in mine.active_tasks:
        assert re.search(rf"^  active +{task_name(t)}\b", now, re.MULTILINE)
    view = group_view(assign_request(request).decoded, response)
    lost = [n for n in view.client(old).previous_active if _owner(response, n) != old]
    for name in lost:
        assert f"lost     {name:<10} now on {_owner(response, name)}" in now
    assert "follow-up 2023-11-14 22:23:20.000Z (in 10 min 0 s)" in out  # probing interval


def test_summary_counts_agree_with_the_answer(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    request = scale_out()
    response = _answer(request)
    code, out, _ = _run(capsys, str(_write(tmp_path / "r.json", request)))
    assert code == 0
    actives = sum(len(c.active_tasks) for c in response.clients)
    replicas = sum(len(c.standby_tasks) for c in response.clients)
    placed = re.search(r"placed: (\d+) active, (\d+) standby, (\d+) warm-up", out)
    assert placed is not None
    assert int(placed[1]) == actives
    assert int(placed[2]) + int(placed[3]) == replicas
    moved = re.search(r"replicas moved \(.*\): (\d+) stateful active, (\d+) stateless active", out)
    assert moved is not None
    assert int(moved[1]) + int(moved[2]) == response.report.active_tasks_moved


def _outcome(request: pb.AssignRequest) -> tuple[GroupView, pb.AssignResponse]:
    asked = pb.AssignRequest()
    asked.CopyFrom(request)
    asked.explain = True
    outcome = assign_request(asked)
    return group_view(outcome.decoded, outcome.response), outcome.response


def test_model_moves_are_the_answers_moves() -> None:
    view, response = _outcome(scale_out())
    moves, report = view.moves(), response.report
    assert view.explained
    assert moves.warmups > 0 and moves.stateless_actives > 0, "the scenario must move both"
    assert (moves.stateful_actives, moves.stateless_actives) == (
        report.moves.stateful_actives,
        report.moves.stateless_actives,
    )
    assert (moves.standbys, moves.warmups) == (report.moves.standbys, report.moves.warmups)
    assert moves.stateful_actives + moves.stateless_actives == report.active_tasks_moved


def test_an_answer_without_explanation_still_tells_moves_and_says_rules_are_not_told() -> None:
    """A service from before explanations: every replica beyond the active is a standby, moved
    by the report's ``standby_tasks_moved`` definition; no rule is invented."""
    request = scale_out()
    outcome = assign_request(request)  # explain unset
    assert not outcome.response.HasField("explanation")
    view = group_view(outcome.decoded, outcome.response)
    moves, report = view.moves(), outcome.response.report
    assert moves.warmups == 0 and not view.explained
    assert moves.standbys == report.standby_tasks_moved
    assert moves.stateful_actives + moves.stateless_actives == report.active_tasks_moved
    assert all(r.rule == r.why == "" for t in view.tasks for r in t.replicas)
    assert "rule: not told" in "\n".join(task_story(view, view.tasks[0].name))


def test_previous_owners_and_lags_agree_with_the_answers_explanation() -> None:
    view, response = _outcome(scale_out())
    told = {task_name(t.task): t for t in response.explanation.tasks}
    for task in view.tasks:
        explained = told[task.name]
        assert task.previous_active == tuple(explained.previous_active), task.name
        assert task.previous_standby == tuple(explained.previous_standby), task.name
        lags = {c.process_id: c.lag for c in explained.lags}
        for process_id, lag in task.lags:
            assert lags[process_id] == lag, (task.name, process_id)
        placements = {(p.process_id, p.reason) for p in explained.placements}
        assert {(r.process_id, r.reason) for r in task.replicas} == placements


def test_cross_rack_counts_only_partitions_without_a_replica_in_the_clients_rack() -> None:
    outcome = assign_request(scale_out())
    view = group_view(outcome.decoded, outcome.response)
    racks = {c.process_id: c.rack for c in view.clients}
    infos = {str(t): info for t, info in outcome.decoded.state.tasks.items()}
    crossing = 0
    for task in view.tasks:
        for r in task.replicas:
            counted = [
                tp
                for tp in infos[task.name].topic_partitions
                if (tp.is_source if r.kind is Kind.ACTIVE else tp.is_changelog)
            ]
            expected = sum(1 for tp in counted if racks[r.process_id] not in tp.rack_ids)
            assert r.cross_rack == expected, (task.name, r)
            crossing += expected > 0
    assert crossing, "the scenario must place some replica across racks"


def test_diff_names_the_client_that_left_and_each_active_it_ran(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    before, after = scale_out(), scale_out(leaving=(3,))
    first, second = _answer(before), _answer(after)
    a = _write(tmp_path / "a.json", before)
    b = _write(tmp_path / "b.json", after)
    code, out, _ = _run(capsys, str(a), "--diff", str(b))
    assert code == 0
    assert f"left    {pid(3)} (rack rack-b1)" in out
    gone = next(c for c in first.clients if c.process_id == str(pid(3)))
    for t in gone.active_tasks:
        name = task_name(t)
        assert f"{name:<10} active   {pid(3)} -> {_owner(second, name)}" in out
    assert "configs:\n  unchanged" in out


def test_diff_names_a_changed_config(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    before = scale_out()
    after = scale_out()
    after.configs.num_standby_replicas = 2
    a, b = _write(tmp_path / "a.json", before), _write(tmp_path / "b.json", after)
    code, out, _ = _run(capsys, str(a), "--diff", str(b), "--task", "0_0")
    assert code == 0
    assert "num_standby_replicas: 1 -> 2" in out
    changes = [line for line in out.splitlines() if line.startswith("  0_0 ")]
    assert changes and all(" + " in line for line in changes)  # only a standby added


def test_journal_entries_pick_by_index_and_group(tmp_path: Path) -> None:
    journal = tmp_path / "journal"
    journal.mkdir()
    first, second = scale_out(), scale_out(leaving=(3,))
    other = scale_out()
    other.group_id = "other-app"
    (journal / "requests-1-000001.jsonl").write_bytes(request_line(first) + request_line(other))
    (journal / "requests-1-000002.jsonl").write_bytes(b"\n" + request_line(second))
    assert read_entry(f"{journal}#1", pb.AssignRequest).request == first
    assert read_entry(f"{journal}#-1", pb.AssignRequest).request == second
    found = read_entry(f"{journal}#2", pb.AssignRequest)
    assert found.request == other and found.where == "requests-1-000001.jsonl:2"
    assert read_entry(f"{journal}#2", pb.AssignRequest, group="orders-app").request == second
    one = f"{journal / 'requests-1-000002.jsonl'}"
    assert read_entry(one, pb.AssignRequest).request == second
    with pytest.raises(EntryError, match=r"3 requests; pick one .*#N \(1\.\.3"):
        read_entry(str(journal), pb.AssignRequest)
    with pytest.raises(EntryError, match="no request #4; there are 3"):
        read_entry(f"{journal}#4", pb.AssignRequest)


def test_journal_entry_from_the_command_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    journal = tmp_path / "requests-7-000001.jsonl"
    journal.write_bytes(request_line(scale_out()) + request_line(scale_out(leaving=(3,))))
    code, out, _ = _run(capsys, f"{journal}#-1", "--client", str(pid(4)))
    assert code == 0
    assert out.startswith(f"request: {journal}:2\n")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--task", "9_9"], "no task 9_9 in this request; tasks: 0_0 0_1"),
        (["--client", "nobody"], f"no client nobody; clients: {pid(1)}"),
    ],
)
def test_unknown_task_or_client_is_refused_with_what_exists(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    code, out, err = _run(capsys, str(_write(tmp_path / "r.json", scale_out())), *argv)
    assert (code, out) == (2, "")
    assert message in err


def test_invalid_request_exits_2_naming_the_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    request = scale_out()
    del request.members[:]
    code, _, err = _run(capsys, str(_write(tmp_path / "r.json", request)))
    assert code == 2
    assert "members" in err


def test_a_consumer_group_request_is_refused_saying_what_explain_reads(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _run(capsys, str(ROOT / "examples" / "consumer" / "rack-aware-range.json"))
    assert (code, out) == (2, "")
    assert "reads a Kafka Streams AssignRequest" in err


def test_examples_explain_every_task(capsys: pytest.CaptureFixture[str]) -> None:
    for example in sorted((ROOT / "examples").glob("*.json")):
        code, out, _ = _run(capsys, str(example))
        assert code == 0, example
        request = cli.read_request(str(example))
        assert f"{len(request.tasks)} tasks" in out


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (0, "0 ms"),
        (250, "250 ms"),
        (1500, "1.5 s"),
        (600_000, "10 min 0 s"),
        (7_500_000, "2 h 5 min"),
    ],
)
def test_durations_read_as_a_person_says_them(ms: int, text: str) -> None:
    assert duration_text(ms) == text


def test_followup_reads_as_time_and_duration_from_the_request() -> None:
    assert followup_text(NOW_MS + 90_000, NOW_MS).endswith("(in 1 min 30 s)")
    assert followup_text(NOW_MS - 2_000, NOW_MS).endswith("(2 s ago)")
    assert followup_text(0, NOW_MS) == "none"
    assert followup_text(2**63 - 1, NOW_MS).startswith("never")


def test_a_running_service_tells_the_same_story(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _write(tmp_path / "r.json", scale_out())
    local = _run(capsys, str(path), "--task", "0_4")
    with in_process() as (_, target):
        remote = _run(capsys, str(path), "--task", "0_4", "--target", target)
    assert local == remote
    assert local[0] == 0


def test_an_unreachable_service_fails_with_exit_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with in_process() as (_, target):
        pass  # the port is free again
    path = _write(tmp_path / "r.json", scale_out())
    code, out, err = _run(capsys, str(path), "--target", target, "--timeout", "2")
    assert (code, out) == (1, "")
    assert f"call failed: nothing accepts connections at {target}" in err
