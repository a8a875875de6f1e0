"""The evolution rules state the numbers the donation game is played with (issue 13 kind
11b): for random settings, the endowment, multiplier and punishment loss read back from the
rules text equal the run's stage game (the
:class:`~coopeval.games.donation.ContinuousDonationGame` :func:`play_game` pays with), under both protocols."""

from __future__ import annotations

import math
import re

from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from coopeval.studies.evolution.bots import ConstantFraction

from .helpers import bot_agents, make_run, settings

NUM = r"(-?[0-9][0-9.e+-]*)"
AMOUNT = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False)


@hsettings(max_examples=40, deadline=None)
@given(
    protocol=st.sampled_from(["horibe", "vh"]),
    endowment=AMOUNT,
    multiplier=st.floats(min_value=1.001, max_value=20),
    loss=AMOUNT,
)
def test_rules_text_states_the_game_rules(protocol: str, endowment: float, multiplier: float, loss: float) -> None:
    s = settings(protocol=protocol, endowment=endowment, multiplier=multiplier, punishment_loss=loss, punishment="costly_punishment")
    run = make_run(s, bot_agents(ConstantFraction(50)))
    text = run.prompts.system()
    stated_endowment = float(re.search(rf"begins the game with {NUM} units", text).group(1))  # type: ignore[union-attr]
    stated_multiplier = float(re.search(rf"receives {NUM} times the amount given", text).group(1))  # type: ignore[union-attr]
    stated_loss = float(re.search(rf"removes {NUM} times x units", text).group(1))  # type: ignore[union-attr]
    rules = run.donation
    for stated, paid in ((stated_endowment, rules.endowment), (stated_multiplier, rules.multiplier), (stated_loss, rules.punishment_loss)):
        assert math.isclose(stated, paid, rel_tol=1e-9)
