"""A group's members checked from its columns, for ``consumer_group``'s common case.

``consumer_group`` checks each member's own fields one by one (``_check_member``), which names
the first member at fault. A fresh group of a thousand members sharing one topic list is
almost always sound, so its fields are first read as columns (C loops over the members, each
distinct topic list once: issue 24); only a group this does not pass is walked member by
member, so the errors, and their order, are the walk's.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Container, Sequence
from typing import TYPE_CHECKING

from kassign.assignor.shared_objects import distinct_objects

if TYPE_CHECKING:
    from kassign.assignor.consumer.model import Member

__all__ = ["INT32_MAX", "INT32_MIN", "legal_topic_name", "plainly_sound"]

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
_TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]{1,249}")
_MEMBER_ID, _TOPICS = operator.attrgetter("member_id"), operator.attrgetter("topics")
_INSTANCE, _GENERATION = operator.attrgetter("group_instance_id"), operator.attrgetter("generation")


def legal_topic_name(name: str) -> bool:
    """Kafka's rule for a topic name: 1 to 249 of ``[a-zA-Z0-9._-]``, not "." or ".."."""
    return bool(_TOPIC_NAME.fullmatch(name)) and name not in (".", "..")


def plainly_sound(members: Sequence[Member], topics: Container[str]) -> bool:
    """Whether every member passes ``consumer_group``'s own checks but its claims: ids
    non-empty and distinct, instance ids (where set) too, generations within int32, each
    distinct topic list of legal names (``topics``: the metadata's, known legal) none twice.
    ``False`` says only that the member-by-member walk must find the fault."""
    ids = list(map(_MEMBER_ID, members))
    if not ids or "" in ids or len(set(ids)) != len(ids):
        return False
    instances = list(map(_INSTANCE, members))
    if instances.count(None) != len(instances):  # static members: ids non-empty and distinct
        named = [i for i in instances if i is not None]
        if "" in named or len(set(named)) != len(named):
            return False
    generations = set(map(_GENERATION, members))
    if not INT32_MIN <= min(generations) <= max(generations) <= INT32_MAX:
        return False
    for subscribed in distinct_objects(map(_TOPICS, members)):
        if len(set(subscribed)) != len(subscribed) or not all(
            t in topics or legal_topic_name(t) for t in subscribed
        ):
            return False
    return True
