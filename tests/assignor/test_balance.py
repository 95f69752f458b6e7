"""Per-thread balancing: the fast scan must give exactly what Kafka's full pairwise loop gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from kassign.assignor.streams.balance import balance_over_threads, round_robin


def kafka_loop(
    movable: list[list[int]],
    counts: list[int],
    caps: list[int],
    held: list[set[int]],
    allowed: list[list[bool]] | None,
) -> list[list[int]]:
    """Kafka's ``balanceTasksOverThreads`` written out plainly: every pair, every pass."""
    tasks = [sorted(ts) for ts in movable]
    count, holding = list(counts), [set(h) for h in held]

    def should_move(s: int, d: int) -> bool:
        skew = count[s] / caps[s] - count[d] / caps[d]
        if skew <= 0:
            return False
        proposed = (count[s] - 1) / caps[s] - (count[d] + 1) / caps[d]
        return 0 <= proposed < skew

    keep_going = True
    while keep_going:
        keep_going = False
        for s in range(len(tasks)):
            for d in range(len(tasks)):
                if s == d:
                    continue
                for task in list(tasks[s]):
                    if not should_move(s, d):
                        break
                    if task not in holding[d] and (allowed is None or allowed[s][d]):
                        tasks[s].remove(task)
                        tasks[d] = sorted([*tasks[d], task])
                        holding[s].discard(task)
                        holding[d].add(task)
                        count[s] -= 1
                        count[d] += 1
                        keep_going = True
    return tasks


def test_round_robin_in_client_order() -> None:
    assert round_robin(7, 3) == [[0, 3, 6], [1, 4], [2, 5]]
    assert round_robin(2, 4) == [[0], [1], [], []]


def test_equal_threads_round_robin_is_already_balanced() -> None:
    guess = round_robin(10, 3)
    assert (
        balance_over_threads(guess, [4, 3, 3], capacities=[1, 1, 1], held=[set(g) for g in guess])
        == guess
    )


def test_more_threads_take_more_tasks_smallest_first() -> None:
    guess = round_robin(6, 2)  # [[0, 2, 4], [1, 3, 5]]
    result = balance_over_threads(guess, [3, 3], capacities=[1, 2], held=[set(g) for g in guess])
    assert result == [[2, 4], [0, 1, 3, 5]]


def test_the_callers_lists_stay_as_given_and_untouched_clients_get_theirs_back() -> None:
    movable = [[0, 2, 4], [1, 3, 5], [6]]
    before = [list(m) for m in movable]
    result = balance_over_threads(
        movable, [3, 3, 1], capacities=[1, 1, 1], held=[set(m) for m in movable]
    )
    assert movable == before
    assert result == [[2, 4], [1, 3, 5], [0, 6]]
    assert result[1] is movable[1] and result[2] is not movable[2]


def test_a_client_never_receives_a_task_it_holds() -> None:
    # standby balancing: client 1 already holds 0 and 1 as actives, so only 2 can move to it
    result = balance_over_threads(
        [[0, 1, 2], []], [4, 2], capacities=[1, 1], held=[{0, 1, 2, 9}, {0, 1}]
    )
    assert result == [[0, 1], [2]]


def test_disallowed_pairs_never_trade() -> None:
    result = balance_over_threads(
        [[0, 1, 2, 3], [], []],
        [4, 0, 0],
        capacities=[1, 1, 1],
        held=[{0, 1, 2, 3}, set(), set()],
        allowed=lambda s, d: d != 1,
    )
    assert result[1] == [] and result == [[2, 3], [], [0, 1]]


@st.composite
def balance_inputs(
    draw: st.DrawFn,
) -> tuple[list[list[int]], list[int], list[int], list[set[int]], list[list[bool]] | None]:
    n = draw(st.integers(1, 7))
    caps = draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    n_tasks = draw(st.integers(0, 25))
    owner = draw(st.lists(st.integers(0, n - 1), min_size=n_tasks, max_size=n_tasks))
    movable = [[t for t in range(n_tasks) if owner[t] == c] for c in range(n)]
    other = [draw(st.sets(st.integers(0, 30), max_size=5)) - set(movable[c]) for c in range(n)]
    for c in range(n):  # a task held as the other kind is never also movable on any client
        other[c] -= set(range(n_tasks))
        other[c] |= {t + 100 for t in draw(st.sets(st.integers(0, n_tasks), max_size=3))}
    held = [set(movable[c]) | other[c] for c in range(n)]
    counts = [len(h) for h in held]
    allowed = draw(
        st.one_of(
            st.none(),
            st.lists(st.lists(st.booleans(), min_size=n, max_size=n), min_size=n, max_size=n),
        )
    )
    return movable, counts, caps, held, allowed


@settings(max_examples=200, deadline=None)
@given(balance_inputs())
def test_same_result_as_kafkas_pairwise_loop(
    case: tuple[list[list[int]], list[int], list[int], list[set[int]], list[list[bool]] | None],
) -> None:
    movable, counts, caps, held, allowed = case
    predicate = None if allowed is None else (lambda s, d: allowed[s][d])
    scratch = [set(h) for h in held]  # updated in place
    ours = balance_over_threads(movable, counts, capacities=caps, held=scratch, allowed=predicate)
    assert ours == kafka_loop(movable, counts, caps, held, allowed)
    assert sorted(t for ts in ours for t in ts) == sorted(t for ts in movable for t in ts)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_sets_made_where_moves_visit_and_a_fixed_column_match_kafkas_loop(
    data: st.DataObject,
) -> None:
    """``held=None`` (sets made only for the clients a move visits) with the other kind as a
    per-task column (``fixed``: a task's active client, never one holding it here) gives
    Kafka's loop over every client's full set; a task may be held here by several clients
    (several standbys), so a set made late or wrong would let one receive it twice."""
    n = data.draw(st.integers(2, 7))
    caps = data.draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    n_tasks = data.draw(st.integers(0, 25))
    holders = [
        data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=min(3, n - 1)))
        for _ in range(n_tasks)
    ]
    movable = [[t for t in range(n_tasks) if c in holders[t]] for c in range(n)]
    fixed = [
        data.draw(st.sampled_from([-1, *(c for c in range(n) if c not in holders[t])]))
        for t in range(n_tasks)
    ]
    held = [set(movable[c]) | {t for t in range(n_tasks) if fixed[t] == c} for c in range(n)]
    counts = [len(h) + data.draw(st.integers(0, 3)) for h in held]
    ours = balance_over_threads(movable, counts, capacities=caps, held=None, fixed=fixed)
    assert ours == kafka_loop(movable, counts, caps, held, None)
