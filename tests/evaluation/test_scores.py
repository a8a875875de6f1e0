"""δ-weighted per-seat scores (docs/protocol/tournament.md#delta-weighted-score) against the axelrod oracle vectors and hand values."""

from __future__ import annotations

from typing import Any

import pytest

from coopeval.evaluation.scores import discount_weights, discounted_average, discounted_total


def test_weights_match_oracle(oracles: dict[str, Any]) -> None:
    expected = oracles["sets"]["axelrod_matches"]["discounting_weights_T15_d0.8"]
    weights = discount_weights(15, 0.8)
    assert weights == pytest.approx(expected, abs=1e-15, rel=0)
    assert sum(weights) == pytest.approx(1.0, abs=1e-15)
    assert weights[-1] == pytest.approx(0.8**14)


def test_axelrod_match(axelrod_vector: tuple[str, dict[str, Any]], oracles: dict[str, Any]) -> None:
    _, vector = axelrod_vector
    tol = oracles["sets"]["axelrod_matches"]["tolerance"]["discounted_abs"]
    scores = vector["per_turn_scores"]
    for seat in range(2):
        column = [turn[seat] for turn in scores]
        assert sum(column) == vector["final_score"][seat]
        assert discounted_average(column, 0.8) == pytest.approx(
            vector["coopeval_discounted_average"][seat], abs=tol, rel=0
        )
        assert discounted_total(column, 0.8) == pytest.approx(
            vector["delta_weighted_total"][seat], abs=tol, rel=0
        )


def test_hand_values() -> None:
    # TFT vs AllD over 15 rounds: TFT gets 0 then 1s, AllD gets 3 then 1s (PD R2 S0 T3 P1).
    assert discounted_average([0] + [1] * 14, 0.8) == pytest.approx(0.8, abs=1e-15)
    assert discounted_average([3] + [1] * 14, 0.8) == pytest.approx(1.4, abs=1e-15)
    assert discounted_average([7.5], 0.8) == 7.5  # T = 1: the payoff itself
    assert discounted_average([1, 2, 3], 1.0) == 3.0  # δ = 1: last round only
    assert discounted_average([1, 2, 3], 0.0) == 1.0  # δ = 0: first round only
    assert discounted_average([1, 2], 0.5) == pytest.approx(0.5 * 1 + 0.5 * 2)
    assert discounted_total([1, 1, 1], 0.5) == pytest.approx(1.75)
    assert discounted_average([2.0] * 15, 0.8) == pytest.approx(2.0, abs=1e-15)


@pytest.mark.parametrize(
    ("payoffs", "delta"),
    [([], 0.8), ([1.0], 1.5), ([1.0], -0.1), ([float("nan")], 0.8)],
)
def test_invalid_input(payoffs: list[float], delta: float) -> None:
    with pytest.raises(ValueError):
        discounted_average(payoffs, delta)
    with pytest.raises(ValueError):
        discounted_total(payoffs, delta)
