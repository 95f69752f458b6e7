"""Standby placement: least loaded by default, spread over tag values with KIP-708 tags."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import replace
from uuid import UUID

from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.ordering import process_key
from kassign.assignor.streams.model import ApplicationState, KafkaStreamsState, TaskId
from kassign.assignor.streams.standby import assign_standby_tasks, place_standby_tasks
from kassign.assignor.streams.tags import exclude_used_values, is_excluded, tag_layout

from tests.assignor import strategies as shared
from tests.assignor.builders import app_states, client, pid, shuffled, state, tasks

T00, T01, T02, T10, T11, T12 = tasks("0_0 0_1 0_2 1_0 1_1 1_2")
ZONES_CLUSTERS = ("zone", "cluster")


def _holders(standby: Mapping[UUID, frozenset[TaskId]], task: TaskId) -> set[int]:
    return {p.int for p, ts in standby.items() if task in ts}


def _grid(
    n: int, *, threads: int = 2, actives: Mapping[int, list[TaskId]]
) -> list[KafkaStreamsState]:
    """Nine clients: client i sits in zone (i-1) % 3 + 1 and cluster (i-1) // 3 + 1."""
    return [
        client(
            i,
            threads=threads,
            active=actives.get(i, ()),
            tags={"zone": f"z{(i - 1) % 3 + 1}", "cluster": f"k{(i - 1) // 3 + 1}"},
        )
        for i in range(1, n + 1)
    ]


def _actives(app: ApplicationState) -> dict[UUID, frozenset[TaskId]]:
    return {p: c.previous_active_tasks for p, c in app.clients.items()}


# ---- least loaded (no tags) ------------------------------------------------------------------


def test_every_client_gets_an_entry_and_nothing_without_replicas() -> None:
    app = state([client(1, active=[T00]), client(2)], [T00])
    assert assign_standby_tasks(app, _actives(app)) == {pid(1): frozenset(), pid(2): frozenset()}


def test_standby_goes_to_the_least_loaded_other_client() -> None:
    app = state(
        [client(1, active=[T00, T01]), client(2, active=[T02]), client(3, active=[T10, T11])],
        [T00, T01, T02, T10, T11],
        num_standby_replicas=1,
    )
    standby = assign_standby_tasks(app, _actives(app))
    assert standby[pid(2)] >= {T00}  # 0_0 first: client 2 (load 1) is lightest
    assert all(not (standby[p] & _actives(app)[p]) for p in app.clients)
    assert sum(len(s) for s in standby.values()) == 5


def test_ties_break_by_process_order_in_java_uuid_order() -> None:
    negative = UUID("f0000000-0000-0000-0000-000000000000")  # sorts before pid(1) in Java
    app = state([client(1), client(2, active=[T00])], [T00], num_standby_replicas=1)
    other = state(
        [client(2, active=[T00]), replace(client(1), process_id=negative)],
        [T00],
        num_standby_replicas=1,
    )
    assert assign_standby_tasks(app, _actives(app))[pid(1)] == {T00}
    assert assign_standby_tasks(other, _actives(other))[negative] == {T00}


def test_load_is_per_thread() -> None:
    # client 1: 2 actives on 4 threads (0.5) beats client 3: 1 active on 1 thread (1.0)
    app = state(
        [client(1, threads=4, active=[T00, T01]), client(2, active=[T02]), client(3, active=[T10])],
        [T02],
        num_standby_replicas=1,
    )
    assert assign_standby_tasks(app, _actives(app))[pid(1)] == {T02}


def test_stateless_tasks_get_no_standbys() -> None:
    app = state([client(1, active=[T00, T10]), client(2)], [T00], [T10], num_standby_replicas=1)
    assert assign_standby_tasks(app, _actives(app)) == {
        pid(1): frozenset(),
        pid(2): frozenset({T00}),
    }


def test_fewer_replicas_when_clients_run_out_and_a_note_says_so() -> None:
    app = state([client(1, active=[T00]), client(2)], [T00], num_standby_replicas=3)
    result = place_standby_tasks(app, _actives(app))
    assert result.standby == {pid(1): frozenset(), pid(2): frozenset({T00})}
    assert "fewer than 3" in result.notes[0]


def test_single_client_gets_no_standby() -> None:
    app = state(
        [client(1, active=[T00])],
        [T00],
        num_standby_replicas=1,
        rack_aware_assignment_tags=ZONES_CLUSTERS,
    )
    assert assign_standby_tasks(app, _actives(app)) == {pid(1): frozenset()}


# ---- KIP-708 tags ----------------------------------------------------------------------------


def _assert_off_the_actives(standby: Mapping[UUID, frozenset[TaskId]], owners: set[int]) -> None:
    """12 standbys, none on the three active owners, at most 3 (1.5 x capacity) per client.

    Kafka's own test also sees every client exactly full, an artefact of its test walking a
    HashSet of tasks; in task order (as its assignors walk a TreeSet) one client gets 3.
    """
    counts = {p.int: len(s) for p, s in standby.items()}
    assert sum(counts.values()) == 12
    assert all(counts[o] == 0 for o in owners)
    assert all(1 <= n <= 3 for p, n in counts.items() if p not in owners)


def test_kip708_nine_nodes_three_zones_three_clusters() -> None:
    """The KIP's example: active 0_0 on Node-1 gets standbys on {5, 9} or {6, 8}."""
    app = state(
        _grid(9, actives={1: [T00]}),
        [T00],
        num_standby_replicas=2,
        rack_aware_assignment_tags=ZONES_CLUSTERS,
    )
    assert _holders(assign_standby_tasks(app, _actives(app)), T00) in ({5, 9}, {6, 8})


def test_actives_in_one_zone_spread_standbys_over_other_zones_and_clusters() -> None:
    actives = {1: [T00, T10], 4: [T01, T11], 7: [T02, T12]}
    app = state(
        _grid(9, actives=actives),
        tasks("0_0 0_1 0_2 1_0 1_1 1_2"),
        num_standby_replicas=2,
        rack_aware_assignment_tags=ZONES_CLUSTERS,
    )
    standby = assign_standby_tasks(app, _actives(app))
    _assert_off_the_actives(standby, {1, 4, 7})
    for task in (T00, T10):
        assert _holders(standby, task) in ({5, 9}, {6, 8})
    for task in (T01, T11):
        assert _holders(standby, task) in ({2, 9}, {3, 8})
    for task in (T02, T12):
        assert _holders(standby, task) in ({3, 5}, {2, 6})


def test_actives_in_one_cluster_spread_standbys_over_other_clusters_and_zones() -> None:
    actives = {1: [T00, T10], 2: [T01, T11], 3: [T02, T12]}
    app = state(
        _grid(9, actives=actives),
        tasks("0_0 0_1 0_2 1_0 1_1 1_2"),
        num_standby_replicas=2,
        rack_aware_assignment_tags=ZONES_CLUSTERS,
    )
    standby = assign_standby_tasks(app, _actives(app))
    _assert_off_the_actives(standby, {1, 2, 3})
    for task in (T00, T10):
        assert _holders(standby, task) in ({5, 9}, {6, 8})
    for task in (T01, T11):
        assert _holders(standby, task) in ({4, 9}, {6, 7})
    for task in (T02, T12):
        assert _holders(standby, task) in ({5, 7}, {4, 8})


def test_partial_awareness_when_a_key_runs_out_of_values() -> None:
    """Two clusters, three zones, two standbys: the second standby only needs a new zone."""
    clients = [
        client(
            i,
            tags={"cluster": f"k{(i - 1) // 3 + 1}", "zone": f"z{(i - 1) % 3 + 1}"},
            active={1: [T00], 6: [T10]}.get(i, ()),
        )
        for i in range(1, 7)
    ]
    app = state(
        clients, [T00, T10], num_standby_replicas=2, rack_aware_assignment_tags=("cluster", "zone")
    )
    standby = assign_standby_tasks(app, _actives(app))
    assert _holders(standby, T00) in ({5, 3}, {5, 6})
    assert _holders(standby, T10) in ({2, 4}, {2, 1})


def test_other_zones_even_when_every_client_is_full() -> None:
    clients = [
        client(i, tags={"zone": f"z{(i - 1) % 3 + 1}", "cluster": "k1"}) for i in range(1, 7)
    ]
    actives = {
        pid(1): {T00},
        pid(2): {T01},
        pid(3): {T02},
        pid(4): {T10},
        pid(5): {T11},
        pid(6): {T12},
    }
    app = state(
        clients,
        actives_tasks := sorted(t for ts in actives.values() for t in ts),
        num_standby_replicas=1,
        rack_aware_assignment_tags=ZONES_CLUSTERS,
    )
    standby = assign_standby_tasks(app, actives)
    assert all(len(s) == 1 for s in standby.values())
    zone = {p: app.clients[p].client_tags["zone"] for p in app.clients}
    for task in actives_tasks:
        (owner,) = [p for p, ts in actives.items() if task in ts]
        (replica,) = [p for p, ts in standby.items() if task in ts]
        assert zone[replica] != zone[owner]


def test_tags_outside_the_configured_keys_are_ignored() -> None:
    clients = [
        client(1, tags={"cluster": "k1", "zone": "z1"}, active=[T00]),
        client(2, threads=2, tags={"cluster": "k1", "zone": "z2"}),
        client(3, tags={"cluster": "k2", "zone": "z1"}),
    ]
    app = state(clients, [T00], num_standby_replicas=1, rack_aware_assignment_tags=("cluster",))
    assert _holders(assign_standby_tasks(app, _actives(app)), T00) == {3}


def test_same_value_under_different_keys_does_not_collide() -> None:
    clients = [
        client(1, threads=2, tags={"zone": "z1", "cluster": "k1"}, active=[T00]),
        client(2, threads=2, tags={"zone": "k1", "cluster": "k3"}),
    ]
    app = state(clients, [T00], num_standby_replicas=1, rack_aware_assignment_tags=ZONES_CLUSTERS)
    assert _holders(assign_standby_tasks(app, _actives(app)), T00) == {2}


def test_least_loaded_fallback_when_tags_cannot_tell_clients_apart() -> None:
    clients = [
        client(i, threads=3, tags={"cluster": "k1", "zone": "z1"}, active=[t])
        for i, t in zip(range(1, 5), (T00, T01, T02, T10))
    ]
    app = state(
        clients,
        [T00, T01, T02, T10],
        num_standby_replicas=1,
        rack_aware_assignment_tags=ZONES_CLUSTERS,
    )
    result = place_standby_tasks(app, _actives(app))
    assert {p.int: len(s) for p, s in result.standby.items()} == {1: 1, 2: 1, 3: 1, 4: 1}
    assert result.notes == ()


def _racked(**configs: object) -> ApplicationState:
    """Nine clients on three racks, six stateful tasks, two standbys each, no tags."""
    actives = {1: [T00, T10], 2: [T01, T11], 3: [T02, T12]}
    return state(
        [
            client(i, threads=2, rack=f"r{(i - 1) % 3 + 1}", active=actives.get(i, ()))
            for i in range(1, 10)
        ],
        tasks("0_0 0_1 0_2 1_0 1_1 1_2"),
        num_standby_replicas=2,
        **configs,
    )


def test_racks_are_ignored_by_default_as_kafka_ignores_them() -> None:
    """Without ``standby_rack_spread`` standbys go least loaded whatever the racks (issue 27)."""
    racked = _racked()
    unracked = replace(
        racked, clients={p: replace(c, rack_id=None) for p, c in racked.clients.items()}
    )
    by_load = assign_standby_tasks(racked, _actives(racked))
    assert by_load == assign_standby_tasks(unracked, _actives(unracked))
    assert any((p - 1) % 3 == 0 for p in _holders(by_load, T00))  # a standby on T00's rack


def test_racks_stand_in_for_tags_like_a_zone_tag() -> None:
    actives = {1: [T00, T10], 2: [T01, T11], 3: [T02, T12]}
    six = tasks("0_0 0_1 0_2 1_0 1_1 1_2")
    racked = _racked(standby_rack_spread=True)
    tagged = state(
        [
            client(i, threads=2, tags={"zone": f"r{(i - 1) % 3 + 1}"}, active=actives.get(i, ()))
            for i in range(1, 10)
        ],
        six,
        num_standby_replicas=2,
        rack_aware_assignment_tags=("zone",),
    )
    by_rack = assign_standby_tasks(racked, _actives(racked))
    assert by_rack == assign_standby_tasks(tagged, _actives(tagged))
    for i, task in ((1, T00), (2, T01), (3, T02)):
        assert all((p - 1) % 3 != (i - 1) % 3 for p in _holders(by_rack, task))


def test_rack_tag_disagreement_ends_in_the_notes() -> None:
    app = state(
        [
            client(1, rack="r1", tags={"rack": "r2"}, active=[T00]),
            client(2, rack="r2", tags={"rack": "r2"}),
        ],
        [T00],
        num_standby_replicas=1,
        rack_aware_assignment_tags=("rack",),
    )
    result = place_standby_tasks(app, _actives(app))
    assert result.standby[pid(2)] == {T00}
    assert any(str(pid(1)) in n for n in result.notes)


# ---- properties ------------------------------------------------------------------------------


def _round_robin(app: ApplicationState) -> dict[UUID, frozenset[TaskId]]:
    pids = list(app.clients)
    out: dict[UUID, set[TaskId]] = {p: set() for p in pids}
    for i, task in enumerate(app.tasks):
        out[pids[(i * 7) % len(pids)]].add(task)
    return {p: frozenset(ts) for p, ts in out.items()}


@settings(max_examples=60, deadline=None)
@given(app_states(max_clients=8, max_tasks=16))
def test_valid_complete_and_deterministic(app: ApplicationState) -> None:
    active = _round_robin(app)
    standby = assign_standby_tasks(app, active)
    replicas = app.configs.num_standby_replicas
    assert set(standby) == set(app.clients)
    for p, ts in standby.items():
        assert not ts & active[p]
        assert all(app.tasks[t].stateful for t in ts)
    for task in app.stateful_tasks:
        assert len(_holders(standby, task)) == min(replicas, len(app.clients) - 1)
    assert assign_standby_tasks(shuffled(app, seed=7), active) == standby


@settings(max_examples=40, deadline=None)
@given(
    st.integers(2, 4),
    st.integers(2, 4),
    st.integers(1, 3),
    st.integers(1, 30),
    st.randoms(use_true_random=False),
)
def test_ideal_spread_whenever_the_values_allow_it(
    zones: int, clusters: int, per_cell: int, n_tasks: int, rng: random.Random
) -> None:
    """Every zone x cluster cell populated, standbys + 1 <= values of each key: all replicas differ."""
    replicas = min(zones, clusters) - 1
    ids = rng.sample(range(1, 10_000), zones * clusters * per_cell)
    clients = [
        client(
            n,
            threads=rng.randint(1, 3),
            tags={"zone": f"z{i % zones}", "cluster": f"k{(i // zones) % clusters}"},
        )
        for i, n in enumerate(ids)
    ]
    app = state(
        clients,
        [TaskId(0, p) for p in range(n_tasks)],
        num_standby_replicas=replicas,
        rack_aware_assignment_tags=ZONES_CLUSTERS,
    )
    pids = list(app.clients)
    active = {
        p: frozenset(t for j, t in enumerate(app.tasks) if pids[j * 5 % len(pids)] == p)
        for p in pids
    }
    standby = assign_standby_tasks(app, active)
    for task in app.tasks:
        group = [p for p in pids if task in active[p] or task in standby[p]]
        assert len(group) == replicas + 1
        for key in ZONES_CLUSTERS:
            assert len({app.clients[p].client_tags[key] for p in group}) == replicas + 1


@settings(max_examples=40, deadline=None)
@given(shared.app_states(max_clients=8), st.integers(0, 1000))
def test_order_of_the_input_mappings_does_not_matter(app: ApplicationState, seed: int) -> None:
    active = _round_robin(app)
    other = shared.shuffled(app, seed)
    placement = place_standby_tasks(app, active)
    assert place_standby_tasks(other, active) == placement


def _reference(
    app: ApplicationState, active: Mapping[UUID, frozenset[TaskId]]
) -> dict[UUID, set[TaskId]]:
    """Kafka's two standby assignors written as plain scans over every client (slow, obvious)."""
    layout = tag_layout(app)
    replicas = app.configs.num_standby_replicas
    count = {p: len(active[p]) for p in app.clients}
    threads = {p: max(1, c.num_threads) for p, c in app.clients.items()}
    holders = {t: {p for p in app.clients if t in active[p]} for t in app.tasks}
    standby: dict[UUID, set[TaskId]] = {p: set() for p in app.clients}

    def give(task: TaskId, candidates: list[UUID]) -> UUID:
        chosen = min(candidates, key=lambda p: (count[p] / threads[p], process_key(p)))
        count[chosen] += 1
        holders[task].add(chosen)
        standby[chosen].add(task)
        return chosen

    pending: dict[TaskId, int] = {}
    for task in sorted(app.stateful_tasks, key=lambda t: t.sort_key):
        if not layout.tag_aware or not holders[task]:
            pending[task] = replicas
            continue
        excluded: dict[int, set[str]] = {}
        last, used, left = min(holders[task], key=process_key), 1, replicas
        while left:
            exclude_used_values(excluded, layout.values[last], used, layout.distinct)
            free = [p for p in app.clients if p not in holders[task]]
            free = [p for p in free if not is_excluded(layout.values[p], excluded)]
            if not free:
                break
            last, used, left = give(task, free), used + 1, left - 1
        if left:
            pending[task] = left
    for task in sorted(pending, key=lambda t: t.sort_key):
        for _ in range(pending[task]):
            free = [p for p in app.clients if p not in holders[task]]
            if free:
                give(task, free)
    return standby


@settings(max_examples=80, deadline=None)
@given(
    st.one_of(shared.app_states(max_clients=10), app_states(max_clients=10, max_tasks=20)),
    st.integers(1, 7),
)
def test_same_placement_as_a_plain_scan(app: ApplicationState, stride: int) -> None:
    pids = list(app.clients)
    active = {
        p: frozenset(t for i, t in enumerate(app.tasks) if pids[(i * stride) % len(pids)] == p)
        for p in pids
    }
    assert assign_standby_tasks(app, active) == {
        p: frozenset(ts) for p, ts in _reference(app, active).items()
    }


def test_tag_groups_tie_break_by_java_uuid_order() -> None:
    # two idle clients in two free zones: the one whose id sorts first in Java's signed order
    # (high bit set, so last as an unsigned number) takes the replica
    negative = UUID("f0000000-0000-0000-0000-000000000000")
    app = state(
        [
            client(1, active=[T00], tags={"zone": "a"}),
            client(2, tags={"zone": "b"}),
            replace(client(3, tags={"zone": "c"}), process_id=negative),
        ],
        [T00],
        num_standby_replicas=1,
        rack_aware_assignment_tags=("zone",),
    )
    standby = assign_standby_tasks(app, _actives(app))
    assert standby[negative] == {T00} and standby[pid(2)] == frozenset()


def test_a_replica_on_an_untagged_client_does_not_free_the_actives_zone() -> None:
    # the first replica lands on client 3, which has no zone; the zone of the active (z1) stays
    # barred, so the second replica goes to z2 (client 4), not to client 2 beside the active
    app = state(
        [
            client(1, active=[T00], tags={"zone": "z1"}),
            client(2, tags={"zone": "z1"}),
            client(3),
            client(4, tags={"zone": "z2"}),
        ],
        [T00],
        num_standby_replicas=2,
        rack_aware_assignment_tags=("zone",),
    )
    assert _holders(assign_standby_tasks(app, _actives(app)), T00) == {3, 4}


def test_a_task_whose_active_has_no_tag_is_placed_in_task_order() -> None:
    # nothing is barred for 0_0 (its active, client 2, has no zone): it is placed first, on the
    # idle client 3; then 0_1 avoids z1 and, clients 2 and 3 now equal, goes to client 2
    app = state(
        [
            client(1, active=[T01], tags={"zone": "z1"}),
            client(2, active=[T00]),
            client(3, tags={"zone": "z2"}),
        ],
        [T00, T01],
        num_standby_replicas=1,
        rack_aware_assignment_tags=("zone",),
    )
    standby = assign_standby_tasks(app, _actives(app))
    assert standby == {pid(1): frozenset(), pid(2): frozenset({T01}), pid(3): frozenset({T00})}


@st.composite
def _partly_tagged(draw: st.DrawFn) -> ApplicationState:
    """Small groups on one zone key where some clients carry no zone at all."""
    n_clients = draw(st.integers(2, 6))
    n_tasks = draw(st.integers(1, 6))
    owners = draw(st.lists(st.integers(1, n_clients), min_size=n_tasks, max_size=n_tasks))
    zones = draw(
        st.lists(st.sampled_from([None, "z1", "z2", "z3"]), min_size=n_clients, max_size=n_clients)
    )
    stateful = [TaskId(0, p) for p in range(n_tasks)]
    clients = [
        client(
            i,
            threads=draw(st.integers(1, 2)),
            active=[t for t, o in zip(stateful, owners, strict=True) if o == i],
            tags=None if zone is None else {"zone": zone},
        )
        for i, zone in enumerate(zones, start=1)
    ]
    return state(
        clients,
        stateful,
        num_standby_replicas=draw(st.integers(1, 3)),
        rack_aware_assignment_tags=("zone",),
    )


@settings(max_examples=100, deadline=None)
@given(_partly_tagged())
def test_same_placement_as_a_plain_scan_with_untagged_clients(app: ApplicationState) -> None:
    active = _actives(app)
    assert assign_standby_tasks(app, active) == {
        p: frozenset(ts) for p, ts in _reference(app, active).items()
    }


def test_the_short_note_counts_every_task_and_names_the_first_five() -> None:
    # one client: none of the seven tasks can have a standby; the note stays short all the same
    seven = tasks("0_0 0_1 0_2 0_3 0_4 0_5 0_6")
    app = state([client(1, active=seven)], seven, num_standby_replicas=1)
    (note,) = place_standby_tasks(app, _actives(app)).notes
    assert note.startswith("7 task(s)")
    assert note.endswith("(first: 0_0, 0_1, 0_2, 0_3, 0_4)")


def test_a_task_nobody_runs_still_gets_its_replicas_with_tags() -> None:
    # interface 1 promises never to fail: a task without an active has nothing to keep its
    # replicas apart from, so they wait for the least-loaded pass after the tag pass. There
    # 0_1 has already put one replica on each of clients 2 and 3: all three carry one task,
    # and process order picks clients 1 and 2
    app = state(
        [
            client(1, active=[T01], tags={"zone": "a"}),
            client(2, tags={"zone": "a"}),
            client(3, tags={"zone": "b"}),
        ],
        [T00, T01],
        num_standby_replicas=2,
        rack_aware_assignment_tags=("zone",),
    )
    standby = assign_standby_tasks(app, {pid(1): frozenset({T01})})
    assert _holders(standby, T01) == {2, 3}
    assert _holders(standby, T00) == {1, 2}


def test_loads_stay_current_across_zones_after_many_placements() -> None:
    # zones z1/z3, two replicas each, so a task's second replica may go anywhere. By the last
    # pick (0_2's second replica) client 1 carries 2 tasks on 2 threads and client 2 carries
    # 2 on 3: client 2 is the less loaded and takes it, whatever the zones' earlier order
    app = state(
        [
            client(1, threads=2, tags={"zone": "z3"}),
            client(2, threads=3, active=[T00], tags={"zone": "z1"}),
            client(3, threads=2, active=[T02], tags={"zone": "z1"}),
            client(4, threads=2, active=[T01], tags={"zone": "z3"}),
        ],
        [T00, T01, T02],
        num_standby_replicas=2,
        rack_aware_assignment_tags=("zone",),
    )
    standby = assign_standby_tasks(app, _actives(app))
    assert standby == {
        pid(1): frozenset({T00, T01}),
        pid(2): frozenset({T01, T02}),
        pid(3): frozenset({T00}),
        pid(4): frozenset({T02}),
    }
