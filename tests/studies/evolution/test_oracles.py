"""Exact oracles of the evolution spec: docs/protocol/evolution.md#schedule schedule, docs/protocol/evolution.md#constant-fraction-oracle constant-fraction table, docs/protocol/evolution.md#matrix-features
matrix features, roulette probabilities and draws (docs/protocol/evolution.md#oracles)."""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from coopeval.core.rng import rng_for
from coopeval.games.donation import ContinuousDonationGame
from coopeval.studies.evolution.game import constant_fraction_decide, play_game
from coopeval.studies.evolution.matrix import matrix_features
from coopeval.studies.evolution.schedule import game_rounds, role_sequence
from coopeval.studies.evolution.selection import (
    ranks,
    roulette_draw,
    roulette_probabilities,
    shuffled_positions,
    truncation_survivors,
)

NAMES = [f"p{i}" for i in range(12)]


def test_role_sequences_game_1_and_2() -> None:
    for a in range(6):
        assert role_sequence(12, 1, a) == "DRDRDRRDRDRD"
        assert role_sequence(12, 1, 6 + a) == "RDRDRDDRDRDR"
        assert role_sequence(12, 2, a) == "RDRDRDDRDRDR"


def test_schedule_counts() -> None:
    events = [(p.donor, p.recipient) for g in (1, 2) for rnd in game_rounds(12, g) for p in rnd]
    assert len(events) == 144
    per_agent = Counter(d for d, _ in events)
    assert set(per_agent.values()) == {12}
    pairs = Counter(frozenset(e) for e in events)
    assert len(pairs) == 36 and set(pairs.values()) == {4}
    assert all((d < 6) != (r < 6) for d, r in events)  # same half never meets
    for g in (1, 2):
        for rnd in game_rounds(12, g):
            seen = [x for p in rnd for x in (p.donor, p.recipient)]
            assert sorted(seen) == list(range(12))
    # base round r: a_k meets b_{(k - r) mod 6}
    for r, rnd in enumerate(game_rounds(12, 1)[:6]):
        for p in rnd:
            a, b = sorted((p.donor, p.recipient))
            assert b - 6 == (a - r) % 6
            assert (p.donor == a) == (r % 2 == 0)


@pytest.mark.parametrize("n", [3, 5, 2, 13])
def test_bad_population_sizes(n: int) -> None:
    with pytest.raises(ValueError, match="even number >= 4"):
        game_rounds(n, 1)


def _mean_final(f: float, game: int) -> tuple[float, list[float]]:
    result = asyncio.run(play_game(NAMES, ContinuousDonationGame(), game, constant_fraction_decide(f), trace_length=3))
    return sum(result.final) / 12, result.final


@pytest.mark.parametrize(
    ("f", "expected"),
    [(0.0, 10.000), (0.1, 18.708), (0.25, 52.024), (0.5, 341.172), (0.75, 2414.797), (1.0, 15360.0)],
)
def test_constant_fraction_table(f: float, expected: float) -> None:
    for game in (1, 2):
        mean, _ = _mean_final(f, game)
        assert mean == pytest.approx(expected, abs=5e-4)


def test_constant_fraction_half_exact() -> None:
    mean1, final1 = _mean_final(0.5, 1)
    mean2, final2 = _mean_final(0.5, 2)
    assert Fraction(mean1) == Fraction(341171875, 10**6) == Fraction(mean2)
    assert final1[:6] == [182.96875] * 6 and final1[6:] == [499.375] * 6
    assert final2[:6] == [499.375] * 6 and final2[6:] == [182.96875] * 6
    assert Fraction(182.96875) == Fraction(5855, 32) and Fraction(499.375) == Fraction(3995, 8)


def _hand_matrices() -> dict[str, np.ndarray]:
    i, j = np.meshgrid(np.arange(11), np.arange(11), indexing="ij")
    return {
        "tft": 10.0 * j,
        "step": np.where(j >= 6, 100.0, 0.0),
        "flat": np.full((11, 11), 50.0),
        "l1": 10.0 * j + 30.0 * ((i <= 4) & (j <= 4)),
    }


HAND = {
    #        left       right OES        α   β    γ   δ   L1     β−α  H                 ρ          constant rows
    "tft": (20, 80, 60, 20, 80, 20, 80, False, 60, 4.549177, 1.0, 0),
    "step": (0, 100, 100, 0, 100, 0, 100, False, 100, math.log(55), 0.866025, 0),
    "flat": (50, 50, 0, 50, 50, 50, 50, False, 0, math.log(121), math.nan, 11),
    "l1": (33.636364, 80, 46.363636, 20, 80, 50, 80, True, 60, 4.642570, 0.963605, 0),
}


@pytest.mark.parametrize("name", list(HAND))
def test_hand_computed_features(name: str) -> None:
    feats = matrix_features(_hand_matrices()[name])
    left, right, oes, a, b, c, d, l1, bma, h, rho, nconst = HAND[name]
    assert feats.left == pytest.approx(left, abs=1e-6)
    assert feats.right == pytest.approx(right, abs=1e-6)
    assert feats.oes == pytest.approx(oes, abs=1e-6)
    assert (feats.alpha, feats.beta, feats.gamma, feats.delta) == pytest.approx((a, b, c, d), abs=1e-9)
    assert feats.l1 is l1
    assert feats.beta_minus_alpha == pytest.approx(bma, abs=1e-9)
    assert feats.entropy == pytest.approx(h, abs=1e-6)
    if math.isnan(rho):
        assert math.isnan(feats.rho_mono)
    else:
        assert feats.rho_mono == pytest.approx(rho, abs=1e-6)
    assert feats.n_constant_rows == nconst


def test_constant_rows_zero_rule_and_exact_fractions() -> None:
    m = _hand_matrices()
    assert matrix_features(m["flat"], "zero").rho_mono == 0.0
    assert Fraction(matrix_features(m["l1"]).left).limit_denominator(1000) == Fraction(370, 11)
    assert math.isnan(matrix_features(np.zeros((11, 11))).entropy)
    with pytest.raises(ValueError, match="11 x 11"):
        matrix_features(np.zeros((10, 11)))


def test_roulette_probabilities_and_seeded_draw() -> None:
    assert roulette_probabilities([1, 1, 2]) == [Fraction(1, 4), Fraction(1, 4), Fraction(1, 2)]
    assert roulette_probabilities([0, 0]) == [Fraction(1, 2)] * 2
    first = roulette_draw([1, 1, 2], 12, rng_for(7, "run", 1, "roulette"))
    again = roulette_draw([1, 1, 2], 12, rng_for(7, "run", 1, "roulette"))
    assert first == again and len(first) == 12 and set(first) <= {0, 1, 2}
    big = Counter(roulette_draw([1, 1, 2], 40000, rng_for(1, "freq")))
    assert big[2] / 40000 == pytest.approx(0.5, abs=0.01)
    with pytest.raises(ValueError, match="non-negative"):
        roulette_probabilities([1, -1])


def test_truncation_and_ranks() -> None:
    assert truncation_survivors([5, 9, 5, 1]) == [1, 0]
    assert ranks([5, 9, 5, 1]) == [2, 1, 3, 4]
    r = ranks([5, 5, 5, 1], shuffled_positions(4, rng_for(3, "ranks")))
    assert sorted(r[:3]) == [1, 2, 3] and r[3] == 4
