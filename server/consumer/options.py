"""``ConsumerAssignOptions`` -> ``AssignOptions``, checked; unset fields take the library's defaults.

Only kassign's own assignor reads the options; Kafka's four ignore them (the report says so when
a request sets any). The protocol, left unspecified, is the assignor's own: cooperative for
``cooperative-sticky``, eager otherwise (Kafka's ``supportedProtocols`` put first).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from kassign.assignor.consumer import cooperative_sticky
from kassign.assignor.consumer.model import AssignOptions
from kassign.assignor.errors import InvalidRequest
from kassign.assignor.load.figures import Balance
from kassign.v1 import common_pb2
from kassign.v1 import consumer_pb2 as cpb

__all__ = ["decode_options"]

_DEFAULTS = AssignOptions()


def decode_options(
    options: cpb.ConsumerAssignOptions,
    assignor: str,
    *,
    loads: Mapping[str, Sequence[float]] | None = None,
    capacities: Mapping[str, float] | None = None,
) -> AssignOptions:
    """The library's options; ``InvalidRequest`` names the ``options.…`` field at fault.
    ``loads`` and ``capacities`` (the topics' and members' figures) are kept with balance
    LOAD only: with COUNT nothing reads them."""
    balance = _balance(options.balance)
    by_load = balance is Balance.LOAD
    return AssignOptions(
        cooperative=_cooperative(options.protocol, assignor),
        co_partitioned=_co_partitioned(options.co_partitioned),
        stickiness_cost=_stickiness_cost(options),
        time_budget_s=_time_budget_s(options),
        balance=balance,
        loads=loads if by_load else None,
        capacities=capacities if by_load else None,
    )


def _balance(balance: int) -> Balance:
    if balance in (common_pb2.BALANCE_UNSPECIFIED, common_pb2.BALANCE_COUNT):
        return Balance.COUNT
    if balance == common_pb2.BALANCE_LOAD:
        return Balance.LOAD
    raise InvalidRequest(f"unknown balance {balance}", field="options.balance")


def _cooperative(protocol: int, assignor: str) -> bool:
    if protocol == cpb.REBALANCE_PROTOCOL_UNSPECIFIED:
        return assignor == cooperative_sticky.NAME
    if protocol == cpb.REBALANCE_PROTOCOL_EAGER:
        return False
    if protocol == cpb.REBALANCE_PROTOCOL_COOPERATIVE:
        return True
    raise InvalidRequest(f"unknown rebalance protocol {protocol}", field="options.protocol")


def _co_partitioned(sets: Iterable[cpb.CoPartitionedTopics]) -> tuple[frozenset[str], ...]:
    """Each set as given. A topic repeated within a set is refused here, where it can still be
    seen; what the sets mean (a topic in two sets, topics no member reads together) is the
    assignor's to judge."""
    result = []
    for i, entry in enumerate(sets):
        topics = frozenset(entry.topics)
        if len(topics) != len(entry.topics):
            raise InvalidRequest(
                "a topic is listed twice", field=f"options.co_partitioned[{i}].topics"
            )
        result.append(topics)
    return tuple(result)


def _stickiness_cost(options: cpb.ConsumerAssignOptions) -> float:
    """As sent: its range is the assignor's (``options.stickiness_cost`` names it there too)."""
    if not options.HasField("stickiness_cost"):
        return _DEFAULTS.stickiness_cost
    return options.stickiness_cost


def _time_budget_s(options: cpb.ConsumerAssignOptions) -> float:
    if not options.HasField("solver_time_budget_ms"):
        return _DEFAULTS.time_budget_s
    budget = options.solver_time_budget_ms
    if budget <= 0:
        raise InvalidRequest(
            f"solver time budget {budget} ms (must be positive)",
            field="options.solver_time_budget_ms",
        )
    return budget / 1000
