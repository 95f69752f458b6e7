"""``kassign explain --html``: the page in a real headless Chromium (tests/browser).

What is on screen is checked against the answer itself: the counts at the top, every client's
cells, the reason a click shows; and the page must fit a laptop's window with no network.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.protobuf import json_format
from kassign.cli import main as cli
from kassign.cli.explain_consumer import partition_name
from kassign.cli.explain_html import page
from kassign.cli.explain_streams import group_view
from kassign.cli.table import task_name
from kassign.server.consumer.servicer import assign_consumer_request
from kassign.server.streams.servicer import assign_request
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb
from selenium import webdriver
from selenium.webdriver.common.by import By

from tests.browser import WINDOW, chromium, horizontal_overflow, open_page
from tests.cli.explain_scenario import RACKS, scale_out
from tests.server.running import ROOT


@pytest.fixture(scope="module")
def driver() -> Iterator[webdriver.Chrome]:
    with chromium() as d:
        yield d


def _explained(request: pb.AssignRequest) -> pb.AssignResponse:
    asked = pb.AssignRequest()
    asked.CopyFrom(request)
    asked.explain = True
    return assign_request(asked).response


def _write_page(tmp_path: Path, request: pb.AssignRequest, *extra: str) -> Path:
    source = tmp_path / "request.json"
    source.write_text(json_format.MessageToJson(request))
    out = tmp_path / "page" / "explain.html"
    assert cli.main(["explain", str(source), "--html", str(out), *extra]) == 0
    return out


def _count(driver: webdriver.Chrome, name: str) -> int:
    cell = driver.find_element(By.CSS_SELECTOR, f'#counts [data-count="{name}"] dd')
    return int(cell.text)


def _cells(driver: webdriver.Chrome, selector: str) -> list[str]:
    return [c.text for c in driver.find_elements(By.CSS_SELECTOR, f"#grid {selector}")]


def test_counts_and_cells_on_screen_match_the_answer(
    driver: webdriver.Chrome, tmp_path: Path
) -> None:
    request = scale_out()
    response = _explained(request)
    open_page(driver, _write_page(tmp_path, request))
    actives = sum(len(c.active_tasks) for c in response.clients)
    replicas = sum(len(c.standby_tasks) for c in response.clients)
    assert _count(driver, "tasks") == len(request.tasks)
    assert _count(driver, "clients") == len(response.clients)
    assert _count(driver, "active") == actives == len(_cells(driver, ".cell.active"))
    shown_standbys = _count(driver, "standby") + _count(driver, "warm-up")
    assert shown_standbys == replicas
    assert len(_cells(driver, ".cell:not(.active)")) == replicas
    assert _count(driver, "warm-up") == len(_cells(driver, ".cell.warm-up"))
    assert _count(driver, "warm-up") == response.report.warmups > 0
    moved = _count(driver, "replicas moved: stateful active")
    moved += _count(driver, "replicas moved: stateless active")
    assert moved == response.report.active_tasks_moved
    assert moved == len(_cells(driver, ".cell.active.moved"))
    assert _count(driver, "replicas cross-rack") == len(_cells(driver, ".cell.cross-rack")) > 0
    for client in response.clients:
        article = f'.client[data-pid="{client.process_id}"]'
        assert sorted(_cells(driver, f"{article} .cell.active")) == sorted(
            task_name(t) for t in client.active_tasks
        )
        assert sorted(_cells(driver, f"{article} .cell:not(.active)")) == sorted(
            task_name(t) for t in client.standby_tasks
        )
    assert horizontal_overflow(driver) == 0


def test_clients_are_grouped_by_zone_then_rack(driver: webdriver.Chrome, tmp_path: Path) -> None:
    request = scale_out()
    response = _explained(request)
    open_page(driver, _write_page(tmp_path, request))
    racks = {m.subscription.info.process_id: m.subscription.rack_id for m in request.members}
    zones = driver.find_elements(By.CSS_SELECTOR, "#grid .zone")
    assert [z.get_attribute("data-zone") for z in zones] == sorted(set(RACKS.values()))
    seen = 0
    for zone in zones:
        for rack in zone.find_elements(By.CSS_SELECTOR, ".rack"):
            name = rack.get_attribute("data-rack")
            assert RACKS[name] == zone.get_attribute("data-zone")
            for client in rack.find_elements(By.CSS_SELECTOR, ".client"):
                assert racks[client.get_attribute("data-pid")] == name
                seen += 1
    assert seen == len(response.clients)


def test_a_click_shows_the_tasks_reason_and_story(driver: webdriver.Chrome, tmp_path: Path) -> None:
    request = scale_out()
    response = _explained(request)
    open_page(driver, _write_page(tmp_path, request))
    target = next(c for c in response.clients if c.active_tasks and c.standby_tasks)
    name = task_name(target.standby_tasks[0])
    cell = driver.find_element(
        By.CSS_SELECTOR,
        f'#grid .client[data-pid="{target.process_id}"] .cell:not(.active)[data-task="{name}"]',
    )
    cell.click()
    detail = driver.find_element(By.ID, "detail")
    assert detail.find_element(By.TAG_NAME, "h2").text == f"task {name}"
    replica = detail.find_element(By.CLASS_NAME, "replica").text
    assert replica.startswith(f"{name} ") and target.process_id in replica
    story = detail.find_element(By.TAG_NAME, "pre").text
    assert story.startswith(f"task {name}:") and "\nbefore:\n" in story
    reasons = [
        p.reason
        for t in response.explanation.tasks
        if task_name(t.task) == name
        for p in t.placements
        if p.process_id == target.process_id
    ]
    assert len(reasons) == 1 and reasons[0]
    assert reasons[0] in replica  # the answer's own words
    marked = driver.find_elements(By.CSS_SELECTOR, "#grid .cell.same")
    owners = [c for c in response.clients if name in {task_name(t) for t in c.active_tasks}]
    holders = [c for c in response.clients if name in {task_name(t) for t in c.standby_tasks}]
    assert len(marked) == len(owners) + len(holders)
    assert "selected" in (cell.get_attribute("class") or "")


def test_a_page_asked_for_one_task_opens_with_its_story(
    driver: webdriver.Chrome, tmp_path: Path
) -> None:
    request = scale_out()
    response = _explained(request)
    name = task_name(response.clients[-1].active_tasks[-1])
    open_page(driver, _write_page(tmp_path, request, "--task", name))
    detail = driver.find_element(By.ID, "detail")
    assert detail.find_element(By.TAG_NAME, "h2").text == f"task {name}"
    selected = driver.find_elements(By.CSS_SELECTOR, "#grid .cell.selected")
    assert [c.text for c in selected] == [name]


def test_a_diff_page_rings_the_replicas_the_first_answer_did_not_have(
    driver: webdriver.Chrome, tmp_path: Path
) -> None:
    before, after = scale_out(), scale_out(leaving=(3,))
    first, second = _explained(before), _explained(after)
    other = tmp_path / "after.json"
    other.write_text(json_format.MessageToJson(after))
    open_page(driver, _write_page(tmp_path, before, "--diff", str(other)))
    had = {
        (c.process_id, task_name(t))
        for c in first.clients
        for t in [*c.active_tasks, *c.standby_tasks]
    }
    has = {
        (c.process_id, task_name(t))
        for c in second.clients
        for t in [*c.active_tasks, *c.standby_tasks]
    }
    changed = driver.find_elements(By.CSS_SELECTOR, "#grid .cell.changed")
    shown = {(c.get_attribute("data-pid"), c.text) for c in changed}
    assert shown >= has - had  # a new place is always ringed (a kind change is too)
    assert _count(driver, "replicas changed") == len(changed) > 0


@pytest.mark.parametrize("window", [WINDOW, (820, 900)])
def test_a_two_hundred_task_group_fits_the_window(
    driver: webdriver.Chrome, tmp_path: Path, window: tuple[int, int]
) -> None:
    request = cli.read_request(str(ROOT / "bench" / "ghz" / "data" / "group_200.json"))
    driver.set_window_size(*window)
    try:
        open_page(driver, _write_page(tmp_path, request))
        assert horizontal_overflow(driver) == 0
        assert len(_cells(driver, ".cell.active")) == len(request.tasks)
    finally:
        driver.set_window_size(*WINDOW)


def test_the_page_is_self_contained_and_the_same_for_the_same_request(tmp_path: Path) -> None:
    request = scale_out()
    text = _write_page(tmp_path, request).read_text()
    for outside in ("<link", "src=", "@import", "url(", "http://", "https://"):
        assert outside not in text
    outcome = assign_request(request)
    view = group_view(outcome.decoded, outcome.response)
    assert page(view) == page(view)
    (tmp_path / "again").mkdir()
    again = _write_page(tmp_path / "again", request).read_text()
    assert again == text


def test_a_consumer_groups_page_shows_members_partitions_and_withheld_ones(
    driver: webdriver.Chrome, tmp_path: Path
) -> None:
    source = ROOT / "examples" / "consumer" / "cooperative-sticky-scale-out.json"
    request = cli.read_consumer_request(str(source))
    asked = cpb.ConsumerAssignRequest()
    asked.CopyFrom(request)
    asked.explain = True
    response = assign_consumer_request(asked).response
    out = tmp_path / "consumer.html"
    assert cli.main(["explain", "--kind", "consumer", str(source), "--html", str(out)]) == 0
    open_page(driver, out)
    report = response.report
    assert _count(driver, "partitions") == report.partitions
    assert _count(driver, "members") == len(response.members)
    assert _count(driver, "partitions withheld") == report.withheld_partitions > 0
    assert len(_cells(driver, ".cell.withheld")) == report.withheld_partitions
    moved = _count(driver, "partitions moved") + _count(driver, "partitions withheld")
    assert moved == report.moved_partitions
    for member in response.members:
        shown = _cells(driver, f'.client[data-pid="{member.member_id}"] .cell')
        assert shown == [partition_name(tp) for tp in member.partitions]
    cell = driver.find_elements(By.CSS_SELECTOR, "#grid .cell.withheld")[0]
    cell.click()
    detail = driver.find_element(By.ID, "detail")
    assert detail.find_element(By.TAG_NAME, "h2").text == f"partition {cell.text}"
    assert "withheld this round" in detail.find_element(By.CLASS_NAME, "replica").text
    assert horizontal_overflow(driver) == 0


def test_a_load_balanced_groups_page_bars_each_members_load_against_the_bound(
    driver: webdriver.Chrome, tmp_path: Path
) -> None:
    """Balance LOAD (issue 25): the header's figures are the report's; each member's bar is
    filled to its load per unit of capacity (recomputed from the request) and crosses the
    bound's mark exactly when that share is above the bound. The example's loads are made
    three hot partitions of 100 (the example itself balances exactly): two members of
    capacity 1 then hold one each, 1.37x the bound, and the rest fall below it."""
    example = json.loads((ROOT / "examples" / "consumer" / "sticky-by-load.json").read_text())
    example["topics"][0]["partitionLoads"][:3] = [100.0, 100.0, 100.0]
    source = tmp_path / "hot.json"
    source.write_text(json.dumps(example))
    request = cli.read_consumer_request(str(source))
    response = assign_consumer_request(request).response
    out = tmp_path / "load.html"
    assert cli.main(["explain", "--kind", "consumer", str(source), "--html", str(out)]) == 0
    open_page(driver, out)
    figures = response.report.load
    shown = {
        e.get_attribute("data-load"): e.find_element(By.TAG_NAME, "dd").text
        for e in driver.find_elements(By.CSS_SELECTOR, "#load [data-load]")
    }
    assert shown == {
        "bound": f"{figures.bound:.4g}",
        "peak": f"{figures.peak:.4g} ({figures.peak / figures.bound:.2f} of the bound)",
        "mean": f"{figures.mean:.4g}",
        "source": "request",  # the request's own partition_loads
    }
    loads = list(request.topics[0].partition_loads)
    caps = {m.member_id: m.subscription.capacity or 1.0 for m in request.members}
    sides = set()
    for member in response.members:
        share = sum(loads[tp.partition] for tp in member.partitions) / caps[member.member_id]
        share /= figures.bound
        bar = driver.find_element(By.CSS_SELECTOR, f'.client[data-pid="{member.member_id}"] .load')
        assert float(bar.get_attribute("data-share") or "nan") == pytest.approx(share, abs=1e-4)
        assert f"{share:.2f} of the bound" in bar.text
        fill = bar.find_element(By.CLASS_NAME, "fill").rect
        mark = bar.find_element(By.CLASS_NAME, "bound").rect
        if abs(share - 1) > 0.02:
            sides.add(share > 1)
            assert (fill["x"] + fill["width"] > mark["x"]) == (share > 1), member.member_id
        peak = "peak" in (bar.get_attribute("class") or "")
        assert peak == (share == pytest.approx(figures.peak / figures.bound)), member.member_id
    assert sides == {False, True}  # a member on each side of the bound
    assert horizontal_overflow(driver) == 0
