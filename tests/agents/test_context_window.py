"""Issue 25 kind 2: prompts a server cut, through litellm against the scripted server of
:mod:`tests.agents.fault_server` (OpenAI paths and Ollama's native ``/api/chat`` and
``/api/generate``).

``ollama/`` and ``ollama_chat/`` requests carry the window they need (``options.num_ctx``); on
every provider a reply whose reported prompt tokens fall evidently below the client's estimate
fails the decision with both numbers, is not cached and is not retried; a configured window too
small for the prompt is refused before sending.
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

from coopeval.agents.context_window import (
    estimate_prompt_tokens,
    evidently_cut,
    needed_window,
    overflows_window,
)
from coopeval.agents.llm_agent import LiteLLMAgent
from coopeval.agents.maker import DecisionMaker, DecisionOutcome
from coopeval.agents.retry import RetryPolicy
from coopeval.cache.response_cache import ResponseCache
from coopeval.decisions.formats import ActionDistribution
from tests.agents.fault_server import FaultServer, serve

FORMAT = ActionDistribution(("A0", "A1"))
MODELS = ("openai/sim", "hosted_vllm/sim", "ollama_chat/sim", "ollama/sim")
OLLAMA = ("ollama_chat/sim", "ollama/sim")
LONG = "Choose." + " word" * 3000  # 3,002 content tokens in cl100k ("Choose", ".", 3,000 × " word")
FAST = RetryPolicy(max_attempts_transient=2, initial_wait_s=0.01, max_wait_s=0.05)


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")


@pytest.fixture
def cache(tmp_path: Path) -> ResponseCache:
    store = ResponseCache(tmp_path / "cache")
    yield store
    store.close()


def _decide(server: FaultServer, model: str, body: str, cache: ResponseCache | None = None, **params: Any) -> DecisionOutcome:
    agent = LiteLLMAgent(model, "IO", params={"api_base": server.api_base_for(model), "timeout": 5, **params})
    maker = DecisionMaker(cache, {}, max_concurrency=1, retry_policy=FAST, retry_failed=1)
    return asyncio.run(maker.decide(agent, body, FORMAT, {"decision": 0}))


def _estimate() -> int:
    estimate = estimate_prompt_tokens([{"role": "user", "content": LONG}])
    assert 3002 <= estimate <= 3030  # content tokens plus litellm's few tokens of message overhead
    return estimate


def test_window_arithmetic_matches_hand_computed_values() -> None:
    # ceil(3000 × 1.2) + 100 = 3700 → 4096; + 1024 (no max_tokens) = 4624 → 8192; small → 2048
    assert needed_window(3000, 100) == 4096
    assert needed_window(3000, None) == 8192
    assert needed_window(9, 100) == 2048
    # ceil(3330 × 1.2) + 100 = 3996 + 100 = 4096 fits; ceil(3331 × 1.2) + 100 = 3998 + 100 = 4098 does not
    assert needed_window(3330, 100) == 4096 and needed_window(3331, 100) == 8192
    # cut when reported < estimate × 0.8 − 32: 3000 → below 2368
    assert evidently_cut(2048, 3000) and evidently_cut(2367, 3000)
    assert not evidently_cut(2368, 3000) and not evidently_cut(2500, 3000)
    assert not evidently_cut(10, 9) and not evidently_cut(0, 3000)  # 0: the server reported nothing
    assert not evidently_cut(2048, 3000, window=1024)  # more than the window: not a cut to it
    assert evidently_cut(2048, 3000, tolerance=0.2) and not evidently_cut(2048, 3000, tolerance=0.5)
    assert overflows_window(3000, 2048) and not overflows_window(2600, 2048)  # 2368 > 2048; 2048 ≤ 2048


@pytest.mark.parametrize("model", OLLAMA)
def test_ollama_requests_carry_the_window_they_need(model: str) -> None:
    estimate = _estimate()
    with serve([f"tokens:{estimate}"]) as server:
        long = _decide(server, model, LONG, max_tokens=100)
        short = _decide(server, model, "Choose.", max_tokens=100)
        configured = _decide(server, model, "Choose.", num_ctx=8192)
    assert [o.status for o in (long, short, configured)] == ["ok"] * 3
    windows = [r["options"]["num_ctx"] for r in server.requests]
    assert windows == [needed_window(estimate, 100), 2048, 8192] == [4096, 2048, 8192]
    assert server.paths[0] == ("/api/chat" if model.startswith("ollama_chat") else "/api/generate")


@pytest.mark.parametrize("model", MODELS)
def test_a_prompt_the_server_cut_is_refused_not_cached_not_retried(model: str, cache: ResponseCache) -> None:
    # The instance: a 2,048-token window, a ~3,000-token prompt, 200 with 2,048 prompt tokens.
    estimate = _estimate()
    with serve(["tokens:2048", "ok"]) as server:
        outcome = _decide(server, model, LONG, cache)
    assert (outcome.status, outcome.parsed, len(outcome.attempts)) == ("failed", None, 1)
    assert "reports 2048 prompt tokens" in outcome.error and f"about {estimate} were sent" in outcome.error
    assert outcome.attempts[0]["cache_key"] == "" and len(cache) == 0
    assert len(server.requests) == 1  # no retry, no re-ask, no retry round


@pytest.mark.parametrize("model", ["hosted_vllm/sim", "ollama_chat/sim"])
def test_reported_counts_within_the_tolerance_are_accepted(model: str, cache: ResponseCache) -> None:
    estimate = _estimate()
    near = int(estimate * 0.8 - 32) + 1  # the smallest count that is not a cut
    with serve([f"tokens:{near}", f"tokens:{near - 2}"]) as server:
        accepted = _decide(server, model, LONG, cache)
        refused = _decide(server, model, LONG + " more", cache)
        lenient = _decide(server, model, LONG + " again", cache, prompt_cut_tolerance=0.5)
    assert (accepted.status, accepted.parsed) == ("ok", {"A0": 60, "A1": 40})
    assert refused.status == "failed" and f"reports {near - 2} prompt tokens" in refused.error
    assert lenient.status == "ok"
    assert len(cache) == 2


def test_a_configured_window_too_small_is_refused_before_sending() -> None:
    with serve(["ok"]) as server:
        outcome = _decide(server, "ollama_chat/sim", LONG, num_ctx=2048)
    assert outcome.status == "failed" and "not sent" in outcome.error and "num_ctx = 2048" in outcome.error
    assert server.requests == []


def test_bad_options_are_named() -> None:
    with pytest.raises(ValueError, match=r"params.prompt_cut_tolerance is 1.5"):
        LiteLLMAgent("openai/sim", "IO", params={"prompt_cut_tolerance": 1.5})
    with pytest.raises(ValueError, match=r"params.num_ctx is 'big'"):
        LiteLLMAgent("ollama/sim", "IO", params={"num_ctx": "big"})
