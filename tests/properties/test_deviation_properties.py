"""Invariants of deviation ratings on random n-player metagames.

Deviation ratings (Marris et al., "Game theoretic rating in N-player general-sum games with
equilibria", arXiv 2210.02205, and their deviation ratings, arXiv 2502.11645) depend on the
game only through the deviation gains M[(p, s), a] = G_p(s, a_−p) − G_p(a), and the strictest
CCE is unique. So, with the convention of :mod:`coopeval.evaluation.deviation` (ratings ≤ 0,
higher is better, rating of type s = the frozen gain value of row (0, s)):

* adding to each player's payoff any amount that depends only on the others' actions (here
  c(o) for co-players o, the same for every focal type) leaves M, hence the ratings, unchanged;
* scaling every payoff by 2^j scales the ratings by 2^j exactly;
* relabelling the types relabels the ratings; cloning a type changes no rating and gives the
  clone its original's rating;
* the first LP is feasible with ε* ≤ 0 (a CCE exists), the ε* sequence strictly decreases,
  one main LP per distinct rating, and every rating is ≤ 0;
* the face test and the dual rule give the same ratings.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopeval.evaluation.deviation import deviation_matrix, deviation_ratings
from tests.strategies import metagames, reorder

# The face test solves up to N·S extra LPs per iteration: keep the games at ≤ 64 profiles.
SMALL = metagames(max_profiles=64)
LP = settings(max_examples=25)


@LP
@given(tensor=SMALL, data=st.data())
def test_adding_a_co_player_offset_changes_no_rating(tensor: np.ndarray, data: st.DataObject) -> None:
    n_players, size = tensor.ndim, tensor.shape[0]
    offset = data.draw(metagames(n_players, n_players, size, size, values=st.integers(-50, 50)), label="offset")
    # c(o) = offset[0, o]: one amount per co-player profile, added for every focal type
    shifted = tensor + offset[0][None]
    np.testing.assert_array_equal(deviation_matrix(shifted), deviation_matrix(tensor))
    assert deviation_ratings(shifted).ratings == deviation_ratings(tensor).ratings


@LP
@given(tensor=SMALL, power=st.integers(-20, 20))
def test_scaling_by_a_power_of_two_scales_the_ratings(tensor: np.ndarray, power: int) -> None:
    base = deviation_ratings(tensor)
    scaled = deviation_ratings(tensor * 2.0**power)
    assert scaled.n_main_lps == base.n_main_lps
    assert scaled.ratings == pytest.approx([r * 2.0**power for r in base.ratings], rel=1e-9, abs=1e-9 * 2.0**power)


@LP
@given(tensor=SMALL, data=st.data())
def test_relabelling_the_types_relabels_the_ratings(tensor: np.ndarray, data: st.DataObject) -> None:
    order = data.draw(st.permutations(range(tensor.shape[0])), label="order")
    base = np.array(deviation_ratings(tensor).ratings)
    permuted = deviation_ratings(reorder(tensor, order)).ratings
    assert permuted == pytest.approx(base[order].tolist(), abs=1e-8)


@LP
@given(tensor=metagames(max_types=3, max_profiles=27), data=st.data())
def test_cloning_a_type_changes_no_rating(tensor: np.ndarray, data: st.DataObject) -> None:
    size = tensor.shape[0]
    original = data.draw(st.integers(0, size - 1), label="original")
    cloned = reorder(tensor, [*range(size), original])
    base = deviation_ratings(tensor).ratings
    with_clone = deviation_ratings(cloned).ratings
    assert with_clone[:size] == pytest.approx(base, abs=1e-8)
    assert with_clone[size] == pytest.approx(base[original], abs=1e-8)


@LP
@given(tensor=SMALL)
def test_the_strictest_cce_sequence(tensor: np.ndarray) -> None:
    result = deviation_ratings(tensor)
    epsilons = result.iteration_epsilons
    scale = float(np.abs(deviation_matrix(tensor)).max())
    tol = 1e-9 * max(scale, 1.0)
    assert epsilons[0] <= tol  # the first LP is feasible at ε* ≤ 0: a CCE exists
    assert all(later < earlier for earlier, later in itertools.pairwise(epsilons))
    assert all(r <= 0 for r in result.ratings)
    assert result.n_main_lps == len(set(result.ratings))
    assert max(result.ratings) == pytest.approx(epsilons[0], abs=tol)
    assert sorted(set(result.ratings), reverse=True) == pytest.approx(list(epsilons), abs=tol)


@LP
@given(tensor=SMALL)
def test_the_face_test_and_the_dual_rule_agree(tensor: np.ndarray) -> None:
    face = deviation_ratings(tensor, freeze_test="face").ratings
    dual = deviation_ratings(tensor, freeze_test="dual").ratings
    assert dual == pytest.approx(face, abs=1e-8)


@LP
@given(tensor=metagames(min_types=2, max_profiles=64), data=st.data())
def test_a_dominating_type_is_rated_at_least_as_high(tensor: np.ndarray, data: st.DataObject) -> None:
    size = tensor.shape[0]
    low, high = data.draw(st.permutations(range(size)), label="pair")[:2]
    tensor = tensor.copy()
    tensor[high] = np.maximum(tensor[high], tensor[low])  # high weakly dominates low
    ratings = deviation_ratings(tensor).ratings
    assert ratings[high] >= ratings[low] - 1e-9
