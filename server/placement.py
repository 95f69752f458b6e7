"""The library's placement rules as the contract's ``PlacementRule``, for both rooms."""

from __future__ import annotations

from kassign.assignor.placement import Rule
from kassign.v1 import common_pb2

__all__ = ["RULES"]

RULES: dict[Rule, common_pb2.PlacementRule] = {
    Rule.UNSPECIFIED: common_pb2.PLACEMENT_RULE_UNSPECIFIED,
    Rule.STICKY: common_pb2.PLACEMENT_RULE_STICKY,
    Rule.CAUGHT_UP: common_pb2.PLACEMENT_RULE_CAUGHT_UP,
    Rule.BALANCE: common_pb2.PLACEMENT_RULE_BALANCE,
    Rule.WARM_UP: common_pb2.PLACEMENT_RULE_WARM_UP,
    Rule.RACK_COST: common_pb2.PLACEMENT_RULE_RACK_COST,
    Rule.TAG_SPREAD: common_pb2.PLACEMENT_RULE_TAG_SPREAD,
    Rule.FALLBACK: common_pb2.PLACEMENT_RULE_FALLBACK,
    Rule.LOAD: common_pb2.PLACEMENT_RULE_LOAD,
}
"""One entry per rule (a test checks it is total and one-to-one)."""
