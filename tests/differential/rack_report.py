"""The rack-aware comparison with Kafka, run once and printed as a table of totals.

``compare`` runs Kafka's assignors on every group (one batch shared by two JVMs), kassign through
the servicer's entry point (rack ids kept), and Kafka's ``validateTaskAssignment`` on kassign's
answers (one batch), then measures both answers (``rack_measure``). ``table`` sums them by
assignor and strategy; ``worst`` lists the groups where kassign's cost exceeds Kafka's most.
``test_rack_aware_vs_kafka`` asserts on the same results; this module lets the cost work iterate
without pytest:

    .venv/bin/python -m tests.differential.rack_report               # the test's 300 groups
    .venv/bin/python -m tests.differential.rack_report --groups 60 --worst 15
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kassign.v1 import assignment_pb2 as pb

from tests.differential import kafka_oracle
from tests.differential.compare import Outcome, kafka_outcome, kassign_outcome
from tests.differential.groups import Group
from tests.differential.rack_groups import rack_group
from tests.differential.rack_measure import GroupView, Measures, measure

__all__ = [
    "FIRST_SEED",
    "GROUPS",
    "Result",
    "Timings",
    "compare",
    "main",
    "report",
    "strategy_name",
    "table",
    "worst",
]

GROUPS = 300
FIRST_SEED = 443_000
JOBS = 2  # the machines have two cores


@dataclass(frozen=True, slots=True)
class Result:
    """One group compared: both answers, their measures, Kafka's verdict on kassign's answer."""

    group: Group
    view: GroupView
    ours: Outcome
    kafka: Outcome
    ours_measures: Measures
    kafka_measures: Measures
    validation: str
    kafka_rack_aware: bool
    kafka_millis: int

    @property
    def kind(self) -> tuple[str, str]:
        """(assignor, strategy) as the table groups them."""
        configs = self.group.request.configs
        return configs.assignor, strategy_name(configs.rack_aware_strategy)

    @property
    def cost_compared(self) -> bool:
        """Kafka spread the replicas over tag values no better than kassign did, so kassign may
        not pay more traffic than Kafka."""
        return self.kafka_measures.tag_spread <= self.ours_measures.tag_spread

    @property
    def costs_more(self) -> bool:
        return self.cost_compared and self.ours_measures.cost > self.kafka_measures.cost


@dataclass(frozen=True, slots=True)
class Timings:
    """Wall-clock seconds of each side."""

    kafka: float
    kassign: float
    validation: float


def strategy_name(strategy: int) -> str:
    """``RACK_AWARE_STRATEGY_MIN_TRAFFIC`` -> ``min_traffic``."""
    return pb.RackAwareStrategy.Name(strategy).removeprefix("RACK_AWARE_STRATEGY_").lower()


def compare(
    classpath: str, groups: Sequence[Group], *, jobs: int = JOBS
) -> tuple[list[Result], Timings]:
    """Both sides on every group, Kafka's validation of kassign's answers, the measures."""
    start = time.perf_counter()
    theirs = kafka_oracle.run(classpath, [g.request for g in groups], jobs=jobs)
    kafka_s = time.perf_counter() - start
    start = time.perf_counter()
    ours = [kassign_outcome(g.request) for g in groups]
    kassign_s = time.perf_counter() - start
    start = time.perf_counter()
    checks = kafka_oracle.validate(
        classpath, [(g.request, o.active, o.standby) for g, o in zip(groups, ours, strict=True)]
    )
    validation_s = time.perf_counter() - start
    results = []
    for g, answer, mine, check in zip(groups, theirs, ours, checks, strict=True):
        view = GroupView.of(g.request)
        kafka = kafka_outcome(answer)
        results.append(
            Result(
                group=g,
                view=view,
                ours=mine,
                kafka=kafka,
                ours_measures=measure(view, mine),
                kafka_measures=measure(view, kafka),
                validation=check,
                kafka_rack_aware=answer.rack_aware,
                kafka_millis=answer.millis,
            )
        )
    return results, Timings(kafka_s, kassign_s, validation_s)


_HEADER = (
    "assignor",
    "strategy",
    "groups",
    "cost ours",
    "cost Kafka",
    "ours > Kafka",
    "ours < Kafka",
    "not compared",
    "tag spread ours",
    "tag spread Kafka",
    "thread spread ours",
    "thread spread Kafka",
)


def _row(label: tuple[str, str], rs: Sequence[Result]) -> list[str]:
    ours = [r.ours_measures for r in rs]
    kafka = [r.kafka_measures for r in rs]
    n = max(1, len(rs))
    return [
        *label,
        str(len(rs)),
        str(sum(m.cost for m in ours)),
        str(sum(m.cost for m in kafka)),
        str(sum(r.costs_more for r in rs)),
        str(sum(r.cost_compared and r.ours_measures.cost < r.kafka_measures.cost for r in rs)),
        str(sum(not r.cost_compared for r in rs)),
        str(sum(m.tag_spread for m in ours)),
        str(sum(m.tag_spread for m in kafka)),
        f"{sum(m.thread_spread for m in ours) / n:.2f}",
        f"{sum(m.thread_spread for m in kafka) / n:.2f}",
    ]


def table(results: Sequence[Result], timings: Timings | None = None) -> str:
    """Totals by assignor and strategy, as a Markdown table. Costs: cross-rack partitions
    (``rack_measure``); "ours > Kafka" counts groups where the cost is compared and kassign's is
    higher; "not compared": Kafka spread tags better; thread spreads are means."""
    kinds = sorted({r.kind for r in results})
    rows = [_row(k, [r for r in results if r.kind == k]) for k in kinds]
    rows.append(_row(("all", ""), results))
    lines = ["| " + " | ".join(_HEADER) + " |", "|" + "---|" * len(_HEADER)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    if timings is not None:
        lines.append(
            f"\n{len(results)} groups: Kafka {timings.kafka:.1f} s ({JOBS} JVMs), kassign"
            f" {timings.kassign:.1f} s, Kafka's validation {timings.validation:.1f} s"
        )
    return "\n".join(lines)


def worst(results: Sequence[Result], count: int) -> str:
    """The ``count`` groups where kassign's cost exceeds Kafka's most, one line each."""
    over = sorted(
        (r for r in results if r.costs_more),
        key=lambda r: (r.kafka_measures.cost - r.ours_measures.cost, r.group.seed),
    )
    return "\n".join(f"{_costs(r)}: {r.group.shape}" for r in over[:count])


def _costs(r: Result) -> str:
    ours, kafka = r.ours_measures, r.kafka_measures
    return (
        f"cost {ours.cost} (actives {ours.active_cost} + standbys {ours.standby_cost}) vs Kafka"
        f" {kafka.cost} ({kafka.active_cost} + {kafka.standby_cost}), tag spread"
        f" {ours.tag_spread} vs {kafka.tag_spread}"
    )


def report(groups: Sequence[Group], classpath: str | None = None, *, count: int = 10) -> str:
    """The table and the worst groups; builds the oracle when no ``classpath`` is given."""
    if classpath is None:
        classpath = kafka_oracle.build(Path(tempfile.mkdtemp(prefix="rack-report-")))
    results, timings = compare(classpath, groups)
    return f"{table(results, timings)}\n\nworst {count}:\n{worst(results, count)}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--groups", type=int, default=GROUPS)
    parser.add_argument("--first-seed", type=int, default=FIRST_SEED)
    parser.add_argument("--worst", type=int, default=10)
    args = parser.parse_args(argv)
    groups = [rack_group(args.first_seed + i) for i in range(args.groups)]
    print(report(groups, count=args.worst))


if __name__ == "__main__":
    main()
