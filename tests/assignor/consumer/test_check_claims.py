"""The group's claims checked at once (``check_claims``) refuse exactly what checking them
member by member refuses, with the same error: the first fault in member order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.claims import OwnedPartitions, distinct_claims
from kassign.assignor.consumer.model import (
    Member,
    Topic,
    check_claims,
    check_partitions,
    consumer_group,
    partition_counts,
)
from kassign.assignor.errors import InvalidRequest

TOPICS = {t: Topic.without_racks(t, n) for t, n in (("a", 3), ("b", 5), ("c", 1))}
NAMES = ["a", "b", "c", "d", "bad name"]  # "d" is outside the metadata; "bad name" illegal

entries = st.lists(
    st.tuples(st.sampled_from(NAMES), st.lists(st.integers(-1, 6), max_size=4)), max_size=4
)


def _outcome(check: object) -> str:
    try:
        check()  # type: ignore[operator]
    except InvalidRequest as exc:
        return f"{exc.member}: {exc}"
    return "ok"


@settings(deadline=None)
@given(st.lists(entries, min_size=1, max_size=6))
def test_at_once_as_member_by_member(members: list[list[tuple[str, list[int]]]]) -> None:
    claims = [(f"m{i}", OwnedPartitions(runs)) for i, runs in enumerate(members)]
    counts = partition_counts(TOPICS)

    def one_by_one() -> None:
        for member, owned in claims:
            check_partitions(owned, TOPICS, field="f", member=member, counts=counts)

    outcome = _outcome(lambda: check_claims(claims, TOPICS, field="f", counts=counts))
    assert outcome == _outcome(one_by_one)
    if outcome == "ok" and check_claims(claims, TOPICS, field="f", counts=counts):
        # its "no partition claimed twice in the group" stands in for distinct_claims
        assert distinct_claims([owned for _, owned in claims])


def test_an_earlier_members_bad_claim_comes_before_a_later_members_bad_id() -> None:
    """``consumer_group`` checks the claims at once after the members' other fields; the
    fault reported is still the first in member order, as checked member by member."""
    bad_claims = OwnedPartitions([("a", [7])])  # topic a has 3 partitions
    first_claims = [
        Member(member_id="m1", topics=("a",), owned_partitions=bad_claims),
        Member(member_id="m1", topics=("a",)),  # an id used twice: found at the second member
    ]
    first_id = [
        Member(member_id="m1", topics=("a",)),
        Member(member_id="m1", topics=("a",), owned_partitions=bad_claims),
    ]
    for members, field in ((first_claims, "owned_partitions"), (first_id, "member_id")):
        try:
            consumer_group(members, TOPICS.values())
        except InvalidRequest as exc:
            assert (exc.field, exc.member) == (field, "m1")
        else:
            raise AssertionError("accepted")
