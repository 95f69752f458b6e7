"""A group's claims as their reader's columns (``GroupClaims``): the claims check and the
partition space read them there and answer as they do from the members' own claims."""

from __future__ import annotations

import random

from hypothesis import example, given, settings
from hypothesis import strategies as st
from kassign.assignor.claims import OwnedPartitions
from kassign.assignor.consumer.columns import PartitionSpace
from kassign.assignor.consumer.group_claims import GroupClaims
from kassign.assignor.consumer.model import Topic, check_claims, partition_counts
from kassign.assignor.errors import InvalidRequest
from kassign.kafka.consumer_user_data import (
    encode_sticky_user_data,
    read_sticky_user_data_group,
)

TOPICS = {t: Topic.without_racks(t, n) for t, n in (("a", 3), ("b", 5), ("c", 1))}
SPACE = {"a": 3, "b": 5}  # "c" in the metadata, not subscribed; "d" in neither
NAMES = ["a", "b", "c", "d", "bad name"]
TWICE = [("a", [0]), ("b", [1]), ("a", [0])]

plain = st.tuples(st.sampled_from(["a", "b"]), st.lists(st.integers(0, 2), unique=True, max_size=3))
odd = st.tuples(st.sampled_from(NAMES), st.lists(st.integers(-1, 6), max_size=4))
member = st.one_of(
    st.none(),
    st.just(b"\x00\x00\x00\x05"),  # fits neither layout: a failure, nothing claimed
    st.lists(plain, max_size=3).map(lambda runs: encode_sticky_user_data(runs, 1)),
    st.lists(st.one_of(plain, odd), max_size=4).map(lambda runs: encode_sticky_user_data(runs, 1)),
)


def _read(sent: list[bytes | None]) -> tuple[list[OwnedPartitions], GroupClaims]:
    owned, _, failures, read = read_sticky_user_data_group(sent, OwnedPartitions.of_entries)
    owned = [OwnedPartitions() if f is not None else o for o, f in zip(owned, failures)]
    return owned, GroupClaims.of(owned, read)


def _checked(claims: list[tuple[str, OwnedPartitions]], group: GroupClaims | None) -> str:
    counts = partition_counts(TOPICS)
    try:
        return str(check_claims(claims, TOPICS, field="f", counts=counts, group=group))
    except InvalidRequest as exc:
        return f"{exc.member}: {exc}"


@settings(deadline=None, max_examples=150)
@given(st.lists(member, min_size=1, max_size=6), st.randoms(use_true_random=False))
@example(  # a partition twice within the second member, whose claims are the longer
    [encode_sticky_user_data([("b", [0])], 1), encode_sticky_user_data(TWICE, 1)],
    random.Random(0),
)
def test_the_readers_columns_answer_as_the_members_claims(
    sent: list[bytes | None], rng: object
) -> None:
    owned, group = _read(sent)
    claims = [(f"m{i}", o) for i, o in enumerate(owned)]
    assert _checked(claims, group) == _checked(claims, None)  # the same fault, or answer
    space = PartitionSpace.of(SPACE)
    space.adopt(group)
    order = list(owned)
    rng.shuffle(order)  # type: ignore[attr-defined]
    column, sizes = space.claimed_column(order, within=False)
    expected = [PartitionSpace.of(SPACE).claimed(c).tolist() for c in order]
    assert sizes == list(map(len, expected))
    assert column.tolist() == [i for ids in expected for i in ids]
