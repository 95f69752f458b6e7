"""Partition loads for ``kassign simulate --loads zipf:S --drift F``: skewed, seeded, drifting.

Why: issue 25 asks what balancing load instead of counts buys a group whose partitions (or tasks)
carry very different traffic, and what it costs in moves as that traffic shifts. Loads follow
Zipf's law (the partition of rank ``k`` carries ``1000 / k**S``, ranks shuffled over the
partitions), the shape of real topic traffic and of issue 25's suite; each round every load is
multiplied by its own factor drawn uniformly from ``[1 - F, 1 + F]`` (a multiplicative random
walk). Draws come from a generator seeded by ``(seed, group index)``: the same arguments give
the same loads in any process.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["LoadModel", "drifted", "load_model", "load_rng", "load_rounds", "zipf_loads"]

FloatArray = np.ndarray[Any, np.dtype[np.float64]]
_DISTRIBUTIONS = ("zipf",)


@dataclass(frozen=True, slots=True)
class LoadModel:
    """``--loads zipf:exponent`` and ``--drift drift``: how loads start and how they change."""

    exponent: float
    drift: float = 0.0


def load_model(loads: str, drift: float = 0.0) -> LoadModel:
    """``--loads`` and ``--drift`` checked; ``ValueError`` naming the option at fault."""
    kind, _, value = loads.partition(":")
    if kind not in _DISTRIBUTIONS:
        raise ValueError(f"--loads {loads!r}: the distribution is one of {list(_DISTRIBUTIONS)}")
    try:
        exponent = float(value)
    except ValueError:
        raise ValueError(f"--loads {loads!r}: give the exponent, as in zipf:1.1") from None
    if not (math.isfinite(exponent) and exponent >= 0):
        raise ValueError(f"--loads {loads!r}: the exponent is a number of at least 0")
    if not (math.isfinite(drift) and 0 <= drift < 1):
        raise ValueError(f"--drift {drift}: a fraction in [0, 1)")
    return LoadModel(exponent, drift)


def load_rng(seed: int, index: int) -> np.random.Generator:
    """Group ``index``'s generator of a run seeded ``seed`` (SHA-256: stable everywhere)."""
    digest = hashlib.sha256(f"kassign-simulate-loads:{seed}:{index}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "big"))


def zipf_loads(n: int, exponent: float, rng: np.random.Generator) -> FloatArray:
    """``n`` Zipf-distributed loads (rank ``k`` carries ``1000 / k**exponent``), ranks shuffled."""
    return np.asarray(1000.0 / (rng.permutation(n) + 1) ** exponent, dtype=np.float64)


def drifted(loads: FloatArray, drift: float, rng: np.random.Generator) -> FloatArray:
    """``loads`` one round later: each times its own factor, uniform in ``[1 - drift, 1 + drift]``."""
    if not drift:
        return loads
    return np.asarray(loads * rng.uniform(1.0 - drift, 1.0 + drift, len(loads)), dtype=np.float64)


def load_rounds(
    n: int, model: LoadModel, rng: np.random.Generator, rounds: int
) -> tuple[FloatArray, ...]:
    """``n`` items' loads in each of ``rounds`` rounds: Zipf in the first, then drifted."""
    loads = [zipf_loads(n, model.exponent, rng)]
    for _ in range(rounds - 1):
        loads.append(drifted(loads[-1], model.drift, rng))
    return tuple(loads)
