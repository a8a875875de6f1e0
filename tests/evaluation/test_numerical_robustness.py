"""Issue 13 kind 8: replicator overflow, boundary starts, scale-free deviation ratings, and a CLI
that never prints NaN.

Hand-computed values: on [[0, 0], [g, g]] from the uniform start the advantage is ±g/2, so one
step with η·g/2 ≥ 710 (e.g. g = 14200, η = 0.1; g = 20, η = 71) sends the population to
exactly (0, 1) in floating point (exp(−1420) underflows to 0). One PD step from uniform with
η = 0.1: advantage ±0.5, so x = (1, e^0.1)/(1 + e^0.1).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopeval.cli import main
from coopeval.evaluation.deviation import deviation_ratings, rank_with_ties, rating_decimals
from coopeval.evaluation.replicator import ExtinctStartWarning, replicator_dynamics
from tests.strategies import metagames

PD = np.array([[2.0, 0.0], [3.0, 1.0]])


# ---------------------------------------------------------------------------------------------
# Replicator dynamics: log-space update


@pytest.mark.parametrize(
    ("gap", "lr"),
    [(14200.0, 0.1), (20.0, 71.0), (1e6, 0.1), (1e12, 0.1), (20.0, 1e308), (1.7e308, 0.1)],
)
def test_huge_advantages_give_the_limit_not_nan(gap: float, lr: float) -> None:
    tensor = np.array([[0.0, 0.0], [gap, gap]])
    result = replicator_dynamics(tensor, lr=lr)
    assert result.history[1].tolist() == [0.0, 1.0]
    assert result.final_population.tolist() == [0.0, 1.0]
    assert result.fitness.tolist() == [0.0, gap]
    assert result.population_weighted_fitness == gap
    assert result.n_updates == 1000 and not result.stopped_early  # the extinct type's −gap counts


def test_an_infinite_exponent_splits_equally_among_the_best() -> None:
    # types 1 and 2 both earn 1e6, type 0 earns 0: η·advantage = +inf for both leaders
    tensor = np.array([[0.0, 0.0, 0.0], [1e6, 1e6, 1e6], [1e6, 1e6, 1e6]])
    result = replicator_dynamics(tensor, steps=3, lr=1e308)
    assert result.history.tolist() == [[1 / 3, 1 / 3, 1 / 3]] + [[0.0, 0.5, 0.5]] * 3


def test_log_space_update_equals_the_hedge_formula() -> None:
    result = replicator_dynamics(PD, steps=1, lr=0.1)
    e = math.exp(0.1)
    assert result.history[1] == pytest.approx([1 / (1 + e), e / (1 + e)], abs=1e-15)
    assert result.history[1].tolist() == pytest.approx([0.47502081252106, 0.52497918747894], abs=1e-14)


@settings(max_examples=60, deadline=None)
@given(
    game=metagames(values=st.floats(-1.0, 1.0)),
    exponent=st.integers(-300, 300),
    lr=st.sampled_from([0.0, 0.1, 71.0, 1e10, 1e300]),
    method=st.sampled_from(["constant", "sqrt"]),
)
def test_no_finite_input_gives_nan(game: np.ndarray, exponent: int, lr: float, method: Any) -> None:
    tensor = game * 10.0**exponent
    result = replicator_dynamics(tensor, steps=20, lr=lr, lr_method=method)
    assert np.isfinite(result.history).all()
    assert np.isfinite(result.fitness).all() and math.isfinite(result.population_weighted_fitness)
    assert np.allclose(result.history.sum(axis=1), 1.0, rtol=0, atol=1e-12)


def test_the_batched_bootstrap_replicator_shares_the_log_space_step() -> None:
    from coopeval.studies.coopeval.tables.bootstrap import batched_replicator

    tensors = np.array([[[0.0, 0.0], [14200.0, 14200.0]], [[0.0, 0.0], [1e6, 1e6]], PD])
    final, fit = batched_replicator(tensors)
    assert np.isfinite(final).all() and np.isfinite(fit).all()
    assert final[:2].tolist() == [[0.0, 1.0], [0.0, 1.0]]
    assert fit[:2].tolist() == [[0.0, 14200.0], [0.0, 1e6]]
    single = replicator_dynamics(PD)
    np.testing.assert_allclose(final[2], single.final_population, rtol=1e-12, atol=1e-300)


def test_hedge_step_on_a_batch_takes_the_limit_per_column() -> None:
    from coopeval.evaluation.replicator import hedge_step

    x = np.array([[0.5, 0.25], [0.5, 0.75]])
    advantage = np.array([[-1.0, 1e300], [1.0, 1e300]])
    out = hedge_step(x, advantage, 1e10)
    # column 0: exponents 2e10 apart: all on type 1 (log-sum-exp); column 1: both +inf: equal shares
    assert out.tolist() == [[0.0, 0.5], [1.0, 0.5]]


def test_a_zero_share_start_warns_and_stays_extinct() -> None:
    with pytest.warns(ExtinctStartWarning, match=r"agent indices \[0, 2\] start with share 0"):
        result = replicator_dynamics(np.eye(3), initial=[0.0, 1.0, 0.0], steps=2)
    assert result.final_population.tolist() == [0.0, 1.0, 0.0]


def test_error_messages_print_plain_numbers() -> None:
    with pytest.raises(ValueError, match=r"^lr: -1\.0 must be finite and non-negative$"):
        replicator_dynamics(PD, lr=np.float64(-1.0))
    with pytest.raises(ValueError, match=r"^steps: -2 must be a non-negative integer$"):
        replicator_dynamics(PD, steps=np.int64(-2))
    with pytest.raises(ValueError, match=r"^initial: shares sum to 1\.1, not 1; normalise the population$"):
        replicator_dynamics(PD, initial=np.array([0.5, 0.6]))


# ---------------------------------------------------------------------------------------------
# Deviation ratings: scale-free tolerances and rounding

# (tensor, ratings at scale 1): PD; the spec's weakly-dominated degenerate case (docs/protocol/evaluation.md#deviation-ratings); a
# 3-type game whose second and third types tie; the 3-player public-goods metagame.
DR_CASES = [
    (PD, (-1.0, 0.0)),
    (np.array([[-2.0, 3.0], [-2.0, -2.0]]), (0.0, -2.5)),
    (np.array([[3.0, 0.0, 2.0], [5.0, 1.0, 2.5], [2.0, 1.0, 2.5]]), (-1.0, 0.0, 0.0)),
    (np.array([[[1.5, 1.0], [1.0, 0.5]], [[2.0, 1.5], [1.5, 1.0]]]), (-0.5, 0.0)),
]


@pytest.mark.parametrize("scale", [1e-300, 1e-12, 1e-9, 3e-7, 1.0, 1e12, 1e300])
@pytest.mark.parametrize(("tensor", "expected"), DR_CASES)
def test_ratings_scale_with_the_payoffs_and_keep_their_ranking(
    tensor: np.ndarray, expected: tuple[float, ...], scale: float
) -> None:
    result = deviation_ratings(tensor * scale)
    assert result.ratings == pytest.approx([r * scale for r in expected], rel=1e-9, abs=0)
    ranks = rank_with_ties(result.ratings, result.rating_decimals)
    assert ranks == rank_with_ties(expected)
    assert len(result.iteration_epsilons) == len(set(expected))


def test_tiny_payoffs_no_longer_collapse_into_ties() -> None:
    # spec's degenerate case at scale 1e-12: ratings (0, -2.5e-12), not the tie (0, 0)
    result = deviation_ratings(np.array([[-2.0, 3.0], [-2.0, -2.0]]) * 1e-12)
    assert result.ratings == (0.0, -2.5e-12)
    assert result.rating_decimals == 22
    assert rank_with_ties(result.ratings, result.rating_decimals) == [1.0, 2.0]
    assert rank_with_ties(result.ratings) == [1.5, 1.5]  # the fixed 1e-10 rounding would tie them


@pytest.mark.parametrize(
    ("scale", "decimals"), [(0.0, 10), (1.0, 10), (5.0, 10), (10.0, 9), (0.5, 11), (1e-12, 22), (1e12, -2)]
)
def test_rating_decimals_keep_ten_significant_digits(scale: float, decimals: int) -> None:
    assert rating_decimals(scale) == decimals


def test_power_of_two_scales_give_bit_identical_ratings() -> None:
    tensor = np.array([[3.0, 0.0, 2.0], [5.0, 1.3, 2.5], [2.0, 1.1, 2.7]])
    base = deviation_ratings(tensor)
    for k in (-40, -3, 5, 40):
        scaled = deviation_ratings(tensor * 2.0**k)
        assert scaled.iteration_epsilons == tuple(e * 2.0**k for e in base.iteration_epsilons)


# ---------------------------------------------------------------------------------------------
# The CLI


def _strict_json(text: str) -> Any:
    def refuse(name: str) -> None:
        raise AssertionError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def _evaluate(tmp_path: Path, payoffs: Any, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    path = tmp_path / "tensor.json"
    path.write_text(json.dumps({"agents": ["a", "b"], "payoffs": payoffs}), encoding="utf-8")
    code = main(["evaluate", str(path), *extra])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("payoffs", "extra"),
    [
        ([[0, 0], [14200, 14200]], []),
        ([[0, 0], [20, 20]], ["--lr", "71"]),
        ([[0, 0], [1e6, 1e6]], []),
        ([[0, 0], [20, 20]], ["--lr", "1e300"]),
    ],
)
def test_cli_prints_json_for_huge_advantages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], payoffs: Any, extra: list[str]
) -> None:
    code, out, err = _evaluate(tmp_path, payoffs, capsys, *extra)
    assert code == 0, err
    result = _strict_json(out)
    gap = float(payoffs[1][0])
    assert result["final_population"] == {"a": 0.0, "b": 1.0}
    assert result["fitness"] == {"a": 0.0, "b": gap}
    assert result["population_weighted_fitness"] == gap
    assert result["deviation_ratings"] == {"a": -gap, "b": 0.0}


def test_cli_rejects_a_zero_share_start_unless_allowed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _evaluate(tmp_path, [[0, 0], [20, 20]], capsys, "--initial-population", "[1.0, 0.0]")
    assert code == 2 and out == ""
    assert err == (
        "coopeval evaluate: error: --initial-population: agents ['b'] start with share 0 and would"
        " stay at 0 in every step; give every agent a positive share, or pass --allow-zero-shares"
        " to keep them out\n"
    )
    code, out, err = _evaluate(
        tmp_path, [[0, 0], [20, 20]], capsys, "--initial-population", "[1.0, 0.0]", "--allow-zero-shares"
    )
    assert code == 0 and err == ""
    result = _strict_json(out)
    assert result["final_population"] == {"a": 1.0, "b": 0.0}
    assert result["fitness"] == {"a": 0.0, "b": 20.0}  # f = T @ (1, 0)


def test_cli_exits_non_zero_instead_of_printing_nan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import coopeval.evaluation.metagame as metagame

    monkeypatch.setattr(metagame, "evaluate_metagame", lambda *a, **k: {"fitness": {"a": float("nan")}})
    code, out, err = _evaluate(tmp_path, [[1, 0], [0, 1]], capsys)
    assert code == 1 and out == ""
    assert "NaN or infinite" in err


def test_cli_reports_library_input_errors_as_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _evaluate(tmp_path, [[-1.7e308, 0], [1.7e308, 1.7e308]], capsys)
    assert code == 2 and out == ""
    assert err == (
        "coopeval evaluate: error: tensor: payoffs span from -1.7e+308 to 1.7e+308, beyond the"
        " float range for their differences; divide every payoff by a common factor\n"
    )
