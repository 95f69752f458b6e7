"""bench/cluster/cluster_results.py on lines recorded from a real run (make bench-cluster).

The full benchmark starts a cluster and a dozen JVMs, so it stays out of the suite; what it
computes from the clients' logs (which broker sent which bytes, the racks, the rebalances, the
settle condition, the exactly-once check, the table and the plot) is checked here on a sample,
so the runner's arithmetic cannot silently rot.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ops.serving import load_script

results = load_script("bench/cluster/cluster_results.py")

# recorded from a Streams instance in rack-a (BenchProbe's lines, the app's state lines, and
# the consumer coordinator's join lines, trimmed); its two bootstrap connections are node--2
# and node--3, its coordinator node-2147483645 (broker 2)
INSTANCE = """\
E2E state CREATED->REBALANCING at 1796619020440
2026-12-07 04:49:53.146 [t] INFO ConsumerCoordinator - [Consumer clientId=c, groupId=g] \
Successfully joined group with generation Generation{generationId=3, memberId='m', protocol='stream'}
BENCH {"at":1796619025661,"state":"REBALANCING","main":{"node--2":1536,"node--3":880,\
"node-2147483645":1592},"restore":{},"restored":0,"restoring":0,"lag":0}
E2E state REBALANCING->RUNNING at 1796619026625
2026-12-07 04:49:54.290 [t] INFO ConsumerCoordinator - [Consumer clientId=c, groupId=g] \
Successfully joined group with generation Generation{generationId=4, memberId='m', protocol='stream'}
BENCH {"at":1796619041784,"state":"RUNNING","main":{"node--2":1536,"node--3":880,"node-1":30469,\
"node-2":16982,"node-2147483645":3168,"node-3":1102},"restore":{"node--2":1483,"node--3":880,\
"node-1":63596,"node-2":32504,"node-3":24505},"restored":1831,"restoring":0,"lag":7}
E2E state RUNNING->PENDING_SHUTDOWN at 1796619041851
BENCH {"at":1796619041852,"state":"PENDING_SHUTDOWN","main":{},"restore":{"node-1":63596},"restored":1831,"restoring":0,"lag":0}
"""
# a consumer in rack-b (ConsumerE2e's lines)
CONSUMER = """\
E2E owned member=m1 gen=5 partitions=t-0,t-1 at 1000
2026-12-07 04:49:54.290 [t] INFO ConsumerCoordinator - [Consumer clientId=c, groupId=g] \
Successfully joined group with generation Generation{generationId=5, memberId='m1', protocol='range'}
BENCH {"at":2000,"main":{"node--1":100,"node-1":5000,"node-2":7000,"node-2147483646":40}}
"""


def test_fetch_connections_map_to_brokers_the_coordinator_and_bootstrap_ones_are_left_out() -> None:
    assert [results.broker_of(n) for n in ("node-3", "node--2", "node-2147483645")] == [
        3,
        None,
        None,
    ]


def test_bytes_are_split_by_the_sending_brokers_rack_each_counter_at_its_highest() -> None:
    a = results.ProcessRun("rack-a", INSTANCE)
    b = results.ProcessRun("rack-b", CONSUMER)
    main, restore, restored = results.totals([a, b])
    # rack-a is broker 1 (node-1); rack-b is broker 2 (node-2)
    a_local, a_all = 30469, 30469 + 16982 + 1102
    b_local, b_all = 7000, 5000 + 7000
    assert (main.local, main.cross) == (a_local + b_local, a_all - a_local + b_all - b_local)
    assert (restore.local, restore.cross) == (63596, 32504 + 24505)
    assert restored == 1831
    assert main.cross_share == pytest.approx(main.cross / (main.local + main.cross))
    assert results.Traffic().cross_share == 0.0


def test_rebalances_are_the_generations_joined_and_settling_needs_fresh_running_caught_up() -> None:
    runs = [results.ProcessRun("rack-a", INSTANCE), results.ProcessRun("rack-b", CONSUMER)]
    assert set().union(*(r.generations() for r in runs)) == {3, 4, 5}
    last = results.probes(INSTANCE)[1]
    assert last.lag == 7 and last.state == "RUNNING"
    assert results.streams_settled([last], since_ms=1796619041000, max_lag=10)
    assert not results.streams_settled([last], since_ms=1796619041000, max_lag=5)  # lag
    assert not results.streams_settled([last], since_ms=1796619042000, max_lag=10)  # stale
    assert not results.streams_settled([last, None], since_ms=0, max_lag=10)  # no line yet
    first, _, closing = results.probes(INSTANCE)
    assert not results.streams_settled([first], since_ms=0, max_lag=10)  # REBALANCING
    assert runs[0].last() == closing and not results.streams_settled([closing], 0, 10)


def test_a_consumer_group_settles_once_its_latest_generation_covers_every_partition() -> None:
    other = "E2E owned member=m2 gen=5 partitions=t-2 at 1500\n"
    assert results.consumers_settled([CONSUMER, other], 3, quiet_ms=2000, now_ms=3500)
    assert not results.consumers_settled([CONSUMER, other], 3, quiet_ms=2000, now_ms=3000)
    assert not results.consumers_settled([CONSUMER, other], 4, quiet_ms=2000, now_ms=9000)
    older = other.replace("gen=5", "gen=4")
    assert not results.consumers_settled([CONSUMER, older], 3, quiet_ms=2000, now_ms=9000)
    twice = other.replace("t-2", "t-1")
    assert not results.consumers_settled([CONSUMER, twice], 2, quiet_ms=2000, now_ms=9000)


def test_exactly_once_counts_missing_duplicated_and_unexpected_ids() -> None:
    assert results.exactly_once({"r0": 1, "r1": 1}, 2) == {
        "produced": 2, "missing": 0, "duplicated": 0, "unexpected": 0,
    }  # fmt: skip
    assert results.exactly_once({"r0": 2, "x": 1}, 2) == {
        "produced": 2, "missing": 1, "duplicated": 1, "unexpected": 1,
    }  # fmt: skip
    assert results.consumed_once(["r0", "r1", "r1"], 2)["duplicated"] == 1


def test_the_table_and_the_plot_are_written(tmp_path: Path) -> None:
    runs = [results.ProcessRun("rack-a", INSTANCE)]
    ok = results.exactly_once({"r0": 1}, 1)
    rows = [
        results.row("streams kill", "kafka HA", runs, [4.0, 6.5], 2, ok),
        results.row("streams kill", "kassign", runs, [3.0], 2, results.exactly_once({}, 1)),
        results.row(
            "consumer kill", "range", runs, [1.0], 1, results.consumed_once(["r0"] * 2, 1), False
        ),
    ]
    assert [r["exactly_once"] for r in rows] == ["yes", "NO", "dup only"]
    assert rows[0]["settle_s"] == 10.5 and rows[0]["settle_each_s"] == [4.0, 6.5]
    text = results.table(rows)
    assert text.splitlines()[2].startswith(
        "| streams kill | kafka HA | 0.02 | 37.2 | 0.12 | 0.06 | 1831 | 10.5 | 2 | yes |"
    )
    results.plot(rows, tmp_path / "plot.png")
    assert (tmp_path / "plot.png").read_bytes()[:4] == b"\x89PNG"
