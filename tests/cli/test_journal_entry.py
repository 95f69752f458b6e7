"""Journal entries in call-time order across workers and restarts, the time window, the pick told.

The files are named so that name order and time order disagree: the order ``#N`` follows must be
the calls' (issue 27: ``#-1`` explained the 6th of 8 calls, silently).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from kassign.cli import main as cli
from kassign.cli.journal_entry import EntryError, read_entry
from kassign.cli.time_window import Window, parse_time
from kassign.server.observe.journal import request_line
from kassign.v1 import assignment_pb2 as pb

from tests.cli.explain_scenario import NOW_MS, scale_out

MINUTE = 60_000


def _call(at_ms: int, group: str = "orders-app", *, whole: bool = False) -> pb.AssignRequest:
    """A call at ``at_ms``: the scenario's group when it is to be answered, else its head only."""
    request = scale_out() if whole else pb.AssignRequest()
    request.group_id, request.now_ms = group, at_ms
    return request


def _two_workers(folder: Path, *, whole: bool = False) -> Path:
    """Worker 7 (a restart, named first) took the later calls; worker 31 the earlier ones."""
    folder.mkdir()
    calls = {
        "requests-31-000001.jsonl": [1, 2],
        "requests-31-000002.jsonl": [4],
        "requests-7-000001.jsonl": [3, 5],  # "requests-7" sorts after "requests-31"... by name
        "requests-12-000001.jsonl": [6, 8],
        "requests-120-000001.jsonl": [7],
    }
    for name, minutes in calls.items():
        (folder / name).write_bytes(
            b"".join(request_line(_call(NOW_MS + m * MINUTE, whole=whole)) for m in minutes)
        )
    return folder


def _minute(request: pb.AssignRequest) -> int:
    return (request.now_ms - NOW_MS) // MINUTE


def test_entries_are_numbered_by_call_time_across_workers(tmp_path: Path) -> None:
    journal = _two_workers(tmp_path / "journal")
    picked = [_minute(read_entry(f"{journal}#{n}", pb.AssignRequest).request) for n in range(1, 9)]
    assert picked == [1, 2, 3, 4, 5, 6, 7, 8]
    last = read_entry(f"{journal}#-1", pb.AssignRequest, group="orders-app")
    assert (last.where, last.position, last.count) == ("requests-12-000001.jsonl:2", 8, 8)


def test_equal_times_fall_back_to_file_then_line(tmp_path: Path) -> None:
    journal = tmp_path / "journal"
    journal.mkdir()
    (journal / "requests-2-000001.jsonl").write_bytes(request_line(_call(NOW_MS, "b")))
    (journal / "requests-1-000001.jsonl").write_bytes(
        request_line(_call(NOW_MS, "a1")) + request_line(_call(NOW_MS, "a2"))
    )
    groups = [read_entry(f"{journal}#{n}", pb.AssignRequest).request.group_id for n in (1, 2, 3)]
    assert groups == ["a1", "a2", "b"]


def test_the_window_keeps_calls_since_inclusive_until_exclusive(tmp_path: Path) -> None:
    journal = _two_workers(tmp_path / "journal")
    window = Window(since_ms=NOW_MS + 3 * MINUTE, until_ms=NOW_MS + 6 * MINUTE)
    kept = [
        _minute(read_entry(f"{journal}#{n}", pb.AssignRequest, window=window).request)
        for n in (1, 2, 3)
    ]
    assert kept == [3, 4, 5]
    with pytest.raises(EntryError, match="no request #4; there are 3"):
        read_entry(f"{journal}#4", pb.AssignRequest, window=window)
    with pytest.raises(EntryError, match="no request of group 'x' recorded in"):
        read_entry(f"{journal}#1", pb.AssignRequest, group="x", window=window)


def test_explain_says_which_call_it_picked_and_takes_a_window(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    journal = _two_workers(tmp_path / "journal", whole=True)
    until = "2023-11-14T22:19:20Z"  # NOW_MS + 6 min, as ISO 8601
    assert parse_time(until, now_ms=0) == NOW_MS + 6 * MINUTE
    code = cli.main(["explain", f"{journal}#-1", "--group", "orders-app", "--until", until])
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines()[1] == (
        "picked:  call #5 of 5 by call time: 2023-11-14 22:18:20.000Z, group orders-app,"
        " requests-7-000001.jsonl:2"
    )


def test_times_are_iso_8601_or_ages() -> None:
    assert parse_time("2023-11-14T22:13:20", now_ms=0) == NOW_MS  # no offset: UTC
    assert parse_time("2023-11-14T23:13:20+01:00", now_ms=0) == NOW_MS
    assert parse_time("90m", now_ms=NOW_MS) == NOW_MS - 90 * MINUTE
    assert parse_time("1.5h", now_ms=NOW_MS) == NOW_MS - 90 * MINUTE
    with pytest.raises(argparse.ArgumentTypeError, match="neither an ISO 8601 time"):
        parse_time("yesterday", now_ms=NOW_MS)


def test_a_window_over_consumer_requests_is_refused(tmp_path: Path) -> None:
    from kassign.v1 import consumer_pb2 as cpb

    path = tmp_path / "requests-1-000001.jsonl"
    path.write_text('{"groupId": "g"}\n')
    with pytest.raises(EntryError, match="consumer requests carry no time"):
        read_entry(f"{path}#1", cpb.ConsumerAssignRequest, window=Window(since_ms=1))
