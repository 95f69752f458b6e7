"""The load figures (issue 25) as the contract's ``LoadFigures``: both rooms' reports carry
them, from the one model type (``kassign.assignor.load.figures``)."""

from __future__ import annotations

from kassign.assignor.load.figures import LoadFigures
from kassign.v1 import common_pb2

__all__ = ["load_message"]


def load_message(figures: LoadFigures | None, source: str = "") -> common_pb2.LoadFigures | None:
    """``figures`` as a message, ``source`` naming where the loads came from ("request",
    "prometheus"); ``None`` (the field unset) without figures."""
    if figures is None:
        return None
    return common_pb2.LoadFigures(
        bound=figures.bound, peak=figures.peak, mean=figures.mean, source=source
    )
