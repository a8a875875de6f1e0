"""The gossip rules state the rewards the testbeds pay (issue 13 kind 11b): each overview is
rendered with random valid parameters, its reward statements are parsed back and compared
with the testbed's ``payoff`` for every action profile."""

from __future__ import annotations

import math
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from coopeval.studies.gossip.rounds import stated_numbers
from coopeval.studies.gossip.study import GossipStudy
from coopeval.studies.gossip.testbeds import make_testbed

PROMPTS = GossipStudy.prompt_library()
NUM = r"(-?[0-9][0-9.e+-]*)"
AMOUNT = st.floats(min_value=1e-3, max_value=1e4, allow_nan=False)


def overview(key: str, **params: object) -> tuple[object, str]:
    tb = make_testbed(key, **params)
    return tb, PROMPTS.render(f"{key}_overview", **stated_numbers(tb), pairing_phrase="drawn at random")  # type: ignore[arg-type]


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)  # the 12-digit statement, after cancellation


@settings(max_examples=50, deadline=None)
@given(b=AMOUNT, c=AMOUNT, initial=AMOUNT)
def test_donation_rewards(b: float, c: float, initial: float) -> None:
    tb, text = overview("donation", b=b, c=c, initial_resources=initial)
    m = re.search(rf"cooperation gives the donor -{NUM} and the recipient \+{NUM}; defection gives both 0\.", text)
    assert m is not None, text
    assert all(close(float(s), p) for s, p in zip((f"-{m.group(1)}", m.group(2)), tb.payoff("cooperate"), strict=True))
    assert tb.payoff("defect") == (0.0, 0.0)
    assert close(float(re.search(rf"starts with {NUM} units", text).group(1)), initial)  # type: ignore[union-attr]


@settings(max_examples=50, deadline=None)
@given(b=AMOUNT, c=AMOUNT)
def test_prisoners_dilemma_rewards(b: float, c: float) -> None:
    tb, text = overview("pd", b=b, c=c)
    pairs = {
        "both C": ("C", "C"), "you C and other D": ("C", "D"), "you D and other C": ("D", "C"), "both D": ("D", "D"),
    }
    for words, profile in pairs.items():
        m = re.search(rf"{words} \({NUM}, {NUM}\)", text)
        assert m is not None, (words, text)
        stated = (float(m.group(1)), float(m.group(2)))
        assert all(close(s, p) for s, p in zip(stated, tb.payoff(*profile), strict=True)), (words, stated)


@settings(max_examples=50, deadline=None)
@given(multiplier=st.floats(min_value=1.001, max_value=50), invest=st.floats(0, 100), back_share=st.floats(0, 1))
def test_trust_rewards(multiplier: float, invest: float, back_share: float) -> None:
    tb, text = overview("trust", multiplier=multiplier)
    m = re.search(rf"The responder receives {NUM} times I", text)
    assert m is not None and re.search(rf"responder gets {re.escape(m.group(1))} times I minus R", text)
    stated_m = float(m.group(1))
    back = back_share * multiplier * invest
    assert close(stated_m, multiplier)
    scale = 1e-9 * (1 + multiplier * invest)  # a 12-digit multiplier times I, less R ≈ M·I: cancellation
    stated = (-invest + back, stated_m * invest - back)
    assert all(math.isclose(s, p, rel_tol=1e-9, abs_tol=scale) for s, p in zip(stated, tb.payoff(invest, back), strict=True))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=100), min_size=8, max_size=8))
def test_market_rewards(v: list[float]) -> None:
    names = ("price_c", "price_s", "cost_h", "cost_l", "value_hc", "value_hs", "value_lc", "value_ls")
    tb, text = overview("market", **dict(zip(names, v, strict=True)))
    for quality, choice in (("H", "c"), ("H", "s"), ("L", "c"), ("L", "s")):
        m = re.search(rf"{quality} and {choice} \({NUM}, {NUM}\)", text)
        assert m is not None, text
        stated = (float(m.group(1)), float(m.group(2)))
        assert all(close(s, p) for s, p in zip(stated, tb.payoff(quality, choice), strict=True))
    assert "none (0, 0)" in text and tb.payoff("H", "none") == (0.0, 0.0)
