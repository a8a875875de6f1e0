"""The provider registry answers every question about a model string (issue 9)."""

from __future__ import annotations

import pytest

from coopeval.agents.registry import (
    agent_name,
    agent_style,
    is_scripted,
    model_error,
    required_env,
    uses_local_llm,
)


@pytest.mark.parametrize(
    ("model", "scripted", "local", "env"),
    [
        ("bot/tit-for-tat", True, False, []),
        ("local/smollm2-135m", False, True, []),
        ("mock/echo", False, False, []),
        ("openai/gpt-4o", False, False, ["OPENAI_API_KEY"]),
        ("anthropic/claude-sonnet-4.5", False, False, ["ANTHROPIC_API_KEY"]),
        ("openrouter/openai/gpt-5.2", False, False, ["OPENROUTER_API_KEY"]),
        ("ollama/llama3", False, False, []),
    ],
)
def test_provider_traits(model, scripted, local, env):
    assert is_scripted(model) is scripted
    assert uses_local_llm(model) is local
    assert required_env(model) == env


def test_model_errors_name_the_known_models():
    assert model_error("bot/tit-for-tat") is None and model_error("local/smollm2-135m") is None
    assert "known bots: bot/always-cooperate" in model_error("bot/nice")
    assert "unknown embedded model 'local/llama-70b'; known: local/smollm2-135m" == model_error("local/llama-70b")
    assert "not a litellm model string" in model_error("gpt4")


def test_names_and_styles():
    assert agent_name({"model": "bot/always-defect"}) == "bot/always-defect"
    assert agent_name({"model": "bot/always-defect", "label": "defector-2"}) == "bot/defector-2"
    assert agent_name({"model": "local/smollm2-135m", "style": "CoT"}) == "local/smollm2-135m(CoT)"
    assert agent_name({"model": "openai/gpt-4o", "label": "gpt-4o"}) == "gpt-4o(IO)"
    assert agent_style({"model": "bot/tit-for-tat", "style": "CoT"}) == "scripted"
    assert agent_style({"model": "openai/gpt-4o", "style": "CoT"}) == "CoT"
