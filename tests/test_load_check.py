"""bench/load_check.py: its exact-step line times problems the exact step really solves."""

from __future__ import annotations

import numpy as np
import pytest
from kassign.assignor.errors import SolverError
from kassign.assignor.load import LoadProblem, balance, exact

from tests.ops.serving import load_script

load_check = load_script("bench/load_check.py")


def test_the_exact_line_problems_are_past_the_slack_without_the_exact_step() -> None:
    problems = load_check.exact_problems(3, np.random.default_rng(load_check.SEED))
    assert len(problems) == 3
    for problem in problems:

        def skip_exact(units: int, problem: LoadProblem = problem) -> None:
            if units == exact.units(problem):
                raise SolverError("the exact step skipped")

        greedy = balance(problem, afford=skip_exact)
        assert exact.small(problem) and greedy.peak > greedy.bound * 1.01


def test_the_exact_line_refuses_to_time_fewer_problems_than_it_names() -> None:
    with pytest.raises(RuntimeError, match="reached the exact step, not 5"):
        load_check.exact_problems(5, np.random.default_rng(0), draws=3)
