"""Every payoff a game prompt states equals what the engine pays (issue 13 kind 11b).

The prompt's game section (``game_section``: action list and the seat's payoff rules) is parsed
back into numbers, independently of how it was written, and compared with the game's payoff
table for every profile and seat, for random valid parameters (the config schema's ranges).
"""

from __future__ import annotations

import itertools
import math
import re
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopeval.core.prompts import PromptLibrary
from coopeval.games import GAME_FACTORIES, get_game
from coopeval.games.base import Game
from coopeval.studies.coopeval.mechanisms.base import game_section
from tests.helpers import play_bots
from tests.shared_data import PROMPTS_DIR

PROMPTS = PromptLibrary(PROMPTS_DIR)
NUMBER = r"(-?[0-9][0-9.e+-]*)"
OUTCOME = re.compile(rf"^- You A(\d+), other player A(\d+): you get {NUMBER} points, they get {NUMBER}\.$", re.M)
PUBLIC_GOODS = re.compile(
    rf"each contributor gets {NUMBER}·k/(\d+) points and each free-rider gets {NUMBER} \+ {NUMBER}·k/(\d+) points\."
)
TRAVELLERS = re.compile(rf"the lower claimant gets m \+ {NUMBER} and the higher claimant gets m ([-+]) {NUMBER}\.")
ACTION = re.compile(r"^- A(\d+): (.+)$", re.M)


def stated_payoffs(game: Game, seat: int) -> dict[tuple[int, ...], dict[int, float]]:
    """Profile → {seat: stated payoff}, from every payoff statement of the seat's game section."""
    text = game_section(SimpleNamespace(game=game, prompts=PROMPTS), seat)  # type: ignore[arg-type]
    stated: dict[tuple[int, ...], dict[int, float]] = {}

    def put(profile: tuple[int, ...], who: int, value: float) -> None:
        seen = stated.setdefault(profile, {})
        assert who not in seen or math.isclose(seen[who], value, rel_tol=1e-9), (profile, who, seen[who], value)
        seen[who] = value

    for mine, theirs, you, they in OUTCOME.findall(text):
        profile = (int(mine), int(theirs)) if seat == 0 else (int(theirs), int(mine))
        put(profile, seat, float(you))
        put(profile, 1 - seat, float(they))
    if (pg := PUBLIC_GOODS.search(text)) is not None:
        share, n, base, share_again, n_again = (float(x) for x in pg.groups())
        assert (share, n) == (share_again, n_again)
        for profile in itertools.product(range(2), repeat=game.n_players):
            k = profile.count(0)
            for s, a in enumerate(profile):
                put(profile, s, share * k / n if a == 0 else base + share * k / n)
    if (td := TRAVELLERS.search(text)) is not None:
        bonus, sign, malus = float(td.group(1)), td.group(2), float(td.group(3))
        claims = {int(t): float(name.removeprefix("Claim ")) for t, name in ACTION.findall(text)}
        for profile in itertools.product(claims, repeat=2):
            x, y = claims[profile[0]], claims[profile[1]]
            m = min(x, y)
            high = m - malus if sign == "-" else m + malus
            put(profile, 0, x if x == y else (m + bonus if x < y else high))
            put(profile, 1, y if x == y else (m + bonus if y < x else high))
    return stated


def assert_states_the_engine(game: Game) -> None:
    profiles = list(itertools.product(range(game.n_actions), repeat=game.n_players))
    for seat in range(game.n_players):
        stated = stated_payoffs(game, seat)
        assert sorted(stated) == profiles, f"seat {seat + 1} is not told every outcome"
        for profile in profiles:
            for s, paid in enumerate(game.payoffs(profile)):
                assert math.isclose(stated[profile][s], paid, rel_tol=1e-9, abs_tol=1e-12), (seat, profile, s)


@pytest.mark.parametrize("key", sorted(GAME_FACTORIES))
def test_default_games_state_what_they_pay(key: str) -> None:
    assert_states_the_engine(get_game(key))


@settings(max_examples=60, deadline=None)
@given(
    multiplier=st.floats(min_value=1e-3, max_value=100, allow_nan=False),
    endowment=st.floats(min_value=1e-3, max_value=1000, allow_nan=False),
)
def test_public_goods_states_what_it_pays(multiplier: float, endowment: float) -> None:
    assert_states_the_engine(get_game("public_goods", multiplier=multiplier, endowment=endowment))


@settings(max_examples=60, deadline=None)
@given(
    min_claim=st.integers(-100, 100),
    n_claims=st.integers(2, 6),
    spacing=st.integers(1, 10),
    bonus=st.integers(0, 10),
    penalty=st.booleans(),
)
def test_travellers_dilemma_states_what_it_pays(min_claim: int, n_claims: int, spacing: int, bonus: int, penalty: bool) -> None:
    game = get_game("travellers_dilemma", min_claim=min_claim, n_claims=n_claims, spacing=spacing, bonus=bonus, penalty=penalty)
    assert_states_the_engine(game)


def test_public_goods_endowment_two_in_the_played_prompt() -> None:
    """The issue's input: endowment 2, all contribute → 3.0 each, and the prompt says so."""
    tables = play_bots("NoMechanism", "public_goods", ["always-cooperate"], config={"game_params": {"public_goods": {"endowment": 2}}})
    assert set(tables["decisions"]["points"]) == {3.0}
    prompt = tables["llm_calls"]["prompt"][0]
    assert "each contributor gets 3·k/3 points and each free-rider gets 2 + 3·k/3 points" in prompt  # k = 3: 3 each
