"""Provider faults over real HTTP: litellm (``openai/sim`` with ``api_base``) against the scripted
server of :mod:`tests.agents.fault_server`, through the whole decision loop (retry loop, response
cache, re-asks).

Every test checks, from both sides: the decisions come back with the server's answer (none lost,
none duplicated, nothing substituted), the cache holds exactly the valid replies, and the server
saw exactly the expected number of requests. Waits are tiny (:data:`FAST`), the drip is bounded.
"""

from __future__ import annotations

import asyncio
import os
import time
from email.utils import formatdate
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytest.importorskip("litellm")

from coopeval.agents.errors import ProviderAuthError
from coopeval.agents.llm_agent import LiteLLMAgent
from coopeval.agents.maker import BudgetExceededError, DecisionMaker, DecisionOutcome
from coopeval.agents.prices import load_prices
from coopeval.agents.protocol import Reply
from coopeval.agents.retry import RetryPolicy
from coopeval.cache.response_cache import ResponseCache
from coopeval.decisions.formats import ActionDistribution
from tests.agents.fault_server import (
    VALID_ANSWER,
    FaultServer,
    answer,
    completion_body,
    serve,
)

FORMAT = ActionDistribution(("A0", "A1"))
PARSED = {"A0": 60, "A1": 40}
FAST = RetryPolicy(max_attempts_transient=3, max_attempts_rate_limit=4, initial_wait_s=0.01, max_wait_s=1.0)


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")


def _agent(server: FaultServer, model: str = "openai/sim", **params: Any) -> LiteLLMAgent:
    return LiteLLMAgent(
        model,
        "IO",
        params={"api_base": server.api_base, "timeout": 2, "deadline_s": 0.6, "temperature": 0, **params},
    )


def _decide(
    server: FaultServer,
    cache: ResponseCache,
    n: int = 1,
    max_usd: float = 0.0,
    model: str = "openai/sim",
    **params: Any,
) -> tuple[list[DecisionOutcome], DecisionMaker]:
    """``n`` decisions, one call in flight at a time (so the script's order is the calls' order)."""
    agent = _agent(server, model, **params)
    maker = DecisionMaker(cache, {}, max_concurrency=1, retry_policy=FAST, max_usd=max_usd)

    async def run() -> list[DecisionOutcome]:
        return [await maker.decide(agent, "Choose.", FORMAT, {"decision": i}) for i in range(n)]

    return asyncio.run(run()), maker


def _assert_valid_and_cached(outcomes: list[DecisionOutcome], cache: ResponseCache) -> None:
    """Every decision ok with the server's answer, ids distinct, the cache = the valid replies."""
    assert [o.status for o in outcomes] == ["ok"] * len(outcomes)
    assert [o.parsed for o in outcomes] == [PARSED] * len(outcomes)
    assert len({o.decision_id for o in outcomes}) == len(outcomes)
    keys = [a["cache_key"] for o in outcomes for a in o.attempts]
    assert len(cache) == len(set(keys)) == len(outcomes)
    for key in keys:
        cached = cache.get(key)
        assert cached is not None and cached["text"] == VALID_ANSWER


@pytest.fixture
def cache(tmp_path: Path) -> ResponseCache:
    store = ResponseCache(tmp_path / "cache")
    yield store
    store.close()


@pytest.mark.parametrize("fault", ["status:500", "status:503", "reset", "malformed"])
def test_transient_fault_is_retried_once_and_never_cached(fault: str, cache: ResponseCache) -> None:
    with serve(["ok", fault, "ok", "ok"]) as server:
        outcomes, maker = _decide(server, cache, n=3)
    _assert_valid_and_cached(outcomes, cache)
    assert len(server.requests) == 4  # 3 decisions + 1 retry
    assert [len(o.attempts) for o in outcomes] == [1, 1, 1]  # no validation attempt spent
    assert maker.stats.calls_made == 3


@pytest.mark.parametrize("retry_after", ["0.3", "date"])
def test_429_waits_for_retry_after(retry_after: str, cache: ResponseCache) -> None:
    # A date 2 s ahead (HTTP dates have whole seconds): the wait is 1–2 s, never cut to max_wait_s = 1.
    value = formatdate(time.time() + 2, usegmt=True) if retry_after == "date" else retry_after
    with serve([f"status:429:{value}", "ok"]) as server:
        started = time.perf_counter()
        outcomes, _ = _decide(server, cache)
        elapsed = time.perf_counter() - started
    _assert_valid_and_cached(outcomes, cache)
    assert len(server.requests) == 2
    floor = 0.3 if retry_after == "0.3" else 0.95
    assert floor <= elapsed < floor + 1.5


def _warm_up(model: str, tmp_path: Path) -> None:
    """One answered call through ``model``'s litellm path, without a tight deadline.

    The first successful call of a provider path in a process does one-time work inside the
    attempt (litellm's lazy imports and set-up for that provider, the first response
    conversion): in a fresh process, with a Slurm smoke sharing the 2 cores, the first answered
    call took 3.1 s through ``hosted_vllm/`` and 6.8 s through ``openai/``, the next ones
    0.01-0.12 s. Inside the measured attempts that work outlasts deadline_s = 0.6 s, so the
    attempts after the drip were cut too (seen once for ``hosted_vllm/``: its first call in this
    module is this test's). After this, an attempt costs only its own time."""
    warm = ResponseCache(tmp_path / "warm-up")
    try:
        with serve(["ok"]) as server:
            outcomes, _ = _decide(server, warm, model=model, deadline_s=60)
        assert [o.status for o in outcomes] == ["ok"]
    finally:
        warm.close()


@pytest.mark.parametrize("model", ["openai/sim", "hosted_vllm/sim"])
def test_slow_drip_hits_the_attempt_deadline_and_is_retried(cache: ResponseCache, model: str, tmp_path: Path) -> None:
    _warm_up(model, tmp_path)
    # Headers, then one byte every 0.2 s: httpx's 2 s read timeout never fires; deadline_s = 0.6 does.
    with serve(["drip", "ok"], drip_s=0.2, drip_max=50) as server:
        started = time.perf_counter()
        outcomes, _ = _decide(server, cache, model=model)
        elapsed = time.perf_counter() - started
    _assert_valid_and_cached(outcomes, cache)
    assert len(server.requests) == 2
    # The deadline cut the first reply: the whole drip (50 bytes x 0.2 s = 10 s) never ran. The upper
    # bound is the drip's length, not a speed target, so a loaded machine cannot fail the test.
    assert 0.6 <= elapsed < 50 * 0.2


def _without_choices() -> str:
    body = completion_body(None)
    body["choices"] = []
    return answer(body)


def _blank_without_usage() -> str:
    body = completion_body("  ")
    del body["usage"]
    return answer(body)


@pytest.mark.parametrize("model", ["openai/sim", "hosted_vllm/sim"])
@pytest.mark.parametrize("empty", ["empty", "no choices", "blank, no usage"])
def test_empty_reply_is_retried_not_cached_and_not_a_validation_attempt(
    cache: ResponseCache, empty: str, model: str
) -> None:
    fault = {"empty": "empty", "no choices": _without_choices(), "blank, no usage": _blank_without_usage()}[empty]
    with serve([fault, fault, "ok"]) as server:
        outcomes, maker = _decide(server, cache, model=model)
    _assert_valid_and_cached(outcomes, cache)
    assert len(server.requests) == 3
    assert len(outcomes[0].attempts) == 1
    assert maker.stats.attempts == 1


def test_empty_reply_cached_by_an_older_version_is_asked_again(cache: ResponseCache) -> None:
    # One server throughout: its api_base is part of the cache key.
    with serve(["ok"]) as server:
        first, _ = _decide(server, cache)
        key = first[0].attempts[0]["cache_key"]
        cache.set(key, Reply(text="").to_json())  # what the old code cached for content: null
        again, maker = _decide(server, cache)
        assert len(server.requests) == 2 and maker.stats.cache_hits == 0
        _assert_valid_and_cached(again, cache)
        _, maker = _decide(server, cache)  # now a real answer: replayed, not paid again
        assert len(server.requests) == 2 and maker.stats.cache_hits == 1


def test_persistent_500_propagates_after_the_attempts_and_caches_nothing(cache: ResponseCache) -> None:
    with serve(["status:500"]) as server, pytest.raises(Exception, match="scripted 500"):
        _decide(server, cache)
    assert len(server.requests) == FAST.max_attempts_transient == 3
    assert len(cache) == 0


def test_401_fails_fast_naming_the_key_variable(cache: ResponseCache) -> None:
    with serve(["status:401", "ok"]) as server, pytest.raises(ProviderAuthError) as info:
        _decide(server, cache)
    assert "OPENAI_API_KEY" in str(info.value) and "HTTP 401" in str(info.value)
    assert len(server.requests) == 1
    assert len(cache) == 0


def test_truncated_answer_is_recorded_and_re_asked(cache: ResponseCache) -> None:
    cut = completion_body('{"A0": 6', completion_tokens=8, finish_reason="length")
    with serve([answer(cut), "ok"]) as server:
        outcomes, maker = _decide(server, cache, max_tokens=8)
    first, second = outcomes[0].attempts
    assert (first["finish_reason"], first["truncated"], first["max_tokens"]) == ("length", True, 8)
    assert (second["finish_reason"], second["truncated"]) == ("stop", False)
    assert server.requests[0]["max_tokens"] == 8
    assert outcomes[0].parsed == PARSED
    assert outcomes[0].reply_columns == {
        "finish_reason": "stop", "truncated": False, "answer_offset": 0, "reasoning_truncated": False
    }
    assert maker.stats.truncated == 1
    assert len(server.requests) == 2
    assert len(cache) == 2  # both answers were real model output: the cut one is kept too


def test_reasoning_tokens_are_priced_and_trip_the_budget(
    cache: ResponseCache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "models:\n  openai/sim: {input_usd_per_mtok: 1.0, output_usd_per_mtok: 10.0}\n", encoding="utf-8"
    )
    monkeypatch.setenv("COOPEVAL_PRICES", str(prices))
    load_prices.cache_clear()
    body = completion_body(
        VALID_ANSWER,
        prompt_tokens=100,
        completion_tokens=20,
        extra_usage={"total_tokens": 1120, "completion_tokens_details": {"reasoning_tokens": 1000}},
        extra_message={"reasoning_content": 'draft {"A0": 0, "A1": 100}'},
    )
    try:
        with serve([answer(body)]) as server:
            outcomes, maker = _decide(server, cache)
            row = outcomes[0].attempts[0]
            # (100 × $1 + (20 + 1,000) × $10) / 1e6 = $0.0103, not the $0.0003 of 120 tokens.
            assert row["cost_usd"] == pytest.approx(0.0103)
            assert row["reasoning_tokens"] == 1000
            assert row["reasoning"] == 'draft {"A0": 0, "A1": 100}'
            assert outcomes[0].parsed == PARSED  # the reasoning field never gives the answer
            assert maker.stats.reasoning_tokens == 1000
            with pytest.raises(BudgetExceededError, match=r"max_usd = 0.005"):
                _budget(server, cache)
    finally:
        load_prices.cache_clear()


def _budget(server: FaultServer, cache: ResponseCache) -> None:
    """A fresh decision under max_usd = 0.005: one reasoning-heavy answer crosses it."""
    agent = _agent(server)
    maker = DecisionMaker(cache, {}, max_concurrency=1, retry_policy=FAST, max_usd=0.005)
    asyncio.run(maker.decide(agent, "Choose.", FORMAT, {"decision": "budget"}))


def test_prompt_too_long_fails_the_decision_and_the_job_goes_on(cache: ResponseCache) -> None:
    # OpenAI's 400 context_length_exceeded: no retry, no re-ask, nothing cached; the decision is
    # recorded as failed with the provider's message and the next decision is asked as usual.
    with serve(["context", "ok"]) as server:
        agent = _agent(server)
        maker = DecisionMaker(cache, {}, max_concurrency=1, retry_policy=FAST, retry_failed=1)

        async def run() -> list[DecisionOutcome]:
            return [await maker.decide(agent, "Choose.", FORMAT, {"decision": i}) for i in range(2)]

        failed, ok = asyncio.run(run())
    assert (failed.status, failed.parsed, len(failed.attempts)) == ("failed", None, 1)
    assert "maximum context length is 8192 tokens" in failed.error
    assert failed.attempts[0]["error"] == failed.error and failed.attempts[0]["cache_key"] == ""
    assert (ok.status, ok.parsed) == ("ok", PARSED)
    assert len(server.requests) == 2
    assert len(cache) == 1
    assert maker.stats.failed_decisions == 1


def test_mixed_faults_under_concurrency_lose_and_repeat_nothing(cache: ResponseCache) -> None:
    # 8 decisions, 4 calls in flight, 5 faults of different kinds first: each fault costs exactly
    # one extra request, every decision gets the server's answer once, and a rerun is all hits.
    faults = ["status:429:0.05", "status:500", "reset", "empty", "malformed"]
    with serve([*faults, "ok"]) as server:
        agent = _agent(server)
        policy = RetryPolicy(max_attempts_transient=8, max_attempts_rate_limit=8, initial_wait_s=0.01, max_wait_s=0.2)
        maker = DecisionMaker(cache, {}, max_concurrency=4, retry_policy=policy)

        async def run() -> list[DecisionOutcome]:
            return list(
                await asyncio.gather(*(maker.decide(agent, "Choose.", FORMAT, {"decision": i}) for i in range(8)))
            )

        outcomes = asyncio.run(run())
        assert len(server.requests) == 8 + len(faults)
        again = asyncio.run(run())
        assert len(server.requests) == 8 + len(faults)  # the rerun asked nothing
    _assert_valid_and_cached(outcomes, cache)
    assert [o.decision_id for o in again] == [o.decision_id for o in outcomes]
    assert all(a["cache_hit"] for o in again for a in o.attempts)
