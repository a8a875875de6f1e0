"""Pure parts of the provider-fault handling: usage pricing with reasoning tokens, truncation,
classification of the agent's own fault exceptions, old cache entries, the context check."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from coopeval.agents.errors import ProviderAuthError, classify_error
from coopeval.agents.llm_agent import LiteLLMAgent
from coopeval.agents.options import DEFAULT_DEADLINE_S
from coopeval.agents.prices import PriceTable, billed_usage
from coopeval.agents.protocol import (
    AttemptDeadlineError,
    EmptyReplyError,
    ErrorClass,
    Reply,
)


def _usage(prompt: int, completion: int, reasoning: int, total: int | None = None) -> SimpleNamespace:
    details = SimpleNamespace(reasoning_tokens=reasoning)
    return SimpleNamespace(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion if total is None else total,
        completion_tokens_details=details,
    )


def test_reasoning_outside_completion_is_billed() -> None:
    # The case: prompt 100, completion 20, reasoning 1,000 reported outside (total 1,120).
    assert billed_usage(_usage(100, 20, 1000, total=1120)) == (100, 1020, 1000)
    # No total given, but 1,000 reasoning tokens cannot be part of 20 completion tokens.
    assert billed_usage(_usage(100, 20, 1000, total=0)) == (100, 1020, 1000)
    # OpenAI: reasoning inside completion_tokens (1,020 = 20 visible + 1,000), total 1,120.
    assert billed_usage(_usage(100, 1020, 1000)) == (100, 1020, 1000)
    # No reasoning at all; a usage object without any field.
    assert billed_usage(_usage(100, 20, 0)) == (100, 20, 0)
    assert billed_usage(None) == (0, 0, 0)
    # Priced: $1 / $10 per million → (100 + 10,200) / 1e6.
    table = PriceTable({"m": {"input_usd_per_mtok": 1.0, "output_usd_per_mtok": 10.0}})
    assert table.cost_usd("m", 100, 1020) == pytest.approx(0.0103)


def test_truncated_follows_finish_reason_then_the_budget() -> None:
    assert Reply("x", finish_reason="length").truncated
    assert Reply("x", finish_reason="max_tokens").truncated  # Anthropic's raw reason
    assert not Reply("x", finish_reason="stop", completion_tokens=50, max_tokens=50).truncated
    assert Reply("x", completion_tokens=50, max_tokens=50).truncated  # no reason given
    assert not Reply("x", completion_tokens=49, max_tokens=50).truncated
    assert not Reply("x", completion_tokens=49).truncated


def test_reply_cached_before_the_new_fields_reads_back_with_defaults() -> None:
    old = {"text": "{}", "prompt_tokens": 3, "completion_tokens": 2, "latency_s": 0.1, "cost_usd": 0.0,
           "model_resolved": "m", "response_id": "r"}
    reply = Reply.from_json(old)
    assert (reply.finish_reason, reply.max_tokens, reply.reasoning_tokens, reply.reasoning) == ("", 0, 0, "")
    full = Reply("a", finish_reason="length", max_tokens=9, reasoning_tokens=4, reasoning="r")
    assert Reply.from_json(full.to_json()) == full


def test_fault_exceptions_are_classified() -> None:
    assert classify_error(EmptyReplyError("empty")) is ErrorClass.TRANSIENT
    assert classify_error(AttemptDeadlineError("slow")) is ErrorClass.TRANSIENT
    assert classify_error(ProviderAuthError("set OPENAI_API_KEY")) is ErrorClass.FATAL


def test_deadline_is_a_transport_option_with_a_default_for_api_models() -> None:
    agent = LiteLLMAgent("openai/gpt-4o-mini", "IO", {"deadline_s": 2.5, "temperature": 0})
    assert agent.deadline_s == 2.5
    assert "deadline_s" not in agent.params  # not part of the cache key
    assert "deadline_s" not in agent.call_kwargs(_request())  # never sent to the provider
    assert LiteLLMAgent("openai/gpt-4o-mini", "IO").deadline_s == DEFAULT_DEADLINE_S == 600.0
    for bad in (0, -1, "10", True):
        with pytest.raises(ValueError, match=r"openai/gpt-4o-mini\(IO\): params.deadline_s is .*; use a positive number of seconds"):
            LiteLLMAgent("openai/gpt-4o-mini", "IO", {"deadline_s": bad})


def test_context_window_message_names_prompt_budget_window_and_fix() -> None:
    from coopeval.agents.local.model import context_window_message

    assert context_window_message(4000, 400, 4096) == (
        "the prompt has 4000 tokens and max_tokens = 400: more than the context window n_ctx = 4096 "
        "of the embedded model (n_ctx - 4000 = 96 tokens are left for the answer); shorten the prompt (e.g. a shorter history window or log_cap), lower "
        "max_tokens (or max_reasoning_chars for CoT), or raise COOPEVAL_LLAMA_CTX"
    )
    assert context_window_message(5031, None, 4096).startswith("the prompt has 5031 tokens: more than")


def _request():  # type: ignore[no-untyped-def]
    from coopeval.agents.protocol import DecisionRequest
    from coopeval.decisions.formats import ActionDistribution

    return DecisionRequest(({"role": "user", "content": "x"},), ActionDistribution(("A0", "A1")))


def test_config_rejects_a_bad_deadline_naming_the_field() -> None:
    from coopeval.pipeline.config import ConfigError, validate_config

    agent = {"model": "openai/gpt-4o-mini", "params": {"deadline_s": 0}}
    with pytest.raises(ConfigError, match=r"agents\[0\]\.params\.deadline_s: 0 is less than or equal to the minimum of 0"):
        validate_config({"agents": [agent]})
    ok = validate_config({"agents": [{**agent, "params": {"deadline_s": 30, "temperature": 0.5}}]})
    assert ok["agents"][0]["params"] == {"deadline_s": 30, "temperature": 0.5}


def test_a_missing_price_is_warned_once_per_model_not_per_seat(monkeypatch, caplog) -> None:
    import asyncio
    import logging

    from coopeval.agents import prices
    from coopeval.agents.protocol import DecisionRequest
    from coopeval.decisions.formats.action import ActionDistribution

    response = SimpleNamespace(
        id="r1",
        model="m",
        choices=[SimpleNamespace(message=SimpleNamespace(content='{"A0": 100, "A1": 0}'), finish_reason="stop")],
        usage=_usage(10, 5, 0),
    )

    async def acompletion(**kwargs):
        return response

    stub = SimpleNamespace(acompletion=acompletion, exceptions=SimpleNamespace(ContextWindowExceededError=KeyError))
    monkeypatch.setattr(prices, "_UNPRICED_WARNED", set())
    seats = [LiteLLMAgent("openai/unpriced-test-model", "IO") for _ in range(3)]
    request = DecisionRequest(messages=({"role": "user", "content": "x"},), answer_format=ActionDistribution(("A0", "A1")))
    with caplog.at_level(logging.WARNING, logger=prices.__name__):
        for seat in seats:
            monkeypatch.setattr(seat, "_client", lambda: stub)
            reply = asyncio.run(seat.generate(request))
            assert reply.cost_usd == 0.0 and not seat.price_known
    assert [r.getMessage() for r in caplog.records].count(
        "no pinned price for openai/unpriced-test-model; its cost is reported as 0"
    ) == 1
