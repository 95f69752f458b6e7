"""The report at the size of docs/pipeline.md's own grid (36 configurations), in a real browser.

Replay and simulate run on Spark (the session's local[2]) over few, small groups but the whole
grid; the pages are then opened in headless Chromium at 1,400 px. The browser, not matplotlib,
says where every label landed: no text of a plot overlaps another, nothing overflows sideways,
plots are drawn at a readable size, and the event breakdown and the error list say what the
output rows say (recomputed here by plain loops, not by the report's pandas code).
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from statistics import mean
from typing import Any

import pandas as pd
import pytest
from kassign.pipeline.events import Event, EventKind
from kassign.pipeline.generate import GroupSpec, random_group
from kassign.pipeline.grid import Configuration, grid_from_json
from kassign.pipeline.group import to_request
from kassign.pipeline.replay import replay
from kassign.pipeline.report import build_report
from kassign.pipeline.simulate import simulate
from kassign.server.observe.journal import Journal
from selenium import webdriver

from tests.browser import WINDOW, chromium, horizontal_overflow, open_page

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SPEC = GroupSpec(
    clients=(3, 5), racks=(3, 3), replication=(1, 2), subtopologies=(1, 2), partitions=(2, 6)
)
EVENTS = (
    Event(kind=EventKind.RACK_FAIL, rack=0),
    Event(kind=EventKind.RACK_RETURN, rack=0),
    Event(kind=EventKind.JOIN, count=2),
    Event(kind=EventKind.LEAVE, count=1),
)
BAD_LINES = ("{this is not json", '{"groupId": "empty-group"}')

_MEASURE = """
const plots = [];
for (const svg of document.querySelectorAll(arguments[0])) {
  const texts = [...svg.querySelectorAll('text')]
    .map(t => [t.textContent, t.getBoundingClientRect()])
    .filter(([_, r]) => r.width > 0 && r.height > 0);
  const overlaps = [];
  for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
    const [a, p] = texts[i], [b, q] = texts[j];
    const w = Math.min(p.right, q.right) - Math.max(p.left, q.left);
    const h = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
    if (w > 0.5 && h > 0.5) overlaps.push([a, b]);
  }
  const box = svg.getBoundingClientRect();
  const areas = [...svg.querySelectorAll('[id^="plot-area-"]')]
    .map(a => { const r = a.getBoundingClientRect(); return [r.width, r.height]; });
  plots.push({id: svg.id, width: box.width, texts: texts.length, overlaps: overlaps,
              smallest: Math.min(...texts.map(([_, r]) => r.height)), areas: areas});
}
return plots;
"""


def docs_grid() -> tuple[Configuration, ...]:
    """The GRID.json example of docs/pipeline.md, as the docs show it."""
    text = (ROOT / "docs" / "pipeline.md").read_text()
    block = next(b for b in re.findall(r"```json\n(.*?)```", text, re.DOTALL) if '"assignors"' in b)
    return grid_from_json(json.loads(block))


GRID = docs_grid()
TWINNED = 24
"""Configurations of GRID with a rack strategy other than none: those set against a twin."""


@pytest.fixture(scope="module")
def pages(spark, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Both outputs under the docs' grid and their reports (about 40 s on two busy cores)."""
    work = tmp_path_factory.mktemp("grid36")
    journal = Journal(work / "journal")
    for i in range(2):
        journal.record(to_request(random_group(SPEC, seed=21, index=i)))
    journal.close()
    with (work / "journal" / "requests-1-000009.jsonl").open("w") as extra:
        extra.write("\n".join(BAD_LINES) + "\n")
    replay(spark, str(work / "journal"), str(work / "replayed"), GRID)
    simulate(
        spark, str(work / "sim"), groups=2, seed=4, spec=SPEC, grid=GRID, events=EVENTS, rounds=5
    )
    return {
        "replay": build_report(work / "replayed", work / "replay-report"),
        "sim": build_report(work / "sim", work / "sim-report"),
        "replay_rows": work / "replayed",
        "sim_rows": work / "sim",
    }


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    with chromium() as driver:
        yield driver


def measure_plots(driver: webdriver.Chrome, selector: str = "svg.plot") -> list[dict[str, Any]]:
    plots: list[dict[str, Any]] = driver.execute_script(_MEASURE, selector)
    return plots


def _table(driver: webdriver.Chrome, key: str) -> list[list[str]]:
    """The body rows of ``#table-<key>``, header cells (the index) and data cells alike."""
    rows: list[list[str]] = driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])]"
        ".map(r => [...r.querySelectorAll('th, td')].map(c => c.textContent))",
        f"#table-{key} tbody tr",
    )
    return rows


def _check_layout(
    driver: webdriver.Chrome,
    page: Path,
    expected_plots: set[str],
    *,
    configs: int = len(GRID),
    twinned: int = TWINNED,
) -> None:
    open_page(driver, page)
    assert horizontal_overflow(driver) == 0
    plots = measure_plots(driver)
    assert {p["id"] for p in plots} == expected_plots
    for plot in plots:
        assert plot["overlaps"] == [], plot["id"]
        assert plot["texts"] >= configs, plot["id"]  # every configuration is labelled
        assert plot["width"] >= 0.8 * WINDOW[0], plot["id"]
        assert plot["smallest"] >= 12, plot["id"]  # CSS pixels: no text below about 10 px
        rows = twinned if plot["id"] == "plot-against-none" else configs
        for width, height in plot["areas"]:  # at least 20 px per configuration, 150 px in all
            assert width >= 250 and height >= max(150, 20 * rows), plot["id"]
    tables = driver.execute_script(
        "return [...document.querySelectorAll('div.table')]"
        ".map(d => [d.firstElementChild.id, d.scrollWidth - d.clientWidth])"
    )
    assert tables and all(extra == 0 for _, extra in tables), tables


def test_the_docs_grid_has_36_configurations() -> None:
    assert len(GRID) == 36


def test_the_simulation_report_fits_the_window_with_readable_plots(pages, browser) -> None:
    plots = {"plot-" + k for k in ("cost", "against-none", "movement", "events")}
    _check_layout(browser, pages["sim"], plots | {"plot-convergence", "plot-trajectory"})


def test_the_sample_report_in_the_docs_fits_too(browser) -> None:
    """The committed page (docs/sample-report, four configurations): no Spark needed."""
    plots = {"plot-" + k for k in ("cost", "against-none", "movement", "events")}
    _check_layout(
        browser,
        ROOT / "docs" / "sample-report" / "index.html",
        plots | {"plot-convergence", "plot-trajectory"},
        configs=4,
        twinned=2,  # ha/min_traffic and ha/balance_subtopology against ha/none
    )


def test_the_replay_report_fits_and_lists_its_error_rows(pages, browser) -> None:
    _check_layout(browser, pages["replay"], {"plot-cost", "plot-against-none", "plot-movement"})
    rows = pd.read_parquet(pages["replay_rows"])
    failed = rows[rows["error"] != ""]
    assert len(failed) == len(BAD_LINES) * len(GRID)
    expected = sorted(
        {(str(r.request_index), r.group_id, r.error, "all 36") for r in failed.itertuples()}
    )
    assert sorted(tuple(row) for row in _table(browser, "errors")) == expected
    summary = browser.execute_script("return document.getElementById('summary').textContent")
    assert f"{len(rows)} rows, 36 configurations, {len(failed)} with an error" in summary


def _expected_events(rows: pd.DataFrame) -> dict[tuple[str, str], list[float]]:
    """The breakdown by event, by hand: per group phase, then per event kind and configuration:
    phases, mean active/standby moved and warm-ups, % converged, mean rebalances of those that
    converged (NaN: none did), mean cross-rack partitions at the phase's end."""
    phases: dict[tuple[str, str, int], list[Any]] = defaultdict(list)
    for r in rows.sort_values("round").itertuples():
        phases[(r.config, r.group_id, r.phase)].append(r)
    by_kind: dict[tuple[str, str], list[list[Any]]] = defaultdict(list)
    for rounds in phases.values():
        by_kind[(rounds[0].event.split(":")[0], rounds[0].config)].append(rounds)
    expected = {}
    for key, units in by_kind.items():
        done = [u[0].rebalances_to_converge for u in units if u[0].converged]
        moves = ("active_moved", "standby_moved", "warmups")
        expected[key] = [
            len(units),
            *(mean(sum(getattr(r, m) for r in u) for u in units) for m in moves),
            100 * mean(u[0].converged for u in units),
            mean(done) if done else math.nan,
            mean(u[-1].cross_rack_partitions for u in units),
        ]
    return expected


def _shown(value: float, digits: int) -> str:
    return "–" if math.isnan(value) else f"{value:.{digits}f}"


def test_the_event_breakdown_says_what_the_rows_say(pages, browser) -> None:
    rows = pd.read_parquet(pages["sim_rows"])
    assert (rows["error"] == "").all()
    expected = _expected_events(rows)
    open_page(browser, pages["sim"])
    table = {(row[0], row[1]): row[2:] for row in _table(browser, "events")}
    assert {kind for kind, _ in table} == {"initial", "join", "leave", "rack_fail", "rack_return"}
    assert table == {
        key: [str(v[0]), *(_shown(x, 2) for x in v[1:])] for key, v in expected.items()
    }
    # the heatmaps write the means of active moved and of rebalances in their cells
    texts = browser.execute_script(
        "return [...document.querySelectorAll('#plot-events text')].map(t => t.textContent)"
    )
    cells = sorted(t for t in texts if re.fullmatch(r"\d+\.\d", t))
    means = [v[1] for v in expected.values()] + [v[5] for v in expected.values()]
    assert cells == sorted(_shown(x, 1) for x in means if not math.isnan(x))


def test_each_configuration_is_set_against_its_none_twin(pages, browser) -> None:
    open_page(browser, pages["sim"])
    table = {row[0]: row[1] for row in _table(browser, "against-none")}
    names = {c.name for c in GRID}
    assert len(table) == TWINNED and set(table) == {n for n in names if "/none/" not in n}
    for name, twin in table.items():
        assert twin == name.replace("/min_traffic/", "/none/").replace(
            "/balance_subtopology/", "/none/"
        )


def test_the_overlap_measure_sees_overlapping_labels(browser, tmp_path: Path) -> None:
    """The check above can fail: two labels drawn over each other are found."""
    page = tmp_path / "p.html"
    page.write_text(
        "<!doctype html><svg class='plot' id='plot-x' width='400' height='100'>"
        "<text x='10' y='50' font-size='14'>ha/min_traffic/10:1/sb0</text>"
        "<text x='60' y='55' font-size='14'>ha/min_traffic/10:1/sb1</text>"
        "<text x='10' y='90' font-size='14'>apart</text></svg>"
    )
    open_page(browser, page)
    (plot,) = measure_plots(browser)
    assert plot["overlaps"] == [["ha/min_traffic/10:1/sb0", "ha/min_traffic/10:1/sb1"]]
