"""The engine's stage games (donation, its Prisoner's Dilemma, sequential trust, market) against
hand-computed payoffs: the papers' tables at the defaults, and the defining formulas for random
parameters (dyadic amounts from :mod:`tests.strategies`, so every comparison is exact)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coopeval.games import get_game
from coopeval.games.donation import (
    BinaryDonationGame,
    ContinuousDonationGame,
    DonationPrisonersDilemma,
)
from coopeval.games.market import ProductChoiceMarket
from coopeval.games.parameters import parameter_table, parameters_schema
from coopeval.games.trust import SequentialTrustGame
from tests.strategies import (
    MULTIPLIERS,
    UNITS_AMOUNTS,
    binary_donation_params,
    continuous_donation_games,
)

# -- binary donation game and its PD (ALIGN, arXiv 2602.07777; docs/protocol/gossip.md) -------


def test_binary_donation_defaults() -> None:
    game = BinaryDonationGame()
    assert (game.b, game.c) == (5.0, 1.0)
    assert game.roles == ("donor", "recipient")
    assert game.payoff("cooperate") == (-1.0, 5.0)
    assert game.payoff("defect") == (0.0, 0.0)
    with pytest.raises(ValueError, match="unknown donor action 'give'"):
        game.payoff("give")


@given(binary_donation_params())
def test_binary_donation_pays_minus_c_and_b(params: tuple[float, float]) -> None:
    b, c = params
    game = BinaryDonationGame(b=b, c=c)
    assert game.payoff("cooperate") == (-c, b)
    assert game.payoff("defect") == (0.0, 0.0)


def test_donation_pd_table_at_the_defaults() -> None:
    pd = DonationPrisonersDilemma()
    assert pd.roles == ("player", "player")
    assert {(x, y): pd.payoff(x, y) for x in "CD" for y in "CD"} == {
        ("C", "C"): (4.0, 4.0), ("C", "D"): (-1.0, 5.0), ("D", "C"): (5.0, -1.0), ("D", "D"): (0.0, 0.0),
    }
    with pytest.raises(ValueError, match="unknown PD action 'X'"):
        pd.payoff("C", "X")


@given(binary_donation_params(), st.sampled_from("CD"), st.sampled_from("CD"))
def test_donation_pd_is_two_simultaneous_donations(params: tuple[float, float], first: str, second: str) -> None:
    """Each player's reward = what it receives as the other's recipient + what it pays as donor."""
    b, c = params
    donation = BinaryDonationGame(b=b, c=c)
    action = {"C": "cooperate", "D": "defect"}
    pays_1, gets_2 = donation.payoff(action[first])
    pays_2, gets_1 = donation.payoff(action[second])
    assert DonationPrisonersDilemma(b=b, c=c).payoff(first, second) == (gets_1 + pays_1, gets_2 + pays_2)
    cost, benefit = DonationPrisonersDilemma(b=b, c=c).cost_benefit(first == "C")
    assert (cost, benefit) == ((c, b) if first == "C" else (0.0, 0.0))


def _pd_order(table: dict[tuple[int, ...], tuple[float, ...]]) -> tuple[float, float, float, float]:
    """(R, S, T, P) of a symmetric 2 × 2 table, action 0 = cooperate."""
    return table[(0, 0)][0], table[(0, 1)][0], table[(1, 0)][0], table[(1, 1)][0]


@given(binary_donation_params(dilemma=True))
def test_donation_pd_is_a_prisoners_dilemma_like_the_engines(params: tuple[float, float]) -> None:
    """(R, S, T, P) = (b − c, −c, b, 0): T > R > P > S and 2R > T + S whenever b > c > 0, the
    orderings of the engine's PD (2, 0, 3, 1); the numbers differ (the docstring says why)."""
    b, c = params
    r, s, t, p = _pd_order(DonationPrisonersDilemma(b=b, c=c).payoff_table())
    assert (r, s, t, p) == (b - c, -c, b, 0.0)
    assert t > r > p > s and 2 * r > t + s
    engine = _pd_order(dict(get_game("prisoners_dilemma").payoff_table))
    assert engine == (2.0, 0.0, 3.0, 1.0)
    er, es, et, ep = engine
    assert et > er > ep > es and 2 * er > et + es


# -- sequential trust game ---------------------------------------------------------------------


def test_trust_defaults() -> None:
    game = SequentialTrustGame()
    assert game.multiplier == 3.0 and game.roles == ("investor", "trustee")
    assert game.received(2.0) == 6.0
    assert game.payoff(2.0, 3.0) == (1.0, 3.0)
    assert game.payoff(0.0, 0.0) == (0.0, 0.0)
    with pytest.raises(ValueError, match=re.escape("invalid trust moves I = 1.0, R = 4.0")):
        game.payoff(1.0, 4.0)
    with pytest.raises(ValueError, match=re.escape("invalid trust moves I = -1.0")):
        game.payoff(-1.0, 0.0)


@given(MULTIPLIERS, UNITS_AMOUNTS, st.integers(0, 8))
def test_trust_rewards(multiplier: float, invest: float, eighths: int) -> None:
    """Investor −I + R, trustee m·I − R for R = k/8 of m·I; together (m − 1)·I."""
    game = SequentialTrustGame(multiplier=multiplier)
    back = multiplier * invest * eighths / 8
    investor, trustee = game.payoff(invest, back)
    assert (investor, trustee) == (back - invest, multiplier * invest - back)
    assert investor + trustee == (multiplier - 1) * invest


# -- transaction market ------------------------------------------------------------------------


def test_market_table_and_stage_equilibrium() -> None:
    game = ProductChoiceMarket()
    assert game.roles == ("seller", "buyer")
    table = {(q, c): game.payoff(q, c) for q in "HL" for c in ("c", "s", "none")}
    assert table == {
        ("H", "c"): (2.0, 3.0), ("H", "s"): (0.0, 2.0), ("H", "none"): (0.0, 0.0),
        ("L", "c"): (3.0, 0.0), ("L", "s"): (1.0, 1.0), ("L", "none"): (0.0, 0.0),
    }
    # L dominates for the seller; the buyer's best reply to L is s: stage equilibrium (L, s).
    assert all(table[("L", c)][0] >= table[("H", c)][0] for c in ("c", "s", "none"))
    assert max(("c", "s", "none"), key=lambda c: table[("L", c)][1]) == "s"
    with pytest.raises(ValueError, match="unknown market actions 'M', 'c'"):
        game.payoff("M", "c")


# -- continuous donation game (V&H arXiv 2412.10270; Horibe et al. arXiv 2608.04507) ---------


def test_continuous_defaults_and_parameters() -> None:
    game = ContinuousDonationGame()
    assert parameter_table(ContinuousDonationGame) == {
        "endowment": (10.0, "units"), "multiplier": (2.0, ""), "punishment_loss": (2.0, ""), "percent_base": ("current", ""),
    }
    assert parameters_schema(ContinuousDonationGame)["properties"]["endowment"] == {
        "type": "number", "exclusiveMinimum": 0, "description": "units",
    }
    assert game.settle("donate", 4.0, 10.0, 10.0) == (6.0, 18.0)
    assert game.settle("punish", 4.0, 10.0, 5.0) == (6.0, 0.0)  # 5 − 2·4 floored at 0
    assert game.settle("refuse", 0.0, 10.0, 5.0) == (10.0, 5.0)
    # Horibe et al. §3.2: 38.7 % of the endowment 10, doubled, is 7.74 for the recipient.
    worked = ContinuousDonationGame(percent_base="endowment")
    given_units = worked.units_for_percent(38.7, 4.0)
    assert given_units == pytest.approx(3.87) and worked.settle("donate", given_units, 4.0, 0.0)[1] == pytest.approx(7.74)
    assert game.units_for_percent(50.0, 7.0) == pytest.approx(3.5)  # a share of the current holdings by default
    assert game.percent_of_holdings(2.5, 10.0) == 25.0 and game.percent_of_holdings(0.0, 0.0) == 0.0


def test_continuous_refuses_bad_moves() -> None:
    game = ContinuousDonationGame()
    with pytest.raises(ValueError, match=re.escape("a donor holding 3.0 units cannot give 4.0")):
        game.settle("donate", 4.0, 3.0, 0.0)
    with pytest.raises(ValueError, match=re.escape("cannot give -1.0")):
        game.settle("punish", -1.0, 3.0, 0.0)
    with pytest.raises(ValueError, match="unknown action kind 'steal'"):
        game.settle("steal", 1.0, 3.0, 0.0)
    with pytest.raises(ValueError, match="percent_base must be one of"):
        ContinuousDonationGame(percent_base="initial")


@given(continuous_donation_games(), UNITS_AMOUNTS, UNITS_AMOUNTS, st.integers(0, 8))
def test_continuous_settle(game: ContinuousDonationGame, donor: float, recipient: float, eighths: int) -> None:
    """Giving x = k/8 of the holdings: donate (d − x, r + m·x), punish (d − x, max(0, r − loss·x))."""
    x = donor * eighths / 8
    assert game.settle("donate", x, donor, recipient) == (donor - x, recipient + game.multiplier * x)
    assert game.settle("punish", x, donor, recipient) == (donor - x, max(0.0, recipient - game.punishment_loss * x))
    assert game.settle("refuse", 0.0, donor, recipient) == (donor, recipient)
    assert game.percent_of_holdings(x, donor) == (100.0 * eighths / 8 if donor > 0 else 0.0)


@given(continuous_donation_games(), st.integers(0, 100), UNITS_AMOUNTS)
def test_percent_is_a_share_of_the_base(game: ContinuousDonationGame, percent: int, holdings: float) -> None:
    base = holdings if game.percent_base == "current" else game.endowment
    assert game.percent_base_units(holdings) == base
    assert game.units_for_percent(percent, holdings) == pytest.approx(percent / 100 * base, rel=1e-12, abs=1e-12)


def test_role_names_are_distinct_and_say_who_moves_when() -> None:
    """Each stage game declares its two roles once; tables use them as column names, numbering a
    symmetric game's shared role (issue 20 item 2)."""
    from dataclasses import dataclass
    from typing import ClassVar

    from coopeval.games import (
        BinaryDonationGame,
        DonationPrisonersDilemma,
        ProductChoiceMarket,
        SequentialTrustGame,
        role_names,
    )

    assert role_names(BinaryDonationGame) == ("donor", "recipient") and not BinaryDonationGame.simultaneous
    assert role_names(DonationPrisonersDilemma) == ("player_1", "player_2") and DonationPrisonersDilemma.simultaneous
    assert role_names(SequentialTrustGame) == ("investor", "trustee") and not SequentialTrustGame.simultaneous
    assert role_names(ProductChoiceMarket) == ("seller", "buyer") and ProductChoiceMarket.simultaneous

    @dataclass(frozen=True)
    class Spaced:
        roles: ClassVar[tuple[str, str]] = ("Big Seller", "buyer")
        simultaneous: ClassVar[bool] = True

    with pytest.raises(ValueError, match=r"Spaced.roles: 'Big Seller' is not a lower-case identifier"):
        role_names(Spaced)
