"""``coopeval payoff``: the payoff of every seat of a pure action profile, for every registered
game (hand-computed values), and exit code 2 naming the valid choices on bad input."""

from __future__ import annotations

import json

import pytest

from coopeval.cli import main
from coopeval.games import GAME_FACTORIES, get_game


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, object, str]:
    code = main(["payoff", *args])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out else None), err


@pytest.mark.parametrize(
    ("args", "payoffs"),
    [
        (["--game", "prisoners_dilemma", "--profile", "Cooperate,Defect"], [0.0, 3.0]),
        (["--game", "PrisonersDilemma", "--profile", "a1,a1"], [1.0, 1.0]),
        (["--game", "public_goods", "--profile", "Contribute,1,A0"], [1.0, 2.0, 1.0]),  # k = 2: 0.5k, 1 + 0.5k
        (["--game", "public_goods", "--players", "2", "--profile", "0,1"], [0.75, 1.75]),
        (["--game", "public_goods", "--players", "5", "--profile", "0,0,1,1,1"], [0.6, 0.6, 1.6, 1.6, 1.6]),
        (["--game", "public_goods", "--players", "8", "--profile", ",".join(["Contribute"] * 7 + ["Free-ride"])],
         [1.3125] * 7 + [2.3125]),
        (["--game", "travellers_dilemma", "--profile", "Claim 3,Claim 5"], [5.0, 1.0]),
        (["--game", "trust_game", "--profile", "Keep,Give"], [6.0, 2.0]),
        (["--game", "stag_hunt", "--players", "2", "--profile", "Stag,Hare"], [0.0, 3.0]),
        (["--game", "matching_pennies", "--profile", "Heads,Tails"], [-1.0, 1.0]),
    ],
)
def test_payoffs(capsys: pytest.CaptureFixture[str], args: list[str], payoffs: list[float]) -> None:
    code, out, err = run(capsys, *args)
    assert (code, err) == (0, "")
    assert out == {"payoffs": pytest.approx(payoffs, abs=1e-12)}


def test_every_registered_game_answers(capsys: pytest.CaptureFixture[str]) -> None:
    for key in GAME_FACTORIES:
        game = get_game(key)
        code, out, _ = run(capsys, "--game", key, "--profile", ",".join(game.tokens[-1:] * game.n_players))
        assert code == 0 and out == {"payoffs": list(game.payoffs((game.n_actions - 1,) * game.n_players))}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--game", "pd", "--profile", "C,D"], "unknown game 'pd'; choose one of prisoners_dilemma, public_goods,"),
        (["--game", "public_goods", "--profile", "0,1"], "2 action(s) given; public_goods with 3 players needs one per seat"),
        (["--game", "public_goods", "--players", "4", "--profile", "0,1,1"], "3 action(s) given; public_goods with 4 players"),
        (["--game", "public_goods", "--players", "11", "--profile", "0"], "players = 11; expected an integer from 2 to 10"),
        (["--game", "public_goods", "--players", "1", "--profile", "0"], "expected an integer from 2 to 10"),
        (["--game", "public_goods", "--players", "0", "--profile", "0"], "players = 0; expected an integer from 2 to 10"),
        (["--game", "public_goods", "--players", "-3", "--profile", "0"], "players = -3; expected an integer from 2 to 10"),
        (["--game", "prisoners_dilemma", "--players", "0", "--profile", "0"], "prisoners_dilemma is played by exactly 2 players, not 0"),
        (["--game", "trust_game", "--players", "3", "--profile", "Give,Give,Give"], "trust_game is played by exactly 2 players, not 3"),
        (["--game", "stag_hunt", "--profile", "Stag,Bear"], "seat 2's action 'Bear' is not an action of stag_hunt; choose one of Stag (A0, 0), Hare (A1, 1)"),
        (["--game", "prisoners_dilemma", "--profile", "0,2"], "choose one of Cooperate (A0, 0), Defect (A1, 1)"),
    ],
)
def test_bad_input_exits_2_naming_the_choices(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    code, out, err = run(capsys, *args)
    assert (code, out) == (2, None)
    assert err.startswith("coopeval payoff: error: --") and message in err


def test_a_missing_flag_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["payoff", "--game", "public_goods"]) == 2
    assert "--profile" in capsys.readouterr().err
