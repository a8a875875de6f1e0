"""The simulated model answers the gossip and evolution studies' formats, checked by their own
parsers, with the output instructions and questions taken from the study templates."""

from __future__ import annotations

import random
from pathlib import Path
from string import Template

import pytest

from coopeval.simserver.policy import Policy, answer
from coopeval.studies.evolution.formats import DonationFormat, StrategyFormat
from coopeval.studies.gossip.formats import (
    AmountFormat,
    ChoiceFormat,
    GossipFormat,
    ReflectionFormat,
    SignalFormat,
)

EVO = Path(__file__).resolve().parents[2] / "src" / "coopeval" / "studies" / "evolution" / "prompts"
FORM = "Answer with a JSON object of exactly this form:\n"


def _ask(prompt: str, kind: str, seed: int = 0) -> str:
    return answer([{"role": "user", "content": prompt}], Policy(kind), random.Random(seed))


@pytest.mark.parametrize("kind", ["cooperative", "defecting", "random"])
def test_gossip_formats(kind):
    choice = ChoiceFormat(kind="action", key="action", options=("cooperate", "defect"))
    action = choice.parse(_ask("Round 1.\n\n" + FORM + choice.instruction(), kind))["action"]
    assert action == {"cooperative": "cooperate", "defecting": "defect"}.get(kind, action) and action in choice.options
    amount = AmountFormat(kind="donation", key="amount", low=0.0, high=10.0)
    got = amount.parse(_ask(FORM + amount.instruction(), kind))["amount"]
    assert got == {"cooperative": 10.0, "defecting": 0.0}.get(kind, got) and 0 <= got <= 10
    for fmt in (GossipFormat(), SignalFormat(), ReflectionFormat()):
        fmt.parse(_ask(FORM + fmt.instruction(), kind, seed=3))


def _donation_prompt(question: str) -> str:
    template = Template((EVO / "evo_donation_horibe.txt").read_text())
    return template.safe_substitute(question=question, donor_units="10", system="The donor game.")


@pytest.mark.parametrize(
    ("question", "fmt", "expected"),
    [
        ("evo_question_percent.txt", DonationFormat(unit="percent"), {"action": "donate", "value": 50.0}),
        ("evo_question_units.txt", DonationFormat(unit="units", max_value=10.0), {"action": "donate", "value": 5.0}),
        ("evo_question_costly_punishment.txt", DonationFormat(unit="units", max_value=10.0, variant="costly_punishment"),
         {"action": "donate", "value": 5.0}),
    ],
)
def test_evolution_donations(question, fmt, expected):
    text = Template((EVO / question).read_text()).safe_substitute(base="resources", donor_units="10", limit="100")
    parsed = fmt.parse(_ask(_donation_prompt(text), "cooperative"))
    assert {k: parsed[k] for k in expected} == expected  # cooperative: half of the maximum
    assert fmt.parse(_ask(_donation_prompt(text), "defecting"))["value"] == 0.0


def test_evolution_strategies():
    for name, protocol in (("evo_strategy_first_horibe.txt", "horibe"), ("evo_strategy_first_vh.txt", "vh")):
        prompt = Template((EVO / name).read_text()).safe_substitute(system="", agent_name="A", word_limit="350")
        StrategyFormat(protocol=protocol, word_limit=350 if protocol == "horibe" else None).parse(_ask(prompt, "random"))
