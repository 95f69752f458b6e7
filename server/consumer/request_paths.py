"""Where a consumer member's fields sit in its request, for errors found after decoding.

The library's ``InvalidRequest`` names a ``Member`` field (``topics``, ``owned_partitions``); a
caller needs the request's own path for the member at fault: ``subscription.topics`` or
``raw_subscription``, and, for a member sent in the compact form (issue 24),
``subscription.topic_list`` or ``subscription.owned_by_topic``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from kassign.assignor.errors import InvalidRequest
from kassign.v1 import assignment_pb2 as pb

__all__ = ["compact_fields", "located"]

_MODEL_FIELDS = {
    "topics": "topics",
    "owned_partitions": "owned_partitions",
    "generation": "generation_id",
}
"""The library's field names (``Member``) -> the structured subscription's."""

_COMPACT_FIELDS = {"topics": "topic_list", "owned_partitions": "owned_by_topic"}
"""The same, for a member that sent them in the compact form (issue 24)."""


def compact_fields(sent: pb.MemberSubscription) -> frozenset[str]:
    """Which of the compact form's member fields ``sent`` used (one of four sets, made once:
    a group's members are asked one by one)."""
    if sent.WhichOneof("kind") != "subscription":
        return _USED[False, False]
    sub = sent.subscription
    return _USED[sub.HasField("topic_list"), bool(sub.owned_by_topic)]


_USED = {
    (topic_list, by_topic): frozenset(
        name for name, used in (("topic_list", topic_list), ("owned_by_topic", by_topic)) if used
    )
    for topic_list in (False, True)
    for by_topic in (False, True)
}


@contextmanager
def located(
    user_data_fields: Mapping[str, str], compact_fields: Mapping[str, frozenset[str]]
) -> Iterator[None]:
    """Re-raise the library's member errors with the request's field path.

    ``user_data_fields`` maps member id -> the path of its user data; the member's other fields
    sit beside it, in ``subscription`` or ``raw_subscription``: the compact ones when the
    member sent them (``compact_fields``).
    """
    try:
        yield
    except InvalidRequest as exc:
        if exc.member is None or exc.member not in user_data_fields:
            raise
        path = _request_path(
            exc.field, user_data_fields[exc.member], compact_fields.get(exc.member, frozenset())
        )
        if path == exc.field:
            raise
        raise InvalidRequest(exc.reason, field=path, member=exc.member) from exc


def _request_path(model_field: str, user_data_field: str, compact: frozenset[str]) -> str:
    """The request's path of a ``Member`` field, for a member whose user data sits at
    ``user_data_field`` and that sent the ``compact`` fields; ``member_id`` and
    ``group_instance_id`` are the same in both."""
    if model_field == "user_data":
        return user_data_field
    if model_field not in _MODEL_FIELDS:
        return model_field
    prefix = user_data_field.partition(".")[0]
    name = _COMPACT_FIELDS.get(model_field, "")
    return f"{prefix}.{name if name in compact else _MODEL_FIELDS[model_field]}"
