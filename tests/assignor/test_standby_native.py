"""The compiled standby placement (``kassign_native.standby_placement``) against the rules
``streams/standby.py`` states, applied by brute force: every pick the least
``(assigned / threads, rank)`` as a double over the clients allowed, the tag pass first (task
order, a key's used values barred until the task occupies as many clients as it has values), then
the least-loaded pass over what it left, in task order.

The reference scans every client per pick; the compiled code keeps heaps of clients per tag-value
group and a heap of groups, which this is here to check (stale group entries, holders set aside
and put back, a barred group's best client).
"""

from __future__ import annotations

import kassign_native
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.streams.holders import pairs
from kassign.assignor.streams.tag_groups import TagGroups

Case = tuple[int, list[set[int]], list[int], list[int], list[tuple[str | None, ...]], bool]


@st.composite
def cases(draw: st.DrawFn) -> tuple[int, Case]:
    clients = draw(st.integers(1, 14))
    tasks = draw(st.integers(1, 25))
    keys = draw(st.integers(0, 3))
    values = [
        tuple(
            draw(st.sampled_from([None, "a", "b", "c", "d"][: draw(st.integers(2, 5))]))
            for _ in range(keys)
        )
        for _ in range(clients)
    ]
    active = [set() for _ in range(clients)]
    for t in range(tasks):
        for _ in range(draw(st.sampled_from([0, 1, 1, 1, 2]))):
            active[draw(st.integers(0, clients - 1))].add(t)
    threads = [draw(st.sampled_from([1, 1, 2, 3, 7])) for _ in range(clients)]
    counts = [len(a) + draw(st.integers(0, 3)) for a in active]
    replicas = draw(st.integers(0, 3))
    return tasks, (
        replicas,
        active,
        threads,
        counts,
        values,
        keys > 0 and draw(st.booleans()),
    )


def reference(tasks: int, case: Case) -> tuple[list[list[int]], list[tuple[int, int]], list[int]]:
    replicas, active, threads, counts, values, tag_aware = case
    clients, loads = len(active), list(counts)
    keys = len(values[0])
    distinct = [len({v[k] for v in values if v[k] is not None}) for k in range(keys)]
    placed: list[list[int]] = [[] for _ in range(clients)]
    holding = [[r for r in range(clients) if t in active[r]] for t in range(tasks)]

    def pick(held: list[int], bars: list[set[str]]) -> int | None:
        allowed = [
            r
            for r in range(clients)
            if r not in held
            and not any(values[r][k] is not None and values[r][k] in bars[k] for k in range(keys))
        ]
        if not allowed:
            return None
        chosen = min(allowed, key=lambda r: (loads[r] / threads[r], r))
        loads[chosen] += 1
        return chosen

    pending: list[tuple[int, int]] = []
    for t in range(tasks):
        held = holding[t]
        if not tag_aware or not held:
            pending.append((t, replicas))
            continue
        last, used, remaining, bars = min(held), 1, replicas, [set() for _ in range(keys)]
        while remaining:
            for k, v in enumerate(values[last]):
                if v is not None:
                    bars[k] = set() if distinct[k] <= used else bars[k] | {v}
            chosen = pick(held, bars)
            if chosen is None:
                break
            placed[chosen].append(t)
            held.append(chosen)
            last, used, remaining = chosen, used + 1, remaining - 1
        if remaining:
            pending.append((t, remaining))
    untagged, short = [], []
    for t, remaining in pending:
        held = holding[t]
        for _ in range(remaining):
            chosen = pick(held, [set() for _ in range(keys)]) if len(held) < clients else None
            if chosen is None:
                short.append(t)
                break
            placed[chosen].append(t)
            held.append(chosen)
            if tag_aware:
                untagged.append((t, chosen))
    return placed, untagged, short


@settings(max_examples=150, deadline=None)
@given(cases())
def test_the_compiled_placement_follows_the_rules(drawn: tuple[int, Case]) -> None:
    tasks, case = drawn
    replicas, active, threads, counts, values, tag_aware = case
    groups = TagGroups.of(values, len(values[0]))
    keys = len(values[0])
    distinct = [len({v[k] for v in values if v[k] is not None}) for k in range(keys)]
    held, ranks = pairs([sorted(a) for a in active])
    got = kassign_native.standby_placement(
        replicas,
        tasks,
        held[::-1].tobytes(),  # pairs in any order: the core lists a task's holders by rank
        ranks[::-1].tobytes(),
        threads,
        counts,
        list(groups.group),
        distinct,
        [list(v) for v in groups.values],
        list(groups.sizes),
        tag_aware,
        checkpoint,
    )
    assert got == reference(tasks, case)
