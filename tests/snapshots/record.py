"""Answers to the snapshot corpus through the real servicer entry point, and their digests.

``python -m tests.snapshots.record --update`` rewrites ``digests.txt`` (do it only when a change of
the answers is meant, and say why in the commit); without ``--update`` it prints the differences.

The digests were taken before the re-layout (issue 12). One change of the wire was meant since:
the report's rack status became a value, ``rack_status`` (field 16) and ``rack_reason`` (17), with
the string ``rack_optimisation`` (9) kept, deprecated and unchanged. Those two fields are cleared
before hashing (``ADDED_FIELDS``); ``test_snapshots`` checks that they say what the string says.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import NoReturn

import grpc
from kassign.server.streams.response_wire import WireResponse
from kassign.server.streams.servicer import TaskAssignmentServicer
from kassign.v1 import assignment_pb2 as pb

from tests.snapshots.corpus import cases

__all__ = ["ADDED_FIELDS", "DIGESTS", "answer", "digests", "read_digests", "respond"]

DIGESTS = Path(__file__).resolve().parent / "digests.txt"
CORPUS = "__corpus__"
"""The digest of every request's bytes: the corpus itself must not drift unnoticed."""
_VARYING = ("assign_seconds", "total_seconds")
"""Report fields that differ between two runs of one request (wall time), zeroed before hashing."""
ADDED_FIELDS = ("rack_status", "rack_reason")
"""Report fields added after the digests were taken, cleared before hashing (see above)."""


class _Aborted(Exception):
    pass


class _Context:
    """The slice of ``grpc.ServicerContext`` the servicer uses: trailing metadata, abort, and a
    call with no deadline whose caller waits (snapshots are answers without a deadline)."""

    def time_remaining(self) -> None:
        return None

    def is_active(self) -> bool:
        return True

    def set_trailing_metadata(self, metadata: object) -> None:
        self.metadata = metadata

    def abort(self, code: grpc.StatusCode, details: str) -> NoReturn:
        raise _Aborted(f"{code.name}: {details}")


def respond(request: pb.AssignRequest) -> WireResponse | str:
    """The response through the servicer's ``Assign`` (what it sends), or "error CODE: message"
    if it aborted."""
    try:
        return TaskAssignmentServicer().Assign(request, _Context())  # type: ignore[arg-type]
    except _Aborted as exc:
        return f"error {exc}"


def answer(request: pb.AssignRequest) -> bytes:
    """The response's deterministic bytes (timings zeroed, added fields cleared), or the error."""
    response = respond(request)
    if isinstance(response, str):
        return response.encode()
    for name in (*_VARYING, *ADDED_FIELDS):
        response.head.report.ClearField(name)  # type: ignore[arg-type]
    return response.SerializeToString(deterministic=True)


def digests() -> dict[str, str]:
    """Name to SHA-256 of the answer, plus the corpus digest."""
    out: dict[str, str] = {}
    corpus = hashlib.sha256()
    for name, request in cases():
        corpus.update(name.encode() + request.SerializeToString(deterministic=True))
        out[name] = hashlib.sha256(answer(request)).hexdigest()
    out[CORPUS] = corpus.hexdigest()
    return out


def read_digests() -> dict[str, str]:
    lines = DIGESTS.read_text(encoding="utf-8").splitlines()
    return dict(line.split(" ", 1)[::-1] for line in lines if line)  # type: ignore[misc]


def main(argv: list[str]) -> int:
    now = digests()
    if "--update" in argv:
        DIGESTS.write_text("".join(f"{d} {n}\n" for n, d in now.items()), encoding="utf-8")
        print(f"wrote {len(now) - 1} cases to {DIGESTS}")
        return 0
    old = read_digests()
    changed = sorted(n for n in now.keys() | old.keys() if now.get(n) != old.get(n))
    for name in changed:
        print(f"differs: {name}")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
