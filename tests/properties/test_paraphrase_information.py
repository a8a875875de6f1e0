"""Paraphrases carry exactly the base wording's information (issue 23 item 4, docs/paraphrases.md).

Each cell is played with scripted bots once per prompt variant. Bots decide from the state, and
every random draw comes from a stream named by the decision's position, which the variant does
not enter, so the games unfold identically and every decision is asked in the same game state in
each wording. For each decision the test compares the prompt of every variant with the base one:

* the multiset of numbers stated (payoffs, rounds, round counts, percentages, units, seats,
  signals, agent ids) is the same;
* the multiset of double-quoted strings (action names such as ``"cooperate"``, the JSON answer
  forms, ``"delegate to the mediator"``) is the same, and every action token of the game appears;
* the wording really differs (a variant that rewords nothing the cell shows is not a paraphrase).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest

from coopeval.agents.maker import DecisionMaker
from coopeval.core.prompts import prompt_variants
from coopeval.games import get_game
from tests.helpers import make_cell, play_spec, play_study_cell, study_cells
from tests.shared_data import PROMPTS_DIR

NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")
QUOTED = re.compile(r'"[^"\n]*"')
VARIANTS = prompt_variants(PROMPTS_DIR)[1:]
Asked = dict[str, str]  # position (canonical text, without the variant) -> prompt body


@contextmanager
def recorded() -> Iterator[Asked]:
    """Every prompt body the decision loop is asked, by its position in the game."""
    asked: Asked = {}
    original = DecisionMaker.decide

    async def decide(self: DecisionMaker, agent: Any, body: str, answer_format: Any, position: Mapping[str, Any], *a: Any, **k: Any) -> Any:
        asked[repr(sorted(position.items()))] = body
        return await original(self, agent, body, answer_format, position, *a, **k)

    with mock.patch.object(DecisionMaker, "decide", decide):
        yield asked


def same_information(base: Asked, variant: Asked, tokens: tuple[str, ...] = ()) -> None:
    assert base.keys() == variant.keys() and base, "the variant cell asked other decisions"
    for position, text in base.items():
        other = variant[position]
        assert other != text, f"{position}: not reworded"
        assert Counter(NUMBER.findall(other)) == Counter(NUMBER.findall(text)), f"{position}:\n{text}\n---\n{other}"
        assert Counter(QUOTED.findall(other)) == Counter(QUOTED.findall(text)), f"{position}:\n{text}\n---\n{other}"
        assert all(token in other for token in tokens if token in text), position


MECHANISMS = ("NoMechanism", "Repetition", "ReputationFirstOrder", "Reputation", "Mediation", "Contracting")
GAMES = {
    "prisoners_dilemma": ("tit-for-tat", "always-defect"),
    "public_goods": ("tit-for-tat", "always-cooperate", "uniform-random"),  # three players
    "travellers_dilemma": ("uniform-random", "tit-for-tat"),  # more than two actions
    "trust_game": ("always-cooperate", "always-defect"),  # asymmetric: seats stated
    "stag_hunt": ("grim-trigger", "uniform-random"),
    "matching_pennies": ("always-cooperate", "uniform-random"),
}


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_coopeval_paraphrases_state_the_same_numbers(mechanism: str) -> None:
    params: dict[str, Any] = {"num_rounds": 3} if mechanism.startswith("Rep") else {}
    for game, bots in GAMES.items():
        tokens = tuple(f"A{i}" for i in range(len(get_game(game).actions)))
        asked: dict[str, Asked] = {}
        for variant in ("base", *VARIANTS):
            spec = make_cell(mechanism, game, bots, config={"prompt_variants": [variant]}, **params)
            with recorded() as bodies:
                play_spec(spec, bots)
            asked[variant] = bodies
        for variant in VARIANTS:
            same_information(asked["base"], asked[variant], tokens)


GOSSIP = {
    "testbeds": ["donation"],
    "conditions": ["align", "binary_convention", "no_gossip", "finite"],
    "models": [{"model": "bot/discriminator"}],
    "matching": "random_alternating",
    "replicates": 1,
    "testbed_params": {"donation": {"n": 4}},
}


def test_gossip_donor_and_witness_paraphrases_state_the_same_numbers() -> None:
    """Donor and witness prompts of the donation game (reputation records in the log and in
    memory, units, rounds, signals) under gossip with tones, binary signals, no gossip and a
    finite horizon."""
    cells = study_cells("gossip", {"gossip": GOSSIP, "prompt_variants": ["base", *VARIANTS]})
    by_variant: dict[str, list[dict[str, Any]]] = {}
    for cell in cells:
        by_variant.setdefault(cell.get("prompt_variant", "base"), []).append(cell)
    assert {len(v) for v in by_variant.values()} == {len(GOSSIP["conditions"])}
    kinds: Counter[str] = Counter()
    for index, base_cell in enumerate(by_variant["base"]):
        with recorded() as base:
            play_study_cell("gossip", base_cell)
        kinds.update("witness" if "publish" in body and "Your task" in body else "donor" for body in base.values())
        for variant in VARIANTS:
            with recorded() as other:
                play_study_cell("gossip", by_variant[variant][index])
            same_information(base, other, ('"cooperate"', '"defect"'))
    assert kinds["donor"] > 0 and kinds["witness"] > 0, kinds
