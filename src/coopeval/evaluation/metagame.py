"""One-call metagame evaluation (Mean, Fitness, DR) and readers for the reference data.

:func:`evaluate_metagame` is pure. The two ``load_reference_*`` functions are the only file
readers in ``coopeval.evaluation``: they read the authors' released ``matchup_payoffs.json``
(CoopEval, arXiv 2604.15267; format in spec §10) for regression tests and the CLI.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from os import PathLike
from typing import Any

import numpy as np

from coopeval.evaluation.deviation import deviation_ratings
from coopeval.evaluation.replicator import fitness, replicator_dynamics
from coopeval.evaluation.scores import discounted_average
from coopeval.evaluation.tensor import Observation

__all__ = [
    "evaluate_metagame",
    "load_reference_matchups",
    "load_reference_reputation_scores",
    "reference_type_string",
]

_PROMPTING = {"CoTAgent": "CoT", "IOAgent": "IO"}


def evaluate_metagame(
    agents: Sequence[str],
    tensor: np.ndarray,
    initial_population: Sequence[float] | np.ndarray | None = None,
    steps: int = 1000,
    lr: float = 0.1,
    dr_rule: str = "strictest",
) -> dict[str, Any]:
    """Evaluate a symmetric metagame: uniform-population Mean, replicator Fitness and DR.

    Source: arXiv 2604.15267, spec §6.1 (Mean = fitness in the uniform population when every
    profile is played once), §6.3 (replicator: constant η = ``lr``, early-stop tol 1e−6) and
    §6.4 (deviation ratings).

    Parameters
    ----------
    agents:
        Agent names in tensor-axis order, length S, distinct.
    tensor:
        Metagame tensor, shape (S,)*N with N ≥ 2 (points).
    initial_population:
        Replicator start, shape (S,); default uniform.
    steps, lr:
        Replicator steps (≥ 0) and learning rate.
    dr_rule:
        ``"strictest"`` or ``"reference-vertex"`` (alias ``"coopeval_vertex"``).

    Returns
    -------
    dict
        ``{"agents", "mean", "fitness", "final_population", "population_weighted_fitness",
        "deviation_ratings", "dr_rule"}``; per-agent values are ``{agent: float}`` dicts in
        ``agents`` order; ``dr_rule`` is the canonical rule name.

    Raises
    ------
    ValueError
        On a names/tensor mismatch or any input error of the replicator or DR functions.
    coopeval.evaluation.deviation.DeviationRatingError
        When the DR LP fails (see :func:`deviation_ratings`).
    """
    names = [str(a) for a in agents]
    t = np.asarray(tensor, dtype=float)
    if t.ndim < 2 or any(n != len(names) for n in t.shape):
        raise ValueError(
            f"tensor: shape {t.shape} does not match {len(names)} agents; expected"
            f" ({len(names)},)*N with N >= 2"
        )
    if len(set(names)) != len(names):
        raise ValueError("agents: duplicate names; list each agent once")
    start = None if initial_population is None else np.asarray(initial_population, dtype=float)
    rd = replicator_dynamics(t, initial=start, steps=steps, lr=lr)
    uniform = fitness(t, np.full(len(names), 1.0 / len(names)))
    dr = deviation_ratings(t, rule=dr_rule)
    return {
        "agents": names,
        "mean": dict(zip(names, map(float, uniform), strict=True)),
        "fitness": dict(zip(names, map(float, rd.fitness), strict=True)),
        "final_population": dict(zip(names, map(float, rd.final_population), strict=True)),
        "population_weighted_fitness": float(rd.population_weighted_fitness),
        "deviation_ratings": dict(zip(names, dr.ratings, strict=True)),
        "dr_rule": dr.rule,
    }


def reference_type_string(player: Mapping[str, Any]) -> str:
    """Type string of a reference agent config: ``"{llm.model}({CoT|IO})"``.

    ``{"llm": {"model": "openai/gpt-5.2", …}, "type": "CoTAgent", "player_id": 2}`` →
    ``"openai/gpt-5.2(CoT)"`` (the keys of ``agent_average_payoff.json``; spec §1).

    Raises
    ------
    ValueError
        If the config lacks ``llm.model`` or has an unknown agent ``type``.
    """
    try:
        model = player["llm"]["model"]
        kind = player["type"]
    except (KeyError, TypeError):
        raise ValueError(f"agent config {player!r} lacks llm.model or type") from None
    if kind not in _PROMPTING:
        raise ValueError(f"agent config type {kind!r}; expected one of {sorted(_PROMPTING)}")
    return f"{model}({_PROMPTING[kind]})"


def _read_json(path: str | PathLike[str]) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if not isinstance(data, dict) or "profile" not in data or "discount" not in data:
        raise ValueError(f"{path}: expected an object with 'discount' and 'profile'")
    return data


def load_reference_matchups(path: str | PathLike[str]) -> list[Observation]:
    """Read a reference matchup-mechanism ``matchup_payoffs.json`` into observations.

    Each ``profile`` entry lists its seated agents (seat order, ``player_id`` = 1-based seat)
    and its matches; each match is a rounds × seats array. Every match yields one observation
    ``(types per seat, δ-weighted score per seat)`` using the stored ``discount``
    (spec §4.7, §10).

    Raises
    ------
    ValueError
        On the reputation (per-agent) format, seats out of order, or a ragged match array.
    """
    data = _read_json(path)
    delta = float(data["discount"])
    observations: list[Observation] = []
    for index, entry in enumerate(data["profile"]):
        if "players" not in entry:
            raise ValueError(
                f"{path}: profile[{index}] has no 'players' (reputation format?); use"
                " load_reference_reputation_scores"
            )
        players = entry["players"]
        seats = [p.get("player_id") for p in players]
        if seats != list(range(1, len(players) + 1)):
            raise ValueError(f"{path}: profile[{index}] player_id order {seats} is not 1..N")
        types = tuple(reference_type_string(p) for p in players)
        for match in entry["payoffs"]:
            rounds = np.asarray(match, dtype=float)
            if rounds.ndim != 2 or rounds.shape[1] != len(types):
                raise ValueError(
                    f"{path}: profile[{index}] match of shape {rounds.shape}; expected"
                    f" (rounds, {len(types)})"
                )
            scores = [discounted_average(rounds[:, s].tolist(), delta) for s in range(len(types))]
            observations.append((types, scores))
    return observations


def load_reference_reputation_scores(path: str | PathLike[str]) -> dict[str, list[float]]:
    """Read a reference reputation ``matchup_payoffs.json`` (per-agent format).

    Each entry ``{"player": agent config, "points": [per-round points]}`` is one seated agent;
    its score is the δ-weighted average of its points with the stored ``discount`` although
    its partners change every round (spec §4.3 item 6, §4.7). The reputation Mean of a type is
    the mean of its list, e.g. via :func:`coopeval.evaluation.tensor.mean_payoff` with
    one-seat observations.

    Returns
    -------
    dict[str, list[float]]
        Type string → scores of its seated agents (file order), keys sorted.

    Raises
    ------
    ValueError
        If an entry lacks ``player`` or ``points``.
    """
    data = _read_json(path)
    delta = float(data["discount"])
    scores: dict[str, list[float]] = {}
    for index, entry in enumerate(data["profile"]):
        if "player" not in entry or "points" not in entry:
            raise ValueError(f"{path}: profile[{index}] lacks 'player'/'points' (matchup format?)")
        kind = reference_type_string(entry["player"])
        scores.setdefault(kind, []).append(discounted_average(entry["points"], delta))
    return {kind: scores[kind] for kind in sorted(scores)}
