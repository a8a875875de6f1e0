"""The engine's games: the registry of CoopEval's normal-form games, and the stage games the
other studies play.

* Normal-form games (:mod:`.base`, :mod:`.definitions`): the registry below.
* The donation game (:mod:`.donation`): binary (:class:`BinaryDonationGame`, ALIGN) with its
  Prisoner's Dilemma (:class:`DonationPrisonersDilemma`), and continuous in units or percent
  (:class:`ContinuousDonationGame`, Vallinder & Hughes; Horibe et al.).
* The sequential trust game (:mod:`.trust`, :class:`SequentialTrustGame`) and the transaction
  market (:mod:`.market`, :class:`ProductChoiceMarket`), both ALIGN's.

Each stage game is a frozen dataclass whose fields are its parameters (default, unit and config
schema, :func:`~coopeval.games.parameters.param`), whose ``roles`` name its two agents (with
``simultaneous`` telling whether they move at once; :func:`~coopeval.games.roles.role_names`
gives the distinct names tables use) and whose methods compute its payoffs; a study adds
population and horizon around it.

Game registry: every CoopEval game declared once, in the paper's order.

Each :class:`GameEntry` names the config key and the factory; the factory's :class:`Game`
declares the type name (``PrisonersDilemma``), title, number of players and payoffs (CoopEval,
arXiv 2604.15267, §2). Everything else is derived here: the config keys and type names in
paper order, the social dilemmas of every headline number, titles, and the Snakemake wildcard
pattern of game keys. ``get_game(key, **params)`` builds a game by config key or type name.

A plugin adds a game with :func:`register_game` (one call at import). The dicts below are
updated in place and the tuples rebound, so code that needs plugin games reads the dicts, the
functions or ``coopeval.games.<NAME>`` at call time (as the config schema and the wildcard
constraints do), not a tuple bound at its own import.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from coopeval.core.errors import registry_entry
from coopeval.games.base import Game, Profile, action_token
from coopeval.games.definitions import (
    PUBLIC_GOODS_MAX_PLAYERS,
    matching_pennies,
    prisoners_dilemma,
    public_goods,
    stag_hunt,
    travellers_dilemma,
    trust_game,
)
from coopeval.games.donation import (
    BinaryDonationGame,
    ContinuousDonationGame,
    DonationPrisonersDilemma,
)
from coopeval.games.market import ProductChoiceMarket
from coopeval.games.roles import role_names
from coopeval.games.trust import SequentialTrustGame


@dataclass(frozen=True)
class GameEntry:
    """One registered game.

    Attributes
    ----------
    factory:
        Builds the :class:`Game` (keyword parameters: the config's ``game_params.<key>``).
    social_dilemma:
        True for the four social dilemmas averaged in the aggregate tables (CoopEval docs/protocol/games.md#roster, docs/protocol/tournament.md#matchups-and-call-counts).
    params:
        JSON-schema fragments (type, bounds, description with units) of the factory's
        keyword parameters a config may set under ``game_params.<key>``; empty for a game
        without configurable parameters. The defaults are the factory's.
    """

    factory: Callable[..., Game]
    social_dilemma: bool
    params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def params_schema(self) -> dict[str, Any]:
        """The JSON-schema object of ``game_params.<key>`` (no unknown keys)."""
        return {"type": "object", "additionalProperties": False, "properties": {k: dict(v) for k, v in self.params.items()}}

    @functools.cached_property
    def game(self) -> Game:
        """The game with default parameters (its declared name, key, title, n_players, payoffs)."""
        return self.factory()


GAMES: tuple[GameEntry, ...] = (
    GameEntry(prisoners_dilemma, social_dilemma=True),
    GameEntry(
        public_goods,
        social_dilemma=True,
        params={
            "multiplier": {"type": "number", "exclusiveMinimum": 0, "description": "Pot multiplier (default 1.5)."},
            "endowment": {"type": "number", "exclusiveMinimum": 0, "description": "Points each player holds (default 1)."},
            "players": {
                "type": "integer", "minimum": 2, "maximum": PUBLIC_GOODS_MAX_PLAYERS,
                "description": "Number of players N (default 3, the paper's); the payoff table holds all 2^N profiles.",
            },
        },
    ),
    GameEntry(
        travellers_dilemma,
        social_dilemma=True,
        params={
            "min_claim": {"type": "integer", "description": "Lowest claim in points (default 2)."},
            "n_claims": {"type": "integer", "minimum": 2, "description": "Number of claims (default 4)."},
            "spacing": {"type": "integer", "minimum": 1, "description": "Points between claims (default 1)."},
            "bonus": {"type": "integer", "minimum": 0, "description": "Reward / penalty in points (default 2)."},
            "penalty": {"type": "boolean", "description": "Whether the higher claimant pays the bonus (default true)."},
        },
    ),
    GameEntry(trust_game, social_dilemma=True),
    GameEntry(stag_hunt, social_dilemma=False),
    GameEntry(matching_pennies, social_dilemma=False),
)
"""The registered games, in the paper's order (four social dilemmas first)."""

# The indexes below are derived from GAMES by _index_games (at import and after each
# registration): the dicts are updated in place, the tuples rebound.
GAME_FACTORIES: dict[str, Callable[..., Game]] = {}
"""Config key → factory, in the paper's game order."""
GAME_TYPES: tuple[str, ...] = ()
"""Type names (``PrisonersDilemma`` …) in the paper's game order: the tables' row order."""
SOCIAL_DILEMMAS: tuple[str, ...] = ()
"""Config keys of the four social dilemmas."""
SOCIAL_DILEMMA_TYPES: tuple[str, ...] = ()
"""Type names of the four social dilemmas (the games of every headline number)."""
TYPE_NAMES: dict[str, str] = {}
"""Type name → config key."""
GAME_TITLES: dict[str, str] = {}
"""Type name → title (``Prisoner's Dilemma``)."""


def _index_games() -> None:
    """Derive every index above from :data:`GAMES`."""
    global GAME_TYPES, SOCIAL_DILEMMAS, SOCIAL_DILEMMA_TYPES
    GAME_FACTORIES.update((g.game.key, g.factory) for g in GAMES)
    TYPE_NAMES.update((g.game.name, g.game.key) for g in GAMES)
    GAME_TITLES.update((g.game.name, g.game.title) for g in GAMES)
    GAME_TYPES = tuple(g.game.name for g in GAMES)
    SOCIAL_DILEMMAS = tuple(g.game.key for g in GAMES if g.social_dilemma)
    SOCIAL_DILEMMA_TYPES = tuple(g.game.name for g in GAMES if g.social_dilemma)


_index_games()
SHIPPED_GAMES: tuple[str, ...] = tuple(GAME_FACTORIES)
"""Config keys of the games this package ships: the config's default ``games``. A plugin's game
joins every index above but is played only where a config names it."""


def register_game(entry: GameEntry) -> None:
    """Add a game (a plugin's) after the built-in ones: its config key, type name and title join
    every registry above, so the config schema, the ``{game}`` wildcard constraint and the table
    order see it.

    Raises
    ------
    ValueError
        If its config key or type name is already registered (give it a new ``key``/``name``).
    """
    global GAMES
    game = entry.game
    if game.key in GAME_FACTORIES or game.name in TYPE_NAMES:
        raise ValueError(f"game {game.key!r} ({game.name}) is already registered; give the new game another key and name")
    GAMES = (*GAMES, entry)
    _index_games()


def get_game(key: str, **params: Any) -> Game:
    """Build a game from its config key (``prisoners_dilemma``) or type name (``PrisonersDilemma``).

    Raises
    ------
    KeyError
        With the list of known games, if ``key`` is unknown.
    """
    return registry_entry(GAME_FACTORIES, TYPE_NAMES.get(key, key), "game", "games")(**params)


def game_key_pattern() -> str:
    """A regular expression matching exactly the registered config keys (a Snakemake wildcard
    constraint for ``{game}``), e.g. ``prisoners_dilemma|public_goods|…``."""
    return "|".join(GAME_FACTORIES)


__all__ = [
    "GAMES",
    "GAME_FACTORIES",
    "GAME_TITLES",
    "GAME_TYPES",
    "SHIPPED_GAMES",
    "SOCIAL_DILEMMAS",
    "SOCIAL_DILEMMA_TYPES",
    "TYPE_NAMES",
    "BinaryDonationGame",
    "ContinuousDonationGame",
    "DonationPrisonersDilemma",
    "Game",
    "GameEntry",
    "ProductChoiceMarket",
    "Profile",
    "SequentialTrustGame",
    "action_token",
    "game_key_pattern",
    "get_game",
    "register_game",
    "role_names",
]
