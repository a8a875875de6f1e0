"""coopeval.agents.seats: every seat gets its own agent instance (issue 13 kind 9)."""

from __future__ import annotations

from types import ModuleType

import pytest

from coopeval.agents.bots import make_bot
from coopeval.agents.mock import MockLLM
from coopeval.agents.seats import seat_agent


class Diary:
    """A stateful test agent: remembers every position it was asked about."""

    def __init__(self) -> None:
        self.name = self.model = "test/diary"
        self.style = "IO"
        self.params: dict[str, object] = {}
        self.cacheable = False
        self.seen: list[str] = []


def test_deep_copy_separates_mutable_state() -> None:
    template = Diary()
    a, b = seat_agent(template), seat_agent(template)
    a.seen.append("round 1")  # type: ignore[attr-defined]
    assert b.seen == [] and template.seen == []  # type: ignore[attr-defined]
    assert (a.name, a.model, a.style) == (template.name, template.model, template.style)


def test_labelled_bot_keeps_its_name() -> None:
    bot = make_bot("tit-for-tat")
    bot.name = bot.model = "bot/tft-2"
    copy = seat_agent(bot)
    assert copy is not bot and copy.name == "bot/tft-2" and type(copy) is type(bot)


def test_mock_copies_share_the_endpoint_counter() -> None:
    template = MockLLM(fail_after=3)
    seat = seat_agent(template)
    assert seat is not template
    seat._calls[0] += 2  # type: ignore[attr-defined]
    assert template.calls == 2 and seat_agent(template).calls == 2


def test_an_uncopyable_agent_is_refused_with_the_fix() -> None:
    agent = Diary()
    agent.client = ModuleType("client")  # type: ignore[attr-defined]  # modules cannot be deep-copied
    with pytest.raises(TypeError, match=r"'test/diary' cannot be copied for a seat .*define for_seat\(\)"):
        seat_agent(agent)


def test_litellm_agent_is_copied_after_its_client_was_imported() -> None:
    """A used LiteLLM agent holds the imported litellm module, which deepcopy refuses; its
    for_seat() shares it instead (as does the evolution study's wrapper)."""
    from coopeval.agents.llm_agent import LiteLLMAgent
    from coopeval.studies.evolution.agents import StudyAgent

    agent = LiteLLMAgent("openai/gpt-4o", style="IO", params={"temperature": 0.3})
    agent._litellm = ModuleType("litellm")  # as after the first call
    copy = seat_agent(agent)
    assert copy is not agent and copy._litellm is agent._litellm and copy.params == agent.params
    wrapped = StudyAgent(agent, "donor", "gpt")
    seat = seat_agent(wrapped)
    assert seat is not wrapped and seat.inner is not agent and seat.name == "gpt[donor]"  # type: ignore[attr-defined]
