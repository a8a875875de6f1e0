"""The response-cache key (docs/protocol/engineering.md#response-cache): a pure function of model, messages, params,
position and attempt, stable across dict orderings, changed by any message byte; and, through
the decision loop with the mock model, a cache that never serves one call's answer to another
(issue 9 item 7: the key without ``messages``, ``params``, ``attempt`` or ``model``)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopeval.agents.maker import DecisionMaker
from coopeval.agents.mock import INVALID_ANSWER, MockLLM
from coopeval.cache.response_cache import CACHE_SCHEMA_VERSION, ResponseCache, call_key
from coopeval.core.hashing import canonical_json
from coopeval.decisions.formats import ActionDistribution

PROPS = settings(max_examples=50, deadline=None)
JSON_SCALARS = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=8)
MESSAGES = st.lists(
    st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "assistant"]), "content": st.text(min_size=1, max_size=60)}),
    min_size=1,
    max_size=3,
)
PARAMS = st.dictionaries(st.text(min_size=1, max_size=6), JSON_SCALARS, max_size=4)
POSITIONS = st.dictionaries(st.text(min_size=1, max_size=6), st.integers(0, 99) | st.text(max_size=6), max_size=5)


def reversed_dict(d: dict[str, Any]) -> dict[str, Any]:
    """The same mapping with the opposite insertion order."""
    return dict(reversed(list(d.items())))


# ---------------------------------------------------------------------------------------------
# The key itself


def test_key_is_the_sha256_of_the_canonical_payload() -> None:
    messages = [{"role": "user", "content": "Pick A0 or A1."}]
    expected_payload = (
        '{"attempt":2,"messages":[{"content":"Pick A0 or A1.","role":"user"}],"model":"m/x",'
        '"params":{"temperature":1.0},"position":{"round":3,"seat":0},"v":' + str(CACHE_SCHEMA_VERSION) + "}"
    )
    key = call_key("m/x", messages, {"temperature": 1.0}, {"seat": 0, "round": 3}, 2)
    assert key == hashlib.sha256(expected_payload.encode("utf-8")).hexdigest()


@PROPS
@given(model=st.text(min_size=1, max_size=10), messages=MESSAGES, params=PARAMS, position=POSITIONS, attempt=st.integers(0, 5))
def test_key_is_stable_across_dict_orderings(model: str, messages: list[dict[str, str]], params: dict[str, Any],
                                             position: dict[str, Any], attempt: int) -> None:
    key = call_key(model, messages, params, position, attempt)
    shuffled = [reversed_dict(m) for m in messages]
    assert call_key(model, shuffled, reversed_dict(params), reversed_dict(position), attempt) == key
    assert call_key(model, tuple(messages), params, position, attempt) == key


@PROPS
@given(messages=MESSAGES, data=st.data())
def test_any_message_byte_changes_the_key(messages: list[dict[str, str]], data: st.DataObject) -> None:
    key = call_key("m/x", messages, {"temperature": 1.0}, {"round": 1}, 0)
    i = data.draw(st.integers(0, len(messages) - 1), label="message")
    content = messages[i]["content"]
    j = data.draw(st.integers(0, len(content) - 1), label="char")
    new_char = data.draw(st.characters(codec="utf-8").filter(lambda c: c != content[j]), label="new_char")
    edited = [dict(m) for m in messages]
    edited[i]["content"] = content[:j] + new_char + content[j + 1 :]
    assert call_key("m/x", edited, {"temperature": 1.0}, {"round": 1}, 0) != key
    appended = [dict(m) for m in messages]
    appended[i]["content"] = content + " "
    assert call_key("m/x", appended, {"temperature": 1.0}, {"round": 1}, 0) != key
    roles = [dict(m) for m in messages]
    roles[i]["role"] = "system" if roles[i]["role"] != "system" else "user"
    assert call_key("m/x", roles, {"temperature": 1.0}, {"round": 1}, 0) != key


@pytest.mark.parametrize(
    "change",
    [
        {"model": "m/y"},
        {"params": {"temperature": 0.0}},
        {"params": {"temperature": 1.0, "max_tokens": 10}},
        {"position": {"round": 2}},
        {"attempt": 1},
        {"messages": [{"role": "user", "content": "Pick A0 or A1!"}]},
    ],
)
def test_every_component_changes_the_key(change: dict[str, Any]) -> None:
    base = {"model": "m/x", "messages": [{"role": "user", "content": "Pick A0 or A1."}],
            "params": {"temperature": 1.0}, "position": {"round": 1}, "attempt": 0}
    assert call_key(**{**base, **change}) != call_key(**base)


def test_canonical_json_rejects_non_json_values() -> None:
    assert canonical_json({"b": 1, "a": [1.5, "é"]}) == '{"a":[1.5,"é"],"b":1}'
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})
    with pytest.raises(TypeError):
        canonical_json({"x": {1, 2}})


# ---------------------------------------------------------------------------------------------
# Through the decision loop: the cache never serves one call's answer to another

ACTION = ActionDistribution(("A0", "A1", "A2"))
POSITION = {"game": "prisoners_dilemma", "round": 1, "seat": 0, "kind": "action"}


def decide(agent: MockLLM, cache: ResponseCache | None, body: str = "Choose a distribution over A0, A1, A2.") -> Any:
    """One decision of ``agent`` through a fresh :class:`DecisionMaker` (IO style, no journal)."""
    maker = DecisionMaker(cache, {"IO": "Answer with JSON.", "CoT": "Think, then answer with JSON."})
    return asyncio.run(maker.decide(agent, body, ACTION, POSITION))


def uncached(agent: MockLLM, **kwargs: Any) -> dict[str, int]:
    return decide(agent, None, **kwargs).parsed


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"model": "mock/a"}, {"model": "mock/b"}),  # same messages, params, position: model differs
        ({"model": "mock/a", "params": {"temperature": 1.0}}, {"model": "mock/a", "params": {"temperature": 0.2}}),
    ],
    ids=["model", "params"],
)
def test_cache_keeps_models_and_params_apart(tmp_path, first: dict[str, Any], second: dict[str, Any]) -> None:
    expected_first, expected_second = uncached(MockLLM(**first)), uncached(MockLLM(**second))
    assert expected_first != expected_second  # the mock answers differently, so a shared key would show
    cache = ResponseCache(tmp_path / "cache")
    assert decide(MockLLM(**first), cache).parsed == expected_first
    agent = MockLLM(**second)
    outcome = decide(agent, cache)
    assert outcome.parsed == expected_second
    assert agent.calls == 1 and outcome.attempts[0]["cache_hit"] is False
    replay = MockLLM(**second)
    assert decide(replay, cache).parsed == expected_second and replay.calls == 0
    cache.close()


def test_cache_keeps_messages_apart(tmp_path) -> None:
    bodies = ("Round 1. Choose a distribution over A0, A1, A2.", "Round 1. Choose a distribution over A0, A1, A2 now.")
    expected = [uncached(MockLLM("mock/a"), body=b) for b in bodies]
    assert expected[0] != expected[1]
    cache = ResponseCache(tmp_path / "cache")
    agent = MockLLM("mock/a")
    assert [decide(agent, cache, body=b).parsed for b in bodies] == expected
    assert agent.calls == 2
    cache.close()


def test_cache_keeps_attempts_apart(tmp_path) -> None:
    """Attempts 1 and 2 of a re-ask send identical messages (same invalid answer, same error):
    only the attempt number tells their cache entries apart."""
    cache = ResponseCache(tmp_path / "cache")
    agent = MockLLM("mock/a", invalid_attempts=2)
    outcome = decide(agent, cache)
    assert [a["response"] for a in outcome.attempts[:2]] == [INVALID_ANSWER, INVALID_ANSWER]
    assert json.loads(outcome.attempts[1]["prompt"]) == json.loads(outcome.attempts[2]["prompt"])
    assert outcome.ok and len(outcome.attempts) == 3 and agent.calls == 3
    assert [a["cache_hit"] for a in outcome.attempts] == [False, False, False]
    assert outcome.parsed == uncached(MockLLM("mock/a", invalid_attempts=2))
    cache.close()


def test_mock_answer_depends_on_each_input() -> None:
    """The mock's answer is a function of model, messages, params and attempt (and nothing else)."""
    from coopeval.agents.mock import mock_digest

    messages = [{"role": "user", "content": "q"}]
    base = mock_digest("mock/a", messages, {"temperature": 1.0}, 0)
    assert mock_digest("mock/a", messages, {"temperature": 1.0}, 0) == base
    assert mock_digest("mock/b", messages, {"temperature": 1.0}, 0) != base
    assert mock_digest("mock/a", [{"role": "user", "content": "r"}], {"temperature": 1.0}, 0) != base
    assert mock_digest("mock/a", messages, {"temperature": 0.5}, 0) != base
    assert mock_digest("mock/a", messages, {"temperature": 1.0}, 1) != base


# ---------------------------------------------------------------------------------------------
# The endpoint (issue 13 kind 7): two servers behind one model string never share answers


def test_endpoint_enters_the_key_only_when_set() -> None:
    messages = [{"role": "user", "content": "Pick A0 or A1."}]
    args = ("hosted_vllm/llama", messages, {"temperature": 1.0}, {"round": 3}, 0)
    plain = call_key(*args)
    assert call_key(*args, None) == plain and call_key(*args, {}) == plain  # earlier keys unchanged
    expected_payload = (
        '{"attempt":0,"endpoint":{"api_base":"http://10.0.0.2:8000/v1"},"messages":[{"content":'
        '"Pick A0 or A1.","role":"user"}],"model":"hosted_vllm/llama","params":{"temperature":1.0},'
        '"position":{"round":3},"v":' + str(CACHE_SCHEMA_VERSION) + "}"
    )
    key_a = call_key(*args, {"api_base": "http://10.0.0.2:8000/v1"})
    assert key_a == hashlib.sha256(expected_payload.encode("utf-8")).hexdigest()
    key_b = call_key(*args, {"api_base": "http://10.0.0.3:8000/v1"})
    assert len({plain, key_a, key_b}) == 3
    assert call_key(*args, {"api_base": "http://10.0.0.2:8000/v1", "api_version": "2024-06-01"}) != key_a


def test_credentials_never_enter_the_key() -> None:
    messages = [{"role": "user", "content": "q"}]
    plain = call_key("m/x", messages, {"temperature": 1.0}, {"round": 1}, 0)
    assert call_key("m/x", messages, {"temperature": 1.0, "api_key": "sk-1"}, {"round": 1}, 0) == plain
    assert call_key("m/x", messages, {"temperature": 1.0}, {"round": 1}, 0, {"api_key": "sk-2"}) == plain
    with_base = call_key("m/x", messages, {"temperature": 1.0}, {"round": 1}, 0, {"api_base": "http://h"})
    assert call_key("m/x", messages, {"temperature": 1.0}, {"round": 1}, 0,
                    {"api_base": "http://h", "extra_headers": {"Authorization": "Bearer t"}}) == with_base


@pytest.mark.parametrize(
    ("model", "transport", "environ", "expected"),
    [
        ("hosted_vllm/llama", {"api_base": "http://a:8000/v1", "timeout": 5}, {}, {"api_base": "http://a:8000/v1"}),
        ("hosted_vllm/llama", {}, {"HOSTED_VLLM_API_BASE": "http://b:8000/v1"}, {"api_base": "http://b:8000/v1"}),
        ("hosted_vllm/llama", {"api_base": "http://a"}, {"HOSTED_VLLM_API_BASE": "http://b"}, {"api_base": "http://a"}),
        ("openai/gpt-4o-mini", {}, {"OPENAI_API_BASE": "http://c/v1"}, {"api_base": "http://c/v1"}),
        ("openai/gpt-4o-mini", {}, {"OPENAI_BASE_URL": "http://d/v1", "OPENAI_API_BASE": "http://c/v1"}, {"api_base": "http://d/v1"}),
        ("ollama_chat/qwen", {}, {"OLLAMA_API_BASE": "http://e:11434"}, {"api_base": "http://e:11434"}),
        ("azure/gpt", {"api_version": "2024-06-01", "extra_headers": {"x": "y"}}, {}, {"api_version": "2024-06-01"}),
        ("openrouter/meta/llama", {"timeout": 30, "cache_prompt": True}, {"OPENAI_API_BASE": "http://c"}, {}),
    ],
)
def test_request_endpoint(model: str, transport: dict[str, Any], environ: dict[str, str], expected: dict[str, Any]) -> None:
    from coopeval.agents.endpoint import request_endpoint

    assert request_endpoint(model, transport, environ) == expected


def test_litellm_agent_keeps_api_base_out_of_params_but_in_its_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    from coopeval.agents.llm_agent import LiteLLMAgent

    monkeypatch.delenv("HOSTED_VLLM_API_BASE", raising=False)
    agent = LiteLLMAgent("hosted_vllm/llama", "IO", {"api_base": "http://a:8000/v1", "timeout": 5, "temperature": 0.7})
    assert dict(agent.params) == {"temperature": 0.7}
    assert agent.endpoint == {"api_base": "http://a:8000/v1"}
    assert LiteLLMAgent("hosted_vllm/llama", "IO", {"temperature": 0.7}).endpoint == {}


def test_cache_keeps_endpoints_apart(tmp_path) -> None:
    """Same model string, messages, params and position on two servers: the second server is
    asked, not served the first one's answer; each replays its own answer."""
    cache = ResponseCache(tmp_path / "cache")
    first, second = MockLLM("mock/a"), MockLLM("mock/a")
    first.endpoint = {"api_base": "http://10.0.0.2:8000/v1"}  # type: ignore[attr-defined]
    second.endpoint = {"api_base": "http://10.0.0.3:8000/v1"}  # type: ignore[attr-defined]
    decide(first, cache)
    outcome = decide(second, cache)
    assert second.calls == 1 and outcome.attempts[0]["cache_hit"] is False
    assert outcome.attempts[0]["cache_key"] != decide(first, cache).attempts[0]["cache_key"]
    assert first.calls == 1  # its own answer replayed
    cache.close()
