"""The package's mock model (:class:`coopeval.agents.mock.MockLLM`): valid answers for every
decision kind, a pure function of model, messages, params and attempt."""

from __future__ import annotations

import asyncio

import pytest

from coopeval.agents.mock import INVALID_ANSWER, MockLLM, mock_answer, mock_digest
from coopeval.agents.protocol import DecisionRequest
from coopeval.decisions import AnswerError, AnswerFormat, parse_answer
from coopeval.decisions.formats import (
    ActionDistribution,
    ContractDesign,
    ContractVote,
    JudgeLabels,
    MediatorDesign,
    MediatorVote,
    Signature,
)

MESSAGES = ({"role": "user", "content": "Choose."},)


def ask(agent: MockLLM, fmt: AnswerFormat, attempt: int = 0, **state: object) -> str:
    request = DecisionRequest(messages=MESSAGES, answer_format=fmt, state={"attempt": attempt, **state})
    return asyncio.run(agent.generate(request)).text


def test_action_answer_by_hand() -> None:
    digest = mock_digest("mock/a", MESSAGES, {"temperature": 1.0}, 0)
    first = digest[0] % 101
    answer = parse_answer(ActionDistribution(("A0", "A1", "A2")), ask(MockLLM("mock/a"), ActionDistribution(("A0", "A1", "A2"))))
    assert answer == {"A0": first, "A1": 0, "A2": 100 - first}


@pytest.mark.parametrize(
    ("fmt", "state"),
    [
        (ActionDistribution(("A0", "A1")), {}),
        (MediatorVote.over(3), {}),
        (ContractVote.over(2), {}),
        (Signature(), {}),
        (MediatorDesign.for_players(2, ("A0", "A1")), {"enforcing_design": {"1": "A1", "2": "A0"}}),
        (ContractDesign(("A0", "A1")), {"enforcing_design": {"A0": 2, "A1": 0}}),
        (JudgeLabels(("Self-interest", "Fairness")), {}),
    ],
    ids=lambda v: getattr(getattr(v, "kind", None), "value", None) or "state",
)
def test_every_kind_answers_validly(fmt: AnswerFormat, state: dict) -> None:
    text = ask(MockLLM(), fmt, **state)
    parsed = parse_answer(fmt, text)
    assert parsed == parse_answer(fmt, ask(MockLLM(), fmt, **state))  # deterministic
    if "enforcing_design" in state:
        assert parsed == state["enforcing_design"]


def test_answer_depends_on_model_params_and_attempt() -> None:
    fmt = ActionDistribution(("A0", "A1"))
    texts = {
        ask(MockLLM("mock/a"), fmt),
        ask(MockLLM("mock/b"), fmt),
        ask(MockLLM("mock/a", params={"temperature": 0.3}), fmt),
        ask(MockLLM("mock/a"), fmt, attempt=1),
    }
    assert len(texts) == 4


def test_invalid_attempts_and_interruption() -> None:
    fmt = ActionDistribution(("A0", "A1"))
    agent = MockLLM(invalid_attempts=2, fail_after=3)
    assert ask(agent, fmt, attempt=0) == ask(agent, fmt, attempt=1) == INVALID_ANSWER
    with pytest.raises(AnswerError):
        parse_answer(fmt, INVALID_ANSWER)
    assert sum(parse_answer(fmt, ask(agent, fmt, attempt=2)).values()) == 100
    with pytest.raises(MockLLM.Interrupted, match="killed after 3 calls"):
        ask(agent, fmt)
    assert agent.calls == 3 and agent.name == "mock/model(IO)" and agent.cacheable


def test_unknown_kind_is_refused() -> None:
    class Odd:
        kind = "gossip"
        keys = ("x",)

    with pytest.raises(ValueError, match="cannot answer decision kind gossip"):
        mock_answer(Odd(), b"\x00" * 32, {})  # type: ignore[arg-type]
