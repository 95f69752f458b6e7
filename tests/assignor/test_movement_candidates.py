"""The KIP-441 movements' candidates, found for the whole group at once (issue 24,
history-moves), against the rule Kafka's ``TaskMovement`` applies pair by pair: client by
client in process order, each client's tasks ascending, a held (client, task) pair is offered
when the client is not caught up on the task and some client lags strictly less, keyed by how
many clients are caught up on it; the standby pass skips the client's warm-ups. And the
high-availability assignor's answer where it reads from the rack steps' columns that no
movement can be planned, against the one it gives making the sets every time."""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.streams.high_availability import (
    assign_high_availability,
    explain_high_availability,
)
from kassign.assignor.streams.lags import UNBOUNDED_RECOVERY_LAG, CatchUpIndex, is_caught_up
from kassign.assignor.streams.model import ApplicationState, RackAwareStrategy, TaskId
from kassign.assignor.streams.movement import candidates

from tests.assignor.strategies import app_states


class _Listed(AbstractSet[int]):
    """A set that iterates in the order it was drawn: a client's holdings come in whatever
    order its set keeps them (a 10,000-task group's seldom ascending), the offers must not."""

    def __init__(self, items: list[int]) -> None:
        self._items = items

    def __contains__(self, item: object) -> bool:
        return item in self._items

    def __iter__(self) -> Iterator[int]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


_LAG = st.one_of(st.integers(-3, 300), st.just(2**63 + 5))  # past a long: Python ints


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.integers(0, 300), min_size=1, max_size=10),
    st.lists(st.dictionaries(st.integers(0, 12), _LAG, min_size=1, max_size=8), max_size=5),
    st.integers(0, 2),
    st.one_of(st.integers(0, 40), st.just(UNBOUNDED_RECOVERY_LAG)),  # mostly a few caught up
    st.data(),
)
def test_candidates_are_the_pairs_kafka_offers_in_its_order(
    ends: list[int],
    reported: list[dict[int, int]],
    silent: int,
    acceptable: int,
    data: st.DataObject,
) -> None:
    n_t, n_c = len(ends), len(reported) + silent  # ``silent`` clients reported nothing
    tasks = [TaskId(0, k) for k in range(n_t)]
    lags = [{TaskId(0, k): v for k, v in r.items()} for r in reported] + [{}] * silent
    index = CatchUpIndex(tasks, ends, client_lags=lags, acceptable_recovery_lag=acceptable)
    drawn = st.lists(st.integers(0, n_t - 1), min_size=n_t // 2, unique=True)
    held = [set(h) for h in data.draw(st.lists(drawn, min_size=n_c, max_size=n_c))]
    skipped = [data.draw(st.sets(st.sampled_from(sorted(h)))) if h else set() for h in held]
    dense = [[lags[c].get(tasks[t], ends[t]) for t in range(n_t)] for c in range(n_c)]
    caught = [[is_caught_up(dense[c][t], acceptable) for t in range(n_t)] for c in range(n_c)]

    def offered(skip: list[set[int]]) -> list[tuple[int, int, int]]:
        return [
            (sum(caught[other][t] for other in range(n_c)), t, c)
            for c in range(n_c)
            for t in sorted(held[c] - skip[c])
            if not caught[c][t] and min(dense[o][t] for o in range(n_c)) < dense[c][t]
        ]

    every = np.array([(c, t) for c in range(n_c) for t in range(n_t)], np.int64).reshape(-1, 2)
    lags_of, caught_of = index.pair_lags(every[:, 0], every[:, 1])  # the columns under both
    assert lags_of.tolist() == [dense[c][t] for c, t in every.tolist()]
    assert caught_of.tolist() == [caught[c][t] for c, t in every.tolist()]
    listed = [_Listed(data.draw(st.permutations(sorted(h)))) for h in held]
    assert candidates(index, listed) == offered([set()] * n_c)
    assert candidates(index, listed, skipped) == offered(skipped)


@settings(max_examples=40, deadline=None)
@given(
    app_states(max_clients=5),
    st.sampled_from([RackAwareStrategy.MIN_TRAFFIC, RackAwareStrategy.BALANCE_SUBTOPOLOGY]),
    st.sampled_from([None, "r1"]),
)
def test_rack_aware_answer_alike_whether_the_movements_are_read_from_columns(
    state: ApplicationState, strategy: RackAwareStrategy, rack: str | None
) -> None:
    # with the rack steps' ``Replicas`` the assignor reads from the columns whether a movement
    # can be planned and makes the sets only then; an explanation always makes them
    state = replace(state, configs=replace(state.configs, rack_aware_strategy=strategy))
    if rack is not None:  # every client on one rack: the costs are known
        clients = {p: replace(c, rack_id=rack) for p, c in state.clients.items()}
        state = replace(state, clients=clients)
    assert assign_high_availability(state) == explain_high_availability(state)[0]
