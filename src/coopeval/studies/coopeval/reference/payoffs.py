"""Readers of a released ``matchup_payoffs.json`` into the inputs of :mod:`coopeval.evaluation`.

The authors' released data (CoopEval, arXiv 2604.15267; format in docs/protocol/reference-data.md#layout) gives, per experiment,
every match's per-round payoffs. These readers turn one such file into metagame observations
(:func:`load_reference_matchups`) or per-type reputation scores
(:func:`load_reference_reputation_scores`) for the regression tests and ``coopeval evaluate
--from-matchups``; the evaluation itself stays pure. The strict, all-tables import of whole run
folders is :mod:`coopeval.studies.coopeval.reference.importer`.
"""

from __future__ import annotations

import json
from os import PathLike
from typing import Any

import numpy as np

from coopeval.evaluation.scores import discounted_average
from coopeval.evaluation.tensor import Observation
from coopeval.studies.coopeval.reference.agent_types import reference_type_string

__all__ = ["load_reference_matchups", "load_reference_reputation_scores"]


def _read_json(path: str | PathLike[str]) -> dict[str, Any]:
    """The JSON object of ``path``; ValueError unless it has ``discount`` and ``profile``."""
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
    (docs/protocol/tournament.md#delta-weighted-score, docs/protocol/reference-data.md#layout).

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
    its partners change every round (docs/protocol/mechanisms.md#reputation item 6, docs/protocol/tournament.md#delta-weighted-score). The reputation Mean of a type is
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
