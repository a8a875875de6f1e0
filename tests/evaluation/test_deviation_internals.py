"""Deviation-rating internals that the oracle vectors do not reach: the widened face test (the
fallback when ε* is infeasible by solver round-off), solver failures, LP counts and messages."""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy.optimize import OptimizeResult

from coopeval.evaluation import deviation
from coopeval.evaluation.deviation import DeviationRatingError, deviation_ratings, rank_with_ties

PD = np.array([[2.0, 0.0], [3.0, 1.0]])
# Face LP over σ = (σ0, σ1) in the simplex with the single row σ0 ≤ ε; minimise σ1.
ROW = np.array([0.0, 1.0])
A_UB = np.array([[1.0, 0.0]])
A_EQ = np.array([[1.0, 1.0]])
B_EQ = np.array([1.0])
BOUNDS: list[tuple[float | None, float | None]] = [(0.0, None), (0.0, None)]


def test_face_minimum_on_a_feasible_face() -> None:
    # σ0 ≤ 0.25 → σ1 ≥ 0.75.
    low, point = deviation._face_minimum(ROW, A_UB, 0.25, A_EQ, B_EQ, BOUNDS, 1e-5, "T")
    assert low == pytest.approx(0.75, abs=1e-12)
    assert point is not None and point == pytest.approx([0.25, 0.75], abs=1e-12)


def test_face_minimum_widens_an_infeasible_face_by_the_tolerance() -> None:
    # σ0 ≤ −1e−6 is infeasible (σ0 ≥ 0); widened by tol = 1e−5: σ0 ≤ 9e−6 → min σ1 = 1 − 9e−6.
    low, point = deviation._face_minimum(ROW, A_UB, -1e-6, A_EQ, B_EQ, BOUNDS, 1e-5, "T")
    assert low == pytest.approx(1 - 9e-6, abs=1e-12)
    assert point is None  # a point of the widened face is no point of the face


def test_face_minimum_reports_a_face_infeasible_even_when_widened() -> None:
    with pytest.raises(DeviationRatingError, match=r"^T face test: LP infeasible \("):
        deviation._face_minimum(ROW, A_UB, -0.5, A_EQ, B_EQ, BOUNDS, 1e-5, "T")


@pytest.mark.parametrize(
    ("status", "x", "message"),
    [
        (2, None, "W: LP infeasible (fake)"),
        (3, None, "W: LP unbounded (fake)"),
        (4, np.array([0.5, 0.5]), "W: LP solver failed (status 4: fake)"),
        (0, None, "W: LP solver failed (status 0: fake)"),
    ],
)
def test_solver_failures_are_reported(monkeypatch: pytest.MonkeyPatch, status: int, x, message: str) -> None:
    monkeypatch.setattr(deviation, "linprog", lambda *a, **k: OptimizeResult(status=status, x=x, message="fake"))
    with pytest.raises(DeviationRatingError, match=f"^{re.escape(message)}$"):
        deviation._solve(ROW, A_UB, np.array([0.25]), A_EQ, B_EQ, BOUNDS, "W")


def test_lp_counts_on_the_prisoners_dilemma() -> None:
    """Iteration 1 (ε* = 0 at (D, D)): the two "deviate to D" rows are tight with positive dual
    values (BINDING_DUAL), so they freeze without a face LP; iteration 2 (ε* = −1): the two "deviate to C" rows, the only rows left. 2 main LPs,
    0 face LPs."""
    result = deviation_ratings(PD)
    assert (result.n_main_lps, result.n_face_lps) == (2, 0)
    assert result.iteration_epsilons == pytest.approx((0.0, -1.0), abs=1e-12)
    dual = deviation_ratings(PD, freeze_test="dual")
    assert dual.n_face_lps == 0 and dual.ratings == (-1.0, 0.0)


def test_argument_messages() -> None:
    with pytest.raises(ValueError, match=r"^freeze_test: 'exact'; use 'face' or 'dual'$"):
        deviation_ratings(PD, freeze_test="exact")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^ratings: NaN or infinite value; ratings must be finite$"):
        rank_with_ties([0.0, float("nan")])
    assert rank_with_ties([-1.0, 0.0, -1.0]) == [2.5, 1.0, 2.5]
