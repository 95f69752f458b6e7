"""The Spark jobs end to end on local[2] with small data: replay, simulate, report.

Requests come from the generator and the journal, so the test also shows that replay reads what
``kassign serve --journal`` writes.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from kassign.pipeline.events import Event, EventKind
from kassign.pipeline.generate import GroupSpec, random_group
from kassign.pipeline.grid import grid_from_json
from kassign.pipeline.group import to_request
from kassign.pipeline.replay import read_requests, replay, request_files
from kassign.pipeline.report import build_report
from kassign.pipeline.rows import simulate_rows
from kassign.pipeline.simulate import simulate
from kassign.server.observe.journal import Journal

pytestmark = pytest.mark.slow

SPEC = GroupSpec(
    clients=(3, 5), racks=(3, 3), replication=(1, 2), subtopologies=(1, 2), partitions=(2, 6)
)
GRID = grid_from_json({"rack_aware_strategies": ["none", "min_traffic"]})


def _journal_with_requests(directory: Path, count: int) -> list[str]:
    journal = Journal(directory)
    groups = [random_group(SPEC, seed=11, index=i) for i in range(count)]
    for group in groups:
        journal.record(to_request(group))
    journal.close()
    return [g.group_id for g in groups]


EVENTS = (Event(kind=EventKind.RACK_FAIL, rack=0), Event(kind=EventKind.RACK_RETURN, rack=0))


@pytest.fixture(scope="module")
def replayed(
    spark, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, list[str], dict[str, Any]]:
    """A journal of four requests plus two bad lines, replayed under GRID."""
    work = tmp_path_factory.mktemp("replay")
    groups = _journal_with_requests(work / "journal", 4)
    with (work / "journal" / "requests-1-000001.jsonl").open("w") as extra:
        extra.write("{this is not json\n")
        extra.write('{"groupId": "empty-group"}\n')  # parses, but a group needs members
    summary = replay(spark, str(work / "journal"), str(work / "out"), GRID)
    return work / "out", groups, summary


@pytest.fixture(scope="module")
def simulated(spark, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six groups through a rack failure and its return, under GRID."""
    target = tmp_path_factory.mktemp("simulate") / "out"
    simulate(spark, str(target), groups=6, seed=5, spec=SPEC, grid=GRID, events=EVENTS, rounds=8)
    return target


def test_replay_reads_the_journal_and_turns_bad_requests_into_error_rows(replayed) -> None:
    out, groups, summary = replayed
    rows = pd.read_parquet(out)
    assert len(rows) == 6 * len(GRID) and summary["rows"] == len(rows)
    errors = rows[rows["error"] != ""]
    assert summary["errors"] == len(errors) == 2 * len(GRID)
    assert set(errors["group_id"]) == {"", "empty-group"}
    good = rows[rows["error"] == ""]
    assert sorted(set(good["group_id"])) == sorted(groups)
    assert set(good["config"]) == {c.name for c in GRID}
    assert (good["tasks"] > 0).all() and (good["clients"] >= 3).all()
    optimised = good[good["config"] == "min_traffic"]
    assert (optimised["rack_optimisation"] != "off").all()
    assert (optimised["cost_after"] <= optimised["cost_before"]).all()
    assert (good[good["config"] == "none"]["rack_optimisation"] == "off").all()


def test_replay_reads_parquet_of_serialized_requests_with_their_own_configs(
    spark, tmp_path: Path
) -> None:
    requests = [to_request(random_group(SPEC, seed=12, index=i)) for i in range(3)]
    payloads = [r.SerializeToString() for r in requests] + [b"\x12\x99garbage"]
    pd.DataFrame({"request": payloads}).to_parquet(tmp_path / "in.parquet")
    assert read_requests(spark, str(tmp_path / "in.parquet")).count() == 4
    replay(
        spark,
        str(tmp_path / "in.parquet"),
        str(tmp_path / "out"),
        grid_from_json({"configurations": [{"name": "request"}]}),
    )
    rows = pd.read_parquet(tmp_path / "out").sort_values("group_id")
    assert list(rows["config"].unique()) == ["request"]
    assert (rows["error"] != "").sum() == 1
    good = rows[rows["error"] == ""]
    assert sorted(good["group_id"]) == sorted(r.group_id for r in requests)


def test_simulate_converges_through_a_rack_failure_and_does_not_depend_on_partitioning(
    simulated,
) -> None:
    rows = pd.read_parquet(simulated)
    assert rows["error"].eq("").all()
    assert sorted(rows["group_index"].unique()) == list(range(6))
    phases = rows[rows["round"] == 1].groupby(["group_index", "config"])["event"].apply(list)
    assert len(phases) == 6 * len(GRID)
    assert all(p == ["initial", "rack_fail:0", "rack_return:0"] for p in phases)
    assert rows[rows["round"] == 1]["converged"].mean() > 0.5  # most phases settle within 8 rounds
    # while the rack is down its clients are gone from the assignment
    group = random_group(SPEC, seed=5, index=2)
    failed_phase = rows[(rows["group_index"] == 2) & (rows["phase"] == 1)]
    down = sum(c.rack == group.racks[0] for c in group.clients)
    assert down > 0 and (failed_phase["clients"] == len(group.clients) - down).all()
    # the same group computed alone, outside Spark, gives the same rows (timings aside)
    alone = pd.DataFrame(
        simulate_rows(seed=5, index=2, spec=SPEC, grid=GRID, events=EVENTS, rounds=8)
    )
    spark_rows = (
        rows[rows["group_index"] == 2]
        .sort_values(["config", "phase", "round"])
        .reset_index(drop=True)
    )
    alone = alone.sort_values(["config", "phase", "round"], kind="stable").reset_index(drop=True)
    columns = [c for c in alone.columns if c != "assign_seconds"]
    pd.testing.assert_frame_equal(spark_rows[columns], alone[columns], check_dtype=False)


def test_report_writes_a_page_and_its_plots_for_both_outputs(
    replayed, simulated, tmp_path: Path
) -> None:
    index = build_report(simulated, tmp_path / "report")
    page = index.read_text()
    plots = ("cost", "against-none", "movement", "events", "convergence", "trajectory")
    for key in plots:
        assert page.count(f'id="plot-{key}"') == 1
    assert page.count("<table") == len(plots)  # no error rows: no error table
    replay_page = build_report(replayed[0], tmp_path / "replay-report").read_text()
    assert 'id="plot-convergence"' not in replay_page and 'id="plot-cost"' in replay_page
    assert "2 with an error" not in replay_page and f"{2 * len(GRID)} with an error" in replay_page
    errors = pd.read_parquet(replayed[0]).query("error != ''")["error"].unique()
    assert len(errors) == 2 and all(html.escape(e) in replay_page for e in errors)


def test_a_journal_folder_is_read_as_its_files_in_name_order(tmp_path: Path) -> None:
    """A list of files, not a ``*.jsonl`` glob: Spark logs a stack trace for a glob (issue 17)."""
    for name in ("requests-2-000001.jsonl", "requests-1-000002.jsonl", "notes.txt"):
        (tmp_path / name).write_text("{}\n")
    (tmp_path / "sub.jsonl").mkdir()
    assert request_files(str(tmp_path)) == [
        str(tmp_path / "requests-1-000002.jsonl"),
        str(tmp_path / "requests-2-000001.jsonl"),
    ]
    assert request_files(str(tmp_path / "notes.txt")) == [str(tmp_path / "notes.txt")]
