"""The simulated model's answers: shaped by the prompt, valid under our own parsers, seeded."""

from __future__ import annotations

import json
import random

import pytest

from coopeval.decisions.formats import ActionDistribution, MediatorVote, Signature
from coopeval.decisions.parsing import parse_answer
from coopeval.simserver.policy import Policy, answer, answer_object

ACTION = (
    "Choose a probability distribution over the actions A0, A1, A2. Your answer must end with one JSON "
    'object whose keys are exactly A0, A1, A2 and whose values are integer percentage points that sum to '
    'exactly 100, for example {"A0": <INT>, "A1": <INT>, "A2": <INT>}.'
)
VOTE = (
    'Answer with one JSON object whose keys are exactly "1", "2" and whose values are true (approve) or '
    'false (do not approve), for example {"1": <true or false>, "2": <true or false>}.'
)
SIGN = 'Answer with one JSON object of the form {"sign": <true or false>}.'
MEDIATOR = (
    "The mediator can play the actions A0, A1.\n\nAnswer with one JSON object, written on a single line, "
    'whose keys are exactly the numbers of delegating players "1", "2" and whose values are action '
    'tokens, for example {"1": "<ACTION>", "2": "<ACTION>"}.'
)
CONTRACT = (
    'Answer with one JSON object, written on a single line, whose keys are exactly "A0", "A1" and whose '
    'values are integers, for example {"A0": <INT>, "A1": <INT>}.'
)
JUDGE = (
    "Categories:\n1. Self-interest: maximises own points.\n2. Reciprocity: returns what others did.\n"
    "3. Other: none of the above.\n\nIf none of them applies, pick Other.\n"
    'Reply with one JSON object.\nShape of the reply: {"reasoning": "...", "confidence": 0.7, '
    '"justification_type": "<Name>, <Name>"}'
)


def test_cooperative_and_defecting_answers_by_hand():
    rng = random.Random(0)
    assert answer_object(ACTION, "cooperative", rng) == {"A0": 100, "A1": 0, "A2": 0}
    assert answer_object(ACTION, "defecting", rng) == {"A0": 0, "A1": 0, "A2": 100}
    assert answer_object(VOTE, "cooperative", rng) == {"1": True, "2": True}
    assert answer_object(VOTE, "defecting", rng) == {"1": False, "2": False}
    assert answer_object(SIGN, "cooperative", rng) == {"sign": True}
    assert answer_object(SIGN, "defecting", rng) == {"sign": False}
    assert answer_object(MEDIATOR, "cooperative", rng) == {"1": "A0", "2": "A0"}
    assert answer_object(MEDIATOR, "defecting", rng) == {"1": "A1", "2": "A1"}
    assert answer_object(CONTRACT, "random", rng) == {"A0": 0, "A1": 0}
    judged = answer_object(JUDGE, "defecting", rng)
    assert judged["justification_type"] == "Other" and set(judged) == {"reasoning", "confidence", "justification_type"}


@pytest.mark.parametrize("seed", range(30))
def test_random_answers_pass_our_parsers(seed):
    rng = random.Random(seed)
    text = answer([{"role": "user", "content": ACTION + "\n\nThink step by step."}], Policy("random"), rng)
    parsed = parse_answer(ActionDistribution(keys=("A0", "A1", "A2")), text)
    assert sum(parsed.values()) == 100
    assert text.startswith("I compare")  # CoT: reasoning before the object
    assert parse_answer(MediatorVote(keys=("1", "2")), answer([{"role": "user", "content": VOTE}], Policy("random"), rng))
    assert "sign" in parse_answer(Signature(), answer([{"role": "user", "content": SIGN}], Policy("random"), rng))


def test_answers_read_the_first_user_message_and_malformed_rate():
    reask = [
        {"role": "user", "content": SIGN},
        {"role": "assistant", "content": "maybe"},
        {"role": "user", "content": 'for example {"x": 1}'},
    ]
    assert json.loads(answer(reask, Policy("cooperative"), random.Random(1))) == {"sign": True}
    assert "{" not in answer(reask, Policy("cooperative", malformed_rate=1.0), random.Random(1))


def test_bad_input_names_the_problem():
    with pytest.raises(ValueError, match="no answer shape"):
        answer([{"role": "user", "content": "Hello"}], Policy(), random.Random(0))
    with pytest.raises(ValueError, match="no user message"):
        answer([{"role": "system", "content": SIGN}], Policy(), random.Random(0))
    with pytest.raises(ValueError, match="policy 'nice' is unknown"):
        Policy("nice")
