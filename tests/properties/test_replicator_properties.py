"""Invariants of the discrete Hedge replicator on random n-player metagames.

The map (CoopEval, arXiv 2604.15267, Sec. 5, as implemented in
:func:`coopeval.evaluation.replicator.replicator_dynamics`) is
x_i ← x_i exp(η (f_i − f̄)) / Σ_j x_j exp(η (f_j − f̄)). From that formula alone:

* every population stays on the simplex;
* x_d / x_k falls by exactly exp(η (f_d − f_k)) < 1 per step when type k strictly dominates
  type d, and a type strictly dominated by every other type loses share at every step;
* adding a constant to every payoff changes no advantage f_i − f̄, hence no step;
* relabelling the types relabels the whole history (equivariance);
* a population at which every type has the same fitness is a fixed point.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coopeval.evaluation.replicator import fitness, replicator_dynamics
from tests.strategies import metagames, mixed_strategies, populations, reorder

PROFILES = 256
"""Replicator runs are cheap: games up to 4 players x 4 types."""


def fitness_by_definition(tensor: np.ndarray, x: np.ndarray) -> np.ndarray:
    """f_i(x) = Σ_o T[i, o_1, …, o_{N−1}] x_{o_1} ⋯ x_{o_{N−1}}, summed profile by profile."""
    size = tensor.shape[0]
    return np.array([
        math.fsum(tensor[(i, *o)] * math.prod(x[k] for k in o) for o in itertools.product(range(size), repeat=tensor.ndim - 1))
        for i in range(size)
    ])


@given(tensor=metagames(max_profiles=PROFILES), data=st.data())
def test_fitness_is_the_expected_payoff_against_iid_co_players(tensor: np.ndarray, data: st.DataObject) -> None:
    x = data.draw(mixed_strategies(tensor.shape[0]), label="x")
    np.testing.assert_allclose(fitness(tensor, x), fitness_by_definition(tensor, x), atol=1e-9, rtol=0)


@given(tensor=metagames(max_profiles=PROFILES), data=st.data())
def test_population_stays_on_the_simplex(tensor: np.ndarray, data: st.DataObject) -> None:
    start = data.draw(populations(tensor.shape[0]), label="start")
    steps = data.draw(st.integers(0, 200), label="steps")
    result = replicator_dynamics(tensor, initial=start, steps=steps, lr=0.1)
    assert result.history.shape == (result.n_updates + 1, tensor.shape[0])
    assert (result.history >= 0).all()
    np.testing.assert_allclose(result.history.sum(axis=1), 1.0, atol=1e-12, rtol=0)
    np.testing.assert_array_equal(result.final_population, result.history[-1])
    expected = float(result.final_population @ result.fitness)
    assert result.population_weighted_fitness == pytest.approx(expected, abs=1e-12)


@st.composite
def dominated_games(draw: st.DrawFn) -> tuple[np.ndarray, int, int]:
    """(tensor, d, k): a metagame in which type k strictly dominates type d: T[k, o] − T[d, o]
    ≥ 1 for every co-player profile o (the gap symmetric in o, so T stays a metagame)."""
    base = draw(metagames(min_types=2, max_profiles=PROFILES))
    size = base.shape[0]
    d, k = draw(st.permutations(range(size)))[:2]
    gap = draw(metagames(base.ndim, base.ndim, size, size, PROFILES, st.integers(1, 3)))
    tensor = base.copy()
    tensor[d] = base[k] - gap[0]
    return tensor, d, k


@given(game=dominated_games(), data=st.data())
def test_a_strictly_dominated_type_loses_ground_to_its_dominator(
    game: tuple[np.ndarray, int, int], data: st.DataObject
) -> None:
    tensor, d, k = game
    start = data.draw(populations(tensor.shape[0]), label="start")
    result = replicator_dynamics(tensor, initial=start, steps=40, lr=0.1, tol=0.0)
    history = result.history
    ratio = history[:, d] / history[:, k]
    # exactly the Hedge factor exp(η (f_d − f_k)) per step, and f_d − f_k ≤ −1
    for step in range(result.n_updates):
        f = fitness_by_definition(tensor, history[step])
        assert f[k] - f[d] >= 1 - 1e-9
        assert ratio[step + 1] == pytest.approx(ratio[step] * math.exp(0.1 * (f[d] - f[k])), rel=1e-9)
    assert (np.diff(ratio) < 0).all()


@given(tensor=metagames(min_types=2, max_profiles=PROFILES), data=st.data())
def test_a_type_dominated_by_every_other_type_loses_share_every_step(
    tensor: np.ndarray, data: st.DataObject
) -> None:
    size = tensor.shape[0]
    worst = data.draw(st.integers(0, size - 1), label="worst")
    tensor = tensor.copy()
    others = [i for i in range(size) if i != worst]
    tensor[worst] = tensor[others].min(axis=0) - 1  # min over types keeps co-player symmetry
    start = data.draw(populations(size), label="start")
    result = replicator_dynamics(tensor, initial=start, steps=40, lr=0.1, tol=0.0)
    assert (np.diff(result.history[:, worst]) < 0).all()


@given(tensor=metagames(max_profiles=PROFILES), shift=st.integers(-1000, 1000), data=st.data())
def test_adding_a_constant_to_every_payoff_changes_nothing(
    tensor: np.ndarray, shift: int, data: st.DataObject
) -> None:
    start = data.draw(populations(tensor.shape[0]), label="start")
    tol = data.draw(st.sampled_from([1e-6, 0.05]), label="tol")  # 0.05: the early stop fires often
    base = replicator_dynamics(tensor, initial=start, steps=100, tol=tol)
    shifted = replicator_dynamics(tensor + shift, initial=start, steps=100, tol=tol)
    assert shifted.n_updates == base.n_updates
    np.testing.assert_allclose(shifted.history, base.history, atol=1e-9, rtol=0)
    np.testing.assert_allclose(shifted.fitness, base.fitness + shift, atol=1e-9, rtol=0)


@given(tensor=metagames(max_profiles=PROFILES), data=st.data())
def test_relabelling_the_types_relabels_the_history(tensor: np.ndarray, data: st.DataObject) -> None:
    size = tensor.shape[0]
    order = data.draw(st.permutations(range(size)), label="order")
    start = data.draw(populations(size), label="start")
    base = replicator_dynamics(tensor, initial=start, steps=100)
    permuted = replicator_dynamics(reorder(tensor, order), initial=start[order], steps=100)
    assert permuted.n_updates == base.n_updates
    np.testing.assert_allclose(permuted.history, base.history[:, order], atol=1e-9, rtol=0)
    np.testing.assert_allclose(permuted.fitness, base.fitness[order], atol=1e-9, rtol=0)


@given(tensor=metagames(max_profiles=PROFILES), data=st.data())
def test_an_equal_fitness_population_is_a_fixed_point(tensor: np.ndarray, data: st.DataObject) -> None:
    """Subtracting f_i(x*) from every payoff of type i (a per-type constant, which keeps the
    co-player symmetry) makes every fitness 0 at x*, so x* is a rest point of the map."""
    size = tensor.shape[0]
    rest = data.draw(populations(size), label="rest")
    level = fitness_by_definition(tensor, rest)
    flat = tensor - level.reshape((size,) + (1,) * (tensor.ndim - 1))
    np.testing.assert_allclose(fitness_by_definition(flat, rest), 0.0, atol=1e-9)
    stopped = replicator_dynamics(flat, initial=rest, steps=50)
    assert stopped.stopped_early and stopped.n_updates == 0
    kept = replicator_dynamics(flat, initial=rest, steps=50, tol=0.0)
    assert kept.n_updates == 50
    np.testing.assert_allclose(kept.history, np.broadcast_to(rest, kept.history.shape), atol=1e-9, rtol=0)
