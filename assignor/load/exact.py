"""The exact step: on a small problem, CP-SAT's placement of least peak, then of fewest moves.

Worst fit with a bisection (``balance``) misses the optimum on some small groups, where one or
two heavy items decide the peak and eligibility classes leave few ways to place them (issue 25
asks for the optimum within 2% wherever the bound is within 2% of it). Small problems are cheap
to solve exactly: ``peak_model`` states the problem (each item on one allowed member, every
member's load per unit of capacity at most an integer ``peak``), ``place`` minimises that peak,
then, the peak held within the core's slack rule, the items moved (and with racks, the items
placed off their rack). The bench's exact check solves the same model with a longer limit.

Determinism: one worker, a fixed seed and a *deterministic* time limit (CP-SAT's own count of
work, not a clock), so the same problem gives the same placement on any machine at any load
(with the same OR-Tools: requirements.lock pins it; another version may search differently).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from kassign.assignor.load.bound import FloatArray, IntArray, peak_ratio

if TYPE_CHECKING:  # at run time imported where solved: plain calls never load the solver
    from kassign.assignor.load.balance import LoadProblem
    from ortools.sat.python import cp_model

__all__ = ["MAX_CELLS", "MAX_ITEMS", "PeakModel", "peak_model", "place", "small", "solver", "units"]

MAX_ITEMS = 32  # items past which the step is skipped
MAX_CELLS = 256  # items x members past which the step is skipped
DETERMINISTIC_TIME = 0.002  # CP-SAT's deterministic time units per solve (two solves at most)
_RESOLUTION = 1 << 20  # the heaviest item's load as an integer; others rounded to this scale
_MAX_LCM = 2520  # capacities' least common multiple past which it is skipped: any of 1-10 threads
_SEED = 25
_UNITS_PER_CELL = 100  # item placements (about 1 us each) per item x member cell: 26 ms at 256


@dataclass(frozen=True, slots=True)
class PeakModel:
    """A CP-SAT model of placing integer ``weights``: ``x[i][m]`` puts item ``i`` on member
    ``m``; ``peak`` bounds every member's load times ``scale`` over its capacity."""

    model: cp_model.CpModel
    x: list[dict[int, cp_model.IntVar]]
    peak: cp_model.IntVar
    scale: int


def peak_model(
    weights: Sequence[int], capacities: Sequence[int], allowed: Sequence[Sequence[int]] | None
) -> PeakModel:
    """The model of least peak for integer ``weights`` on members of integer ``capacities``,
    each item on one of its ``allowed`` members (None: any). Loads are scaled by the
    capacities' least common multiple, so the peak stays an exact integer."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    scale = math.lcm(*capacities) if capacities else 1
    members = range(len(capacities))
    x = [
        {m: model.new_bool_var(f"x{i}_{m}") for m in (members if allowed is None else allowed[i])}
        for i in range(len(weights))
    ]
    peak = model.new_int_var(0, int(sum(weights)) * scale, "peak")
    for row in x:
        model.add_exactly_one(row.values())
    for m in members:
        on = [int(w) * row[m] for w, row in zip(weights, x, strict=True) if m in row]
        model.add(sum(on) * (scale // capacities[m]) <= peak)
    model.minimize(peak)
    return PeakModel(model, x, peak, scale)


def solver(
    deterministic_time: float | None = None, seconds: float | None = None
) -> cp_model.CpSolver:
    """A single-worker CP-SAT solver with a fixed seed, limited by ``deterministic_time``
    (reproducible) or, for benches only, by wall ``seconds``. With a deterministic limit,
    presolve, symmetry detection and the linear relaxation are off: on 150 small problems the
    greedy missed (docs/load-aware.md) they cost 2-10 times the search's time and improved fewer (45, not 56)."""
    from ortools.sat.python import cp_model

    solve = cp_model.CpSolver()
    solve.parameters.num_workers = 1
    solve.parameters.random_seed = _SEED
    if deterministic_time is not None:
        solve.parameters.max_deterministic_time = deterministic_time
        solve.parameters.cp_model_presolve = False
        solve.parameters.symmetry_level = 0
        solve.parameters.linearization_level = 0
    if seconds is not None:
        solve.parameters.max_time_in_seconds = seconds
    return solve


def small(problem: LoadProblem) -> bool:
    """Whether the exact step may run: two members or more (one has a single placement), few
    items and cells, integer capacities whose least common multiple stays small, some load."""
    n, m = len(problem.loads), len(problem.capacities)
    if not n or m < 2 or n > MAX_ITEMS or n * m > MAX_CELLS or not problem.loads.max() > 0:
        return False
    if not math.isfinite(_RESOLUTION / float(problem.loads.max())):
        return False  # loads near float's smallest: no integer scale for them
    caps = problem.capacities
    if not (caps == np.round(caps)).all():
        return False
    return math.lcm(*(int(c) for c in caps)) <= _MAX_LCM


def units(problem: LoadProblem) -> int:
    """The step's price in item placements (``balance``'s ``afford`` unit)."""
    return len(problem.loads) * len(problem.capacities) * _UNITS_PER_CELL


def place(
    problem: LoadProblem, start: IntArray, bound: float, slack: float, *, racks_first: bool = False
) -> IntArray | None:
    """The exact placement (module docstring), searched from ``start`` (the greedy's): least
    peak, then, the peak at most the larger of that and ``bound x (1 + slack)``, fewest moves
    (with racks also fewest items off their rack: after the moves, or before them with
    ``racks_first``, the core's two orders); None when CP-SAT finds no
    placement within its limit. Loads are rounded to integers, so the caller checks the peak."""
    from ortools.sat.python import cp_model

    loads: FloatArray = problem.loads
    weights = [int(w) for w in np.round(loads * (_RESOLUTION / float(loads.max()))).tolist()]
    caps = [int(c) for c in problem.capacities]
    allowed = [problem.allowed(i).tolist() for i in range(len(loads))]
    built = peak_model(weights, caps, allowed)
    model, x = built.model, built.x
    _hint(model, x, start)
    first = solver(DETERMINISTIC_TIME)
    if first.solve(model) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    found = _owners(first, x)
    unit = _RESOLUTION / float(loads.max()) * built.scale
    limit = max(first.value(built.peak), math.floor(bound * (1 + slack) * unit))
    model.clear_hints()  # type: ignore[no-untyped-call]
    _hint(model, x, found)
    model.add(built.peak <= limit)
    model.minimize(_second_objective(problem, x, racks_first))
    second = solver(DETERMINISTIC_TIME)
    if second.solve(model) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return found
    sticky = _owners(second, x)
    # the slack is stated on rounded loads: never give up true peak the first solve had won
    true = [peak_ratio(loads, problem.capacities, o) for o in (found, sticky)]
    return sticky if true[1] <= max(true[0], bound * (1 + slack)) else found


def _hint(model: cp_model.CpModel, x: list[dict[int, cp_model.IntVar]], owners: IntArray) -> None:
    """Start the search from ``owners``: CP-SAT then holds a placement at least as good."""
    for row, owner in zip(x, owners.tolist(), strict=True):
        for m, var in row.items():
            model.add_hint(var, m == owner)


def _second_objective(
    problem: LoadProblem, x: list[dict[int, cp_model.IntVar]], racks_first: bool
) -> cp_model.LinearExprT:
    """Items kept on their previous owners, negated; with racks, the two counts (kept,
    rack-local) weighed lexicographically in the order the caller's assignor states."""
    kept = [row[o] for row, o in zip(x, problem.owners.tolist(), strict=True) if o in row]
    if problem.sites is None or problem.local is None:
        return -sum(kept)
    else:
        local = problem.local
        near = [
            var
            for row, s in zip(x, problem.sites.tolist(), strict=True)
            for m, var in row.items()
            if local[s, m]
        ]
        first, then = (near, kept) if racks_first else (kept, near)
        return -sum(first) * (len(x) + 1) - sum(then)


def _owners(solved: cp_model.CpSolver, x: list[dict[int, cp_model.IntVar]]) -> IntArray:
    """The member each item is placed on in ``solved``'s solution."""
    return np.array(
        [next(m for m, var in row.items() if solved.boolean_value(var)) for row in x],
        dtype=np.int64,
    )
