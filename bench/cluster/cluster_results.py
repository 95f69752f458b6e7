"""What the cluster benchmark measured, read from the clients' own logs, and its table and plot.

Every figure comes from the JVMs, never from kassign's report: each Streams instance and each
consumer prints a ``BENCH {json}`` line a second (``tests/e2e/app``'s ``BenchProbe`` and
``ConsumerE2e``): the bytes its consumers received from each broker (Kafka's
``consumer-node-metrics incoming-byte-total``, on the connections to brokers as such: not the
coordinator's), and for Streams the changelog records restored
(a ``StateRestoreListener``), the changelog partitions restoring and the input's records-lag.
A byte is cross-rack when the broker that sent it is in another rack than the client's
``client.rack``. Pure functions: ``tests/ops/test_bench_cluster.py`` runs them on a recorded
sample. No import from the rest of bench/cluster, so a test can load this file alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

BROKER_RACKS = {1: "rack-a", 2: "rack-b", 3: "rack-c"}  # node.id -> broker.rack
_MAX_INT = 2**31 - 1  # a coordinator connection's node id is MAX_INT - broker id
BENCH_LINE = re.compile(r"^BENCH (\{.*\})\s*$", re.MULTILINE)
STATE_LINE = re.compile(r"^E2E state (\w+)->(\w+) at (\d+)$", re.MULTILINE)
JOINED = re.compile(r"Successfully joined group with generation Generation\{generationId=(\d+)")
OWNED_LINE = re.compile(
    r"^E2E owned member=\S* gen=(-?\d+) partitions=(\S*) at (\d+)$", re.MULTILINE
)


def broker_of(node: str) -> int | None:
    """Kafka's ``node-id`` tag: ``node-2`` is broker 2's connection, which carries the fetches
    (and metadata); None for the group coordinator's (``node-2147483645``: heartbeats, joins,
    commits) and a bootstrap address's (``node--2``: the first metadata), which carry none."""
    number = int(node.removeprefix("node-"))
    return number if 0 < number <= _MAX_INT // 2 else None


@dataclass(frozen=True, slots=True)
class Probe:
    """One ``BENCH`` line: cumulative figures of one process at ``at_ms``."""

    at_ms: int
    state: str
    main: Mapping[int, int]  # broker -> bytes its (main) consumer received
    restore: Mapping[int, int]  # broker -> bytes the restore consumer received (Streams)
    restored: int
    restoring: int
    lag: int


def _by_broker(nodes: Mapping[str, int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for node, n in nodes.items():
        broker = broker_of(node)
        if broker is not None:
            out[broker] = out.get(broker, 0) + int(n)
    return out


def probes(text: str) -> list[Probe]:
    found = []
    for m in BENCH_LINE.finditer(text):
        d = json.loads(m[1])
        found.append(
            Probe(
                int(d["at"]),
                str(d.get("state", "RUNNING")),
                _by_broker(d.get("main", {})),
                _by_broker(d.get("restore", {})),
                int(d.get("restored", 0)),
                int(d.get("restoring", 0)),
                int(d.get("lag", 0)),
            )
        )
    return found


@dataclass(frozen=True, slots=True)
class ProcessRun:
    """One JVM's life: its rack and its log's text."""

    rack: str
    text: str

    def last(self) -> Probe | None:
        found = probes(self.text)
        return found[-1] if found else None

    def generations(self) -> set[int]:
        """The group generations this client joined (Kafka's consumer logs each at INFO): over
        every client of a group, their number is the group's rebalances."""
        return {int(m[1]) for m in JOINED.finditer(self.text)}


@dataclass(frozen=True, slots=True)
class Traffic:
    """Bytes received, split by whether the sending broker shares the client's rack."""

    local: int = 0
    cross: int = 0

    def __add__(self, other: Traffic) -> Traffic:
        return Traffic(self.local + other.local, self.cross + other.cross)

    @property
    def cross_share(self) -> float:
        total = self.local + self.cross
        return self.cross / total if total else 0.0


def traffic(by_broker: Mapping[int, int], rack: str) -> Traffic:
    local = sum(n for b, n in by_broker.items() if BROKER_RACKS.get(b) == rack)
    return Traffic(local, sum(by_broker.values()) - local)


def _peaks(readings: Iterable[Mapping[int, int]]) -> dict[int, int]:
    out: dict[int, int] = {}
    for reading in readings:
        for broker, n in reading.items():
            out[broker] = max(out.get(broker, 0), n)
    return out


def totals(runs: Iterable[ProcessRun]) -> tuple[Traffic, Traffic, int]:
    """(main consumers' traffic, restore consumers' traffic, records restored) over every
    process, each counter at its highest: they only grow while a consumer lives, and a closing
    client's last lines have lost its consumers' metrics (a killed JVM loses its last second)."""
    main, restore, restored = Traffic(), Traffic(), 0
    for run in runs:
        found = probes(run.text)
        if found:
            main += traffic(_peaks(p.main for p in found), run.rack)
            restore += traffic(_peaks(p.restore for p in found), run.rack)
            restored += max(p.restored for p in found)
    return main, restore, restored


def streams_settled(lasts: Sequence[Probe | None], since_ms: int, max_lag: int) -> bool:
    """Every live instance has reported since ``since_ms``: RUNNING, nothing restoring, and its
    input lag at most ``max_lag`` records."""
    return all(
        p is not None
        and p.at_ms >= since_ms
        and p.state == "RUNNING"
        and p.restoring == 0
        and p.lag <= max_lag
        for p in lasts
    )


def owned_now(text: str) -> tuple[int, frozenset[str], int] | None:
    """A consumer's last ``owned`` line: (generation, partitions, at ms)."""
    found = list(OWNED_LINE.finditer(text))
    if not found:
        return None
    m = found[-1]
    return int(m[1]), frozenset(p for p in m[2].split(",") if p), int(m[3])


def consumers_settled(texts: Sequence[str], partitions: int, quiet_ms: int, now_ms: int) -> bool:
    """Every live member was given partitions in the same, latest generation; together they own
    every partition once; no member's assignment changed for ``quiet_ms``."""
    owned = [owned_now(t) for t in texts]
    if not owned or any(o is None for o in owned):
        return False
    gens = {o[0] for o in owned if o is not None}
    parts = [p for o in owned if o is not None for p in o[1]]
    latest = max(o[2] for o in owned if o is not None)
    return (
        len(gens) == 1
        and len(parts) == len(set(parts)) == partitions
        and now_ms - latest >= quiet_ms
    )


def exactly_once(counts: Mapping[str, int], produced: int) -> dict[str, int]:
    """The output's count per key against ids r0..r(produced-1), each produced once."""
    expected = {f"r{i}" for i in range(produced)}
    return {
        "produced": produced,
        "missing": len(expected - counts.keys()),
        "duplicated": sum(1 for k, v in counts.items() if k in expected and v > 1),
        "unexpected": len(counts.keys() - expected),
    }


def consumed_once(values: Iterable[str], produced: int) -> dict[str, int]:
    """A plain consumer group's processed ids (with repeats) against r0..r(produced-1)."""
    seen: dict[str, int] = {}
    for v in values:
        seen[v] = seen.get(v, 0) + 1
    return exactly_once(seen, produced)


# ------------------------------------------------------------------------------- the table


COLUMNS = (
    ("scenario", "scenario", "{}"),
    ("assignor", "assignor", "{}"),
    ("cross-rack MB", "cross_mb", "{:.2f}"),
    ("cross %", "cross_pct", "{:.1f}"),
    ("restore MB", "restore_mb", "{:.2f}"),
    ("restore cross MB", "restore_cross_mb", "{:.2f}"),
    ("records restored", "restored", "{}"),
    ("settle s", "settle_s", "{:.1f}"),
    ("rebalances", "rebalances", "{}"),
    ("exactly once", "exactly_once", "{}"),
)


def row(
    scenario: str,
    assignor: str,
    runs: Sequence[ProcessRun],
    settle_s: Sequence[float],
    rebalances: int,
    check: Mapping[str, int],
    once_expected: bool = True,
) -> dict[str, object]:
    """One line of the table: the main consumers' traffic is the fetching the assignment decides
    (input records for Streams), the restore consumers' is restoration plus standby upkeep."""
    main, restore, restored = totals(runs)
    ok = check["missing"] == 0 and check["duplicated"] == 0 and check["unexpected"] == 0
    return {
        "scenario": scenario,
        "assignor": assignor,
        "cross_mb": main.cross / 1e6,
        "local_mb": main.local / 1e6,
        "cross_pct": 100 * main.cross_share,
        "restore_mb": (restore.local + restore.cross) / 1e6,
        "restore_cross_mb": restore.cross / 1e6,
        "restored": restored,
        "settle_s": sum(settle_s),
        "settle_each_s": [round(s, 1) for s in settle_s],
        "rebalances": rebalances,
        "exactly_once": "yes"
        if ok
        else ("dup only" if not once_expected and check["missing"] == 0 else "NO"),
        "check": dict(check),
    }


def table(rows: Sequence[Mapping[str, object]]) -> str:
    """The rows as a Markdown table (docs/benchmarks.md takes it as it is)."""
    head = [c[0] for c in COLUMNS]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(" --- " for _ in head) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(fmt.format(r[key]) for _, key, fmt in COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def plot(rows: Sequence[Mapping[str, object]], path: Path) -> None:
    """Cross-rack share and settle time per scenario, a bar per assignor run (matplotlib, Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    scenarios = list(dict.fromkeys(str(r["scenario"]) for r in rows))
    colours = {a: f"C{i}" for i, a in enumerate(dict.fromkeys(str(r["assignor"]) for r in rows))}
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, key, title in (
        (axes[0], "cross_pct", "% of bytes fetched across racks (clients' metrics)"),
        (axes[1], "settle_s", "seconds until settled, summed over the events"),
    ):
        for j, scenario in enumerate(scenarios):
            mine = [r for r in rows if r["scenario"] == scenario]
            width = 0.8 / len(mine)
            for i, r in enumerate(mine):
                x = j + (i - (len(mine) - 1) / 2) * width
                ax.bar(x, float(str(r[key])), width, color=colours[str(r["assignor"])])
        ax.set_xticks(range(len(scenarios)))
        ax.set_xticklabels(scenarios, rotation=15, fontsize=8)
        ax.set_title(title, fontsize=9)
    handles = [Rectangle((0, 0), 1, 1, color=c) for c in colours.values()]
    axes[0].legend(handles, list(colours), fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
