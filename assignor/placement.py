"""The rules that place a replica or a partition: the one vocabulary of every explanation.

Shared by both rooms (``streams/trace.py`` records them per phase, ``consumer/explain.py``
reads them from an answer) and mapped one-to-one onto the contract's ``PlacementRule``
(docs/explanations.md says what each means for each assignor).
"""

from __future__ import annotations

import enum

__all__ = ["Rule"]


class Rule(enum.Enum):
    """The rule that placed a replica (the contract's ``PlacementRule``)."""

    UNSPECIFIED = "unspecified"  # the assignor recorded nothing (a plug-in)
    STICKY = "sticky"
    CAUGHT_UP = "caught-up"
    BALANCE = "balance"
    WARM_UP = "warm-up"
    RACK_COST = "rack cost"
    TAG_SPREAD = "tag spread"
    FALLBACK = "fallback"
    LOAD = "load"  # balance=LOAD (issue 25): a member's load per unit of capacity decided
