"""KIP-441 movements and the catch-up index: what Kafka's TaskMovementTest asserts, and Kafka's
exact choices (least loaded caught-up client, movements in ``PriorityQueue.poll()`` order, lag
ranking)."""

from __future__ import annotations

from kassign.assignor.streams.lags import CatchUpIndex
from kassign.assignor.streams.model import LATEST_OFFSET, UNKNOWN_OFFSET_SUM, TaskId
from kassign.assignor.streams.movement import (
    ActiveMoves,
    StandbyMoves,
    _JavaQueue,
    move_active_tasks,
    move_standby_tasks,
)

END = 1_000


def index(lags: list[dict[int, int]], n_tasks: int, acceptable: int = 100) -> CatchUpIndex:
    """Clients' lags by task index; a task a client does not list lags by ``END``."""
    tasks = [TaskId(0, t) for t in range(n_tasks)]
    by_task = [{tasks[t]: v for t, v in c.items()} for c in lags]
    return CatchUpIndex(
        tasks, [END] * n_tasks, client_lags=by_task, acceptable_recovery_lag=acceptable
    )


def sets(*groups: set[int]) -> list[set[int]]:
    return [set(g) for g in groups]


def _active(
    idx: CatchUpIndex,
    active: list[set[int]],
    standby: list[set[int]],
    caps: list[int],
    *,
    warmups_left: int,
) -> ActiveMoves:
    return move_active_tasks(
        idx, active, standby=standby, capacities=caps, warmups_left=warmups_left
    )


def _standby(
    idx: CatchUpIndex,
    active: list[set[int]],
    standby: list[set[int]],
    caps: list[int],
    *,
    warmups: list[frozenset[int]],
    warmups_left: int,
) -> StandbyMoves:
    return move_standby_tasks(
        idx, active, standby=standby, capacities=caps, warmups=warmups, warmups_left=warmups_left
    )


# --- the index -----------------------------------------------------------------------------------


def test_caught_up_and_counts() -> None:
    idx = index([{0: LATEST_OFFSET}, {0: 50}, {0: 500}, {}], 2, acceptable=100)
    assert idx.caught_up(0) == [0, 1]
    assert idx.num_caught_up(0) == 2
    assert idx.caught_up(1) == [] and idx.num_caught_up(1) == 0
    assert idx.lag(3, 0) == END and idx.lag(1, 0) == 50


def test_short_changelog_makes_every_stateless_client_caught_up() -> None:
    tasks = [TaskId(0, 0)]
    lags = [{}, {tasks[0]: UNKNOWN_OFFSET_SUM}, {}]
    idx = CatchUpIndex(tasks, [10], client_lags=lags, acceptable_recovery_lag=100)
    assert idx.caught_up(0) == [0, 2] and idx.num_caught_up(0) == 2
    assert idx.is_caught_up(0, 0) and not idx.is_caught_up(1, 0)


def test_lag_ranking_puts_unknown_first_then_lag_then_process_order() -> None:
    # Kafka sorts clients by raw lag: -3 (unknown) ahead of every real lag; ties by process order
    idx = index([{0: 700}, {}, {0: UNKNOWN_OFFSET_SUM}, {0: 300}, {0: 700}], 1)
    assert list(idx.by_lag(0)) == [2, 3, 0, 4, 1]


def test_movement_needs_a_client_that_lags_less() -> None:
    idx = index([{0: 500}, {0: 500}, {0: 200}], 1)
    assert idx.has_more_caught_up_than(0, 0)
    assert not idx.has_more_caught_up_than(2, 0)  # least lag of all, even if not caught up
    same = index([{0: 500}, {0: 500}], 1)
    assert not same.has_more_caught_up_than(0, 0)


# --- the queue -----------------------------------------------------------------------------------


def test_queue_is_polled_in_sorted_order_not_heap_array_order() -> None:
    # Kafka 3.8+ polls: (caught-up count, task) ascending; its heap array reads 3, 0, 2, 1
    queue = _JavaQueue()
    for n, task in ((1, 0), (1, 1), (1, 2), (0, 3)):
        queue.offer(n, task, lagging=9)
    assert [task for _, task, _ in queue.drain()] == [3, 0, 1, 2]
    assert len(queue) == 0


def test_equal_queue_keys_are_polled_in_javas_order() -> None:
    # one task queued for four lagging standbys: java.util.PriorityQueue.poll() hands them out
    # 1, 4, 3, 2 (checked against the JDK), neither offer order nor its reverse
    queue = _JavaQueue()
    for lagging in (1, 2, 3, 4):
        queue.offer(2, 5, lagging=lagging)
    assert [lagging for _, _, lagging in queue.drain()] == [1, 4, 3, 2]


# --- active movements ----------------------------------------------------------------------------


def test_nothing_moves_when_everyone_is_caught_up() -> None:
    idx = index([{0: 0, 1: 0}, {0: 0, 1: 0}], 2)
    moves = _active(idx, sets({0}, {1}), sets(set(), set()), [1, 1], warmups_left=2)
    assert moves.movements == 0 and moves.active == (frozenset({0}), frozenset({1}))
    assert moves.warmups_left == 2


def test_nothing_moves_when_nobody_is_closer() -> None:
    idx = index([{}, {}], 2)  # no state anywhere: every client lags by the whole changelog
    moves = _active(idx, sets({0}, {1}), sets(set(), set()), [1, 1], warmups_left=2)
    assert moves.movements == 0


def test_task_returns_to_caught_up_client_and_lagging_one_warms_up() -> None:
    idx = index([{0: LATEST_OFFSET, 1: LATEST_OFFSET}, {}], 2)
    moves = _active(idx, sets({0}, {1}), sets(set(), set()), [1, 1], warmups_left=2)
    assert moves.active == (frozenset({0, 1}), frozenset())
    assert moves.standby == (frozenset(), frozenset({1}))
    assert moves.warmups == (frozenset(), frozenset({1}))
    assert (moves.movements, moves.warmups_left) == (1, 1)


def test_caught_up_standby_swaps_without_spending_a_warmup() -> None:
    idx = index([{0: LATEST_OFFSET}, {}, {0: 0}], 1)
    moves = _active(
        idx, sets(set(), {0}, set()), sets(set(), set(), {0}), [1, 1, 1], warmups_left=1
    )
    assert moves.active == (frozenset(), frozenset(), frozenset({0}))
    assert moves.standby == (frozenset(), frozenset({0}), frozenset())
    assert moves.warmups_left == 1 and moves.warmups == (frozenset(),) * 3


def test_least_loaded_caught_up_client_takes_the_task() -> None:
    idx = index([{0: 0}, {0: 0}, {}], 10)
    # client 0 holds two more tasks (as actives of other kinds): client 1 is lighter
    moves = _active(
        idx, sets({7, 8}, set(), {0}), sets(set(), set(), set()), [1, 1, 1], warmups_left=1
    )
    assert 0 in moves.active[1]


def test_load_is_per_thread() -> None:
    idx = index([{0: 0}, {0: 0}, {}], 10)
    moves = _active(
        idx, sets({7}, {8, 9}, {0}), sets(set(), set(), set()), [1, 4, 1], warmups_left=1
    )
    assert 0 in moves.active[1]  # 2/4 threads beats 1/1


def test_warmups_stop_at_the_budget_and_the_rest_just_move() -> None:
    idx = index([{t: LATEST_OFFSET for t in range(4)}, {}], 4)
    moves = _active(idx, sets(set(), {0, 1, 2, 3}), sets(set(), set()), [1, 1], warmups_left=1)
    assert moves.active == (frozenset({0, 1, 2, 3}), frozenset())
    assert moves.standby[1] == {0}  # the first movement in queue order got the only warm-up
    assert moves.movements == 4 and moves.warmups_left == 0


def test_warmups_go_in_kafkas_queue_order() -> None:
    # tasks 0-2: one caught-up client; task 3: none, client 0 merely lags less. Kafka polls its
    # queue: 3, 0, 1, 2, so with three warm-ups task 2 is the one left without (the heap array,
    # [3, 0, 2, 1], would have left task 1 without)
    idx = index([{0: 0, 1: 0, 2: 0, 3: 500}, {}], 4)
    moves = _active(idx, sets(set(), {0, 1, 2, 3}), sets(set(), set()), [1, 1], warmups_left=3)
    assert moves.active[0] == {0, 1, 2, 3}
    assert moves.warmups[1] == {3, 0, 1}


def test_most_caught_up_client_takes_over_when_nobody_is_caught_up() -> None:
    idx = index([{0: 900}, {0: 300}, {0: 600}], 1)
    moves = _active(
        idx, sets({0}, set(), set()), sets(set(), set(), set()), [1, 1, 1], warmups_left=1
    )
    assert moves.active == (frozenset(), frozenset({0}), frozenset())
    assert moves.warmups[0] == {0}


def test_most_caught_up_standby_swaps() -> None:
    idx = index([{0: 900}, {0: 300}], 1)
    moves = _active(idx, sets({0}, set()), sets(set(), {0}), [1, 1], warmups_left=1)
    assert moves.active == (frozenset(), frozenset({0}))
    assert moves.standby == (frozenset({0}), frozenset())
    assert moves.warmups_left == 1


# --- standby movements ---------------------------------------------------------------------------


def test_lagging_standby_is_copied_to_a_caught_up_client_and_kept_as_warmup() -> None:
    idx = index([{0: LATEST_OFFSET}, {}, {0: 0}], 1)
    none: list[frozenset[int]] = [frozenset()] * 3
    moves = _standby(
        idx,
        sets({0}, set(), set()),
        sets(set(), {0}, set()),
        [1, 1, 1],
        warmups=none,
        warmups_left=1,
    )
    assert moves.standby == (frozenset(), frozenset({0}), frozenset({0}))
    assert (moves.movements, moves.warmups_placed, moves.warmups_left) == (1, 1, 0)


def test_lagging_standby_moves_outright_without_budget() -> None:
    idx = index([{0: LATEST_OFFSET}, {}, {0: 0}], 1)
    none: list[frozenset[int]] = [frozenset()] * 3
    moves = _standby(
        idx,
        sets({0}, set(), set()),
        sets(set(), {0}, set()),
        [1, 1, 1],
        warmups=none,
        warmups_left=0,
    )
    assert moves.standby == (frozenset(), frozenset(), frozenset({0}))
    assert (moves.movements, moves.warmups_placed) == (1, 0)


def test_warmups_are_not_moved_again() -> None:
    idx = index([{0: LATEST_OFFSET}, {}, {0: 0}], 1)
    warm = [frozenset(), frozenset({0}), frozenset()]
    moves = _standby(
        idx,
        sets({0}, set(), set()),
        sets(set(), {0}, set()),
        [1, 1, 1],
        warmups=warm,
        warmups_left=1,
    )
    assert moves.movements == 0 and moves.standby[1] == {0}


def test_no_standby_move_when_every_closer_client_holds_a_copy() -> None:
    idx = index([{0: LATEST_OFFSET}, {0: 10}, {}], 1)
    none: list[frozenset[int]] = [frozenset()] * 3
    moves = _standby(
        idx, sets({0}, set(), set()), sets(set(), {0}, {0}), [1, 1, 1], warmups=none, warmups_left=2
    )
    assert moves.movements == 0 and moves.standby == (frozenset(), frozenset({0}), frozenset({0}))


def test_equal_loads_break_by_process_order() -> None:
    idx = index([{}, {0: 0}, {0: 0}, {}], 1)
    moves = _active(
        idx,
        sets(set(), set(), set(), {0}),
        sets(set(), set(), set(), set()),
        [1] * 4,
        warmups_left=0,
    )
    assert moves.active[1] == {0} and moves.standby[3] == set()  # no budget: no warm-up


def test_two_clients_trade_tasks_and_each_warms_up_the_other() -> None:
    # 0 is caught up where it runs; 1 only on client 2; 2 only on client 1
    idx = index([{0: 0}, {2: 0}, {1: 0}], 3)
    moves = _active(idx, sets({0}, {1}, {2}), sets(set(), set(), set()), [1, 1, 1], warmups_left=10)
    assert moves.active == (frozenset({0}), frozenset({2}), frozenset({1}))
    assert moves.standby == (frozenset(), frozenset({1}), frozenset({2}))
    assert moves.movements == 2 and moves.warmups_left == 8


def test_lagging_standby_goes_to_the_most_caught_up_free_client_when_none_is_caught_up() -> None:
    # the only caught-up client runs the task; client 2 lags 300 (not caught up at 100) but less
    # than the standby on client 1 (900): the copy goes there, and client 1 keeps a warm-up
    idx = index([{0: LATEST_OFFSET}, {0: 900}, {0: 300}], 1)
    none: list[frozenset[int]] = [frozenset()] * 3
    moves = _standby(
        idx,
        sets({0}, set(), set()),
        sets(set(), {0}, set()),
        [1, 1, 1],
        warmups=none,
        warmups_left=1,
    )
    assert moves.standby == (frozenset(), frozenset({0}), frozenset({0}))
    assert (moves.movements, moves.warmups_placed, moves.warmups_left) == (1, 1, 0)


def test_standby_is_not_copied_to_a_client_lagging_more_than_its_holder() -> None:
    # the free client 2 lags 900, behind the standby's own 300: the search stops at the holder
    idx = index([{0: LATEST_OFFSET}, {0: 300}, {0: 900}], 1)
    none: list[frozenset[int]] = [frozenset()] * 3
    moves = _standby(
        idx,
        sets({0}, set(), set()),
        sets(set(), {0}, set()),
        [1, 1, 1],
        warmups=none,
        warmups_left=1,
    )
    assert moves.movements == 0 and moves.warmups_left == 1
    assert moves.standby == (frozenset(), frozenset({0}), frozenset())


def test_the_one_warmup_goes_to_the_first_lagging_standby_in_process_order() -> None:
    # clients 1 and 2 both hold a lagging standby; 3 and 4 are caught up and free. Both copies
    # move, and the single warm-up keeps client 1's copy, whose movement was queued first
    idx = index([{0: LATEST_OFFSET}, {0: 900}, {0: 900}, {0: 0}, {0: 0}], 1)
    none: list[frozenset[int]] = [frozenset()] * 5
    moves = _standby(
        idx,
        sets({0}, set(), set(), set(), set()),
        sets(set(), {0}, {0}, set(), set()),
        [1] * 5,
        warmups=none,
        warmups_left=1,
    )
    assert moves.standby == (
        frozenset(),
        frozenset({0}),
        frozenset(),
        frozenset({0}),
        frozenset({0}),
    )
    assert (moves.movements, moves.warmups_placed, moves.warmups_left) == (2, 1, 0)


def test_standbys_count_toward_a_runners_load() -> None:
    # KIP-441 load is actives plus standbys per thread: client 0 carries two standbys (2/1),
    # client 1 one active (1/1), so client 1 is the less loaded caught-up runner
    idx = index([{0: 0}, {0: 0}, {}], 8)
    moves = _active(
        idx, sets(set(), {7}, {0}), sets({5, 6}, set(), set()), [1, 1, 1], warmups_left=0
    )
    assert moves.active == (frozenset(), frozenset({0, 7}), frozenset())
