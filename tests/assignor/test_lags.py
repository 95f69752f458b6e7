"""KIP-441 lags and previous tasks, the behaviours Kafka's ClientStateTest asserts for them."""

from __future__ import annotations

from uuid import UUID

from hypothesis import given
from hypothesis import strategies as st
from kassign.assignor.streams.lags import (
    UNBOUNDED_RECOVERY_LAG,
    CatchUpIndex,
    ConsumerReport,
    TaskLags,
    compute_lags,
    is_caught_up,
    kafka_streams_state,
    local_lags,
    merge_offset_sums,
    previous_tasks,
)
from kassign.assignor.streams.model import (
    LATEST_OFFSET,
    UNKNOWN_OFFSET_SUM,
    ConsumerState,
    TaskId,
)

T01, T02, T03, T04 = TaskId(0, 1), TaskId(0, 2), TaskId(0, 3), TaskId(0, 4)
P1 = UUID(int=1)


def test_lag_is_end_offset_sum_minus_offset_sum() -> None:
    assert compute_lags({T01: 500}, {T01: 5_000}) == {T01: 4_500}


def test_running_active_is_latest_offset() -> None:
    assert compute_lags({T01: LATEST_OFFSET}, {T01: 5_000}) == {T01: LATEST_OFFSET}


def test_unknown_offset_sum_stays_unknown() -> None:
    assert compute_lags({T01: UNKNOWN_OFFSET_SUM}, {T01: 5_000}) == {T01: UNKNOWN_OFFSET_SUM}


def test_no_local_state_lags_by_the_whole_changelog() -> None:
    assert compute_lags({}, {T01: 5_000, T02: 0}) == {T01: 5_000, T02: 0}


def test_offset_sum_above_end_offset_means_rebuild_from_scratch() -> None:
    assert compute_lags({T01: 7_000}, {T01: 5_000}) == {T01: 5_000}


def test_lags_cover_exactly_the_stateful_tasks() -> None:
    # a task the topology no longer has is not given a lag
    assert compute_lags({T01: 10, T04: 3}, {T01: 10, T02: 20}) == {T01: 0, T02: 20}


def test_previous_tasks_split_on_latest_offset() -> None:
    active, standby = previous_tasks({T01: LATEST_OFFSET, T02: 17, T03: UNKNOWN_OFFSET_SUM})
    assert active == {T01}
    assert standby == {T02, T03}


def test_owned_task_is_active_even_with_a_real_offset_sum() -> None:
    # owned partitions win: a task it owned is a previous active, never also a standby
    active, standby = previous_tasks({T01: 100, T02: 17}, owned_active={T01, T04})
    assert active == {T01, T04}
    assert standby == {T02}


def test_caught_up_rules() -> None:
    assert is_caught_up(LATEST_OFFSET, 0)
    assert is_caught_up(0, 0)
    assert is_caught_up(100, 100)
    assert not is_caught_up(101, 100)
    assert not is_caught_up(UNKNOWN_OFFSET_SUM, 100)
    assert not is_caught_up(-1, 100)


def test_unbounded_recovery_lag_makes_everyone_caught_up() -> None:
    assert is_caught_up(UNKNOWN_OFFSET_SUM, UNBOUNDED_RECOVERY_LAG)
    assert is_caught_up(10**15, UNBOUNDED_RECOVERY_LAG)


def test_offset_sums_merge_in_member_order_later_wins() -> None:
    a = ConsumerReport("b-member", {T01: 5})
    b = ConsumerReport("a-member", {T01: 9, T02: 1})
    assert merge_offset_sums([a, b]) == {T01: 5, T02: 1}


def test_client_state_from_consumer_reports() -> None:
    ends = {T01: 1_000, T02: 1_000, T03: 1_000}
    reports = [
        ConsumerReport("m2", {T02: 400}, frozenset({T04})),  # T04: a stateless task it ran
        ConsumerReport("m1", {T01: LATEST_OFFSET}),
    ]
    client = kafka_streams_state(P1, reports, ends, rack_id="r1", client_tags={"zone": "z"})
    assert client.consumer_ids == ("m1", "m2")
    assert client.previous_active_tasks == {T01, T04}
    assert client.previous_standby_tasks == {T02}
    assert dict(client.task_lags) == {T01: LATEST_OFFSET, T02: 600, T03: 1_000}
    assert client.lag_for(T03) == 1_000
    assert client.consumers[1].previous_stateful == {T02}
    assert client.consumers[1].previous_active == {T04}
    assert client.rack_id == "r1" and client.client_tags == {"zone": "z"}


def test_sparse_lags_equal_the_full_dict_and_expose_local_entries() -> None:
    ends = {T01: 10, T02: 20}
    lags = TaskLags(ends, {T02: 5, T04: 1})
    assert lags == {T01: 10, T02: 5}
    assert len(lags) == 2 and list(lags) == [T01, T02]
    assert local_lags(lags) == {T02: 5}
    assert local_lags({T01: 3}) == {T01: 3}


offset_sums = st.one_of(st.integers(0, 10**6), st.sampled_from([LATEST_OFFSET, UNKNOWN_OFFSET_SUM]))


@given(
    st.dictionaries(st.integers(0, 20), offset_sums),
    st.dictionaries(st.integers(0, 20), st.integers(0, 10**6)),
)
def test_sparse_and_dense_lags_agree(sums: dict[int, int], ends: dict[int, int]) -> None:
    task_sums = {TaskId(0, k): v for k, v in sums.items()}
    task_ends = {TaskId(0, k): v for k, v in ends.items()}
    reports = [ConsumerReport("m", task_sums)]
    client = kafka_streams_state(P1, reports, task_ends)
    assert dict(client.task_lags) == compute_lags(task_sums, task_ends)
    for task, lag in client.task_lags.items():
        assert lag in (LATEST_OFFSET, UNKNOWN_OFFSET_SUM) or 0 <= lag <= task_ends[task]
    assert client.previous_tasks == set(task_sums)


_reports = st.lists(
    st.tuples(
        st.sampled_from(["m1", "m2", "m3", "m4"]),
        st.dictionaries(st.integers(0, 8), offset_sums, max_size=6),
        st.frozensets(st.integers(0, 8), max_size=3),
    ),
    min_size=1,
    max_size=4,
    unique_by=lambda r: r[0],
)


@given(_reports, st.dictionaries(st.integers(0, 8), st.integers(0, 10**6)), st.booleans())
def test_a_client_of_many_consumers_is_the_merge_of_their_reports(
    raw: list[tuple[str, dict[int, int], frozenset[int]]], ends: dict[int, int], share: bool
) -> None:
    # the reads shared by consumers (one report object each, as one userData is) and
    # merged only where they differ give what the definitions give: the sums merged in
    # member order, previous tasks of the merge, the lags of every stateful task
    first = {TaskId(0, k): v for k, v in raw[0][1].items()}
    reports = [
        ConsumerReport(
            m,
            first if share else {TaskId(0, k): v for k, v in sums.items()},
            frozenset(TaskId(0, k) for k in owned),
        )
        for m, sums, owned in raw
    ]
    task_ends = {TaskId(0, k): v for k, v in ends.items()}
    client = kafka_streams_state(P1, reports, task_ends, host_info="h:1")
    ordered = sorted(reports, key=lambda r: r.member_id)
    merged = merge_offset_sums(reports)
    owned_all = frozenset().union(*(r.owned_active for r in reports))
    active, standby = previous_tasks(merged, owned_active=owned_all)
    assert (client.previous_active_tasks, client.previous_standby_tasks) == (active, standby)
    assert dict(client.task_lags) == compute_lags(merged, task_ends)
    assert dict(local_lags(client.task_lags)) == {
        t: lag for t, lag in compute_lags(merged, task_ends).items() if t in merged
    }
    assert client.consumers == tuple(
        ConsumerState(r.member_id, r.owned_active, frozenset(r.task_offset_sums)) for r in ordered
    )
    assert (client.host_info, client.client_tags, client.rack_id) == ("h:1", {}, None)


def test_only_javas_long_max_recovery_lag_means_unbounded() -> None:
    # acceptable.recovery.lag arrives as a Java long; only Long.MAX_VALUE switches the lag check
    # off, one less is an ordinary (huge) bound that an unknown offset sum still fails
    long_max = 9_223_372_036_854_775_807
    assert is_caught_up(UNKNOWN_OFFSET_SUM, long_max)
    assert is_caught_up(long_max - 1, long_max)
    assert not is_caught_up(UNKNOWN_OFFSET_SUM, long_max - 1)
    assert is_caught_up(long_max - 1, long_max - 1)


def test_sparse_lags_answer_membership_for_stateful_tasks_only() -> None:
    # every stateful task has a lag (local or the whole changelog); a dropped task has none
    lags = TaskLags({T01: 10, T02: 20}, {T02: 5, T04: 1})
    assert T01 in lags and T02 in lags
    assert T03 not in lags and T04 not in lags
    assert lags.get(T04) is None and lags.get(T01) == 10


@given(
    st.lists(st.integers(0, 300), min_size=1, max_size=12),
    st.lists(st.dictionaries(st.integers(0, 11), st.integers(-3, 300)), max_size=6),
    st.integers(0, 200),
)
def test_caught_up_counts_count_every_caught_up_client(
    ends: list[int], reported: list[dict[int, int]], acceptable: int
) -> None:
    # the counts of every task at once read unreported tasks without a call each; each must
    # still be the number of clients whose lag (reported, else the end-offset sum) is caught up
    tasks = [TaskId(0, k) for k in range(len(ends))]
    client_lags = [{tasks[k]: lag for k, lag in r.items() if k < len(ends)} for r in reported]
    index = CatchUpIndex(tasks, ends, client_lags=client_lags, acceptable_recovery_lag=acceptable)
    expected = [
        sum(is_caught_up(lags.get(t, end), acceptable) for lags in client_lags)
        for t, end in zip(tasks, ends, strict=True)
    ]
    assert index.caught_up_counts() == expected
    assert expected == [index.num_caught_up(k) for k in range(len(tasks))]


@given(
    st.lists(st.integers(0, 300), min_size=1, max_size=8),
    st.lists(
        st.dictionaries(
            st.integers(0, 10), st.one_of(st.integers(-3, 300), st.just(2**63 + 5)), max_size=8
        ),
        max_size=5,
    ),
    st.one_of(st.integers(0, 200), st.just(UNBOUNDED_RECOVERY_LAG)),
)
def test_every_index_query_reads_the_reported_lag_else_the_end_offset_sum(
    ends: list[int], reported: list[dict[int, int]], acceptable: int
) -> None:
    # the index stores reported lags as rows grouped by task (one with a lag past a long, or
    # of a task outside the list, too); each query must be the rule on the dense lags
    tasks = [TaskId(0, k) for k in range(len(ends))]
    client_lags = [{TaskId(0, k): lag for k, lag in r.items()} for r in reported]
    index = CatchUpIndex(tasks, ends, client_lags=client_lags, acceptable_recovery_lag=acceptable)
    clients = range(len(client_lags))
    for k, (task, end) in enumerate(zip(tasks, ends, strict=True)):
        dense = [lags.get(task, end) for lags in client_lags]
        caught = [c for c in clients if is_caught_up(dense[c], acceptable)]
        assert [index.lag(c, k) for c in clients] == dense
        assert [index.is_caught_up(c, k) for c in clients] == [c in caught for c in clients]
        assert index.caught_up(k) == caught
        assert list(index.by_lag(k)) == sorted(clients, key=lambda c: (dense[c], c))
        least = min(dense, default=end)
        assert [index.has_more_caught_up_than(c, k) for c in clients] == [
            c not in caught and least < dense[c] for c in clients
        ]
    stateful = {t for lags in client_lags for t in lags if t in tasks}
    assert index.reports_any() == bool(stateful)
    assert index.reported_among(range(len(tasks))) == sorted(t.partition for t in stateful)
