"""Public Goods with N players (issue 34 part 2; docs/protocol/games.md#public-goods): with k
contributors out of N, a contributor gets multiplier·endowment·k/N and a free-rider
endowment + multiplier·endowment·k/N. Every number below is computed by hand."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from coopeval.games import GAMES, get_game
from tests.games.test_stated_payoffs import assert_states_the_engine

C, F = 0, 1


@pytest.mark.parametrize(
    ("players", "profile", "expected"),
    [
        # N = 2, multiplier 1.5, endowment 1: pot share 1.5·k/2 = 0.75k
        (2, (C, C), (1.5, 1.5)),
        (2, (C, F), (0.75, 1.75)),
        (2, (F, F), (1.0, 1.0)),
        # N = 5: share 1.5·k/5 = 0.3k
        (5, (C, C, C, C, C), (1.5,) * 5),
        (5, (C, F, C, F, F), (0.6, 1.6, 0.6, 1.6, 1.6)),
        (5, (F, F, F, F, C), (1.3, 1.3, 1.3, 1.3, 0.3)),
        # N = 8: share 1.5·k/8 = 0.1875k
        (8, (C,) * 7 + (F,), (1.3125,) * 7 + (2.3125,)),
        (8, (C, C, C, F, F, F, F, F), (0.5625,) * 3 + (1.5625,) * 5),
        (8, (F,) * 8, (1.0,) * 8),
    ],
)
def test_payoffs_by_hand(players: int, profile: tuple[int, ...], expected: tuple[float, ...]) -> None:
    assert get_game("public_goods", players=players).payoffs(profile) == pytest.approx(expected, abs=1e-12)


def test_other_parameters_scale_with_n() -> None:
    # N = 5, multiplier 2, endowment 3: share 2·3·k/5 = 1.2k; k = 2
    game = get_game("public_goods", multiplier=2.0, endowment=3.0, players=5)
    assert game.payoffs((C, C, F, F, F)) == pytest.approx((2.4, 2.4, 5.4, 5.4, 5.4))
    assert (game.ne_value, game.coop_value) == pytest.approx((3.0, 6.0))


@pytest.mark.parametrize("players", [2, 5, 8])
def test_dilemma_profiles_and_equilibrium(players: int) -> None:
    game = get_game("public_goods", players=players)
    assert game.n_players == players
    assert game.pure_nash_equilibria() == [(F,) * players]  # free-riding dominates while 1.5 < N
    assert (game.ne_value, game.coop_value) == (1.0, 1.5)


@pytest.mark.parametrize("players", [2, 3, 5, 8, 10])
def test_states_what_it_pays(players: int) -> None:
    assert_states_the_engine(get_game("public_goods", players=players))


def test_texts_name_the_group() -> None:
    two = get_game("public_goods", players=2).seat_rules[0]
    assert two.startswith("There is one other player. ")
    assert "shared equally among both players." in two
    assert "each contributor gets 1.5·k/2 points and each free-rider gets 1 + 1.5·k/2 points." in two
    five = get_game("public_goods", players=5).seat_rules[0]
    assert five.startswith("There are four other players. ")
    assert "shared equally among all five players." in five
    assert "gets 1.5·k/5 points" in five


@pytest.mark.parametrize("players", [1, 11, 2.5, True])
def test_bad_player_counts_are_refused(players: object) -> None:
    with pytest.raises(ValueError, match="players"):
        get_game("public_goods", players=players)
    entry = next(g for g in GAMES if g.game.key == "public_goods")
    assert list(Draft202012Validator(entry.params_schema()).iter_errors({"players": players}))
