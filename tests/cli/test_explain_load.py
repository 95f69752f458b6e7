"""``kassign explain`` and ``-v``'s table under balance LOAD (issue 25): each member's load against
the bound, the group's figures, reasons that name load; COUNT groups print none of it.

Every figure is recomputed here from the request's loads and capacities and the answer's
partitions, not read back from the explanation that printed it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from google.protobuf import json_format
from kassign.cli import main as cli
from kassign.cli.explain_consumer import consumer_view
from kassign.cli.explain_html import page
from kassign.cli.explain_model import rule_word
from kassign.cli.explain_streams import group_view
from kassign.cli.explain_text import group_summary
from kassign.server.consumer.servicer import assign_consumer_request
from kassign.server.streams.servicer import assign_request
from kassign.v1 import consumer_pb2 as cpb
from kassign_client import consumer

from tests.cli.explain_scenario import scale_out
from tests.server.running import ROOT

BY_LOAD = ROOT / "examples" / "consumer" / "sticky-by-load.json"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert cli.main(list(argv)) == 0
    return capsys.readouterr().out


def _shares() -> tuple[cpb.ConsumerAssignResponse, dict[str, tuple[float, float, float]]]:
    """The answer, and each member's (load, capacity, share of the bound), recomputed."""
    request = cli.read_consumer_request(str(BY_LOAD))
    response = assign_consumer_request(request).response
    loads = list(request.topics[0].partition_loads)
    caps = {m.member_id: m.subscription.capacity or 1.0 for m in request.members}
    bound = response.report.load.bound
    assert bound == max(sum(loads) / sum(caps.values()), max(loads) / max(caps.values()))
    figures = {}
    for m in consumer.answers(response):
        load = sum(loads[p] for _, p in m.partitions)
        figures[m.member_id] = (load, caps[m.member_id], load / caps[m.member_id] / bound)
    return response, figures


def test_the_summary_shows_each_members_load_against_the_bound(
    capsys: pytest.CaptureFixture[str],
) -> None:
    response, figures = _shares()
    out = _run(capsys, "explain", "--kind", "consumer", str(BY_LOAD))
    f = response.report.load
    assert f"load per unit of capacity: bound {f.bound:.4g}, peak {f.peak:.4g}" in out
    assert f"({f.peak / f.bound:.2f} of the bound), mean {f.mean:.4g}; loads from request" in out
    for member, (load, cap, share) in figures.items():
        line = re.search(rf"^  {member} \(no rack\): \d+ partition\(s\), (.*)$", out, re.MULTILINE)
        assert line, member
        assert line[1].startswith(
            f"load {load:.4g} on capacity {cap:.4g}: {share:.2f} of the bound"
        )
        bar = re.fullmatch(r".* \[(#*) *\|[# ]*\]", line[1])
        assert bar and len(bar[1]) > 0
    assert max(s for _, _, s in figures.values()) == pytest.approx(f.peak / f.bound)


def test_a_partition_load_moved_names_load_and_the_member_told_its_load(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Partition 0 (48 msg/s) was consumer-0's; by load it goes to consumer-3 (capacity 2)."""
    response, figures = _shares()
    out = _run(capsys, "explain", "--kind", "consumer", str(BY_LOAD), "--task", "clicks-0")
    assert "  load 48\n" in out
    share = figures["consumer-3"][2]
    kept = (figures["consumer-0"][0] + 48) / figures["consumer-0"][1] / response.report.load.bound
    assert (
        f"why: load: consumer-3 at {share:.2f} of the bound with it; consumer-0, its owner,"
        f" would be at {kept:.2f} keeping it"
    ) in out
    load, cap, _ = figures["consumer-3"]
    told = _run(capsys, "explain", "--kind", "consumer", str(BY_LOAD), "--client", "consumer-3")
    assert f"\n  load {load:.4g} on capacity {cap:.4g}: {share:.2f} of the bound [" in told


def test_the_verbose_table_lists_loads_and_the_report_its_figures(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, figures = _shares()
    out = _run(capsys, "assign", "--kind", "consumer", "-v", "--format", "table", str(BY_LOAD))
    for member, (load, cap, share) in figures.items():
        assert re.search(rf"^{member} +{load:.4g} +{cap:.4g} +{share:.2f}  \[", out, re.MULTILINE)
    assert "load per unit of capacity: bound 33" in out
    assert re.search(r"^    load: consumer-3 at ", out, re.MULTILINE)


def test_a_count_group_tells_no_load(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    request = cli.read_consumer_request(str(BY_LOAD))
    request.options.ClearField("balance")
    path = tmp_path / "count.json"
    path.write_text(json_format.MessageToJson(request))
    out = _run(capsys, "explain", "--kind", "consumer", str(path))
    out += _run(capsys, "assign", "--kind", "consumer", "-v", "--format", "table", str(path))
    out += _run(capsys, "explain", "--kind", "consumer", str(path), "--client", "consumer-3")
    for said in ("of the bound", "load per unit", "LOAD", "why: load", "; load: ", "\n    load: "):
        assert said not in out


def test_a_streams_client_with_load_figures_is_told_the_same_way() -> None:
    """The Streams view reads ClientExplanation.load and the report's figures once its
    assignors fill them (not yet): set here by hand, they print as a consumer member's do."""
    request = scale_out()
    request.explain = True
    outcome = assign_request(request)
    response = outcome.response
    response.report.load.bound, response.report.load.peak = 2.0, 2.5
    first = response.explanation.clients[0]
    first.load = 10.0  # capacity unset: its threads
    view = group_view(outcome.decoded, response)
    threads = view.clients[0].threads
    share = 10.0 / threads / 2.0
    lines = group_summary(view)
    assert "load per unit of capacity: bound 2, peak 2.5 (1.25 of the bound), mean 0" in lines
    told = next(line for line in lines if line.startswith(f"  {first.process_id} "))
    assert f"load 10 on capacity {threads}: {share:.2f} of the bound [" in told
    assert f'data-share="{share:.4f}"' in page(view)
    plain = group_view(outcome.decoded, assign_request(request).response)
    assert "of the bound" not in "\n".join(group_summary(plain)) + page(plain)


def test_a_rule_newer_than_the_reader_is_told_by_number_and_its_reason() -> None:
    request = cli.read_consumer_request(str(BY_LOAD))
    asked = cpb.ConsumerAssignRequest()
    asked.CopyFrom(request)
    asked.explain = True
    response = assign_consumer_request(asked).response
    assert [rule_word(v) for v in (0, 1, 8)] == ["", "sticky", "load"]
    response.explanation.partitions[0].rule = 99  # a server from after this reader
    (replica,) = consumer_view(asked, response).tasks[0].replicas
    assert replica.rule == "rule 99" and replica.why.startswith("load: ")
