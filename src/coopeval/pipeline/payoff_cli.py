"""``coopeval payoff --game GAME [--players N] --profile A,B,...``: the payoff of every seat for a
pure action profile of a registered CoopEval game, as the engine pays it
(:meth:`coopeval.games.Game.payoffs`; docs/protocol/games.md), printed as one JSON object
``{"payoffs": [...]}`` (points, seat 1 first).

Actions are named by their label (``Contribute``, case-insensitive), their token (``A1``) or
their index (``1``). An unknown game, a player count the game does not take, a profile of the
wrong length and an unknown action raise :class:`~coopeval.core.errors.CliError` naming the
valid choices (exit code 2).
"""

from __future__ import annotations

import argparse
import inspect
import json
from typing import Any

from coopeval.core.errors import CliError

__all__ = ["add_payoff_parser", "parse_profile", "run_payoff"]


def add_payoff_parser(subparsers: Any) -> None:
    """Register ``coopeval payoff``."""
    parser = subparsers.add_parser(
        "payoff",
        help="Print the payoff of every seat for a pure action profile of a game",
        description=(
            "Print the payoff of every seat (points, seat 1 first) for a pure action profile of a"
            ' registered game, as JSON {"payoffs": [...]}. Exit 0 on success, 2 on an unknown game,'
            " a wrong player count or an unknown action (the message names the valid choices)."
        ),
    )
    parser.add_argument("--game", required=True, metavar="GAME", help="config key (public_goods) or type name (PublicGoods)")
    parser.add_argument(
        "--players",
        type=int,
        metavar="N",
        help="number of players (default the game's; only Public Goods takes another, 2..10)",
    )
    parser.add_argument(
        "--profile",
        required=True,
        metavar="A,B,...",
        help="one action per seat, comma-separated: label (Contribute), token (A0) or index (0)",
    )
    parser.set_defaults(handler=run_payoff)


def _game(key: str, players: int | None) -> Any:
    """The game ``key`` with ``players`` seats (CliError naming the games or the valid counts)."""
    from coopeval.games import GAME_FACTORIES, TYPE_NAMES, get_game

    factory = GAME_FACTORIES.get(TYPE_NAMES.get(key, key))
    if factory is None:
        raise CliError(f"--game: unknown game {key!r}; choose one of {', '.join(GAME_FACTORIES)}")
    takes_players = "players" in inspect.signature(factory).parameters
    if players is None or not takes_players:
        game = get_game(key)
        if players is not None and players != game.n_players:
            raise CliError(f"--players: {game.key} is played by exactly {game.n_players} players, not {players}")
        return game
    try:
        return get_game(key, players=players)
    except ValueError as exc:
        raise CliError(f"--players: {exc}") from None


def parse_profile(game: Any, text: str) -> tuple[int, ...]:
    """The action indices of a comma-separated profile of labels, tokens or indices.

    Raises
    ------
    CliError
        On a profile whose length is not the game's player count, or an unknown action (naming
        the game's actions).
    """
    items = [item.strip() for item in text.split(",")]
    if len(items) != game.n_players:
        raise CliError(
            f"--profile: {len(items)} action(s) given; {game.key} with {game.n_players} players needs one per seat"
        )
    names = {label.casefold(): i for i, label in enumerate(game.actions)}
    names.update({token.casefold(): i for i, token in enumerate(game.tokens)})
    names.update({str(i): i for i in range(game.n_actions)})
    profile = []
    for seat, item in enumerate(items, start=1):
        if item.casefold() not in names:
            choices = ", ".join(f"{label} ({token}, {i})" for i, (label, token) in enumerate(zip(game.actions, game.tokens, strict=True)))
            raise CliError(f"--profile: seat {seat}'s action {item!r} is not an action of {game.key}; choose one of {choices}")
        profile.append(names[item.casefold()])
    return tuple(profile)


def run_payoff(args: argparse.Namespace) -> int:
    """Handle ``coopeval payoff``: print ``{"payoffs": [...]}``; exit 0."""
    game = _game(args.game, args.players)
    print(json.dumps({"payoffs": list(game.payoffs(parse_profile(game, args.profile)))}))
    return 0
