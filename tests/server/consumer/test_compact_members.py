"""The compiled framing of the compact answer's members (``kassign_native.compact_members``)
refuses columns that do not fit the members, rather than writing bytes past them; the bytes
it writes are checked against protobuf's in ``test_compact.py``."""

from __future__ import annotations

import kassign_native
import numpy as np
import pytest


def _int64s(*values: int) -> bytes:
    return np.array(values, dtype=np.int64).tobytes()


_ONE = (_int64s(0, 0), _int64s(0, 1), _int64s(0, 2))  # topic 0's partitions 0 and 1


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
        (["m"], (*_ONE[:2], _int64s(0, 3)), None, "outside the entries"),
        (["m"], (*_ONE[:2], _int64s(2, 0)), None, "outside the entries"),
        (["m"], (*_ONE[:2], _int64s(-1, 2)), None, "outside the entries"),
        (["m"], (*_ONE[:2], _int64s(0)), None, "two int64"),
        (["m"], (_ONE[0], _int64s(0), _ONE[2]), None, "one topic per partition"),
        (["m"], (_ONE[0], b"\x00" * 7, _ONE[2]), None, "not int64"),
    ],
    ids=[
        "members",
        "assignments",
        "past-the-end",
        "reversed",
        "negative",
        "short",
        "topics",
        "int64",
    ],
)
def test_columns_that_do_not_fit_are_refused(
    ids: list[str],
    assigned: tuple[bytes, bytes, bytes],
    assignments: list[bytes] | None,
    reason: str,
) -> None:
    with pytest.raises(ValueError, match=reason):
        kassign_native.compact_members(ids, assigned, None, assignments)
