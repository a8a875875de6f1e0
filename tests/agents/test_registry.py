"""The provider registry answers every question about a model string from its entry."""

from __future__ import annotations

from typing import ClassVar

import pytest

from coopeval.agents import registry
from coopeval.agents.bots import TitForTat
from coopeval.agents.mock import MockLLM
from coopeval.agents.protocol import DecisionRequest, ErrorClass, Reply
from coopeval.agents.provider import Provider
from coopeval.agents.registry import (
    agent_name,
    agent_style,
    base_url_env,
    classify_error,
    entry_error,
    is_scripted,
    make_agent,
    model_error,
    provider_for,
    register_provider,
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
        ("hosted_vllm/my-model", False, False, []),
        ("gemini/gemini-3-flash-preview", False, False, ["GEMINI_API_KEY"]),
    ],
)
def test_provider_traits(model, scripted, local, env):
    assert is_scripted(model) is scripted
    assert uses_local_llm(model) is local
    assert required_env(model) == env


def test_model_errors_name_the_known_models():
    assert model_error("bot/tit-for-tat") is None and model_error("local/smollm2-135m") is None
    assert "known bots: bot/always-cooperate" in model_error("bot/nice")
    assert model_error("local/llama-70b") == "unknown embedded model 'local/llama-70b'; known: local/smollm2-135m, or local/file:<path to a .gguf file>"
    assert "not a litellm model string" in model_error("gpt4")


def test_names_and_styles():
    assert agent_name({"model": "bot/always-defect"}) == "bot/always-defect"
    assert agent_name({"model": "bot/always-defect", "label": "defector-2"}) == "bot/defector-2"
    assert agent_name({"model": "local/smollm2-135m", "style": "CoT"}) == "local/smollm2-135m(CoT)"
    assert agent_name({"model": "openai/gpt-4o", "label": "gpt-4o"}) == "gpt-4o(IO)"
    assert agent_style({"model": "bot/tit-for-tat", "style": "CoT"}) == "scripted"
    assert agent_style({"model": "openai/gpt-4o", "style": "CoT"}) == "CoT"


@pytest.mark.parametrize(
    ("model", "env"),
    [
        ("cohere/command-r", ["COHERE_API_KEY"]),
        ("fireworks_ai/accounts/fireworks/models/llama-v3p1-8b-instruct", ["FIREWORKS_AI_API_KEY"]),
        ("perplexity/sonar", ["PERPLEXITYAI_API_KEY"]),
    ],
)
def test_a_provider_only_litellm_knows_gets_its_key_checked(model, env):
    # these providers were missing from the hand-typed key table: no key was asked for and the
    # first call failed with a 401; the names now come from litellm's own table
    assert required_env(model) == env


def test_base_url_variables_come_from_the_entry():
    assert base_url_env("openai/gpt-4o") == ["OPENAI_BASE_URL", "OPENAI_API_BASE"]
    assert base_url_env("hosted_vllm/llama") == ["HOSTED_VLLM_API_BASE"]
    assert base_url_env("bot/tit-for-tat") == [] and base_url_env("local/smollm2-135m") == []


def test_dispatch_is_by_entry():
    assert [p.name for p in registry.PROVIDERS] == ["bot", "local", "mock", "human", "litellm"]
    assert provider_for("human/alice").name == "human"
    assert provider_for("bot/x").name == "bot" and provider_for("mock/x").name == "mock"
    assert provider_for("openrouter/openai/gpt-5.2").name == "litellm"
    assert isinstance(make_agent({"model": "bot/tit-for-tat"}), TitForTat)
    mock = make_agent({"model": "mock/echo", "style": "CoT", "params": {"temperature": 0.2}})
    assert isinstance(mock, MockLLM) and mock.style == "CoT" and dict(mock.params) == {"temperature": 0.2}
    assert classify_error("bot/tit-for-tat", TimeoutError()) is ErrorClass.FATAL
    assert classify_error("openai/gpt-4o", TimeoutError()) is ErrorClass.TRANSIENT


def test_option_checks_are_the_providers():
    assert entry_error("openai/gpt-4o", {"deadline_s": -1}).startswith("params.deadline_s is -1")
    assert entry_error("local/smollm2-135m", {"send_seed": "yes"}) == "params.send_seed is 'yes'; use true or false"
    assert entry_error("bot/tit-for-tat", {"deadline_s": -1}) is None  # bots read no options
    assert entry_error("bot/nice", None).startswith("model: unknown bot 'bot/nice'")


class _Echo:
    name = model = "echo/one"
    style = "IO"
    params: ClassVar[dict] = {}
    cacheable = False

    async def generate(self, request: DecisionRequest) -> Reply:
        return Reply(text="{}")

    def classify_error(self, exc: BaseException) -> ErrorClass:
        return ErrorClass.FATAL


def test_a_plugin_provider_is_registered_before_the_fallback(monkeypatch):
    monkeypatch.setattr(registry, "PROVIDERS", registry.PROVIDERS)
    entry = Provider(name="echo", prefix="echo/", factory=lambda spec: _Echo(), key_variables=lambda m: ("ECHO_KEY",))
    register_provider(entry)
    assert provider_for("echo/one") is entry and required_env("echo/one") == ["ECHO_KEY"]
    assert isinstance(make_agent({"model": "echo/one"}), _Echo)
    with pytest.raises(ValueError, match="prefix 'echo/' is already provider 'echo'"):
        register_provider(entry)
    with pytest.raises(ValueError, match="give it a model-string prefix"):
        register_provider(Provider(name="any", prefix="", factory=lambda spec: _Echo()))
