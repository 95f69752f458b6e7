"""A group's shadow rows added up (``Totals``) and told as figures (``GroupSummary``).

Why apart from reading: the local command adds rows one by one (``totals_of``), the Spark job
adds them in a ``groupBy``; both end in ``summarise``, so the summary is computed once. Figures
are totals over a group's compared rebalances, but for the per-member balance and the peak load,
whose sum means nothing: those are means per compared rebalance (the load's over the rebalances
where both answers have one).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from kassign.pipeline.shadow_rows import COUNTED, FIGURES, STREAMS, Figures, ShadowRow

__all__ = ["FigureLine", "GroupSummary", "Totals", "add_row", "summarise", "totals_of"]


@dataclass(frozen=True, slots=True)
class Totals:
    """A group's rows added up: what both the local reader and Spark compute."""

    group: str
    kind: str
    rebalances: int = 0
    compared: int = 0
    changed: int = 0
    differing_members: int = 0
    first_ms: int = 0
    last_ms: int = 0
    assignors: tuple[str, ...] = ()
    kafka: tuple[int, ...] = (0,) * len(COUNTED)  # sums, in COUNTED's order
    kassign: tuple[int, ...] = (0,) * len(COUNTED)
    loads: int = 0  # rebalances where both answers have a max_load
    kafka_load: float = 0.0
    kassign_load: float = 0.0


def _counted(f: Figures) -> tuple[int, ...]:
    return tuple(getattr(f, name) for name in COUNTED)


def add_row(t: Totals, r: ShadowRow) -> Totals:
    """``t`` with ``r`` added (a row without a comparison adds only to ``rebalances``)."""
    t = replace(
        t,
        rebalances=t.rebalances + 1,
        first_ms=min((x for x in (t.first_ms, r.time_ms) if x), default=0),
        last_ms=max(t.last_ms, r.time_ms),
        assignors=tuple(sorted({*t.assignors, r.kafka_assignor} - {""})),
    )
    if not r.compared:
        return t
    kafka_load, kassign_load = r.kafka.max_load, r.kassign.max_load
    loaded = kafka_load is not None and kassign_load is not None
    return replace(
        t,
        compared=t.compared + 1,
        changed=t.changed + (not r.same),
        differing_members=t.differing_members + r.differing_members,
        kafka=tuple(a + b for a, b in zip(t.kafka, _counted(r.kafka), strict=True)),
        kassign=tuple(a + b for a, b in zip(t.kassign, _counted(r.kassign), strict=True)),
        loads=t.loads + loaded,
        kafka_load=t.kafka_load + (kafka_load if loaded and kafka_load else 0.0),
        kassign_load=t.kassign_load + (kassign_load if loaded and kassign_load else 0.0),
    )


def totals_of(rows: Iterable[ShadowRow]) -> list[Totals]:
    """One ``Totals`` per (group, kind), sorted by group then kind."""
    by_group: dict[tuple[str, str], Totals] = {}
    for r in rows:
        key = (r.group, r.kind)
        by_group[key] = add_row(by_group.get(key, Totals(r.group, r.kind)), r)
    return [by_group[k] for k in sorted(by_group)]


@dataclass(frozen=True, slots=True)
class FigureLine:
    """One figure of a group: Kafka's and kassign's, totals or means; None: no value."""

    name: str
    label: str
    how: str  # total | mean
    kafka: float | None
    kassign: float | None

    @property
    def difference(self) -> float | None:
        """kassign's less Kafka's: below 0, kassign's answer had less of it."""
        if self.kafka is None or self.kassign is None:
            return None
        return round(self.kassign - self.kafka, 6)


@dataclass(frozen=True, slots=True)
class GroupSummary:
    """What kassign would have changed in one group over its shadow rebalances."""

    group: str
    kind: str
    assignors: tuple[str, ...]
    rebalances: int
    compared: int
    changed: int
    differing_members: int
    first_ms: int
    last_ms: int
    figures: tuple[FigureLine, ...]


def _mean(total: float, count: int) -> float | None:
    return round(total / count, 6) if count else None


def summarise(t: Totals) -> GroupSummary:
    """The group's figures: totals, and means per compared rebalance for balance and load."""
    lines = []
    for f in FIGURES:
        if f.streams_only and t.kind != STREAMS:
            continue
        if f.name == "max_load":
            kafka, kassign = _mean(t.kafka_load, t.loads), _mean(t.kassign_load, t.loads)
        else:
            i = COUNTED.index(f.name)
            kafka, kassign = t.kafka[i], t.kassign[i]  # totals stay whole numbers
            if f.mean:
                kafka, kassign = _mean(kafka, t.compared), _mean(kassign, t.compared)
        lines.append(FigureLine(f.name, f.label, "mean" if f.mean else "total", kafka, kassign))
    return GroupSummary(
        group=t.group,
        kind=t.kind,
        assignors=t.assignors,
        rebalances=t.rebalances,
        compared=t.compared,
        changed=t.changed,
        differing_members=t.differing_members,
        first_ms=t.first_ms,
        last_ms=t.last_ms,
        figures=tuple(lines),
    )
