"""Moves of the record lines: validation and the action ``decisions`` rows.

A move is ``{"player": "<type>#P<seat>", "action": "<Game>Action.<MEMBER>", "points": p,
"trace_id", ["response"], ["mediated"]}`` (docs/protocol/reference-data.md#layout; ``"mediated": true`` only on delegated moves).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coopeval.studies.coopeval.reference.importer.config import ExperimentConfig
from coopeval.studies.coopeval.reference.importer.errors import ReleasedFileError
from coopeval.studies.coopeval.reference.importer.fields import (
    action_index,
    action_token,
    finite_number,
    seated_agent,
)
from coopeval.studies.coopeval.reference.importer.rows import CellRows

__all__ = ["ReleasedMove", "add_action_decisions", "moves_in_seat_order", "parse_move"]


@dataclass
class ReleasedMove:
    """One validated move of a record line.

    Attributes
    ----------
    agent, seat:
        Agent type string and seat (1-based) of the mover.
    action:
        0-based action index.
    points:
        Points the mover received (after the mechanism's transfers).
    response:
        The model's raw answer, if released.
    mediated:
        True if the move was delegated to the mediator.
    """

    agent: str
    seat: int
    action: int
    points: float
    response: str | None
    mediated: bool


def parse_move(obj: Any, cfg: ExperimentConfig, path: Path, where: str) -> ReleasedMove:
    """Validate one move object ``{'player', 'action', 'points', …}`` (``where`` locates it)."""
    if not isinstance(obj, Mapping) or not {"player", "action", "points"} <= set(obj):
        raise ReleasedFileError(path, f"{where} is not a move; expected {{'player', 'action', 'points', 'trace_id', ['response'], ['mediated']}}")
    agent, seat = seated_agent(obj["player"], cfg.roster, cfg.game.n_players, path, f"{where}.player")
    action = action_index(cfg.game, obj["action"], path, f"{where}.action")
    points = finite_number(obj["points"], path, f"{where}.points")
    response = obj.get("response")
    if response is not None and not isinstance(response, str):
        raise ReleasedFileError(path, f"{where}.response must be a string")
    mediated = obj.get("mediated", False)
    if not isinstance(mediated, bool):
        raise ReleasedFileError(path, f"{where}.mediated is {mediated!r}; expected true/false")
    return ReleasedMove(agent, seat, action, points, response, mediated)


def moves_in_seat_order(moves: Any, cfg: ExperimentConfig, path: Path, where: str) -> list[ReleasedMove]:
    """Validate a list of exactly one move per seat, seats 1..N in order."""
    n = cfg.game.n_players
    if not isinstance(moves, list) or len(moves) != n:
        raise ReleasedFileError(path, f"{where} must be a list of {n} moves (one per seat)")
    parsed = [parse_move(m, cfg, path, f"{where}[{i}]") for i, m in enumerate(moves)]
    if [m.seat for m in parsed] != list(range(1, n + 1)):
        raise ReleasedFileError(path, f"{where}: seats {[m.seat for m in parsed]}; expected 1..{n} in order")
    return parsed


def add_action_decisions(
    rows: CellRows,
    cfg: ExperimentConfig,
    round_index: int,
    moves: list[ReleasedMove],
    ids: Callable[[ReleasedMove], tuple[str, str]],
) -> None:
    """Append one ``decisions`` row (kind ``action``) per move of one round (1-based
    ``round_index``) of one match.

    ``ids(move)`` gives the row's (``decision_id``, ``matchup_id``); ``base_points`` are the
    game's payoffs of the played profile (before mechanism transfers).
    """
    profile = tuple(m.action for m in moves)
    base = cfg.game.payoffs(profile)
    for m in moves:
        decision_id, matchup_id = ids(m)
        rows.add_decision(decision_id, matchup_id=matchup_id, round=round_index, seat=m.seat, agent=m.agent, kind="action",
                          response=m.response, action=m.action, action_token=action_token(m.action), points=m.points,
                          base_points=float(base[m.seat - 1]), mediated=m.mediated)
