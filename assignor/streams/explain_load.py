"""Load in a Kafka Streams explanation (issue 25, ``balance`` ``LOAD``): each client's load, and
the figures a reason gives where load decided a placement.

A client's *share of the bound* is the load of its actives per stream thread over the report's
``load.bound`` (1: the bound, which no answer's peak is below), spelt as the consumer side
spells it (``load/words.py``). The rules come from the trace (``trace_load``); this module only
reads the answer and the request's loads, so COUNT answers never reach it and their
explanations keep their bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kassign.assignor.load.words import amount, share_of_bound
from kassign.assignor.placement import Rule
from kassign.assignor.streams.model import ApplicationState, Balance, ProcessId, TaskId
from kassign.assignor.streams.result import TaskAssignment

__all__ = ["LoadWords", "load_words"]


@dataclass(frozen=True, slots=True)
class LoadWords:
    """A load-balanced answer's figures: the bound, each client's active load and threads, the
    warm-ups placed, the warm-up budget."""

    bound: float
    load: Mapping[ProcessId, float]
    threads: Mapping[ProcessId, int]
    task_load: Mapping[TaskId, float]
    warmups: frozenset[tuple[TaskId, ProcessId]]
    budget: int

    def share(self, pid: ProcessId, extra: float = 0.0) -> float:
        """``pid``'s load per thread over the bound, with ``extra`` load added."""
        load = self.load.get(pid, 0.0) + extra
        return share_of_bound(load, self.threads.get(pid, 1), self.bound)

    def at(self, pid: ProcessId, extra: float = 0.0) -> str:
        return f"{pid} at {self.share(pid, extra):.2f} of the bound with it"

    def placed(self, task: TaskId, pid: ProcessId, ran: Sequence[ProcessId]) -> str:
        """The reason of a ``LOAD`` active: the client's load per thread against the bound; for
        a move, where its previous owner would have been keeping it."""
        threads = self.threads.get(pid, 1)
        figures = (
            f"{self.at(pid)} ({amount(self.load.get(pid, 0.0) / threads)} a thread, "
            f"bound {amount(self.bound)})"
        )
        owners = [p for p in ran if p != pid]
        if not owners:
            return f"load: no owner before; placed by load, {figures}"
        owner = owners[0]
        keeping = self.share(owner, self.task_load.get(task, 1.0))
        return f"load: {figures}; {owner}, its owner, would be at {keeping:.2f} keeping it"

    def suffix(
        self, rule: Rule, task: TaskId, pid: ProcessId, wanted: ProcessId | None, *, active: bool
    ) -> str:
        """What a reason of another rule adds under LOAD: a kept active's share; where load
        wanted a held active (and whether a warm-up goes there); a warm-up's share-to-be
        where load wanted it."""
        if not active:  # a warm-up load asked for (a standby movement's is KIP-441's own)
            if rule is Rule.WARM_UP and wanted == pid:
                return f"; load wants it here ({self.at(pid, self.task_load.get(task, 1.0))})"
            return ""
        if wanted is not None and rule in (Rule.CAUGHT_UP, Rule.FALLBACK):
            would = self.at(wanted, self.task_load.get(task, 1.0))
            if (task, wanted) in self.warmups:
                return f"; load wants it on {wanted}, not caught up ({would}): a warm-up goes there"
            return (
                f"; load wants it on {wanted}, not caught up ({would}): "
                f"no warm-up left (max_warmup_replicas {self.budget})"
            )
        if rule is Rule.STICKY:
            return f"; {self.at(pid)}"
        return ""


def load_words(state: ApplicationState, assignment: TaskAssignment) -> LoadWords | None:
    """The figures of a ``balance`` ``LOAD`` answer; ``None`` under ``COUNT``."""
    if state.configs.balance is not Balance.LOAD:
        return None
    load_of = state.task_loads.load_of
    figures = assignment.diagnostics.load
    return LoadWords(
        bound=figures.bound if figures is not None else 0.0,
        load={a.process_id: sum(load_of(t) for t in a.active) for a in assignment.assignments},
        threads={pid: max(1, c.num_threads) for pid, c in state.clients.items()},
        task_load={t: load_of(t) for t in state.tasks},
        warmups=frozenset(assignment.diagnostics.warmup_replicas),
        budget=state.configs.max_warmup_replicas,
    )
