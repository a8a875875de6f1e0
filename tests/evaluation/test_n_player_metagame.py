"""Mean, replicator Fitness and deviation ratings of an N-player symmetric metagame played on a
seat-balanced roster sample (docs/protocol/evaluation.md#n-player-metagames), against values
computed independently here by brute-force enumeration of every co-player tuple.

The agents are three Public Goods types that contribute with probabilities p = (0.9, 0.5, 0.1)
in N = 5 seats (multiplier 1.5, endowment 1): a seat's expected payoff is
1.5·(p_self + Σ p_others)/5 + (1 − p_self), which depends on the co-players' multiset only, so
the sampled tensor must equal the exact one in every cell."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest

from coopeval.evaluation.deviation import DR_MAX_PROFILES, deviation_ratings, dr_size_problem
from coopeval.evaluation.metagame import evaluate_metagame
from coopeval.evaluation.tensor import build_payoff_tensor
from coopeval.studies.coopeval.evaluate import evaluate_cell
from coopeval.studies.coopeval.rosters import rosters
from coopeval.studies.coopeval.tables.bootstrap import bootstrap_group

P = {"coop90": 0.9, "coop50": 0.5, "coop10": 0.1}
NAMES = sorted(P)  # the tensor's axis order: coop10, coop50, coop90
N = 5


def payoff(me: str, others: tuple[str, ...]) -> float:
    return 1.5 * (P[me] + sum(P[o] for o in others)) / N + (1 - P[me])


def sampled_observations(n_seats: int = N, cap: int = 3**N - 1) -> list[tuple[tuple[str, ...], list[float]]]:
    obs = []
    for roster in rosters(3, n_seats, cap, 11, "public_goods", n_seats, 1):
        seats = tuple(NAMES[i] for i in roster)
        obs.append((seats, [payoff(a, seats[:s] + seats[s + 1 :]) for s, a in enumerate(seats)]))
    return obs


def brute_fitness(me: str, x: dict[str, float]) -> float:
    """f_me(x) = Σ over every ordered co-player tuple of Π x · payoff."""
    return math.fsum(
        math.prod(x[o] for o in others) * payoff(me, others) for others in itertools.product(NAMES, repeat=N - 1)
    )


def test_sampled_tensor_is_the_exact_metagame() -> None:
    obs = sampled_observations()
    assert len(obs) < 3**N  # a sample, not every roster
    agents, tensor = build_payoff_tensor(obs)
    assert agents == NAMES and tensor.shape == (3,) * N
    for cell in itertools.product(range(3), repeat=N):
        assert tensor[cell] == pytest.approx(payoff(NAMES[cell[0]], tuple(NAMES[i] for i in cell[1:])), abs=1e-12)


def test_fitness_and_mean_match_brute_force() -> None:
    agents, tensor = build_payoff_tensor(sampled_observations())
    result = evaluate_metagame(agents, tensor, steps=200, lr=0.1)
    uniform = dict.fromkeys(NAMES, 1 / 3)
    for a in NAMES:
        assert result["mean"][a] == pytest.approx(brute_fitness(a, uniform), abs=1e-12)
    final = result["final_population"]
    for a in NAMES:
        assert result["fitness"][a] == pytest.approx(brute_fitness(a, final), abs=1e-12)
    # contributing less always pays (1.5/5 < 1): the replicator moves towards coop10
    assert final["coop10"] > 0.99


def test_deviation_ratings_match_the_dominant_profile() -> None:
    """coop10 strictly dominates, so the only CCE is everybody coop10 and the rating of s is the
    gain from deviating to s there: payoff(s; 4 × coop10) − payoff(coop10; 4 × coop10)."""
    agents, tensor = build_payoff_tensor(sampled_observations())
    dr = deviation_ratings(tensor)
    base = ("coop10",) * (N - 1)
    expected = [payoff(a, base) - payoff("coop10", base) for a in agents]
    assert list(dr.ratings) == pytest.approx(expected, abs=1e-9)
    assert expected == pytest.approx([0.0, -0.4 * (1 - 0.3), -0.8 * (1 - 0.3)])  # by hand: Δp·(1 − 1.5/5)


def test_bootstrap_gives_fitness_intervals_on_the_sample() -> None:
    rep = bootstrap_group([sampled_observations()], np.random.default_rng(0), n_resamples=20, steps=50)
    assert rep.fitness is not None and rep.fitness.shape == (20, 3)
    # deterministic payoffs: every resample has the same tensor, so the same Fitness
    assert np.ptp(rep.fitness, axis=0) == pytest.approx(np.zeros(3), abs=1e-12)


def _scores(obs: list[tuple[tuple[str, ...], list[float]]]) -> tuple[pl.DataFrame, pl.DataFrame]:
    rows = [
        {"matchup_id": "|".join(seats), "seat": s, "agent": a, "score": v}
        for seats, values in obs
        for s, (a, v) in enumerate(zip(seats, values, strict=True))
    ]
    matchups = pl.DataFrame({"matchup_id": ["|".join(seats) for seats, _ in obs], "status": ["complete"] * len(obs)})
    return pl.DataFrame(rows), matchups


IDS = {"cell_id": "c", "mechanism": "NoMechanism", "game": "public_goods", "run": 1}


def test_evaluate_cell_rates_a_sampled_five_player_cell() -> None:
    scores, matchups = _scores(sampled_observations())
    metrics, _ = evaluate_cell(scores, matchups, IDS, steps=50)
    dr = {r["agent"]: r["value"] for r in metrics.filter((pl.col("metric") == "DR") & (pl.col("rule") == "strictest")).to_dicts()}
    assert dr["coop10"] == pytest.approx(0.0, abs=1e-9) and dr["coop90"] == pytest.approx(-0.56, abs=1e-9)


def test_evaluate_cell_says_where_the_dr_lp_does_not_fit() -> None:
    """3 types × 8 seats = 6 561 joint profiles > 4 096: Fitness is reported, DR is not, and a
    note row says why."""
    assert DR_MAX_PROFILES < 3**8 and dr_size_problem(3, 8) is not None and dr_size_problem(4, 6) is None
    obs = sampled_observations(n_seats=8, cap=3**8 - 1)
    # the 8-seat payoffs use N = 5 in payoff(); they only need to be a function of the multiset here
    scores, matchups = _scores(obs)
    metrics, _ = evaluate_cell(scores, matchups, IDS, steps=50)
    kinds = set(metrics["metric"])
    assert {"Mean", "Fitness", "DRNotComputed"} <= kinds and "DR" not in kinds
    note = metrics.filter(pl.col("metric") == "DRNotComputed")["rule"][0]
    assert "3^8 = 6561 joint profiles exceeds 4096" in note


def test_an_uncovered_sample_says_why_fitness_is_missing() -> None:
    obs = sampled_observations(n_seats=8, cap=60)  # random orbits: not every multiset
    scores, matchups = _scores(obs)
    metrics, _ = evaluate_cell(scores, matchups, IDS, steps=50)
    assert set(metrics["metric"]) == {"ExcludedMatchups", "Mean", "TensorIncomplete"}
    note = metrics.filter(pl.col("metric") == "TensorIncomplete")["rule"][0]
    assert f"the cell played a sample of {len(obs)} of 3^8 rosters" in note and "raise max_matchups" in note
