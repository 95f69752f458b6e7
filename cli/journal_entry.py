"""One ``AssignRequest`` from a request file or from the request journal (``serve --journal``).

Why here: ``kassign explain`` tells the story of one rebalance, and the rebalance an operator asks
about is usually in the journal, not in a file of its own. The spec is a path, optionally followed
by ``#N`` to pick the N-th request (1-based; negative counts from the end, ``#-1`` the last):

- ``request.json`` or ``-``: one request in protobuf JSON (as ``kassign call`` reads);
- ``requests-<pid>-<seq>.jsonl#N``: a journal file, one request per line;
- ``DIR#N``: a journal folder, every worker's ``*.jsonl`` files, earlier runs' too.

Requests are numbered in the order of the calls' recorded time (``now_ms``, which the journal
fills in when the client left it to the server's clock), then file name, then line: a total
order, so ``#-1`` is the latest call whichever worker took it and however its files are named.
``group`` keeps only that group's requests, and a ``Window`` only those recorded in it, before
``#N`` picks one. Consumer requests carry no time: they stay in file-name and line order.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from kassign.cli.messages import parse_json
from kassign.cli.time_window import Window, window_text
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

__all__ = ["Entry", "EntryError", "read_entry"]

_INDEXED = re.compile(r"^(?P<path>.+)#(?P<index>-?\d+)$")
_M = TypeVar("_M", pb.AssignRequest, cpb.ConsumerAssignRequest)


class EntryError(ValueError):
    """The spec names no single request: missing entry, index out of range, several requests."""


@dataclass(frozen=True, slots=True)
class Entry(Generic[_M]):
    """The request picked, where it was, when it was recorded, and which of how many it is."""

    where: str
    request: _M
    time_ms: int  # the call's recorded time; 0: none recorded
    position: int  # 1-based, in time order among the requests the group and window kept
    count: int
    journal: bool  # read from JSON Lines (a journal's file or folder), not one request's file


@dataclass(frozen=True, slots=True)
class _Line:
    where: str
    order: tuple[str, int]  # (file name, line; 0: a one-request file): the tie-break after time
    text: str


def _split(spec: str) -> tuple[str, int | None]:
    """``path#N`` into its parts, unless the whole spec is a path that exists."""
    found = _INDEXED.match(spec)
    if found is None or Path(spec).exists():
        return spec, None
    return found["path"], int(found["index"])


def _folder(path: Path) -> list[_Line]:
    """Every non-empty line of a journal folder's files, with where it came from."""
    files = sorted(f for f in path.glob("*.jsonl") if f.is_file())
    if not files:
        raise EntryError(f"{path}: no *.jsonl files in this folder")
    return [
        _Line(f"{f.name}:{n}", (f.name, n), line)
        for f in files
        for n, line in _lines_of(f.read_text(encoding="utf-8"))
    ]


def _lines(source: str) -> list[_Line]:
    """The requests a path holds."""
    if source == "-":
        text = sys.stdin.read()
    else:
        path = Path(source)
        if not path.exists():
            raise FileNotFoundError(f"{source}: no such file or folder")
        if path.is_dir():
            return _folder(path)
        text = path.read_text(encoding="utf-8")
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return [_Line(f"{source}:{n}", (source, n), line) for n, line in _lines_of(text)]
    return [_Line(source, (source, 0), text)]


def _lines_of(text: str) -> list[tuple[int, str]]:
    return [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]


def _time_of(request: pb.AssignRequest | cpb.ConsumerAssignRequest) -> int:
    return request.now_ms if isinstance(request, pb.AssignRequest) else 0


def _kept(spec: str, group: str | None, window: Window) -> str:
    said = [f" of group {group!r}"] if group else []
    if window:
        said.append(f" recorded in {window_text(window)}")
    return f"{spec}: no request" + "".join(said)


def read_entry(
    spec: str,
    empty: Callable[[], _M],
    *,
    group: str | None = None,
    window: Window = Window(),  # noqa: B008 - frozen, so one shared default is safe
) -> Entry[_M]:
    """The request ``spec`` names, parsed into ``empty()`` (``pb.AssignRequest``, or
    ``cpb.ConsumerAssignRequest`` from a journal's ``consumer`` folder), with where it was."""
    source, index = _split(spec)
    if window and empty().DESCRIPTOR.name != "AssignRequest":
        raise EntryError(
            "a time window reads Streams requests only: consumer requests carry no time"
        )
    parsed = [(line, parse_json(line.text, empty())) for line in _lines(source)]
    entries = sorted(
        ((_time_of(r), line.order, line.where, r) for line, r in parsed), key=lambda e: e[:2]
    )
    if group is not None:
        entries = [e for e in entries if e[3].group_id == group]
    if window:
        entries = [e for e in entries if window.holds(e[0])]
    if not entries:
        raise EntryError(_kept(spec, group, window))
    count = len(entries)
    if index is None:
        if count > 1:
            raise EntryError(
                f"{spec}: {count} requests; pick one with {source}#N (1..{count},"
                " or -1 for the last)"
            )
        index = 1
    if not (1 <= index <= count or -count <= index <= -1):
        raise EntryError(f"{spec}: no request #{index}; there are {count} (1..{count})")
    position = index if index > 0 else count + 1 + index
    time_ms, (_, line), where, request = entries[position - 1]
    return Entry(where, request, time_ms, position, count, journal=line > 0)
