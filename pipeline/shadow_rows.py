"""Shadow mode's journal lines (issue 26) as rows: one line read, a journal's lines in call order.

Why here, in plain Python: ``kassign shadow-report`` reads a few journals on one machine and the
Spark job (``shadow.py``) reads many; both read a line with ``shadow_row`` and add rows up with
``shadow_sums.py``, so the two give the same numbers by construction. Only the parts a report
needs are parsed into messages (the stamp and the comparison); the requests' members and both
answers stay JSON, which keeps a large journal cheap to read.

A line is shadow mode's when its request carries ``shadow``; without ``comparison`` kassign gave
no answer for it (an error or the deadline): counted, not compared.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import json_format
from kassign.assignor.shadow import Figures  # the service's own, read back from the journal
from kassign.server.observe.journal import CONSUMER_SUBDIR
from kassign.v1 import common_pb2 as common

__all__ = [
    "CONSUMER",
    "COUNTED",
    "FIGURES",
    "STREAMS",
    "Figure",
    "Figures",
    "ShadowLineError",
    "ShadowRow",
    "journal_files",
    "read_rows",
    "shadow_row",
]

STREAMS, CONSUMER = "streams", "consumer"


class ShadowLineError(ValueError):
    """A journal line that is not a request in the JSON mapping; the message names the line."""


@dataclass(frozen=True, slots=True)
class Figure:
    """One of ``ShadowFigures``' fields, as the report shows it."""

    name: str  # the field's name in ShadowFigures
    label: str
    mean: bool  # a mean per rebalance, not a total
    streams_only: bool = False


FIGURES: tuple[Figure, ...] = (
    Figure("cross_rack_partitions", "cross-rack partitions", mean=False),
    Figure("moved", "moved", mean=False),
    Figure("standbys_moved", "standbys moved", mean=False, streams_only=True),
    Figure("max_per_member", "max per member", mean=True),
    Figure("min_per_member", "min per member", mean=True),
    Figure("max_load", "max load", mean=True),
    Figure("standbys_sharing_rack_or_tag", "standbys sharing rack/tag", False, streams_only=True),
)
COUNTED = tuple(f.name for f in FIGURES if f.name != "max_load")
"""The figures summed as integers (``max_load`` is a float, summed apart), in this order."""


@dataclass(frozen=True, slots=True)
class ShadowRow:
    """One shadow-mode rebalance of one group, as its journal line tells it."""

    group: str
    kind: str  # streams | consumer
    time_ms: int  # JournalStamp.received_unix_ms; 0: none recorded
    server_id: str
    sequence: int
    where: str  # file:line
    kafka_assignor: str
    compared: bool  # kassign answered: the comparison below is there
    same: bool
    differing_members: int
    kafka: Figures
    kassign: Figures

    @property
    def order(self) -> tuple[int, str, int, str]:
        """A group's rebalances in the order calls were made, across servers and restarts."""
        return (self.time_ms, self.server_id, self.sequence, self.where)


def _figures(message: common.ShadowFigures) -> Figures:
    return Figures(
        cross_rack_partitions=message.cross_rack_partitions,
        moved=message.moved,
        standbys_moved=message.standbys_moved,
        max_per_member=message.max_per_member,
        min_per_member=message.min_per_member,
        max_load=message.max_load if message.HasField("max_load") else None,
        standbys_sharing_rack_or_tag=message.standbys_sharing_rack_or_tag,
    )


def _parsed(
    value: object, message: common.JournalStamp | common.ShadowComparison, what: str
) -> None:
    if not isinstance(value, dict):
        raise ShadowLineError(f"{what}: a JSON object was expected")
    try:
        json_format.ParseDict(value, message, ignore_unknown_fields=True)  # a newer server's fields
    except json_format.ParseError as exc:
        raise ShadowLineError(f"{what}: {exc}") from None


def shadow_row(text: str, kind: str, where: str) -> ShadowRow | None:
    """The row of one journal line; None when the line is not shadow mode's. Raises
    ``ShadowLineError`` naming ``where`` for a line that is not a request in the JSON mapping."""
    try:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ShadowLineError(f"not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ShadowLineError("not a request: a JSON object was expected")
        shadow = data.get("shadow")
        if shadow is None:
            return None
        if not isinstance(shadow, dict):
            raise ShadowLineError("shadow: a JSON object was expected")
        stamp, comparison = common.JournalStamp(), common.ShadowComparison()
        _parsed(data.get("journal", {}), stamp, "journal")
        _parsed(shadow.get("comparison", {}), comparison, "shadow.comparison")
        group = data.get("groupId", data.get("group_id", ""))
        if not isinstance(group, str):
            raise ShadowLineError("groupId: a string was expected")
    except ShadowLineError as exc:
        raise ShadowLineError(f"{where}: {exc}") from None
    assignor = shadow.get("kafkaAssignor", shadow.get("kafka_assignor", ""))
    return ShadowRow(
        group=stamp.group_key or group,
        kind=kind,
        time_ms=stamp.received_unix_ms,
        server_id=stamp.server_id,
        sequence=stamp.sequence,
        where=where,
        kafka_assignor=comparison.kafka_assignor or str(assignor),
        compared="comparison" in shadow,
        same=comparison.same,
        differing_members=comparison.differing_members,
        kafka=_figures(comparison.kafka),
        kassign=_figures(comparison.kassign),
    )


def journal_files(spec: str) -> list[tuple[str, Path]]:
    """``(kind, file)`` for each JSON Lines file a spec names: a journal folder's ``*.jsonl``
    (Streams) and its ``consumer/*.jsonl``, or one file; a file in, or a folder named,
    ``consumer`` is the consumer room's.
    """
    path = Path(spec)
    if not path.exists():
        raise FileNotFoundError(f"{spec}: no such file or folder")
    if path.is_file():
        return [(CONSUMER if path.parent.name == CONSUMER_SUBDIR else STREAMS, path)]
    kind = CONSUMER if path.name == CONSUMER_SUBDIR else STREAMS
    found = [(kind, f) for f in sorted(path.glob("*.jsonl")) if f.is_file()]
    found += [
        (CONSUMER, f) for f in sorted((path / CONSUMER_SUBDIR).glob("*.jsonl")) if f.is_file()
    ]
    if not found:
        raise FileNotFoundError(f"{spec}: no *.jsonl files here or in {spec}/{CONSUMER_SUBDIR}")
    return found


def _text(raw: bytes, where: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ShadowLineError(f"{where}: not UTF-8 text: {exc.reason}") from None


def read_rows(specs: Iterable[str], keep: Callable[[ShadowRow], bool]) -> list[ShadowRow]:
    """Every shadow line of the journals ``specs`` name that ``keep`` keeps, in call order.

    A live server's journal may end in a line it is still writing: a last line without its
    newline is left for the next read, not called malformed."""
    rows = []
    for spec in specs:
        for kind, path in journal_files(spec):
            with path.open("rb") as lines:
                for n, raw in enumerate(lines, start=1):
                    if raw.strip() and raw.endswith(b"\n"):
                        row = shadow_row(_text(raw, f"{path}:{n}"), kind, f"{path}:{n}")
                        if row is not None and keep(row):
                            rows.append(row)
    return sorted(rows, key=lambda r: (r.group, r.kind, r.order))
