"""``Reader``'s one-loop list reads answer as its element-by-element reads do, on any bytes.

``strings`` and ``topic_partitions`` read a consumer group's topic names and partitions in one
loop and fall back to ``array`` where that loop stops short; these properties draw bytes shaped
like those lists whose fields may lie (lengths and counts negative, null or too large, topic
bytes that are not UTF-8, cuts anywhere) and compare values, offsets and errors.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import TypeVar

from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.kafka.buffer import Reader, WireError

T = TypeVar("T")


def _near(true_size: int) -> st.SearchStrategy[int]:
    """A length or count field: mostly right, sometimes negative, null or too large."""
    return st.sampled_from([true_size] * 4 + [-1, -2, true_size + 1, true_size + 100])


@st.composite
def _lists(draw: st.DrawFn, *, with_partitions: bool) -> bytes:
    """An array of topics (each with its partitions if ``with_partitions``), fields that may
    lie, topic bytes of any kind, trailing bytes, then perhaps a cut."""
    entries = draw(
        st.lists(
            st.tuples(st.binary(max_size=4), st.lists(st.integers(0, 2**31 - 1), max_size=3)),
            max_size=3,
        )
    )
    out = struct.pack(">i", draw(_near(len(entries))))
    for topic, partitions in entries:
        out += struct.pack(">h", draw(_near(len(topic)))) + topic
        if with_partitions:
            out += struct.pack(">i", draw(_near(len(partitions))))
            out += b"".join(struct.pack(">i", p) for p in partitions)
    out += draw(st.binary(max_size=6))
    return out[: draw(st.integers(0, len(out)))] if draw(st.booleans()) else out


def _outcome(read: Callable[[Reader], T], raw: bytes) -> tuple[T, int] | tuple[str, int]:
    r = Reader(raw)
    try:
        return read(r), r.offset
    except WireError as exc:
        return exc.reason, exc.offset


@settings(max_examples=1000)
@given(_lists(with_partitions=True), st.booleans())
def test_topic_partitions_read_as_element_by_element(raw: bytes, lenient: bool) -> None:
    def careful(r: Reader) -> tuple[tuple[str, tuple[int, ...]], ...]:
        return r.array(
            lambda r: (r.string("topic", lenient=lenient) or "", r.int32s("partitions")),
            "owned",
            min_size=6,
        )

    fast = _outcome(lambda r: r.topic_partitions("owned", "topic", lenient=lenient), raw)
    assert fast == _outcome(careful, raw)


@settings(max_examples=500)
@given(_lists(with_partitions=False))
def test_strings_read_as_element_by_element(raw: bytes) -> None:
    def careful(r: Reader) -> tuple[str, ...]:
        return r.array(lambda r: r.string("topic") or "", "topics", min_size=2)

    assert _outcome(lambda r: r.strings("topics", "topic"), raw) == _outcome(careful, raw)


def _owned(
    lenient: bool, names: dict[bytes, str] | None
) -> Callable[[Reader], tuple[tuple[str, tuple[int, ...]], ...]]:
    return lambda r: r.topic_partitions("owned", "topic", lenient=lenient, names=names)


@settings(max_examples=500)
@given(st.lists(st.tuples(_lists(with_partitions=True), st.booleans(), st.booleans()), max_size=6))
def test_reads_sharing_decoded_names_answer_as_reads_alone(
    reads: list[tuple[bytes, bool, bool]],
) -> None:
    """One ``names`` for a group's reads (strict and lenient, lists of strings and of topic
    partitions, in any order) gives each read the answer, or the error, it gives alone: a
    lenient read never leaves a replaced name for a strict one to take."""
    names: dict[bytes, str] = {}
    for raw, lenient, as_strings in reads:
        if as_strings:
            shared = _outcome(lambda r: r.strings("topics", "topic", names=names), raw)
            assert shared == _outcome(lambda r: r.strings("topics", "topic"), raw)
        else:
            assert _outcome(_owned(lenient, names), raw) == _outcome(_owned(lenient, None), raw)


@settings(max_examples=300)
@given(_lists(with_partitions=True), st.booleans())
def test_runs_give_the_groups_partitions_one_by_one(raw: bytes, lenient: bool) -> None:
    try:
        runs = Reader(raw).topic_partition_runs("owned", "topic", lenient=lenient)
    except WireError:
        return
    groups = runs.groups()
    assert list(runs.pairs()) == [(topic, p) for topic, ps in groups for p in ps]
    assert [len(ps) for _, ps in groups] == runs.counts
