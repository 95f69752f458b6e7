"""Place items so that the largest load per unit of capacity is small, moving few of them.

Minimising the largest load on machines of different speeds is NP-hard (it contains bin
packing), so ``balance`` searches for a small *target* ``T`` (a load per unit of capacity). At
a target each member has room for ``T x capacity``; a *fill* (``fill.py``) places every item,
heaviest first, on the eligible member with the most room left (worst fit). The search fills
once at the bound without ever failing (an item goes to the roomiest even past its room) and
reads the peak that gives; on equal capacities that is the answer (the roomiest member does not
depend on the target), else it bisects between the bound and the best peak read so far.

At the target found, the *sticky* fill first lets each member keep its previous items,
heaviest first, each that still fits in its room (light items are the ones that move: they fit
in the little room a drift leaves others), then fills the rest. ``slack`` trades a little
balance for stickiness: when the target found is within ``slack`` of the bound, the sticky fill
may use up to ``bound x (1 + slack)``, so loads drifting a little move few items. With racks
(``LoadProblem.sites``) that last fill sends each item to a rack-local member with room when
there is one: racks never raise the peak past that target, nor (unless ``racks_first``) move a
kept item. When it fails, the same fill without racks, then at the target found itself; the
search's placement stands if none fits, unless the sticky fill with the rest placed even past
their room stays within that target, or within ``slack`` of the search's peak where that is
already past the bound's slack (``_loose_keep``: among eligibility classes a strict fill can
fail). With racks, ``racks.settle`` then brings cross-rack
items home by moves and swaps within that target (the greedy fill's leftovers). Last, moves and swaps off the peak member while the
peak is above that goal (the heuristics' leftovers on small groups). On a small problem
whose peak is still past that goal, or whose racks are weighed, the exact step (``exact.py``:
CP-SAT's least peak, then fewest moves, then racks) replaces the placement when it is better
in that order.

Ties break by member and item index: the same problem gives the same placement.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from kassign.assignor.errors import SolverError
from kassign.assignor.interrupt import checkpoint
from kassign.assignor.load import exact
from kassign.assignor.load.bound import FloatArray, IntArray, lower_bound, peak_ratio
from kassign.assignor.load.fill import fill
from kassign.assignor.load.racks import settle

__all__ = ["BoolArray", "LoadPlan", "LoadProblem", "balance"]

BoolArray = np.ndarray[tuple[int, int], np.dtype[np.bool_]]

_PRECISION = 1e-3  # bisection stops when the target is known to this share of the bound
_EPS = 1e-9  # float sums compared with this share of the room
_ROUNDS = 64  # moves or swaps tried off the peak member, at most
_HALVINGS = 64  # bisection steps, at most: loads near float's smallest make the share 0


@dataclass(frozen=True, slots=True)
class LoadProblem:
    """Items with loads and previous owners (``-1``: none), members with capacities; an item of
    class ``c`` may go to member ``m`` only if ``eligible[c, m]`` (no ``eligible``: anywhere).
    Racks, optional: an item of site ``s`` (``sites``: its replicas' racks, as a number) is
    rack-local on member ``m`` if ``local[s, m]``; ``balance`` prefers those where the peak
    and the moves allow. ``stay``, optional: what moving each item away from its owner costs
    (a Streams task's state bytes); a member over its room keeps the costliest first, so the
    cheap ones move (none: by load)."""

    loads: FloatArray
    capacities: FloatArray
    owners: IntArray
    classes: IntArray | None = None
    eligible: BoolArray | None = None
    sites: IntArray | None = None
    local: BoolArray | None = None
    stay: FloatArray | None = None

    def __post_init__(self) -> None:
        if (self.loads < 0).any() or not np.isfinite(self.loads).all():
            raise ValueError("loads must be finite and non-negative")
        if (self.capacities <= 0).any() or not np.isfinite(self.capacities).all():
            raise ValueError("capacities must be finite and positive")
        if len(self.owners) != len(self.loads):
            raise ValueError("one previous owner (or -1) per item")
        if (self.classes is None) != (self.eligible is None):
            raise ValueError("classes and eligible come together")
        if (self.sites is None) != (self.local is None):
            raise ValueError("sites and local come together")
        if self.stay is not None and len(self.stay) != len(self.loads):
            raise ValueError("one stay cost per item")
        if self.sites is not None and self.local is not None:
            if len(self.sites) != len(self.loads):
                raise ValueError("one site per item")
            if self.local.shape[1:] != self.capacities.shape or (
                len(self.sites) and not 0 <= self.sites.min() <= self.sites.max() < len(self.local)
            ):
                raise ValueError("local takes a row per site and a column per member")

    def allowed(self, item: int) -> IntArray:
        """The members ``item`` may go to, in index order."""
        if self.eligible is None or self.classes is None:
            return np.arange(len(self.capacities))
        return np.flatnonzero(self.eligible[self.classes[item]])


@dataclass(frozen=True, slots=True)
class LoadPlan:
    """An owner per item, the bound, the peak reached and how many items changed owner;
    ``target``: the load per unit of capacity the last fill was allowed (the target found,
    within ``slack``), which racks never push the peak past."""

    owners: IntArray
    bound: float
    peak: float
    moves: int
    target: float = 0.0


def balance(
    problem: LoadProblem,
    *,
    slack: float = 0.01,
    racks_first: bool = False,
    afford: Callable[[int], object] | None = None,
) -> LoadPlan:
    """The placement described in the module's docstring. ``racks_first``: rack-local beats
    kept (``rack-optimal``'s order); else kept items stay and racks only steer the rest.
    ``afford``: told, before each fill or improvement round, how many item placements it
    costs (``_units``); it raises to stop (a caller's time budget, priced without a clock),
    but a ``SolverError`` before the exact step only skips that step."""
    if problem.eligible is not None and problem.classes is not None:
        reachable = np.asarray(problem.eligible.any(axis=1))
        stranded = np.flatnonzero(~reachable[problem.classes])
        if len(stranded):
            raise ValueError(f"item {int(stranded[0])} may go to no member")
    pay = afford if afford is not None else _free
    bound = lower_bound(problem.loads, problem.capacities)
    best, hi = _search(problem, bound, pay)
    relaxed = max(hi, min(bound * (1 + slack), hi * (1 + slack)))
    final = None
    racks = problem.sites is not None
    if racks or (problem.owners >= 0).any():
        tries = [(relaxed, racks), (relaxed, False), (hi, racks), (hi, False)]
        for target, steer in dict.fromkeys(tries):
            pay(_units(problem, steer))
            final = fill(problem, target, keep=True, racks=steer, racks_first=racks_first)
            if final is not None:
                break
        if final is None:
            # within the slack of the bound as the strict fill; past it, of the search's peak
            loose_goal = relaxed if relaxed > hi else hi * (1 + slack)
            final = _loose_keep(problem, (relaxed, hi), loose_goal, pay)
    placed = final if final is not None else best
    if racks:
        placed = settle(problem, placed, relaxed, racks_first=racks_first, pay=pay)
    owners = _improve(problem, placed, bound * (1 + slack), pay)
    peak = peak_ratio(problem.loads, problem.capacities, owners)
    past = peak > bound * (1 + slack) * (1 + _EPS)
    if (past or racks) and exact.small(problem):
        owners, peak = _exact(problem, (owners, peak), bound, slack, racks_first, pay)
    return LoadPlan(
        owners=owners,
        bound=bound,
        peak=peak,
        moves=_moves(problem, owners),
        target=relaxed,
    )


def _loose_keep(
    problem: LoadProblem,
    targets: tuple[float, float],
    goal: float,
    pay: Callable[[int], object],
) -> IntArray | None:
    """Among eligibility classes a strict sticky fill can fail where the kept items leave a
    class too little room, and the search's placement (no owners kept) would move most items:
    the sticky fill again, the rest placed even past their room, then moves and swaps off the
    peak (``_improve``), taken if its peak is within ``goal``: the target's slack over the
    bound, or where the search's peak is already past that slack (a Streams group's actives
    held on caught-up clients), the slack over that peak. Measured on a Streams group (10
    clients, 2,000 tasks in 474 caught-up classes): after a 10% drift 16 actives moved at
    1.008x the bound, where the search's placement moved 902 at 1.001x."""
    for target in dict.fromkeys(targets):
        pay(_units(problem, False))
        loose = fill(problem, target, keep=True, strict=False)
        if loose is None:
            continue
        loose = _improve(problem, loose, goal, pay)
        if peak_ratio(problem.loads, problem.capacities, loose) <= goal * (1 + _EPS):
            return loose
    return None


def _exact(
    problem: LoadProblem,
    greedy: tuple[IntArray, float],
    bound: float,
    slack: float,
    racks_first: bool,
    pay: Callable[[int], object],
) -> tuple[IntArray, float]:
    """The exact step's placement and peak if it is better in the core's order, else the
    greedy's: a lower true (float) peak; or, within the greedy's peak or the bound's slack,
    fewer moves and then fewer items off their rack (rack-local first with ``racks_first``).
    With racks the step runs even where the greedy peak is within the slack: the steered fill
    can keep fewer items than the unsteered one, which racks after moves must never cost.
    Priced first: past the caller's budget the step is skipped (the greedy answer is a valid
    one), not the call failed."""
    try:
        pay(exact.units(problem))
    except SolverError:
        return greedy
    checkpoint()
    found = exact.place(problem, greedy[0], bound, slack, racks_first=racks_first)
    if found is None:
        return greedy
    peak = peak_ratio(problem.loads, problem.capacities, found)
    if peak < greedy[1] * (1 - _EPS):
        return found, peak
    within = max(greedy[1], bound * (1 + slack)) * (1 + _EPS)
    key = _order_key(problem, racks_first)
    return (found, peak) if peak <= within and key(found) < key(greedy[0]) else greedy


def _order_key(problem: LoadProblem, racks_first: bool) -> Callable[[IntArray], tuple[int, int]]:
    """(moves, items off their rack) of a placement, in the order the caller weighs them."""

    def key(owners: IntArray) -> tuple[int, int]:
        moves = _moves(problem, owners)
        if problem.sites is None or problem.local is None:
            return moves, 0
        off = int((~problem.local[problem.sites, owners]).sum())
        return (off, moves) if racks_first else (moves, off)

    return key


def _moves(problem: LoadProblem, owners: IntArray) -> int:
    """Items that had an owner and are placed elsewhere (new items are not moves)."""
    return int(((problem.owners >= 0) & (owners != problem.owners)).sum())


def _free(items: int) -> None:
    """No budget: every fill is affordable."""


def _units(problem: LoadProblem, racks: bool) -> int:
    """A fill's price in item placements: each item counts 2 where a heap per class (or site)
    chooses its member, measured about 4 times slower an item than the unrestricted fill."""
    return len(problem.loads) * (2 if racks or problem.classes is not None else 1)


def _search(
    problem: LoadProblem, bound: float, pay: Callable[[int], object]
) -> tuple[IntArray, float]:
    """The placement of least peak the fills find, and that peak: a fill that never fails
    (each item to the roomiest even past its room) at the bound, then bisection between the
    bound and the best peak read. On equal capacities the roomiest member does not depend on
    the target (room is target minus load), so the first fill is the answer."""
    loads, caps = problem.loads, problem.capacities
    lo = bound
    pay(_units(problem, False))
    best = fill(problem, bound, strict=False)
    assert best is not None
    hi = peak_ratio(loads, caps, best)
    if not len(caps) or (caps == caps[0]).all():
        return best, hi
    for _ in range(_HALVINGS):
        target = (lo + hi) / 2
        if hi - lo <= _PRECISION * bound or not lo < target < hi:
            break
        checkpoint()
        pay(_units(problem, False))
        found = fill(problem, target, strict=False)
        assert found is not None
        peak = peak_ratio(loads, caps, found)
        if peak < hi:
            best, hi = found, peak
        if peak > target * (1 + _EPS):
            lo = target
    return best, hi


def _improve(
    problem: LoadProblem,
    owners: IntArray,
    goal: float,
    pay: Callable[[int], object],
    rounds: int = _ROUNDS,
) -> IntArray:
    """Moves and swaps off the peak member while each lowers it and the peak is above ``goal``
    (moves bought below it would cost stickiness for nothing the caller asked for): the
    heuristics' leftovers on small groups, where one heavy item decides the peak. Each round
    takes the first move (the peak's heaviest item first, to the member it leaves least
    loaded, a rack-local one if any) or else the first swap (with a lighter item elsewhere)
    that leaves both members below the old peak."""
    loads, caps = problem.loads, problem.capacities
    owners = owners.copy()
    totals: FloatArray = np.bincount(owners, weights=loads, minlength=len(caps)).astype(float)
    for _ in range(rounds):
        ratios = totals / caps
        p = int(np.argmax(ratios))
        peak = float(ratios[p]) * (1 - _EPS)
        if peak <= goal:
            break
        pay(len(loads))
        checkpoint()
        mine = np.flatnonzero(owners == p)
        mine = mine[np.lexsort((mine, -loads[mine]))]
        if not _step(problem, owners, totals, p, peak, mine):
            break
    return owners


def _step(
    problem: LoadProblem,
    owners: IntArray,
    totals: FloatArray,
    p: int,
    peak: float,
    mine: IntArray,
) -> bool:
    """One move or swap off member ``p`` that leaves both sides below ``peak``."""
    loads, caps = problem.loads, problem.capacities
    others = np.flatnonzero(owners != p)
    for i in mine.tolist():
        allowed = problem.allowed(i)
        allowed = allowed[allowed != p]
        if not len(allowed):
            continue
        after = (totals[allowed] + loads[i]) / caps[allowed]
        below = after < peak
        if below.any():
            if problem.sites is not None and problem.local is not None:
                near = below & problem.local[problem.sites[i], allowed]
                below = near if near.any() else below
            fits = np.flatnonzero(below)
            q = int(allowed[fits[np.argmin(after[fits])]])
            _give(owners, totals, loads, i, p, q)
            return True
        # a lighter item j elsewhere, whose member may take i and p may take j
        lighter = others[loads[others] < loads[i]]
        if not len(lighter):
            continue
        qs = owners[lighter]
        gain = loads[i] - loads[lighter]
        fits = ((totals[p] - gain) / caps[p] < peak) & ((totals[qs] + gain) / caps[qs] < peak)
        if problem.eligible is not None and problem.classes is not None:
            fits &= problem.eligible[problem.classes[i], qs]
            fits &= problem.eligible[problem.classes[lighter], p]
        hits = np.flatnonzero(fits)
        if len(hits):
            j = int(lighter[hits[0]])
            q = int(owners[j])
            _give(owners, totals, loads, i, p, q)
            _give(owners, totals, loads, j, q, p)
            return True
    return False


def _give(owners: IntArray, totals: FloatArray, loads: FloatArray, i: int, p: int, q: int) -> None:
    owners[i] = q
    totals[p] -= loads[i]
    totals[q] += loads[i]
