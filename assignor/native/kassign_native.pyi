"""kassign's compiled core (Rust, ``assignor/native/src``); called by
``kassign.assignor.consumer.sticky_general``, ``sticky_constrained``, ``range_assignor`` and
``kassign.assignor.streams.standby``, which document the algorithms; by
``kassign.assignor.streams.holders`` (sorted lists of shared objects per client); and by
``kassign.assignor.consumer.columns`` (replica rack sets numbered by value); by
``kassign.assignor.streams.rack.standby_flow`` (the KIP-925 standby graph's groups and arcs); by
``kassign.kafka.consumer_user_data`` (eager sticky's userData, the one reader of it) and
``kassign.server.consumer.owned_wire`` (a compact request's owned partitions); by
``kassign.server.streams.response_wire`` (the Streams answer's client and member lists); by
``kassign.assignor.streams.threads`` (the Streams thread distribution, the whole group at once)."""

from array import array
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, Literal, TypeAlias, TypeVar

_T = TypeVar("_T")
_H = TypeVar("_H", bound=Hashable)

def general_assignment(
    *,
    offsets: list[int],
    topic_hashes: list[int],
    rank: list[int],
    subscription_sets: list[list[int]],
    subscription_of: list[int],
    owned_order: list[int],
    owned: bytes,
    owned_ends: list[int],
    previous_generation: list[int | None],
    previous: bytes,
    previous_ends: list[int],
    member_rack: list[int],
    set_of: bytes,
    set_has: list[bool],
    racks: int,
    checkpoint: Callable[[], object],
    java_set_order: bool = True,
) -> tuple[bytes, list[int], list[int], tuple[int, int] | None]:
    """Kafka's ``GeneralAssignmentBuilder`` over numbers, without the GIL: (partition ids of
    every member end to end, each member's end, the answer's member order, and
    ``(partition, member)`` where Kafka throws ``NullPointerException``, else ``None``).
    ``java_set_order=False`` moves back a movement set's smallest partition instead of the
    first in Java's hash order (tests: that order must still decide some groups)."""

def rack_round_robin(
    unassigned: bytes,
    under_min: list[int],
    at_min: list[int],
    counts: list[int],
    min_quota: int,
    max_quota: int,
    over: int,
    expected_over: int,
    member_rack: list[int],
    set_of: bytes,
    set_has: list[bool],
    racks: int,
) -> tuple[bytes, list[int], list[int], int]:
    """The constrained builder's rack-aware round robin over member and partition numbers,
    without the GIL: (per partition of ``unassigned`` its member or -1, as int64 bytes;
    ``under_min``, ``at_min`` and ``over`` after it)."""

def standby_placement(
    replicas: int,
    tasks: int,
    active_tasks: bytes,
    active_ranks: bytes,
    capacities: list[int],
    counts: list[int],
    group: list[int],
    distinct: list[int],
    values: list[list[int]],
    sizes: list[int],
    tag_aware: bool,
    checkpoint: Callable[[], object],
) -> tuple[list[list[int]], list[tuple[int, int]], list[int]]:
    """Standby placement over ``tasks`` positions and client ranks, without the GIL, the
    actives given as ``(position, rank)`` pairs (two int64 columns' bytes): (per rank
    the positions it received, in order; with tags, the ``(position, rank)`` replicas placed
    least loaded; the positions left short)."""

StandbyInput: TypeAlias = tuple[
    list[bytes], tuple[int, int, int], tuple[int, int], bytes | None, bytes | None, bytes | None
]
"""A standby problem (``standby_flow.StandbyProblem``): its columns client_rack, client_class,
class_values, rep_task, rep_client, active_client, misses, may_lose and may_gain as int64
bytes; (classes, tag keys, racks); (traffic_cost, non_overlap_cost); the flags anchored, fixed
and loose as ``bool_`` bytes or ``None``. ``ValueError`` when they do not fit together."""

def standby_groups(problem: StandbyInput) -> tuple[bytes, bytes, bytes, bytes]:
    """A standby problem's replica groups, without the GIL: each replica's group, each group's
    task and size (int64 bytes), and the tag classes each group may go to (groups x classes
    bytes of 0 or 1)."""

def standby_compact_graph(problem: StandbyInput) -> tuple[int, int, bytes]:
    """A standby problem's compact graph, without the GIL: (nodes, group-to-hub arcs, one int64
    buffer: the arcs' tails, heads, capacities and unit costs, each column as long as the
    arcs, then the nodes' supplies, then each group's task). The arcs: each replica staying,
    each group to a hub, each hub to a client, each client to the bank; the nodes: groups,
    hubs, clients, the bank."""

def standby_diversity(problem: StandbyInput, tasks: bytes, clients: bytes) -> bytes:
    """Per task and tag key of ``problem``, the distinct set tag values among the replicas
    ``(tasks[i], clients[i])`` (int64 bytes) and the task's active, without the GIL: tasks x
    tag keys int64 bytes, row by row; ``ValueError`` for a replica outside the problem."""

def standby_split(
    problem: StandbyInput, graph: tuple[int, int, bytes], flows: bytes
) -> bytes | None:
    """The compact standby graph's flows read back, without the GIL: from ``problem``, the
    ``(nodes, moves, buffer)`` ``standby_compact_graph`` gave and the solver's flow on each arc
    (int64 bytes), the standbys sorted by (task, client) as one int64 buffer, the tasks then
    the clients; ``None`` when a hub's inflow cannot be split over its clients (each arriving
    replica on a client of its hub that does not hold its task, after trades within the hub);
    ``ValueError`` when the flows are not that graph's."""

def picked_sorted(items: tuple[_T, ...], held: Sequence[Iterable[int]]) -> list[tuple[_T, ...]]:
    """Per collection of ``held`` (positions in ``items``), ``items`` at its positions in
    ascending order, as a tuple; ``ValueError`` for a position past ``items``."""

def picked_runs(items: tuple[_T, ...], positions: bytes, ends: list[int]) -> list[tuple[_T, ...]]:
    """Per run ``positions[ends[i-1]:ends[i]]`` (native-endian int64 bytes), ``items`` at
    those positions in the order given, as a tuple; ``ValueError`` for a position past
    ``items``, a negative one or ends that do not split ``positions``."""

def first_seen(layouts: list[tuple[_H, ...]]) -> tuple[list[_H], bytes]:
    """Every value of ``layouts`` (end to end) numbered by value in order of first appearance
    (a dict's hash and equality): the distinct values in that order, and each value's number
    (native int64 bytes)."""

def sticky_user_data(
    members: list[bytes | None],
) -> tuple[
    list[str],
    list[int | None],
    list[tuple[str, int] | None],
    bytes,
    bytes,
    bytes,
    bytes,
    bytes,
]:
    """Eager ``StickyAssignor`` userData of every member at once (``None``: nothing),
    read without the GIL: (topic names; per member its generation (v1) or ``None``, and
    ``(reason, offset)`` where its bytes fit neither layout; per member the end of its entries
    and of its numbers; per entry its name's index and its partition count, as int64 bytes;
    every entry's partitions end to end, int32 bytes; native byte order)."""

def owned_by_topic(
    members: list[bytes | None],
) -> tuple[list[str], list[bool], bytes, bytes, bytes, bytes, bytes]:
    """Every member's compact ``ConsumerSubscription`` bytes (``None``: none) read for their
    ``owned_by_topic`` entries at once, without the GIL: (topic names; per member whether its
    entries are sorted, names and numbers strictly ascending; per member the end of its entries
    and of its numbers; per entry its name's index and its partition count, as int64 bytes;
    every entry's partitions end to end, int32 bytes; native byte order). Entries without
    partitions are dropped. ``ValueError`` where bytes are not protobuf."""

def request_members(
    data: bytes,
) -> tuple[
    list[str],
    list[str],
    list[str | None],
    list[bytes],
    list[str | None],
    list[bytes | None],
    list[int | None],
    list[list[str]],
    list[int],
    list[int],
    list[bytes | None],
    list[str],
    list[int | None],
    list[float | None],
]:
    """A ``ConsumerAssignRequest``'s members read from its bytes (other fields skipped), every
    member's fields as columns, as protobuf reads them: per member its id, instance id, kind
    (``"subscription"``, ``"raw_subscription"``, ``None``), raw subscription (``b""`` unless
    raw), which ``user_data`` (``"info"``, ``"info_bytes"``, ``"user_data_bytes"``, ``None``)
    and its bytes (``None`` unless bytes), ``topic_list`` (``None``: unset), topics, the
    number of ``owned_partitions`` and of ``owned_by_topic`` entries, those entries as fields
    (``None``: none; ``owned_by_topic`` reads them), rack, ``generation_id`` and ``capacity``
    (``None``: unset). ``ValueError`` where bytes are not protobuf or a string not UTF-8."""

def compact_members(
    ids: list[str],
    assigned: tuple[bytes, bytes, bytes] | None,
    revoked: tuple[bytes, bytes, bytes] | None,
    assignments: list[bytes] | None,
) -> bytes:
    """The compact answer's ``members`` (``ConsumerAssignResponse`` field 1) as protobuf wire
    bytes, every member framed at once without the GIL: member ``i`` with ``ids[i]``, list
    ``i`` of ``assigned`` and ``revoked`` (each as columns: per entry its topic's index in the
    answer's table and its partition, and per member ``[start, end)`` of its entries, sorted;
    int64 bytes, native byte order; ``None``: every list empty), cut into ``PartitionRuns``
    by topic, and ``assignments[i]`` when given. ``ValueError`` when the columns do not fit
    the members."""

def range_with_racks(
    *,
    offsets: list[int],
    subscribers: bytes,
    subscriber_ends: list[int],
    passes: list[list[int]],
    member_rack: list[int],
    set_of: bytes,
    set_has: list[bool],
    racks: int,
    checkpoint: Callable[[], object],
) -> bytes:
    """The range assignor when some topic needs rack matching, over topic, partition and
    member numbers, without the GIL: the rack-matched ``passes`` (several co-partitioned
    topics, or one topic's rack-matched ranges), then every topic's plain ranges; per
    partition id its member's place in member order, as int64 bytes."""

# The Streams room's request topology (issue 24, branch streams-decode).

def request_tasks(
    data: bytes,
    task_id: type[tuple[bytes, int, int]],
) -> tuple[bytes, bytes, tuple[Any, ...] | None, tuple[Any, ...] | None]:
    """An ``AssignRequest``'s tasks (field 3) read from its bytes as protobuf reads them and
    checked, without the GIL (``src/tasks.rs``): ``(counts, longest, failure, table)``. Per
    task in request order, its partitions' count and its longest string's UTF-8 bytes (int64
    bytes, native order). ``failure``: the first check failed, in the decoder's order, as
    ``(code, row, index, value, real, topic, partition, task, other)`` (``task`` and ``other``
    ``(subtopology, partition, named topology or None)``), else ``None``. ``table`` (``None``
    with a failure), in task order: the tasks' ids (a tuple, each a ``task_id``, a subclass of
    ``tuple``, of (topology key as UTF-16-BE bytes, sub-topology, partition)), one object per number), stateful flags (bytes), end offset sums
    (int64), stores as ``(row, names)``, partition starts (int64, one more than the tasks),
    the partitions' topic, number and rack set (int32 each) and flags (bytes), the topic
    names, the non-empty rack sets (lists of names; set 0 is the empty one), the source
    partitions as ``(topic, numbers, rows as int64 bytes)``, and the loads and state bytes given as
    ``(row, value)`` in request order. ``ValueError`` naming the task and offset where the
    bytes are not protobuf."""

# The Streams answer's lists (issue 24, branch streams-encode).

_TaskKey: TypeAlias = tuple[bytes, int, int]
"""A ``TaskId``: its named topology as UTF-16-BE bytes (``b""``: none), sub-topology,
partition."""
_GivenPartitions: TypeAlias = Sequence[tuple[str, int]] | None

def streams_lists(
    table: tuple[tuple[_TaskKey, ...], array[int], array[int], array[int], bytes, Sequence[str]]
    | None,
    clients: Sequence[
        tuple[str, Sequence[_TaskKey], Sequence[_TaskKey], int, str, Sequence[str], str]
    ],
    members: Sequence[
        tuple[str, str, Sequence[_TaskKey], Sequence[_TaskKey], _GivenPartitions, _GivenPartitions]
    ],
) -> bytes:
    """``AssignResponse``'s ``clients`` then ``members`` (fields 1 and 2) as protobuf wire
    bytes, in the order given: per client its process id, active and standby tasks, follow-up
    deadline, rack, member ids and end point; per member its id, process id, active and standby
    tasks and partitions. With ``table`` (its ids, sorted and distinct, and the partition
    columns of ``TaskTable.partition_columns()``: starts (int64), topics and numbers (int32),
    flags, topic names), each task list in the answer's order (the table's tasks in task order,
    then those it lacks) and a member's partitions, when ``None``, its tasks' source partitions
    in the table, sorted, each once; without, everything as given. The objects are read with
    the GIL, the bytes written without it. ``ValueError`` for a task id that is not one or
    columns that do not fit."""

# The Streams room's members (issue 24, branch streams-members).

def subscription_columns(
    data: bytes,
) -> tuple[int, int, bytes, str, int, int, list[tuple[str, str]], bytes] | None | Literal[False]:
    """Kafka Streams' userData (``SubscriptionInfoData`` v7-11) as (version,
    latestSupportedVersion, processId's 16 bytes, userEndPoint, uniqueField, errorCode,
    clientTags as (key, value) pairs, offset sums): the sums one ``bytes`` of three native
    columns end to end (int32 topic groups, int32 partitions, int64 sums; 16 bytes a sum), in
    byte order. ``None`` for v1-6 (task lists) or a v10+ sum naming a topology; ``False``
    where the bytes are malformed (``kassign.kafka.subscription_info`` names the fault)."""

# The Streams room's members, every member at once (issue 24, branch streams-member-read).

StreamsInfo: TypeAlias = tuple[
    int, int, int, int, str, int, int, tuple[tuple[str, str], ...], bytes
]
"""A distinct userData: (field number 5 or 6, version, latest supported version as the
decoder resolves it, process id as an int, user end point, unique field, error code, client
tags sorted by key, offset sums as ``subscription_columns``' bytes)."""

def streams_members(
    data: bytes,
) -> (
    tuple[
        list[str],
        list[str],
        list[tuple[str, ...]],
        list[str],
        list[int | None],
        list[tuple[tuple[str, ...], bytes, bytes] | None],
        list[int],
        list[StreamsInfo],
        int,
        int,
        int,
    ]
    | None
):
    """An ``AssignRequest``'s members from its bytes as columns: (member ids, group instance
    ids, topics (equal lists one tuple), racks, generations (None: unknown), owned partitions
    (None, or topics with their int64 counts and int32 numbers as bytes, sorted), each
    member's index into the distinct userData, those userData, the longest string's UTF-8
    bytes, owned partitions, reported tasks). ``None`` where any member is not a structured
    subscription with a v7-11 userData (no task lists, no named topology) or holds a fault
    the decoder names (``server/streams/decode/members.py`` then reads the request)."""

# The Streams room's thread distribution, the whole group at once (issue 24, branch
# threads-native).

def thread_distribution(
    ids: tuple[_TaskKey, ...],
    kinds: bytes,
    assignments: Iterable[Any],
    clients: dict[Any, Any],
    member_type: type[_T],
    local_lags: Callable[[Any], object],
) -> tuple[_T, ...] | None:
    """Every consumer's tasks after ``assignments`` (``KafkaStreamsAssignment``s), as
    ``member_type`` (``MemberAssignment``, made as unpickling makes a frozen dataclass), sorted
    by member id: ``kassign.assignor.streams.threads``' rule over rows of ``ids`` (sorted,
    distinct; ``kinds`` a byte each: 0 stateless, 1 stateful, 2 a task the topology lacks),
    ``clients`` the ``KafkaStreamsState``s by process id (their fields read by name), their
    lags through ``local_lags`` (``lags.local_lags``). Read with the GIL, spread without it.
    ``None`` when a listed task is not among ``ids``."""
