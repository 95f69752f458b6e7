"""The request journal: one protobuf-JSON line per request, rotated and bounded per process."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from google.protobuf import json_format
from kassign.server.observe.journal import PRUNE_EVERY_MS, Journal, Retention
from kassign.v1 import assignment_pb2 as pb


def _request(group: str, members: int = 1) -> pb.AssignRequest:
    request = pb.AssignRequest(group_id=group, now_ms=1_000)
    for i in range(members):
        member = request.members.add(member_id=f"{group}-m{i}")
        member.subscription.topics.append("input")
        member.subscription.info.process_id = f"00000000-0000-0000-0000-{i:012d}"
        member.subscription.info.version = 11
    request.tasks.add(id=pb.TaskId(subtopology=0, partition=1), stateful=True)
    request.configs.num_standby_replicas = 1
    return request


def _read_back(paths: list[Path]) -> list[pb.AssignRequest]:
    lines = [line for path in paths for line in path.read_text().splitlines()]
    return [json_format.Parse(line, pb.AssignRequest()) for line in lines]


def test_lines_round_trip_to_equal_requests(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    sent = [_request(f"g{i}", members=i + 1) for i in range(3)]
    for request in sent:
        journal.record(request)
    journal.close()
    back = _read_back(journal.files())
    stamps = [r.journal for r in back]  # issue 26: each line stamped, in arrival order
    assert [s.group_key for s in stamps] == ["g0", "g1", "g2"]
    assert len({s.server_id for s in stamps}) == 1
    assert [s.sequence for s in stamps] == sorted({s.sequence for s in stamps})
    for r in back:
        r.ClearField("journal")
    assert back == sent
    assert all(p.name.startswith(f"requests-{os.getpid()}-") for p in journal.files())


def _recorded_size(folder: Path) -> int:
    """One recorded line's length: the request's line and the journal's stamp, whose server id
    (host name, pid) differs from machine to machine."""
    journal = Journal(folder)
    journal.record(_request("g000"))
    journal.close()
    (path,) = journal.files()
    return path.stat().st_size


def test_rotation_keeps_files_under_the_size_and_count_bounds(tmp_path: Path) -> None:
    size = _recorded_size(tmp_path / "probe") + 2  # sequences of 1 and 2 digits
    journal = Journal(tmp_path / "journal", max_file_bytes=3 * size, max_files=2)
    sent = [_request(f"g{i:03d}") for i in range(10)]
    for request in sent:
        journal.record(request)
    journal.close()
    files = journal.files()
    assert len(files) == 2
    assert all(p.stat().st_size <= 3 * size for p in files)
    # the newest requests survive, in order: 10 lines in files of 3 -> last file holds one
    assert [r.group_id for r in _read_back(files)] == [f"g{i:03d}" for i in range(6, 10)]


def test_a_line_larger_than_the_limit_gets_a_file_of_its_own(tmp_path: Path) -> None:
    journal = Journal(tmp_path, max_file_bytes=10, max_files=5)
    journal.record(_request("a"))
    journal.record(_request("b"))
    journal.close()
    assert [len(p.read_text().splitlines()) for p in journal.files()] == [1, 1]


def test_concurrent_threads_write_whole_lines(tmp_path: Path) -> None:
    journal = Journal(tmp_path, max_file_bytes=1 << 20, max_files=4)

    def write(start: int) -> None:
        for i in range(start, start + 50):
            journal.record(_request(f"g{i}", members=2))

    threads = [threading.Thread(target=write, args=(k * 50,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    journal.close()
    groups = sorted(int(r.group_id[1:]) for r in _read_back(journal.files()))
    assert groups == list(range(200))


def test_a_forked_worker_writes_its_own_file(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.record(_request("parent"))
    pid = os.fork()
    if pid == 0:  # child: record one request and leave without running pytest's teardown
        try:
            journal.record(_request("child"))
            journal.close()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    journal.close()
    names = sorted(p.name for p in tmp_path.glob("requests-*.jsonl"))
    assert names == sorted([f"requests-{os.getpid()}-000001.jsonl", f"requests-{pid}-000001.jsonl"])
    assert [r.group_id for r in _read_back([tmp_path / f"requests-{pid}-000001.jsonl"])] == [
        "child"
    ]


def test_limits_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        Journal(tmp_path, max_file_bytes=0)
    with pytest.raises(ValueError):
        Journal(tmp_path, max_files=0)


def _old_file(folder: Path, name: str, *, mtime_ms: int, size: int = 100) -> Path:
    path = folder / name
    path.write_bytes(b"x" * (size - 1) + b"\n")
    os.utime(path, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))
    return path


HOUR_MS = 3600 * 1000
NOW_MS = 1_800_000_000_000


def test_files_of_every_process_older_than_the_retention_age_are_deleted(tmp_path: Path) -> None:
    stale = _old_file(tmp_path, "requests-111-000009.jsonl", mtime_ms=NOW_MS - 3 * HOUR_MS)
    fresh = _old_file(tmp_path, "requests-222-000001.jsonl", mtime_ms=NOW_MS - HOUR_MS)
    other = _old_file(tmp_path, "notes.jsonl", mtime_ms=NOW_MS - 9 * HOUR_MS)  # not a journal's
    journal = Journal(
        tmp_path, retention=Retention(max_age_ms=2 * HOUR_MS), clock_ms=lambda: NOW_MS
    )
    journal.record(_request("g"))
    journal.close()
    assert not stale.exists()
    assert fresh.exists() and other.exists() and len(journal.files()) == 1


def test_the_oldest_files_go_while_the_folder_passes_the_retention_size(tmp_path: Path) -> None:
    names = ["requests-5-000002.jsonl", "requests-3-000007.jsonl", "requests-9-000001.jsonl"]
    made = [  # names sort opposite to age: the size bound goes by last write, not by name
        _old_file(tmp_path, name, mtime_ms=NOW_MS - (3 - n) * HOUR_MS, size=1000)
        for n, name in enumerate(reversed(names))
    ]
    retention = Retention(max_age_ms=None, max_bytes=2500)
    journal = Journal(tmp_path, retention=retention, clock_ms=lambda: NOW_MS)
    journal.record(_request("g"))
    journal.close()
    assert [p.exists() for p in made] == [False, True, True]  # 2000 + the new line <= 2500
    assert sum(p.stat().st_size for p in tmp_path.glob("requests-*.jsonl")) <= 2500


def test_retention_is_checked_without_a_rotation_once_a_minute(tmp_path: Path) -> None:
    now = [NOW_MS]
    journal = Journal(tmp_path, retention=Retention(max_age_ms=HOUR_MS), clock_ms=lambda: now[0])
    journal.record(_request("first"))  # opens its file and checks retention
    stale = _old_file(tmp_path, "requests-111-000001.jsonl", mtime_ms=NOW_MS - 2 * HOUR_MS)
    now[0] += PRUNE_EVERY_MS - 1
    journal.record(_request("second"))
    assert stale.exists()
    now[0] += 1
    journal.record(_request("third"))
    journal.close()
    assert not stale.exists()


def test_a_request_on_the_servers_clock_is_recorded_with_the_call_time(tmp_path: Path) -> None:
    journal = Journal(tmp_path, clock_ms=lambda: NOW_MS)
    unset, own = _request("unset"), _request("own")
    unset.now_ms = 0
    journal.record(unset)
    journal.record(own)
    journal.close()
    assert [r.now_ms for r in _read_back(journal.files())] == [NOW_MS, 1_000]


def test_retention_bounds_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_bytes must be positive"):
        Retention(max_bytes=0)


def test_stamps_keep_a_process_order_when_the_clock_steps_back(tmp_path: Path) -> None:
    """Issue 26: ``received_unix_ms`` never goes back within a process, ``sequence`` rises."""
    times = iter([5_000, 5_000, 4_000, 4_000, 6_000, 6_000])  # read by stamp, then by record
    journal = Journal(tmp_path, clock_ms=lambda: next(times))
    for group in ("a", "b", "c"):
        journal.record(_request(group))
    journal.close()
    stamps = [r.journal for r in _read_back(journal.files())]
    assert [s.received_unix_ms for s in stamps] == [5_000, 5_000, 6_000]
    assert stamps[0].sequence < stamps[1].sequence < stamps[2].sequence
    assert stamps[0].server_id.split("/")[1] == str(os.getpid())


def test_a_sent_stamp_is_replaced(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    request = _request("g")
    request.journal.server_id, request.journal.sequence = "forged", 99
    journal.record(request)
    journal.close()
    (back,) = _read_back(journal.files())
    assert back.journal.server_id != "forged" and back.journal.group_key == "g"
