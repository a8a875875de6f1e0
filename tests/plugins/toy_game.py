"""A toy game defined outside ``src/``: the proof that a plugin adds a game with no edit to any
other file (the game recipe in CONTRIBUTING.md).

Importing the module registers the game with :func:`coopeval.games.register_game`; a config
lists the module under ``plugins`` and the game under ``games`` (see
``tests/workflow/test_plugins.py``).

The game, "Toy Dilemma" (key ``toy_dilemma``): a symmetric two-player Prisoner's Dilemma with
row payoffs ``A0/A0 = 4``, ``A0/A1 = 0``, ``A1/A0 = 6``, ``A1/A1 = 1`` points. ``A0`` cooperates,
``(A1, A1)`` is its only Nash equilibrium, so normalised payoffs map 1 → 0 and 4 → 1.
"""

from __future__ import annotations

from coopeval.games import Game, GameEntry, register_game
from coopeval.games.base import symmetric_two_player_table

ROW_PAYOFFS = [[4.0, 0.0], [6.0, 1.0]]
"""``ROW_PAYOFFS[mine][theirs]``: the points of a player choosing ``mine`` against ``theirs``."""


def toy_dilemma() -> Game:
    """The toy game (no parameters)."""
    table = symmetric_two_player_table(ROW_PAYOFFS)
    rules = tuple(
        "\n".join(
            f"- You A{mine}, other player A{theirs}: you get {ROW_PAYOFFS[mine][theirs]:g} points, "
            f"they get {ROW_PAYOFFS[theirs][mine]:g}."
            for mine in range(2)
            for theirs in range(2)
        )
        for _ in range(2)
    )
    return Game(
        name="ToyDilemma",
        key="toy_dilemma",
        title="Toy Dilemma",
        n_players=2,
        actions=("cooperate", "defect"),
        payoff_table=table,
        cooperative_profile=(0, 0),
        nash_profile=(1, 1),
        seat_rules=rules,
    )


register_game(GameEntry(toy_dilemma, social_dilemma=False))
