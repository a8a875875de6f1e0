"""Discrete replicator dynamics (docs/protocol/evaluation.md#replicator-dynamics) against oracle vectors, run1 data and nashpy."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from coopeval.evaluation.replicator import fitness, replicator_dynamics
from coopeval.evaluation.tensor import build_payoff_tensor
from coopeval.studies.coopeval.reference.payoffs import load_reference_matchups


def test_oracle_vector(rd_vector: tuple[str, dict[str, Any]], oracles: dict[str, Any]) -> None:
    _, vector = rd_vector
    tol = oracles["sets"]["replicator_dynamics"]["tolerance"]
    inp, exp = vector["input"], vector["expected"]
    tensor = np.array(inp["payoff_tensor"])
    initial = None if inp["initial_population"] == "uniform" else inp["initial_population"]
    result = replicator_dynamics(
        tensor,
        initial=initial,
        steps=inp["steps"],
        lr=inp["lr"],
        lr_method=inp["lr_method"],
        tol=inp["convergence_tol"],
    )
    assert result.n_updates == exp["n_updates_applied"]
    assert result.stopped_early == exp["early_stopped"]
    assert result.history.shape == (result.n_updates + 1, tensor.shape[0])
    pop_tol, fit_tol = tol["population_abs"], tol["fitness_abs"]
    np.testing.assert_allclose(
        result.final_population, exp["final_population"], atol=pop_tol, rtol=0
    )
    np.testing.assert_allclose(result.fitness, exp["final_fitness"], atol=fit_tol, rtol=0)
    assert result.population_weighted_fitness == pytest.approx(
        exp["population_weighted_final_fitness"], abs=fit_tol
    )
    uniform = fitness(tensor, np.full(tensor.shape[0], 1 / tensor.shape[0]))
    np.testing.assert_allclose(uniform, exp["uniform_population_fitness"], atol=fit_tol, rtol=0)
    for updates, population in exp["trajectory_checkpoints"].items():
        np.testing.assert_allclose(result.history[int(updates)], population, atol=pop_tol, rtol=0)


def test_fitness_two_and_three_players() -> None:
    rng = np.random.default_rng(1)
    x = rng.dirichlet(np.ones(4))
    matrix = rng.normal(size=(4, 4))
    np.testing.assert_allclose(fitness(matrix, x), matrix @ x, atol=1e-15)
    cube = rng.normal(size=(4, 4, 4))
    np.testing.assert_allclose(fitness(cube, x), np.einsum("ijk,j,k->i", cube, x, x), atol=1e-14)


def test_sqrt_schedule_by_hand() -> None:
    matrix = np.array([[2.0, 0.0], [3.0, 1.0]])
    result = replicator_dynamics(matrix, steps=2, lr=0.1, lr_method="sqrt")
    x = np.array([0.5, 0.5])
    for step in (1, 2):
        f = matrix @ x
        w = x * np.exp(0.1 / math.sqrt(step) * (f - x @ f))
        x = w / w.sum()
        np.testing.assert_allclose(result.history[step], x, atol=1e-15)
    assert result.n_updates == 2 and not result.stopped_early


def test_zero_steps_and_early_stop() -> None:
    matrix = np.array([[1.0, 1.0], [1.0, 1.0]])
    result = replicator_dynamics(matrix, steps=1000)
    assert result.stopped_early and result.n_updates == 0
    np.testing.assert_array_equal(result.final_population, [0.5, 0.5])
    assert result.population_weighted_fitness == 1.0
    pd = replicator_dynamics(np.array([[2.0, 0.0], [3.0, 1.0]]), steps=0)
    assert pd.n_updates == 0 and not pd.stopped_early and pd.history.shape == (1, 2)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"initial": [0.5, 0.6]}, "sum"),
        ({"initial": [1.0]}, "shape"),
        ({"initial": [1.5, -0.5]}, "non-negative"),
        ({"steps": -1}, "steps"),
        ({"lr": float("nan")}, "lr"),
        ({"lr_method": "log"}, "lr_method"),
        ({"tol": -1.0}, "tol"),
    ],
)
def test_invalid_arguments(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        replicator_dynamics(np.array([[2.0, 0.0], [3.0, 1.0]]), **kwargs)


def test_invalid_tensor() -> None:
    with pytest.raises(ValueError, match="shape"):
        replicator_dynamics(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        replicator_dynamics(np.array([[1.0, np.nan], [0.0, 1.0]]))


def test_nashpy_interior_equilibrium_is_rest_point() -> None:
    """A symmetric interior NE (found by nashpy) equalises fitness: the map stops at once."""
    nashpy = pytest.importorskip("nashpy")
    matrix = np.array([[0.0, -1.0, 2.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])  # biased RPS
    equilibria = list(nashpy.Game(matrix, matrix.T).support_enumeration())
    interior = [row for row, col in equilibria if (row > 1e-12).all() and np.allclose(row, col)]
    assert len(interior) == 1
    result = replicator_dynamics(matrix, initial=interior[0] / interior[0].sum())
    assert result.stopped_early and result.n_updates == 0
    f = fitness(matrix, interior[0] / interior[0].sum())
    assert np.ptp(f) < 1e-12


def test_nashpy_stag_hunt_basins() -> None:
    """Stag hunt: the discrete map converges to the pure NE whose basin holds the start."""
    nashpy = pytest.importorskip("nashpy")
    matrix = np.array([[5.0, 0.0], [4.0, 2.0]])  # stag, hare
    pure = {
        int(np.argmax(row))
        for row, col in nashpy.Game(matrix, matrix.T).support_enumeration()
        if row.max() == 1.0 and np.allclose(row, col)
    }
    assert pure == {0, 1}
    mixed = 2 / 3  # stag share that equalises fitness: 5p = 4p + 2(1 - p)
    high = replicator_dynamics(matrix, initial=[mixed + 0.05, 1 - mixed - 0.05])
    low = replicator_dynamics(matrix, initial=[mixed - 0.05, 1 - mixed + 0.05])
    assert high.final_population[0] > 1 - 1e-6
    assert low.final_population[1] > 1 - 1e-6


def test_run1_rd_reproduces(run1_dir: Path, load_json: Any, matchup_experiment: str) -> None:
    folder = run1_dir / matchup_experiment
    agents, tensor = build_payoff_tensor(load_reference_matchups(folder / "matchup_payoffs.json"))
    result = replicator_dynamics(tensor, steps=1000, lr=0.1)
    recorded = load_json(folder / "replicator_dynamics_fitness.json")
    assert sorted(recorded) == agents
    for i, agent in enumerate(agents):
        assert result.fitness[i] == pytest.approx(recorded[agent]["fitness"], abs=1e-9, rel=0)
        assert result.final_population[i] == pytest.approx(
            recorded[agent]["final_population"], abs=1e-9, rel=0
        )
    checkpoints = load_json(folder / "population_checkpoints.json")
    assert checkpoints["steps"] == [0, 1, 2, 10, 100, 1000]
    recorded = np.array([[snapshot[a] for a in agents] for snapshot in checkpoints["populations"]])
    np.testing.assert_allclose(result.history[checkpoints["steps"]], recorded, atol=1e-9, rtol=0)


def test_run1_rd_full_history(full_run1_dir: Path, load_json: Any, experiment_names: dict[str, tuple[str, ...]]) -> None:
    """Full-run check: every step of the 24 recorded ``population_history.json`` trajectories."""
    for experiment in experiment_names["matchup"]:
        folder = full_run1_dir / experiment
        agents, tensor = build_payoff_tensor(load_reference_matchups(folder / "matchup_payoffs.json"))
        result = replicator_dynamics(tensor, steps=1000, lr=0.1)
        history = load_json(folder / "population_history.json")
        assert len(history) == result.history.shape[0] == 1001, experiment
        recorded_history = np.array([[snapshot[a] for a in agents] for snapshot in history])
        np.testing.assert_allclose(result.history, recorded_history, atol=1e-9, rtol=0, err_msg=experiment)


def test_released_vector_rd(
    released_vector: tuple[str, dict[str, Any]], oracles: dict[str, Any]
) -> None:
    _, vector = released_vector
    tol = oracles["sets"]["coopeval_released_data"]["tolerance"]["rd_abs"]
    agents = vector["input"]["agents"]
    expected = vector["expected"]
    result = replicator_dynamics(np.array(vector["input"]["payoff_tensor"]))
    np.testing.assert_allclose(
        result.final_population,
        [expected["rd_final_population_recorded"][a] for a in agents],
        atol=tol,
        rtol=0,
    )
    np.testing.assert_allclose(
        result.fitness, [expected["rd_final_fitness_recorded"][a] for a in agents], atol=tol, rtol=0
    )
    assert result.population_weighted_fitness == pytest.approx(
        expected["llm_average_fitness_population_weighted"], abs=tol
    )
    ne, coop = expected["normalisation_ne_coop"]
    assert (result.population_weighted_fitness - ne) / (coop - ne) == pytest.approx(
        expected["llm_average_fitness_normalised"], abs=tol
    )
