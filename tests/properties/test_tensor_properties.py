"""Invariants of the metagame tensor pooled from random normal-form games.

Pooling (CoopEval, arXiv 2604.15267, Sec. 5; :func:`coopeval.evaluation.tensor.build_payoff_tensor`)
adds seat s's score to every cell whose focal type is the seat's type and whose co-players are a
permutation of the other seats' types. When every seat-ordered profile of a game is played once:

* the tensor is symmetric in its co-player axes, whatever the game;
* a game that is already symmetric is returned unchanged (its metagame);
* the pooled Mean of a type equals its fitness in the uniform population.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coopeval.evaluation.replicator import fitness
from coopeval.evaluation.tensor import Observation, build_payoff_tensor, mean_payoff
from tests.strategies import (
    game_sizes,
    metagame_from_game,
    normal_form_games,
    symmetric_payoff_functions,
)


def every_profile_once(game: np.ndarray) -> list[Observation]:
    """One observation per joint profile of ``game`` (shape (S,)*N + (N,)); type i is ``t{i}``."""
    *counts, _n_players = game.shape
    return [
        (tuple(f"t{a}" for a in profile), [float(v) for v in game[profile]])
        for profile in itertools.product(*(range(c) for c in counts))
    ]


@given(game=normal_form_games(same_strategies=True))
def test_the_pooled_tensor_is_symmetric_in_the_co_players(game: np.ndarray) -> None:
    _, tensor = build_payoff_tensor(every_profile_once(game))
    for perm in itertools.permutations(range(1, tensor.ndim)):
        np.testing.assert_allclose(np.transpose(tensor, (0, *perm)), tensor, atol=1e-12)


@given(data=st.data())
def test_a_symmetric_game_pools_to_its_own_metagame(data: st.DataObject) -> None:
    n_players, size = data.draw(game_sizes(), label="size")
    table = data.draw(symmetric_payoff_functions(n_players, size), label="u")
    metagame = metagame_from_game(table, n_players, size)
    # player p's payoff at a is u(a_p, the others): the metagame read from every seat
    game = np.stack([np.moveaxis(metagame, 0, p) for p in range(n_players)], axis=-1)
    agents, tensor = build_payoff_tensor(every_profile_once(game), agents=[f"t{i}" for i in range(size)])
    assert agents == [f"t{i}" for i in range(size)]
    np.testing.assert_array_equal(tensor, metagame)


@given(game=normal_form_games(same_strategies=True))
def test_the_mean_is_the_uniform_population_fitness(game: np.ndarray) -> None:
    observations = every_profile_once(game)
    agents, tensor = build_payoff_tensor(observations)
    uniform = fitness(tensor, np.full(len(agents), 1 / len(agents)))
    means = mean_payoff(observations)
    assert [means[a] for a in agents] == pytest.approx(uniform.tolist(), abs=1e-9)
