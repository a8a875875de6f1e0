"""Every registered game against the spec's payoff tables and the Nash-equilibrium oracles."""

from __future__ import annotations

from fractions import Fraction

import nashpy
import numpy as np
import pytest

from coopeval.games import GAME_FACTORIES, get_game

ORACLE_NAMES = {
    "prisoners_dilemma": "prisoners_dilemma",
    "travellers_dilemma": "travellers_dilemma_coopeval_penalty",
    "trust_game": "trust_game",
    "stag_hunt": "stag_hunt",
    "matching_pennies": "matching_pennies",
}


def bimatrix(game):
    n = game.n_actions
    a = np.array([[game.payoffs((i, j))[0] for j in range(n)] for i in range(n)])
    b = np.array([[game.payoffs((i, j))[1] for j in range(n)] for i in range(n)])
    return a, b


@pytest.mark.parametrize("key", list(GAME_FACTORIES))
def test_generic_consistency(key):
    game = get_game(key)
    assert game.tokens == tuple(f"A{i}" for i in range(game.n_actions))
    assert game.normalise(game.ne_value) == 0.0 and game.normalise(game.coop_value) == 1.0
    for profile in game.payoff_table:
        assert len(game.payoffs(profile)) == game.n_players
    assert get_game(game.name) == game  # type name resolves too


def test_spec_payoff_tables():
    pd = get_game("prisoners_dilemma")
    assert [pd.payoffs(p) for p in [(0, 0), (0, 1), (1, 0), (1, 1)]] == [(2, 2), (0, 3), (3, 0), (1, 1)]
    td = get_game("travellers_dilemma")
    row_for_me = {0: [(2, 2), (4, 0), (4, 0), (4, 0)], 1: [(0, 4), (3, 3), (5, 1), (5, 1)],
                  2: [(0, 4), (1, 5), (4, 4), (6, 2)], 3: [(0, 4), (1, 5), (2, 6), (5, 5)]}
    for me, row in row_for_me.items():
        assert [td.payoffs((me, other)) for other in range(4)] == row
    tg = get_game("trust_game")
    assert tg.payoffs((0, 0)) == (10, 10) and tg.payoffs((0, 1)) == (0, 20)
    assert tg.payoffs((1, 0)) == (6, 2) and tg.payoffs((1, 1)) == (4, 4)
    sh = get_game("stag_hunt")
    assert [sh.payoffs(p) for p in [(0, 0), (0, 1), (1, 0), (1, 1)]] == [(5, 5), (0, 3), (3, 0), (3, 3)]
    mp = get_game("matching_pennies")
    assert mp.payoffs((0, 0)) == (1, -1) and mp.payoffs((0, 1)) == (-1, 1)


def test_public_goods_table():
    game = get_game("public_goods")
    expected = {3: (1.5, None), 2: (1.0, 2.0), 1: (0.5, 1.5), 0: (None, 1.0)}
    for profile, payoffs in game.payoff_table.items():
        k = profile.count(0)
        for action, pay in zip(profile, payoffs, strict=True):
            assert pay == pytest.approx(expected[k][action])
    assert game.pure_nash_equilibria() == [(1, 1, 1)]


@pytest.mark.parametrize(("key", "expected"), [
    ("prisoners_dilemma", (1, 2)), ("public_goods", (1, 1.5)), ("travellers_dilemma", (2, 5)),
    ("trust_game", (4, 10)), ("stag_hunt", (3, 5)), ("matching_pennies", (-1, 0)),
])
def test_normalisation_constants(key, expected):
    game = get_game(key)
    assert (game.ne_value, game.coop_value) == expected


@pytest.mark.parametrize("key", list(ORACLE_NAMES))
def test_nash_equilibria_match_oracle(oracles, key):
    vectors = oracles["sets"]["nash_equilibria"]["vectors"]
    oracle = vectors[ORACLE_NAMES[key]]
    game = get_game(key)
    a, b = bimatrix(game)
    np.testing.assert_array_equal(a, np.array(oracle["input"]["A_row_player"]))
    np.testing.assert_array_equal(b, np.array(oracle["input"]["B_col_player"]))
    expected = sorted(
        (tuple(float(Fraction(x)) for x in row), tuple(float(Fraction(x)) for x in col))
        for row, col in oracle["expected"]["extreme_equilibria"]
    )
    found = sorted(
        (tuple(round(float(x), 9) for x in row), tuple(round(float(x), 9) for x in col))
        for row, col in nashpy.Game(a, b).vertex_enumeration()
    )
    assert found == [(tuple(round(x, 9) for x in r), tuple(round(x, 9) for x in c)) for r, c in expected]
    labels = oracle["input"]["row_actions"]
    pure = sorted(tuple(labels[i] for i in p) for p in game.pure_nash_equilibria())
    assert pure == sorted(tuple(p) for p in oracle["expected"]["pure_nash"])


def test_no_penalty_travellers_dilemma_is_degenerate():
    game = get_game("travellers_dilemma", penalty=False)
    assert game.payoffs((0, 3)) == (4, 2)
    assert len(game.pure_nash_equilibria()) > 1


def test_seat_descriptions_are_per_seat():
    mp = get_game("matching_pennies")
    assert "you get -1 points" in mp.seat_rules[1].splitlines()[0]  # seat 2 loses on a match
    assert "you get 1 points" in mp.seat_rules[0].splitlines()[0]
    buggy = get_game("matching_pennies", symmetric_description=True)
    assert buggy.seat_rules[1] == buggy.seat_rules[0]


def test_registry_declares_order_titles_and_social_dilemmas_once() -> None:
    import re

    from coopeval.games import (
        GAME_TITLES,
        GAME_TYPES,
        SOCIAL_DILEMMA_TYPES,
        SOCIAL_DILEMMAS,
        TYPE_NAMES,
        game_key_pattern,
    )

    assert GAME_TYPES == ("PrisonersDilemma", "PublicGoods", "TravellersDilemma", "TrustGame", "StagHunt", "MatchingPennies")
    assert GAME_TYPES[:4] == SOCIAL_DILEMMA_TYPES
    assert SOCIAL_DILEMMAS == ("prisoners_dilemma", "public_goods", "travellers_dilemma", "trust_game")
    assert GAME_TITLES["TravellersDilemma"] == "Traveller's Dilemma" and GAME_TITLES["PrisonersDilemma"] == "Prisoner's Dilemma"
    assert TYPE_NAMES["StagHunt"] == "stag_hunt"
    assert [get_game(k).n_players for k in GAME_FACTORIES] == [2, 3, 2, 2, 2, 2]
    pattern = game_key_pattern()
    assert all(re.fullmatch(pattern, k) for k in GAME_FACTORIES)
    assert not re.fullmatch(pattern, "donation") and not re.fullmatch(pattern, "stag_hunt_x")


def test_wildcard_constraints_come_from_the_registries() -> None:
    import re

    from coopeval.studies.coopeval.wildcards import wildcard_constraints

    constraints = wildcard_constraints()
    assert set(constraints) == {"cell", "mechanism", "game"}
    assert re.fullmatch(constraints["mechanism"], "Mediation") and not re.fullmatch(constraints["mechanism"], "Gossip")
    assert re.fullmatch(constraints["game"], "trust_game") and not re.fullmatch(constraints["game"], "TrustGame")
    assert re.fullmatch(constraints["cell"], "0123456789ab") and not re.fullmatch(constraints["cell"], "0123456789abc")


def test_justification_shares_leave_out_the_games_that_are_not_social_dilemmas() -> None:
    from coopeval.studies.coopeval.analysis.justifications import excluded_games

    assert excluded_games() == ("StagHunt", "MatchingPennies")


def test_game_params_schema_comes_from_the_registry_and_matches_the_factories() -> None:
    import inspect

    from coopeval.games import GAMES
    from coopeval.studies.coopeval.config_schema import config_schema_part

    part = config_schema_part()["properties"]["game_params"]["properties"]
    assert set(part) == {"public_goods", "travellers_dilemma"}
    assert part["travellers_dilemma"]["properties"]["n_claims"]["minimum"] == 2
    assert part["public_goods"]["additionalProperties"] is False
    for entry in GAMES:  # every declared parameter is a keyword of the factory, and vice versa
        assert set(entry.params) == set(inspect.signature(entry.factory).parameters) - {"symmetric_description"}
