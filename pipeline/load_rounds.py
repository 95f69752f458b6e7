"""The rounds of a load simulation, whatever the group: count against load balancing, per round.

Why: issue 25's question for an operator is what balancing load buys (a lower peak: the busiest
member's load per unit of capacity over the mean) and what it costs (items moved as loads
drift), for consumer groups (``load_rows``) and Kafka Streams groups (``streams_load_rows``)
alike. Each kind says how one round rebalances (a ``Step``); this module runs every round under
each balance, measures it and makes the rows, once for both kinds. Pure: no Spark, errors
become rows.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kassign.assignor.load.bound import FloatArray, IntArray, lower_bound, member_loads
from kassign.assignor.load.figures import Balance

__all__ = [
    "LOAD_COLUMNS",
    "MAX_CALLS",
    "RoundMeasures",
    "Simulated",
    "Step",
    "balance_rows",
    "error_text",
    "round_measures",
    "simulated_rows",
]

MAX_CALLS = 8
"""Rebalances in one round at most: the first and its follow-ups."""
LOAD_COLUMNS = (
    "group_id",
    "group_index",
    "seed",
    "kind",
    "config",
    "assignor",
    "round",
    "members",
    "partitions",
    "max_load",
    "mean_load",
    "max_over_mean",
    "bound",
    "peak_over_bound",
    "moved",
    "rebalances",
    "assign_cpu_seconds",
    "error",
)
BALANCES: Sequence[Balance] = (Balance.COUNT, Balance.LOAD)
"""Kafka's answer first, then its load-aware mode: the report's order."""

Step = Callable[[FloatArray], tuple[IntArray, int, int]]
"""One round's rebalance and its follow-ups on the round's loads: each item's member index
after it (-1: withheld, nowhere), the items moved, the calls made."""


@dataclass(frozen=True, slots=True)
class Simulated:
    """A group as the rounds see it: each member's capacity, each item's load per round, and
    ``start``, which begins a fresh run under a balance from the group's first state."""

    group_id: str
    capacities: FloatArray
    loads: tuple[FloatArray, ...]
    start: Callable[[Balance], Step]


@dataclass(frozen=True, slots=True)
class RoundMeasures:
    """One round's figures, loads per unit of capacity: the busiest member's (``max_load``),
    total over total capacity (``mean_load``), the bound no assignment beats, and the moves."""

    max_load: float
    mean_load: float
    bound: float
    moved: int
    rebalances: int

    def row(self) -> dict[str, Any]:
        return {
            "max_load": self.max_load,
            "mean_load": self.mean_load,
            "max_over_mean": self.max_load / self.mean_load if self.mean_load else 0.0,
            "bound": self.bound,
            "peak_over_bound": self.max_load / self.bound if self.bound else 0.0,
            "moved": self.moved,
            "rebalances": self.rebalances,
        }


def round_measures(
    loads: FloatArray, capacities: FloatArray, owners: IntArray, *, moved: int, rebalances: int
) -> RoundMeasures:
    """The figures of ``owners`` (a member index per item; -1, withheld, counts nowhere)."""
    placed = owners >= 0
    per_member = member_loads(loads[placed], owners[placed], len(capacities)) / capacities
    return RoundMeasures(
        max_load=float(per_member.max()) if len(per_member) else 0.0,
        mean_load=float(loads.sum() / capacities.sum()) if len(capacities) else 0.0,
        bound=lower_bound(loads, capacities),
        moved=moved,
        rebalances=rebalances,
    )


def error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:500]


def balance_rows(group: Simulated, balance: Balance) -> list[dict[str, Any]]:
    """Every round of ``group`` under one balance; a failure ends it with an error row."""
    step = group.start(balance)
    rows: list[dict[str, Any]] = []
    for number, loads in enumerate(group.loads, start=1):
        started = time.process_time()
        try:
            owners, moved, calls = step(loads)
        except Exception as exc:  # noqa: BLE001 - a failed assignment is an error row
            rows.append({"config": balance.value, "round": number, "error": error_text(exc)})
            break
        measures = round_measures(loads, group.capacities, owners, moved=moved, rebalances=calls)
        seconds = time.process_time() - started
        rows.append(
            {
                "config": balance.value,
                "round": number,
                **measures.row(),
                "assign_cpu_seconds": seconds,
                "error": "",
            }
        )
    return rows


_EMPTY = {**RoundMeasures(0.0, 0.0, 0.0, 0, 0).row(), "assign_cpu_seconds": 0.0}


def simulated_rows(
    head: dict[str, Any], group_id: str, make: Callable[[], Simulated]
) -> list[dict[str, Any]]:
    """Every round of the group ``make`` builds, under count then load balancing
    (``LOAD_COLUMNS``, ``head``'s among them); a group it cannot build (``ValueError``, e.g.
    the spec's ranges) is an error row per balance."""
    try:
        group = make()
    except ValueError as exc:
        failed = {"group_id": group_id, "members": 0, "partitions": 0}
        return [
            _ordered({**head, **failed, **_EMPTY, "config": b.value, "round": 1, "error": str(exc)})
            for b in BALANCES
        ]
    head = {
        **head,
        "group_id": group.group_id,
        "members": len(group.capacities),
        "partitions": len(group.loads[0]),
    }
    return [
        _ordered({**head, **_EMPTY, **row})
        for balance in BALANCES
        for row in balance_rows(group, balance)
    ]


def _ordered(row: dict[str, Any]) -> dict[str, Any]:
    return {c: row[c] for c in LOAD_COLUMNS}
