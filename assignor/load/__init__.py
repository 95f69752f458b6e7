"""Balancing load, not counts (issue 25): the pure core the load-aware assignors share.

Items (partitions or tasks) carry a non-negative ``load``; members (consumers or Streams
clients) a positive ``capacity``. ``balance`` places every item so that the largest load per
unit of capacity is as small as it finds (within ``slack`` of that), moving as few items as it
can from their previous owners; ``lower_bound`` is the figure the report proves it against.
"""

from kassign.assignor.load.balance import LoadPlan, LoadProblem, balance
from kassign.assignor.load.bound import lower_bound, peak_ratio

__all__ = ["LoadPlan", "LoadProblem", "balance", "lower_bound", "peak_ratio"]
