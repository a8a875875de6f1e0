"""Property tests (hypothesis) of the pure evaluation: replicator dynamics stay on the simplex
and do not depend on the order of the agents; deviation ratings do not change when a strategy
is cloned (Marris et al. 2025: clone invariance) or when the agents are reordered."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopeval.evaluation.deviation import deviation_ratings
from coopeval.evaluation.replicator import replicator_dynamics

FAST = settings(max_examples=50, deadline=None)
LP = settings(max_examples=30, deadline=None)


@st.composite
def symmetric_tensors(draw: st.DrawFn, max_types: int = 4, max_players: int = 3) -> np.ndarray:
    """A metagame tensor (S,)*N, integer points in −5..5, symmetric in the co-player axes."""
    n_players = draw(st.integers(2, max_players))
    size = draw(st.integers(2, max_types if n_players == 2 else min(max_types, 3)))
    cells = draw(st.lists(st.integers(-5, 5), min_size=size**n_players, max_size=size**n_players))
    base = np.array(cells, dtype=float).reshape((size,) * n_players)
    if n_players == 3:
        base = (base + np.swapaxes(base, 1, 2)) / 2
    return base


def reorder(tensor: np.ndarray, order: list[int]) -> np.ndarray:
    """The same metagame with agent ``order[i]`` on axis position ``i`` (every axis)."""
    return tensor[np.ix_(*[order] * tensor.ndim)]


@FAST
@given(tensor=symmetric_tensors(), data=st.data())
def test_replicator_stays_on_the_simplex(tensor: np.ndarray, data: st.DataObject) -> None:
    steps = data.draw(st.integers(0, 300), label="steps")
    result = replicator_dynamics(tensor, steps=steps, lr=0.1)
    assert result.history.shape == (result.n_updates + 1, tensor.shape[0])
    assert (result.history >= 0).all()
    np.testing.assert_allclose(result.history.sum(axis=1), 1.0, atol=1e-12, rtol=0)
    np.testing.assert_array_equal(result.final_population, result.history[-1])
    assert result.population_weighted_fitness == pytest.approx(float(result.final_population @ result.fitness), abs=1e-12)


@FAST
@given(tensor=symmetric_tensors(), data=st.data())
def test_replicator_is_invariant_to_agent_order(tensor: np.ndarray, data: st.DataObject) -> None:
    size = tensor.shape[0]
    order = data.draw(st.permutations(range(size)), label="order")
    base = replicator_dynamics(tensor, steps=200)
    permuted = replicator_dynamics(reorder(tensor, order), steps=200)
    assert permuted.n_updates == base.n_updates
    np.testing.assert_allclose(permuted.final_population, base.final_population[order], atol=1e-9, rtol=0)
    np.testing.assert_allclose(permuted.fitness, base.fitness[order], atol=1e-9, rtol=0)
    np.testing.assert_allclose(permuted.history, base.history[:, order], atol=1e-9, rtol=0)


@LP
@given(tensor=symmetric_tensors(max_types=3), data=st.data())
def test_deviation_ratings_are_invariant_to_cloning(tensor: np.ndarray, data: st.DataObject) -> None:
    size = tensor.shape[0]
    clone_of = data.draw(st.integers(0, size - 1), label="clone_of")
    cloned = reorder(tensor, [*range(size), clone_of])
    base = deviation_ratings(tensor).ratings
    with_clone = deviation_ratings(cloned).ratings
    assert with_clone[:size] == pytest.approx(base, abs=1e-8)
    assert with_clone[size] == pytest.approx(base[clone_of], abs=1e-8)


@LP
@given(tensor=symmetric_tensors(max_types=3), data=st.data())
def test_deviation_ratings_are_invariant_to_agent_order(tensor: np.ndarray, data: st.DataObject) -> None:
    order = data.draw(st.permutations(range(tensor.shape[0])), label="order")
    base = np.array(deviation_ratings(tensor).ratings)
    permuted = deviation_ratings(reorder(tensor, order)).ratings
    assert permuted == pytest.approx(base[order].tolist(), abs=1e-8)
    assert all(r <= 1e-12 for r in permuted)
