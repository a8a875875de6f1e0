"""Game registry: ``get_game(key, **params)`` returns a :class:`Game` by config key or type name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coopeval.games.base import Game, Profile, action_token
from coopeval.games.definitions import (
    matching_pennies,
    prisoners_dilemma,
    public_goods,
    stag_hunt,
    travellers_dilemma,
    trust_game,
)

GAME_FACTORIES: dict[str, Callable[..., Game]] = {
    "prisoners_dilemma": prisoners_dilemma,
    "public_goods": public_goods,
    "travellers_dilemma": travellers_dilemma,
    "trust_game": trust_game,
    "stag_hunt": stag_hunt,
    "matching_pennies": matching_pennies,
}
"""Config key → factory, in the paper's game order (four social dilemmas first)."""

SOCIAL_DILEMMAS = ("prisoners_dilemma", "public_goods", "travellers_dilemma", "trust_game")
TYPE_NAMES = {f().name: key for key, f in GAME_FACTORIES.items()}


def get_game(key: str, **params: Any) -> Game:
    """Build a game from its config key (``prisoners_dilemma``) or type name (``PrisonersDilemma``).

    Raises
    ------
    KeyError
        With the list of known games, if ``key`` is unknown.
    """
    key = TYPE_NAMES.get(key, key)
    if key not in GAME_FACTORIES:
        raise KeyError(f"unknown game {key!r}; known games: {', '.join(GAME_FACTORIES)}")
    return GAME_FACTORIES[key](**params)


__all__ = ["Game", "Profile", "action_token", "get_game", "GAME_FACTORIES", "SOCIAL_DILEMMAS", "TYPE_NAMES"]
