"""One ``AssignRequest`` from a request file or from the request journal (``serve --journal``).

Why here: ``kassign explain`` tells the story of one rebalance, and the rebalance an operator asks
about is usually in the journal, not in a file of its own. The spec is a path, optionally followed
by ``#N`` to pick the N-th request (1-based; negative counts from the end, ``#-1`` the last):

- ``request.json`` or ``-``: one request in protobuf JSON (as ``kassign call`` reads);
- ``requests-<pid>-<seq>.jsonl#N``: a journal file, one request per line;
- ``DIR#N``: a journal folder, its ``*.jsonl`` files in name order (as ``kassign replay`` reads).

``group`` keeps only that group's requests before ``#N`` picks one, so ``DIR#-1`` with a group is
that group's latest rebalance in the journal.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from kassign.cli.messages import parse_json
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

__all__ = ["EntryError", "read_entry"]

_INDEXED = re.compile(r"^(?P<path>.+)#(?P<index>-?\d+)$")


class EntryError(ValueError):
    """The spec names no single request: missing entry, index out of range, several requests."""


def _split(spec: str) -> tuple[str, int | None]:
    """``path#N`` into its parts, unless the whole spec is a path that exists."""
    found = _INDEXED.match(spec)
    if found is None or Path(spec).exists():
        return spec, None
    return found["path"], int(found["index"])


def _folder(path: Path) -> list[tuple[str, str]]:
    """Every non-empty line of a journal folder's files, with where it came from."""
    files = sorted(f for f in path.glob("*.jsonl") if f.is_file())
    if not files:
        raise EntryError(f"{path}: no *.jsonl files in this folder")
    return [
        (f"{f.name}:{n}", line)
        for f in files
        for n, line in _lines_of(f.read_text(encoding="utf-8"))
    ]


def _entries(source: str) -> list[tuple[str, str]]:
    """The requests a path holds, as (where, JSON text)."""
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
        return [(f"{source}:{where}", line) for where, line in _lines_of(text)]
    return [(source, text)]


def _lines_of(text: str) -> list[tuple[int, str]]:
    return [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]


_M = TypeVar("_M", pb.AssignRequest, cpb.ConsumerAssignRequest)


def read_entry(spec: str, empty: Callable[[], _M], *, group: str | None = None) -> tuple[str, _M]:
    """The request ``spec`` names, parsed into ``empty()`` (``pb.AssignRequest``, or
    ``cpb.ConsumerAssignRequest`` from a journal's ``consumer`` folder), and where it was found."""
    source, index = _split(spec)
    entries = [(where, parse_json(text, empty())) for where, text in _entries(source)]
    if group is not None:
        entries = [(w, r) for w, r in entries if r.group_id == group]
    if not entries:
        raise EntryError(f"{spec}: no request" + (f" of group {group!r}" if group else ""))
    if index is None:
        if len(entries) > 1:
            raise EntryError(
                f"{spec}: {len(entries)} requests; pick one with {source}#N (1..{len(entries)},"
                " or -1 for the last)"
            )
        return entries[0]
    if not (1 <= index <= len(entries) or -len(entries) <= index <= -1):
        raise EntryError(
            f"{spec}: no request #{index}; there are {len(entries)} (1..{len(entries)})"
        )
    return entries[index - 1 if index > 0 else index]
