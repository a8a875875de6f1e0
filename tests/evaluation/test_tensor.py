"""Metagame tensor pooling (docs/protocol/evaluation.md#payoff-tensor), Mean (docs/protocol/evaluation.md#mean) and the reference readers."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from coopeval.evaluation.replicator import fitness
from coopeval.evaluation.tensor import Observation, build_payoff_tensor, mean_payoff
from coopeval.studies.coopeval.reference.agent_types import reference_type_string
from coopeval.studies.coopeval.reference.payoffs import (
    load_reference_matchups,
    load_reference_reputation_scores,
)

PD = {("C", "C"): (2, 2), ("C", "D"): (0, 3), ("D", "C"): (3, 0), ("D", "D"): (1, 1)}


def _pd_observations() -> list[Observation]:
    return list(PD.items())


def test_two_player_pd() -> None:
    agents, tensor = build_payoff_tensor(_pd_observations())
    assert agents == ["C", "D"]
    np.testing.assert_array_equal(tensor, [[2, 0], [3, 1]])
    assert mean_payoff(_pd_observations()) == {"C": 1.0, "D": 2.0}


def test_trust_game_roles_are_averaged() -> None:
    # Asymmetric base game: the cell pools the trustor and trustee roles (docs/protocol/evaluation.md#payoff-tensor).
    obs: list[Observation] = [
        (("A", "A"), (10, 4)),
        (("A", "B"), (1, 7)),  # A trustor gets 1, B trustee gets 7
        (("B", "A"), (3, 9)),  # B trustor gets 3, A trustee gets 9
        (("B", "B"), (5, 5)),
    ]
    agents, tensor = build_payoff_tensor(obs)
    np.testing.assert_allclose(tensor, [[7.0, 5.0], [5.0, 5.0]])
    means = mean_payoff(obs)
    assert means == {"A": (10 + 4 + 1 + 9) / 4, "B": (7 + 3 + 5 + 5) / 4}
    assert fitness(tensor, np.full(2, 0.5)) == pytest.approx([means["A"], means["B"]])
    assert agents == ["A", "B"]


def test_three_player_pooling_by_hand() -> None:
    # One matchup (A, A, B): each A seat scores for cells [A,A,B] and [A,B,A]; B for [B,A,A].
    obs: list[Observation] = [(("A", "A", "B"), (1.0, 3.0, 10.0))]
    with pytest.raises(ValueError, match=r"cell \[0, 0, 0\]"):
        build_payoff_tensor(obs)
    full = [*obs, (("B", "A", "A"), (20.0, 5.0, 7.0))]
    full += [((x, y, z), (0.0, 0.0, 0.0)) for x, y, z in [("A",) * 3, ("B",) * 3]]
    full += [(("A", "B", "B"), (4.0, 6.0, 8.0))]
    _, tensor = build_payoff_tensor(full)
    assert tensor[0, 0, 1] == tensor[0, 1, 0] == pytest.approx((1 + 3 + 5 + 7) / 4)
    assert tensor[1, 0, 0] == pytest.approx((10 + 20) / 2)
    assert tensor[0, 1, 1] == 4.0
    assert tensor[1, 0, 1] == tensor[1, 1, 0] == pytest.approx(7.0)


@pytest.mark.parametrize("n_players", [2, 3])
def test_every_profile_once_mean_equals_uniform_fitness(n_players: int) -> None:
    rng = np.random.default_rng(7 + n_players)
    names = ["x", "y", "z", "w"]
    obs: list[Observation] = [
        (profile, tuple(rng.normal(size=n_players)))
        for profile in itertools.product(names, repeat=n_players)
    ]
    agents, tensor = build_payoff_tensor(obs)
    for axis in range(2, n_players):
        np.testing.assert_allclose(tensor, np.swapaxes(tensor, 1, axis), atol=1e-15)
    uniform = fitness(tensor, np.full(len(agents), 1 / len(agents)))
    means = mean_payoff(obs)
    assert uniform == pytest.approx([means[a] for a in agents], abs=1e-12)


def test_unequal_counts_mean_is_pooled() -> None:
    obs = [*_pd_observations(), (("C", "C"), (0.0, 0.0))]
    # C seats: (C,C) twice -> 2, 2, 0, 0; (C,D) -> 0; (D,C) -> 0.
    assert mean_payoff(obs)["C"] == pytest.approx(4 / 6)
    _, tensor = build_payoff_tensor(obs)
    assert tensor[0, 0] == pytest.approx(1.0)  # cell mean of (2, 2, 0, 0)
    # Unequal profile counts: the uniform-population fitness is no longer the pooled Mean.
    assert fitness(tensor, np.full(2, 0.5))[0] == pytest.approx(0.5)


def test_agent_order_and_errors() -> None:
    agents, tensor = build_payoff_tensor(_pd_observations(), agents=["D", "C"])
    assert agents == ["D", "C"]
    np.testing.assert_array_equal(tensor, [[1, 3], [0, 2]])
    with pytest.raises(ValueError, match="not in the agent list"):
        build_payoff_tensor(_pd_observations(), agents=["C"])
    with pytest.raises(ValueError, match="duplicate"):
        build_payoff_tensor(_pd_observations(), agents=["C", "D", "C"])
    with pytest.raises(ValueError, match="no observation"):
        build_payoff_tensor(_pd_observations(), agents=["C", "D", "E"])
    with pytest.raises(ValueError, match="seat scores"):
        build_payoff_tensor([(("C", "D"), (1.0,))])
    with pytest.raises(ValueError, match="seats"):
        build_payoff_tensor([(("C", "D"), (1.0, 2.0)), (("C", "D", "D"), (1.0, 2.0, 3.0))])
    with pytest.raises(ValueError, match="empty"):
        build_payoff_tensor([])


def test_reference_type_string() -> None:
    config = {"llm": {"model": "openai/gpt-5.2"}, "type": "CoTAgent", "player_id": 2}
    assert reference_type_string(config) == "openai/gpt-5.2(CoT)"
    io = {"llm": {"model": "google/gemini-3-flash-preview"}, "type": "IOAgent"}
    assert reference_type_string(io) == "google/gemini-3-flash-preview(IO)"
    with pytest.raises(ValueError):
        reference_type_string({"llm": {"model": "m"}, "type": "Other"})


def test_run1_folders_covered(run1_dir: Path, experiment_names: dict[str, tuple[str, ...]]) -> None:
    folders = {p.name for p in run1_dir.iterdir() if p.is_dir()}
    matchup = {f for f in folders if not f.startswith("reputation")}
    assert len(matchup) == 24
    assert matchup == set(experiment_names["matchup"])
    assert folders - matchup == set(experiment_names["reputation"])


def test_run1_mean_reproduces(run1_dir: Path, load_json: Any, matchup_experiment: str) -> None:
    folder = run1_dir / matchup_experiment
    recorded = load_json(folder / "agent_average_payoff.json")
    obs = load_reference_matchups(folder / "matchup_payoffs.json")
    means = mean_payoff(obs)
    assert sorted(means) == sorted(recorded)
    for agent, value in recorded.items():
        assert means[agent] == pytest.approx(value, abs=1e-12, rel=0)
    agents, tensor = build_payoff_tensor(obs)
    assert agents == sorted(recorded)
    uniform = fitness(tensor, np.full(len(agents), 1 / len(agents)))
    assert uniform == pytest.approx([recorded[a] for a in agents], abs=1e-12, rel=0)


def test_run1_reputation_mean_reproduces(
    run1_dir: Path, load_json: Any, reputation_experiment: str
) -> None:
    folder = run1_dir / reputation_experiment
    recorded = load_json(folder / "agent_average_payoff.json")
    scores = load_reference_reputation_scores(folder / "matchup_payoffs.json")
    n_seats = 3 if reputation_experiment.endswith("public_goods") else 2
    assert all(len(v) == n_seats for v in scores.values())
    means = mean_payoff([((agent,), (s,)) for agent, v in scores.items() for s in v])
    assert sorted(means) == sorted(recorded)
    for agent, value in recorded.items():
        assert means[agent] == pytest.approx(value, abs=1e-12, rel=0)
    with pytest.raises(ValueError, match="reputation"):
        load_reference_matchups(folder / "matchup_payoffs.json")


def test_released_vector_tensor(
    released_vector: tuple[str, dict[str, Any]], run1_dir: Path, oracles: dict[str, Any]
) -> None:
    name, vector = released_vector
    tol = oracles["sets"]["coopeval_released_data"]["tolerance"]["mean_abs"]
    experiment = name.split("__", 1)[1]
    obs = load_reference_matchups(run1_dir / experiment / "matchup_payoffs.json")
    agents, tensor = build_payoff_tensor(obs)
    assert agents == vector["input"]["agents"]
    np.testing.assert_allclose(tensor, vector["input"]["payoff_tensor"], atol=tol, rtol=0)
    means = mean_payoff(obs)
    expected = vector["expected"]
    for agent in agents:
        assert means[agent] == pytest.approx(expected["mean_payoff_recorded"][agent], abs=tol)
    uniform = fitness(tensor, np.full(len(agents), 1 / len(agents)))
    assert uniform == pytest.approx(
        [expected["uniform_population_fitness"][a] for a in agents], abs=tol, rel=0
    )
    assert float(np.mean(list(means.values()))) == pytest.approx(
        expected["llm_average_mean"], abs=tol
    )


def test_mean_and_tensor_do_not_depend_on_the_order_of_the_observations():
    # play writes match-ups in completion order; summed naively, these scores give 0.25 or 0.5
    # depending on the order (1e16 + 1 rounds to 1e16); exactly rounded, always 0.5
    import itertools

    from coopeval.evaluation.tensor import build_payoff_tensor, mean_payoff

    scores = [1e16, 1.0, -1e16, 1.0]
    means = {mean_payoff([(("a",), (s,)) for s in order])["a"] for order in itertools.permutations(scores)}
    assert means == {0.5}
    tensors = {
        build_payoff_tensor([(("a", "a"), (1.0, 1.0)), (("b", "b"), (1.0, 1.0))] + [(("a", "b"), (s, 0.0)) for s in order])[1][0, 1]
        for order in itertools.permutations(scores)
    }
    assert tensors == {0.5}
