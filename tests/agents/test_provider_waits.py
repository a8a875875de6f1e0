"""Issue 25 kind 3: the wait a provider asks for (``Retry-After``) is honoured on every provider
path the studies use, through litellm against the scripted server of
:mod:`tests.agents.fault_server`: litellm keeps the header in a different place per path
(``response.headers`` for ``openai/``, only ``litellm_response_headers`` and the wrapped
``OllamaError``/``httpx`` errors for ``hosted_vllm/``, ``ollama_chat/`` and ``ollama/``).

A requested wait is never cut short; one above ``RetryPolicy.max_retry_after_s`` stops the
decision with :class:`ProviderRateLimitedError` holding the requested wait, after one request.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytest.importorskip("litellm")

from coopeval.agents.llm_agent import LiteLLMAgent
from coopeval.agents.maker import DecisionMaker
from coopeval.agents.protocol import ProviderRateLimitedError
from coopeval.agents.retry import RetryPolicy
from coopeval.cache.response_cache import ResponseCache
from coopeval.decisions.formats import ActionDistribution
from tests.agents.fault_server import FaultServer, serve

FORMAT = ActionDistribution(("A0", "A1"))
MODELS = ("openai/sim", "hosted_vllm/sim", "ollama_chat/sim", "ollama/sim")
# waits honoured up to 0.8 s (scaled down from the default 120 s); jitter tiny
POLICY = RetryPolicy(max_attempts_rate_limit=4, initial_wait_s=0.01, max_wait_s=0.05, max_retry_after_s=0.8)


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")


def _decide(server: FaultServer, model: str, cache: ResponseCache | None, journal: list[dict[str, Any]] | None = None) -> Any:
    agent = LiteLLMAgent(
        model, "IO", params={"api_base": server.api_base_for(model), "timeout": 5, "temperature": 0}
    )
    maker = DecisionMaker(cache, {}, max_concurrency=1, retry_policy=POLICY, journal=journal.append if journal is not None else None)
    return asyncio.run(maker.decide(agent, "Choose.", FORMAT, {"decision": 0}))


@pytest.mark.parametrize("model", MODELS)
def test_retry_after_is_waited_in_full_on_every_provider_path(model: str, tmp_path: Path) -> None:
    # 0.6 s asked for, above the 0.05 s backoff cap: the old code found no hint on the
    # hosted_vllm/ollama paths and came back after the 0.01-0.02 s backoff.
    with serve(["status:429:0.6", "ok"]) as server:
        outcome = _decide(server, model, None)
    assert outcome.status == "ok" and outcome.parsed == {"A0": 60, "A1": 40}
    assert len(server.requests) == 2
    assert server.times[1] - server.times[0] >= 0.6  # the gap the server saw between the two requests


@pytest.mark.parametrize("model", MODELS)
def test_retry_after_above_the_maximum_stops_with_the_requested_wait(model: str, tmp_path: Path) -> None:
    # 3 s asked for, above max_retry_after_s = 0.8: the old code retried at the 0.05 s cap.
    cache = ResponseCache(tmp_path / "cache")
    journal: list[dict[str, Any]] = []
    try:
        with serve(["status:429:3", "ok"]) as server, pytest.raises(ProviderRateLimitedError) as info:
            _decide(server, model, cache, journal)
        assert len(cache) == 0
    finally:
        cache.close()
    assert len(server.requests) == 1  # never retried early
    assert info.value.requested_wait_s == 3.0 and info.value.max_wait_s == 0.8
    assert "asked to wait 3 s" in str(info.value)
    assert [(j["type"], j["requested_wait_s"], j["model"]) for j in journal] == [("rate_limited", 3.0, model)]
