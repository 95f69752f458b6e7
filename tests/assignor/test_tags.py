"""Which tags standby placement spreads over (KIP-708), racks standing in for tags (KIP-925 §D)."""

from kassign.assignor.streams.tags import (
    TagSource,
    exclude_used_values,
    is_excluded,
    one_tag_layout,
    rack_tag_mismatches,
    tag_layout,
)

from tests.assignor.builders import client, pid, state


def test_configured_keys_only_and_in_configured_order() -> None:
    app = state(
        [
            client(1, tags={"zone": "a", "cluster": "x", "host": "h1"}),
            client(2, tags={"zone": "b"}),
        ],
        rack_aware_assignment_tags=("cluster", "zone", "cluster"),
    )
    layout = tag_layout(app)
    assert layout.source is TagSource.TAGS
    assert layout.keys == ("cluster", "zone")
    assert layout.values[pid(1)] == ("x", "a")
    assert layout.values[pid(2)] == (None, "b")
    assert layout.distinct == (1, 2)


def test_one_tag_layout_builds_the_layout_once_for_its_state_and_only_inside() -> None:
    tagged = state([client(1, tags={"zone": "a"})], rack_aware_assignment_tags=("zone",))
    other = state([client(2, tags={"zone": "b"})], rack_aware_assignment_tags=("zone",))
    assert tag_layout(tagged) is not tag_layout(tagged)
    with one_tag_layout(tagged):
        inside = tag_layout(tagged)
        assert tag_layout(tagged) is inside
        assert tag_layout(other) is not tag_layout(other)  # another state: its own, each time
        assert tag_layout(other).values[pid(2)] == ("b",)
    assert inside == tag_layout(tagged) and tag_layout(tagged) is not inside


RACKED = [client(1, rack="r1"), client(2, rack="r2"), client(3, rack="r1")]


def test_rack_is_the_tag_when_no_tags_are_configured_and_every_client_has_one() -> None:
    layout = tag_layout(state(RACKED, standby_rack_spread=True))
    assert layout.source is TagSource.RACK
    assert layout.values[pid(3)] == ("r1",)
    assert layout.distinct == (2,)


def test_racks_are_no_tag_unless_standby_rack_spread_is_set() -> None:
    """Kafka's assignors never hand racks to standby placement: off by default (issue 27)."""
    layout = tag_layout(state(RACKED))
    assert layout.source is TagSource.NONE
    assert not layout.tag_aware


def test_no_awareness_when_a_client_lacks_a_rack() -> None:
    layout = tag_layout(state([client(1, rack="r1"), client(2)], standby_rack_spread=True))
    assert layout.source is TagSource.NONE
    assert not layout.tag_aware


def test_tags_win_over_racks_and_a_disagreement_is_reported() -> None:
    app = state(
        [client(1, rack="r1", tags={"rack": "r1"}), client(2, rack="r2", tags={"rack": "r9"})],
        rack_aware_assignment_tags=("rack",),
    )
    layout = tag_layout(app)
    assert layout.source is TagSource.TAGS
    assert layout.values[pid(2)] == ("r9",)
    (note,) = layout.notes
    assert str(pid(2)) in note and str(pid(1)) not in note


def test_tags_without_a_rack_key_are_reported_when_racks_exist() -> None:
    app = state([client(1, rack="r1", tags={"zone": "a"})], rack_aware_assignment_tags=("zone",))
    (note,) = rack_tag_mismatches(app)
    assert "no 'rack' key" in note


def test_agreeing_racks_and_tags_give_no_note() -> None:
    app = state([client(1, rack="r1", tags={"rack": "r1"})], rack_aware_assignment_tags=("rack",))
    assert rack_tag_mismatches(app) == ()
    assert rack_tag_mismatches(state([client(1, rack="r1")])) == ()


def test_a_key_stops_constraining_once_its_values_are_used_up() -> None:
    excluded: dict[int, set[str]] = {}
    exclude_used_values(excluded, ("c1", "z1"), 1, (2, 3))
    assert excluded == {0: {"c1"}, 1: {"z1"}}
    exclude_used_values(excluded, ("c2", "z2"), 2, (2, 3))
    assert excluded == {1: {"z1", "z2"}}  # both clusters used: cluster no longer counts
    assert is_excluded(("c1", "z2"), excluded)
    assert not is_excluded(("c1", "z3"), excluded)
    assert not is_excluded((None, None), excluded)


def test_a_client_without_the_key_leaves_it_as_it_was() -> None:
    excluded: dict[int, set[str]] = {0: {"c1"}}
    exclude_used_values(excluded, (None,), 5, (2,))
    assert excluded == {0: {"c1"}}


def test_configured_keys_no_client_carries_are_noted() -> None:
    """Issue 17: a key nobody carries (a typo, clients not yet tagged) fell back silently."""
    tagged = [client(1, tags={"zone": "a"}), client(2, tags={"zone": "b"})]
    (note,) = tag_layout(state(tagged, rack_aware_assignment_tags=("zone", "zoen"))).notes
    assert "['zoen']" in note and "ignored" in note
    (note,) = tag_layout(state(tagged, rack_aware_assignment_tags=("cluster",))).notes
    assert "without tag awareness" in note
    assert tag_layout(state(tagged, rack_aware_assignment_tags=("zone",))).notes == ()
