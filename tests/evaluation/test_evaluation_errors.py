"""Input checks of the scores and the replicator: each bad input is refused with a message that
names the argument, the problem and the fix (and the boundaries of the valid range pass)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from coopeval.evaluation.replicator import ExtinctStartWarning, fitness, replicator_dynamics
from coopeval.evaluation.scores import discount_weights, discounted_average, discounted_total

PD = np.array([[2.0, 0.0], [3.0, 1.0]])


@pytest.mark.parametrize(
    ("payoffs", "delta", "message"),
    [
        ([], 0.8, "payoffs: empty sequence; a match needs at least one round"),
        ([1.0, float("nan")], 0.8, "payoffs: contains NaN or infinity; pass finite per-round points"),
        ([float("inf")], 0.8, "payoffs: contains NaN or infinity; pass finite per-round points"),
        ([1.0], 1.5, "delta: 1.5 is outside [0, 1]; pass a discount factor in [0, 1]"),
        ([1.0], -0.1, "delta: -0.1 is outside [0, 1]; pass a discount factor in [0, 1]"),
        ([1.0], float("nan"), "delta: nan is outside [0, 1]; pass a discount factor in [0, 1]"),
    ],
)
def test_score_errors(payoffs: list[float], delta: float, message: str) -> None:
    for score in (discounted_average, discounted_total):
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            score(payoffs, delta)


@pytest.mark.parametrize(
    ("n_rounds", "delta", "message"),
    [
        (0, 0.8, "n_rounds: 0 < 1; a match needs at least one round"),
        (-2, 0.8, "n_rounds: -2 < 1; a match needs at least one round"),
        (3, 1.0000001, "delta: 1.0000001 is outside [0, 1]; pass a discount factor in [0, 1]"),
        (3, float("inf"), "delta: inf is outside [0, 1]; pass a discount factor in [0, 1]"),
    ],
)
def test_weight_errors(n_rounds: int, delta: float, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        discount_weights(n_rounds, delta)


def test_weights_at_the_boundaries() -> None:
    assert discount_weights(1, 0.8) == [1.0]
    assert discount_weights(3, 0.0) == [1.0, 0.0, 0.0]
    assert discount_weights(3, 1.0) == [0.0, 0.0, 1.0]
    assert discount_weights(3, 0.5) == [0.5, 0.25, 0.25]
    assert discounted_average([3, 1], 0.5) == 2.0 and isinstance(discounted_average([3, 1], 0.5), float)
    assert discounted_total([3, 1], 0.0) == 3.0 and discounted_total([3, 1], 1.0) == 4.0


@pytest.mark.parametrize(
    ("tensor", "message"),
    [
        (np.zeros((2, 3)), "tensor: shape (2, 3) is not (S,)*N with N >= 2 and S >= 1; pass a square matrix or cubic tensor"),
        (np.zeros(3), "tensor: shape (3,) is not (S,)*N with N >= 2 and S >= 1; pass a square matrix or cubic tensor"),
        (np.zeros((0, 0)), "tensor: shape (0, 0) is not (S,)*N with N >= 2 and S >= 1; pass a square matrix or cubic tensor"),
        (np.array([[1.0, np.inf], [0.0, 1.0]]), "tensor: contains NaN or infinite cells; every cell needs a payoff"),
    ],
)
def test_tensor_errors(tensor: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        replicator_dynamics(tensor)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        fitness(tensor, np.array([0.5, 0.5]))


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"initial": [1.0]}, r"^initial: shape \(1,\), expected \(2,\) \(one share per agent\)$"),
        ({"initial": [1.5, -0.5]}, r"^initial: shares must be finite and non-negative$"),
        ({"initial": [np.nan, 1.0]}, r"^initial: shares must be finite and non-negative$"),
        ({"initial": [0.5, 0.6]}, r"^initial: shares sum to \S*1\.1\S*, not 1; normalise the population$"),
        ({"initial": [0.5, 0.5 + 2e-9]}, r"^initial: shares sum to .*, not 1; normalise the population$"),
        ({"steps": -1}, r"^steps: -1 must be a non-negative integer$"),
        ({"steps": 2.5}, r"^steps: 2\.5 must be a non-negative integer$"),
        ({"steps": True}, r"^steps: True must be a non-negative integer$"),
        ({"lr": float("nan")}, r"^lr: nan must be finite and non-negative$"),
        ({"lr": -0.1}, r"^lr: -0\.1 must be finite and non-negative$"),
        ({"lr_method": "log"}, r"^lr_method: 'log'; use 'constant' or 'sqrt'$"),
        ({"tol": -1.0}, r"^tol: -1\.0 must be finite and non-negative$"),
        ({"tol": float("inf")}, r"^tol: inf must be finite and non-negative$"),
    ],
)
def test_replicator_argument_errors(kwargs: dict[str, Any], pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        replicator_dynamics(PD, **kwargs)


def test_population_checks_in_fitness_and_tolerance() -> None:
    with pytest.raises(ValueError, match=r"^x: shape \(3,\), expected \(2,\) \(one share per agent\)$"):
        fitness(PD, np.array([0.2, 0.3, 0.5]))
    # shares may miss 1 by up to 1e-9 (round-off), not more
    assert fitness(PD, np.array([0.5, 0.5 + 5e-10])) == pytest.approx([1.0, 2.0 + 5e-10], abs=1e-13)
    # zero learning rate and zero tolerance are allowed: nothing moves, no early stop
    still = replicator_dynamics(PD, steps=3, lr=0.0, tol=0.0)
    assert still.n_updates == 3 and not still.stopped_early
    np.testing.assert_allclose(still.history, [[0.5, 0.5]] * 4, atol=0, rtol=0)


def test_extinct_types_are_valid_and_stay_extinct() -> None:
    with pytest.warns(ExtinctStartWarning, match=r"^initial: agent indices \[1\] start with share 0"):
        result = replicator_dynamics(PD, initial=[1.0, 0.0], steps=3)
    assert result.history.tolist() == [[1.0, 0.0]] * 4
    assert result.fitness.tolist() == [2.0, 3.0]  # the cooperator alone: f = T @ (1, 0)


def test_integer_inputs_give_float_results() -> None:
    with pytest.warns(ExtinctStartWarning):
        result = replicator_dynamics([[2, 0], [3, 1]], initial=[1, 0], steps=0)
    assert result.final_population.dtype == np.float64 and result.history.dtype == np.float64
    assert result.final_population.tolist() == [1.0, 0.0]


def test_early_stop_is_strictly_below_the_tolerance() -> None:
    flat = np.ones((2, 2))  # every type earns 1: the advantage is exactly 0
    assert replicator_dynamics(flat, steps=5, tol=0.0).n_updates == 5  # 0 < 0 is false: no stop
    stopped = replicator_dynamics(flat, steps=5, tol=1e-12)
    assert stopped.n_updates == 0 and stopped.stopped_early
