"""``kassign shadow-report``: figures, call order, filters, the page and bad input, on the
hand-written journal of ``shadow_journal.py`` (expected numbers worked out by hand there)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from kassign.cli import main as cli
from kassign.cli.shadow_report import Keep
from kassign.pipeline.shadow_rows import read_rows
from kassign.pipeline.shadow_sums import summarise, totals_of

from tests.cli.shadow_journal import T0, write_journal


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    return write_journal(tmp_path / "journal")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["shadow-report", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _figures(group: dict[str, object]) -> dict[str, tuple[object, object, object]]:
    return {f["name"]: (f["kafka"], f["kassign"], f["difference"]) for f in group["figures"]}  # type: ignore[attr-defined, index]


def test_each_groups_figures_are_the_journals_added_up(journal: Path, capsys) -> None:
    code, out, _ = _run(capsys, str(journal), "--json")
    assert code == 0
    data = json.loads(out)
    orders, payments = data["groups"]
    assert (orders["group"], orders["kind"], payments["group"], payments["kind"]) == (
        "orders",
        "streams",
        "payments",
        "consumer",
    )
    counts = ("rebalances", "compared", "changed", "differing_members", "first_ms", "last_ms")
    assert [orders[k] for k in counts] == [5, 4, 3, 7, T0 + 1000, T0 + 6000]
    assert orders["assignors"] == ["HighAvailabilityTaskAssignor"]
    assert _figures(orders) == {
        "cross_rack_partitions": (28, 10, -18),
        "moved": (8, 6, -2),
        "standbys_moved": (3, 1, -2),
        "max_per_member": (5.75, 4.25, -1.5),
        "min_per_member": (2.25, 3.75, 1.5),
        "max_load": (None, None, None),
        "standbys_sharing_rack_or_tag": (5, 1, -4),
    }
    assert [payments[k] for k in counts] == [2, 2, 2, 6, T0 + 1500, T0 + 2500]
    assert _figures(payments) == {  # a consumer group has no standbys: no such lines
        "cross_rack_partitions": (24, 8, -16),
        "moved": (5, 6, 1),
        "max_per_member": (10, 8, -2),
        "min_per_member": (6, 8, 2),
        "max_load": (2.75, 2.125, -0.625),
    }
    assert data["all"]["groups"] == 2 and data["all"]["changed"] == 5
    assert data["all"]["totals"]["cross-rack partitions"] == {"kafka": 52, "kassign": 18}


def test_the_table_and_the_line_over_all_groups(journal: Path, capsys) -> None:
    code, out, _ = _run(capsys, str(journal))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(
        "group orders (streams; Kafka's assignor HighAvailabilityTaskAssignor): 5 rebalances,"
        " 2026-12-07 00:00:01.000Z to 2026-12-07 00:00:06.000Z"
    )
    assert "  kassign would have changed 3 of 4 compared (members differing, summed: 7)" in lines
    assert "  1 without kassign's answer: not compared" in lines
    cells = {tuple(line.split()[-3:]) for line in lines if "per member (mean)" in line}
    assert cells == {
        ("5.75", "4.25", "-1.5"),
        ("2.25", "3.75", "+1.5"),
        ("10", "8", "-2"),
        ("6", "8", "+2"),
    }
    assert lines[-1] == (
        "all: 2 groups, 7 rebalances, kassign would have changed 5 of 6 compared (83%);"
        " cross-rack partitions 52 -> 18 (-34); moved 13 -> 12 (-1); standbys moved 3 -> 1 (-2);"
        " standbys sharing rack/tag 5 -> 1 (-4)"
    )


def test_a_groups_rebalances_are_in_call_order_across_servers_and_a_restart(journal: Path) -> None:
    rows = [r for r in read_rows([str(journal)], Keep()) if r.group == "orders"]
    assert [(r.time_ms - T0, r.server_id[:10], r.sequence) for r in rows] == [
        (1000, "host-a/100", 0),
        (2000, "host-b/200", 0),
        (3000, "host-a/100", 1),
        (3000, "host-b/200", 1),  # the same ms: the server's id decides
        (6000, "host-a/300", 0),  # restarted: sequence 0 again, but later
    ]
    assert [r.compared for r in rows] == [True, True, True, False, True]
    assert [r.same for r in rows] == [False, False, True, False, False]


def _iso(ms: int) -> str:
    return datetime.fromtimestamp((T0 + ms) / 1000, tz=UTC).isoformat()


def test_since_until_and_group_keep_only_what_they_name(journal: Path, capsys) -> None:
    code, out, _ = _run(
        capsys, str(journal), "--json", "--since", _iso(2000), "--until", _iso(3000)
    )
    groups = json.loads(out)["groups"]
    assert code == 0
    assert [(g["group"], g["rebalances"], g["first_ms"] - T0) for g in groups] == [
        ("orders", 1, 2000),
        ("payments", 1, 2500),
    ]
    code, out, _ = _run(capsys, str(journal), "--json", "--group", "payments")
    assert code == 0 and [g["group"] for g in json.loads(out)["groups"]] == ["payments"]
    both = _run(capsys, str(journal), "--json", "--group", "payments", "--group", "orders")[1]
    assert len(json.loads(both)["groups"]) == 2
    one_file = journal / "requests-200-000001.jsonl"
    rows = read_rows([str(one_file)], Keep())
    assert [(r.group, r.compared) for r in rows] == [("orders", True), ("orders", False)]
    assert summarise(totals_of(rows)[0]).figures[0].kafka == 6
    consumer_room = read_rows([str(journal / "consumer")], Keep())  # the room's folder alone
    assert {(r.group, r.kind) for r in consumer_room} == {("payments", "consumer")}


def test_the_page_is_one_file_with_every_group_and_no_external_reference(
    journal: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "page" / "shadow.html"
    code, text, _ = _run(capsys, str(journal), "--html", str(out))
    assert code == 0 and text.rstrip().endswith(f"page: {out}")
    assert [p.name for p in out.parent.iterdir()] == ["shadow.html"]
    page = out.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page)
    assert "http://" not in page and "https://" not in page and "<link" not in page
    for group, kind in (("orders", "streams"), ("payments", "consumer")):
        section = re.search(
            rf'<section class="group" data-group="{group}" data-kind="{kind}">(.*?)</section>', page
        )
        assert section is not None
        assert section[1].count("<svg") == 6 if kind == "streams" else 5  # orders: no loads
    # Kafka's cross-rack line in orders' plot: one point per compared rebalance, in call order
    orders = page[page.index('data-group="orders"') :]
    kafka = re.search(r'<g data-series="kafka"[^>]*><polyline points="([^"]*)"', orders)
    assert kafka is not None and len(kafka[1].split()) == 4
    assert '<tr data-figure="moved"><td>moved (total)</td><td>8</td><td>6</td>' in page


def test_no_shadow_line_exits_1_and_says_so(tmp_path: Path, capsys) -> None:
    journal = write_journal(tmp_path / "journal")
    code, out, err = _run(capsys, str(journal), "--group", "nobody")
    assert (code, out) == (1, "")
    assert "no shadow-mode line of group(s) nobody in" in err
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "requests-1-000001.jsonl").write_text('{"groupId": "g"}\n')
    assert _run(capsys, str(plain))[0] == 1


def test_a_last_line_still_being_written_is_left_for_the_next_read(journal: Path) -> None:
    whole = read_rows([str(journal)], Keep())
    live = journal / "consumer" / "requests-100-000001.jsonl"
    text = live.read_text()
    live.write_text(text + text.splitlines()[0][:40])  # a server halfway through a line
    assert read_rows([str(journal)], Keep()) == whole
    live.write_text(text + "{not json\n")  # a whole line that is not JSON is still an error
    with pytest.raises(ValueError, match="not JSON"):
        read_rows([str(journal)], Keep())


def test_a_malformed_line_is_named_by_file_and_line(journal: Path, capsys) -> None:
    bad = journal / "consumer" / "requests-100-000001.jsonl"
    bad.write_text(bad.read_text() + "\n{not json\n")
    code, out, err = _run(capsys, str(journal))
    assert (code, out) == (2, "")
    assert f"{bad}:4: not JSON" in err
    bad.write_text('{"shadow": {"comparison": {"same": "perhaps"}}}\n')
    code, _, err = _run(capsys, str(journal))
    assert code == 2 and f"{bad}:1: shadow.comparison:" in err
    bad.write_text('{"shadow": {}, "journal": 5}\n')
    code, _, err = _run(capsys, str(journal))
    assert code == 2 and f"{bad}:1: journal: a JSON object was expected" in err
    bad.write_bytes(b'{"groupId": "\xff"}\n')
    code, _, err = _run(capsys, str(journal))
    assert code == 2 and f"{bad}:1: not UTF-8 text" in err
    assert _run(capsys, str(journal / "missing"))[0] == 2
    assert _run(capsys, str(journal), "--since", "yesterday")[0] == 2


def test_the_report_adds_up_the_comparisons_the_service_journals(tmp_path: Path, capsys) -> None:
    """A served journal (in-process server): two Streams shadow calls, Kafka's answer differing,
    a plain call, a consumer shadow call; the report's figures are the answers' comparisons."""
    import grpc
    from kassign.server.observe.journal import CONSUMER_SUBDIR, Journal
    from kassign.server.runtime.app import ServerConfig, create_server
    from kassign.v1 import assignment_pb2_grpc, consumer_pb2_grpc

    from tests.server.consumer.requests import racked_group
    from tests.server.test_shadow import _consumer_shadow, _streams_shadow

    streams, consumer = _streams_shadow(), _consumer_shadow(racked_group("range"))
    first, second = streams.shadow.kafka[0], streams.shadow.kafka[1]
    first.process_id, second.process_id = second.process_id, first.process_id
    plain = type(streams)()
    plain.CopyFrom(streams)
    plain.ClearField("shadow")
    journal = tmp_path / "journal"
    journals = Journal(journal), Journal(journal / CONSUMER_SUBDIR)
    server, port = create_server(
        ServerConfig(host="127.0.0.1", port=0), journal=journals[0], consumer_journal=journals[1]
    )
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = assignment_pb2_grpc.TaskAssignmentServiceStub(channel)
            reports = [stub.Assign(streams, timeout=30).report.shadow for _ in range(2)]
            stub.Assign(plain, timeout=30)
            consumer_stub = consumer_pb2_grpc.ConsumerAssignmentServiceStub(channel)
            consumer_report = consumer_stub.Assign(consumer, timeout=30).report.shadow
    finally:
        server.stop(None).wait()
        for j in journals:
            j.close()
    code, out, err = _run(capsys, str(journal), "--json")
    assert code == 0, err
    found = {g["group"]: g for g in json.loads(out)["groups"]}
    assert sorted(found) == sorted([consumer.group_id, streams.group_id])
    g = found[streams.group_id]
    assert (g["rebalances"], g["compared"], g["changed"]) == (2, 2, 2)
    assert g["differing_members"] == sum(r.differing_members for r in reports) > 0
    for name, (kafka, kassign, _) in _figures(g).items():
        if name in ("max_per_member", "min_per_member"):  # means: both calls alike
            assert (kafka, kassign) == (
                getattr(reports[0].kafka, name),
                getattr(reports[0].kassign, name),
            )
        elif name != "max_load":
            assert kafka == sum(getattr(r.kafka, name) for r in reports), name
            assert kassign == sum(getattr(r.kassign, name) for r in reports), name
    assert _figures(g)["moved"][0] > 0  # Kafka's swapped answer moves tasks
    c = found[consumer.group_id]
    assert (c["kind"], c["rebalances"], c["changed"]) == ("consumer", 1, 0) and consumer_report.same
    assert _figures(c)["moved"][:2] == (consumer_report.kafka.moved, consumer_report.kassign.moved)
