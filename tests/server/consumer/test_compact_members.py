"""The compiled framing of the compact answer's members (``kassign_native.compact_members``)
refuses columns that do not fit the members, rather than writing bytes past them; the bytes
it writes are checked against protobuf's in ``test_compact.py``."""

from __future__ import annotations

import kassign_native
import numpy as np
import pytest


def _bounds(*rows: tuple[int, ...]) -> bytes:
    return np.array(rows, dtype=np.int64).tobytes()


_ONE = (b"\x00", b"\x02", b"\x00\x01", _bounds((0, 1, 0, 1, 0, 2)))


def test_one_member_is_framed() -> None:
    wire = kassign_native.compact_members(["m"], _ONE, None, None)
    runs = b"\x0a\x01\x00\x12\x01\x02\x1a\x02\x00\x01"
    assert (
        wire == b"\x0a" + bytes([3 + 2 + len(runs)]) + b"\x0a\x01m\x2a" + bytes([len(runs)]) + runs
    )


@pytest.mark.parametrize(
    ("ids", "assigned", "assignments", "reason"),
    [
        (["m", "n"], _ONE, None, "assigned: not one per member"),
        (["m"], _ONE, [b"", b""], "assignments: not one per member"),
        (["m"], (*_ONE[:3], _bounds((0, 1, 0, 1, 0, 3))), None, "outside the bytes"),
        (["m"], (*_ONE[:3], _bounds((0, 1, 0, 1, 2, 0))), None, "outside the bytes"),
        (["m"], (*_ONE[:3], _bounds((0, 1, 0, 1, -1, 2))), None, "bound -1"),
        (["m"], (*_ONE[:3], b"\x00" * 40), None, "six int64"),
    ],
    ids=["members", "assignments", "past-the-end", "reversed", "negative", "short"],
)
def test_columns_that_do_not_fit_are_refused(
    ids: list[str],
    assigned: tuple[bytes, bytes, bytes, bytes],
    assignments: list[bytes] | None,
    reason: str,
) -> None:
    with pytest.raises(ValueError, match=reason):
        kassign_native.compact_members(ids, assigned, None, assignments)
