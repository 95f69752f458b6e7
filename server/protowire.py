"""Protobuf wire pieces written by hand, for responses too large to build message by message.

A repeated field of small messages added one by one (``field.add``) costs a Python call per
element and, built as stand-alone messages and copied in, a protobuf arena each. Their wire
bytes, written here and parsed by the runtime in one ``MergeFromString``, cost neither. The
pieces write what ``SerializeToString`` writes: fields in number order, defaults left out.
"""

from __future__ import annotations

__all__ = ["field", "tag", "varint", "varint_field"]


def varint(n: int) -> bytes:
    """Protobuf's base-128 varint; a negative int32 as its 64-bit two's complement."""
    if 0 <= n < 0x80:
        return _ONE_BYTE[n]
    if 0 < n < 0x4000:  # two bytes: partition numbers, list lengths (issue 24)
        return bytes((n & 0x7F | 0x80, n >> 7))
    n &= (1 << 64) - 1
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_ONE_BYTE = [bytes((n,)) for n in range(0x80)]


def tag(number: int) -> bytes:
    """The key of length-delimited field ``number`` (a string, bytes or message)."""
    return varint(number << 3 | 2)


def field(key: bytes, value: bytes) -> bytes:
    """A length-delimited field, left out when empty (proto3 writes no default)."""
    return b"".join((key, varint(len(value)), value)) if value else b""


def varint_field(number: int, value: int) -> bytes:
    """An integer field (``int32``, ``int64``), left out when zero."""
    return varint(number << 3) + varint(value) if value else b""
